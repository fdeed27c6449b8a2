// The Kokkos peer variant of the operators suite (bench_kokkos.cpp), behind a plain interface so that only its own
// translation unit includes Kokkos. Defined when the build found Debian's Kokkos (STRATA_BENCH_KOKKOS).
#pragma once

#include <cstdint>

namespace strata::bench {

// One Center field layout (columns of `stride` values, `levels` used) and the grid's metric terms (grid.hpp).
struct KokkosColumns {
    uint32_t levels, columns, stride;
    double const* kappa;
    double const* theta;
    double* out;
    double const* rdzCenter;
    double const* rdzFace;
    double const* interpBelow;
    double const* interpAbove;
};

// out = div(interp(K) * grad(theta)) with closed ends, TeamPolicy + team scratch (levels >= 2).
void kokkosDiffusion(KokkosColumns const& columns);

// The execution space the peer runs in ("Serial" with Debian's build).
char const* kokkosExecutionSpace();

} // namespace strata::bench
