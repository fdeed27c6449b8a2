// Small index vectors for N-dimensional domains.
//
// `CtUint32<S...>` is a compile-time extent (a kernel's `BlockDomSizeND`), `UVec<D>` a run-time index or extent that
// works in device code (std::array's accessors are not __device__). Linearisation is x-fastest: the first component
// varies fastest, as in CUDA's threadIdx.
#pragma once

#include <strata/core/config.hpp>

#include <cstdint>

namespace strata::lockstep {

template <uint32_t D>
struct UVec {
    uint32_t v[D];
    STRATA_HD constexpr uint32_t& operator[](uint32_t i) { return v[i]; }
    STRATA_HD constexpr uint32_t operator[](uint32_t i) const { return v[i]; }
    static constexpr uint32_t dim() { return D; }
};

template <uint32_t... S>
struct CtUint32 {
    static_assert(sizeof...(S) >= 1 && sizeof...(S) <= 3, "CtUint32: 1 to 3 dimensions are supported");
    static_assert(((S > 0) && ...), "CtUint32: every extent must be positive");
    static constexpr uint32_t dim = sizeof...(S);
    static constexpr uint32_t product = (S * ...);
    STRATA_HD static constexpr UVec<dim> toRT() { return UVec<dim>{{S...}}; }
};

template <class T>
inline constexpr bool isCtUint32 = false;
template <uint32_t... S>
inline constexpr bool isCtUint32<CtUint32<S...>> = true;

// Linear index -> N-dimensional index within `extent` (first component fastest).
template <uint32_t D>
STRATA_HD constexpr UVec<D> toND(uint32_t linear, UVec<D> const& extent) {
    UVec<D> r{};
    for (uint32_t d = 0; d < D; ++d) {
        r[d] = linear % extent[d];
        linear /= extent[d];
    }
    return r;
}

template <uint32_t D>
STRATA_HD constexpr uint32_t toLinear(UVec<D> const& idx, UVec<D> const& extent) {
    uint32_t r = 0;
    for (uint32_t d = D; d-- > 0;)
        r = r * extent[d] + idx[d];
    return r;
}

} // namespace strata::lockstep
