// Idx: one element of a lockstep index domain, as a forEach functor sees it.
//
// It converts to `uint32_t` (the linear index in the domain), so a functor may take `uint32_t` or `Idx`. `slot` is
// which of the calling worker's elements this is (0, 1, ...): context variables use it to find their storage, so
// `var[idx]` is only meaningful for the Idx a forEach handed out. `nd()` is the N-dimensional index (x fastest).
#pragma once

#include <strata/core/lockstep/vector.hpp>

namespace strata::lockstep {

template <uint32_t D = 1>
struct Idx {
    uint32_t linear;
    uint32_t slot;
    UVec<D> ndIdx;

    STRATA_HD constexpr operator uint32_t() const { return linear; }
    STRATA_HD constexpr uint32_t lin() const { return linear; }
    STRATA_HD constexpr UVec<D> const& nd() const { return ndIdx; }
};

} // namespace strata::lockstep
