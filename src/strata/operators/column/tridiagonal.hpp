// Tridiagonal solves: one system per column, for every column of a set of Center fields at once.
//
//   Tridiag solveTridiagonal(backend, a, b, c, d, x, variant = Tridiag::Auto, options = {})
//
// solves, in every column, with n the cells of the grid,
//
//   a[k] x[k-1] + b[k] x[k] + c[k] x[k+1] = d[k],   k = 0 .. n-1
//
// a[0] and c[n-1] lie outside the matrix and are never read (they may hold anything, NaN included). All six fields
// are Field<T, Center> with the same columns and grid size, in Backend::memSpace, T a floating-point type (checked:
// a mismatch throws strata::Error). The call returns the variant that ran (Thomas or CyclicReduction).
//
// In place or not: either. x may be the same Field as d, and the solution then overwrites the right-hand side;
// otherwise a, b, c, d are only read. x must not be a, b or c.
//
// Variants, all behind this one signature:
//   Thomas           LU without pivoting, one worker per column: it walks the column up (elimination) and down (back
//                    substitution), n - 1 steps each, in a fixed order. Uses a scratch array of one field's size in
//                    global memory, kept from call to call (one per host thread and memory space, grown when a call
//                    needs more). The CPU choice: O(n) work, no shared memory, no syncs. One division per level (the
//                    pivot's reciprocal); on Serial and OpenMP a worker sweeps 8 columns level by level, interleaving
//                    their dependency chains (the same operations per column, so the same bits).
//   CyclicReduction  parallel cyclic reduction: one block per column, the workers spread over the levels; the column
//                    is staged in block shared memory and reduced in ceil(log2 n) steps (any n >= 1, not only powers
//                    of two), one sync each, alternating between two buffers. O(n log n) work in O(log n) steps: the
//                    GPU choice. It needs cyclicReductionBytes<T>(n) = 8 n sizeof(T) bytes of shared memory per block
//                    (n <= 768 levels in double under 48 KiB). Rule: a column that needs more than
//                    options.sharedLimitBytes (48 KiB by default; on Cuda also the device's opt-in per-block limit) is
//                    solved with Thomas instead, and the call returns Tridiag::Thomas.
//   Bfb              Thomas, always. Thomas is deterministic already (one worker, one order of operations); Bfb pins
//                    the choice so that no rule -- Auto today, a planner tomorrow -- can ever switch the algorithm.
//                    Use it wherever results must be bit-for-bit reproducible across backends, worker and rank counts
//                    (regression baselines, restart and decomposition tests).
//   Auto             CyclicReduction on Cuda (falling back to Thomas by the rule above), Thomas on the CPU backends.
//
// Reproducibility. Each variant does the same IEEE operations in the same order whatever the backend and the number
// of workers, and the build forbids FMA contraction: Thomas (= Bfb) results are bit-identical on Serial, OpenMP and
// Threads with any worker count, and on Cuda (IEEE division, --fmad=false; tests/cuda/test_cuda_column.cu checks it
// on a device); so are CyclicReduction results (a level's update reads only the previous step's buffer, never a
// value of the current step). Columns are independent, so the rank decomposition does not change a bit either. Thomas
// and CyclicReduction are different algorithms: they agree to rounding (about 1e-15 relative on well-conditioned
// systems), not bit for bit -- so Auto differs between a CPU and a GPU run in the last bits. Use Bfb when that matters.
//
// Stability. Neither variant pivots. Both are stable for matrices that are strictly diagonally dominant by rows,
// |b[k]| > |a[k]| + |c[k]| (with a[0] = c[n-1] = 0), as implicit vertical diffusion (1 - dt L) x = d is; each
// cyclic-reduction step keeps that dominance. Thomas is also stable for symmetric positive definite matrices. On other
// matrices a zero or tiny pivot gives inf or NaN without an error: nothing checks.
#pragma once

#include <strata/core/error.hpp>
#include <strata/core/lockstep.hpp>
#include <strata/core/memory.hpp>
#include <strata/core/threaded.hpp>
#include <strata/operators/column/detail/checks.hpp>
#include <strata/operators/column/detail/tridiagonal_kernels.hpp>
#include <strata/operators/field.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace strata::ops {

enum class Tridiag { Thomas, CyclicReduction, Bfb, Auto };

inline char const* tridiagName(Tridiag t) {
    switch (t) {
    case Tridiag::Thomas: return "thomas";
    case Tridiag::CyclicReduction: return "cyclic-reduction";
    case Tridiag::Bfb: return "bfb";
    case Tridiag::Auto: return "auto";
    }
    return "?";
}

struct TridiagOptions {
    std::size_t sharedLimitBytes = core::defaultSharedLimitBytes; // per block, for CyclicReduction
};

// Shared memory CyclicReduction needs for a column of n levels: two buffers of (a, b, c, d).
template <class T>
constexpr std::size_t cyclicReductionBytes(uint32_t n) {
    return std::size_t{8} * n * sizeof(T);
}

namespace detail {

// The algorithm that will run: Thomas or CyclicReduction.
// The variant that runs for a system whose CyclicReduction needs `sharedBytes` of shared memory a block, by the rules
// at the top of this file (band.hpp's solvers follow them too).
template <class Backend>
Tridiag chooseVariant(Backend const& backend, std::size_t sharedBytes, Tridiag variant, std::size_t sharedLimitBytes) {
    if (variant == Tridiag::Bfb) return Tridiag::Thomas;
    if (variant == Tridiag::Auto) variant = Backend::isGpu ? Tridiag::CyclicReduction : Tridiag::Thomas;
    if (variant != Tridiag::CyclicReduction) return variant;
    std::size_t limit = sharedLimitBytes;
    if constexpr (Backend::isGpu)
        limit = std::min(limit, core::sharedMemoryPerBlock(backend));
    else
        (void)backend;
    return sharedBytes > limit ? Tridiag::Thomas : Tridiag::CyclicReduction;
}

// f(std::integral_constant<uint32_t, D>{}) with D the smallest of 32, 64, 128, 256 that covers n rows (256 beyond):
// the smallest block domain that covers the column leaves the fewest warps idle on Cuda.
template <class F>
void withCoveringDomain(uint32_t n, F&& f) {
    if (n <= 32)
        f(std::integral_constant<uint32_t, 32>{});
    else if (n <= 64)
        f(std::integral_constant<uint32_t, 64>{});
    else if (n <= 128)
        f(std::integral_constant<uint32_t, 128>{});
    else
        f(std::integral_constant<uint32_t, 256>{});
}

template <class Backend, class T>
Tridiag chooseTridiag(Backend const& backend, uint32_t levels, Tridiag variant, TridiagOptions const& options) {
    return chooseVariant(backend, cyclicReductionBytes<T>(levels), variant, options.sharedLimitBytes);
}

// Thomas's scratch for c': allocating (and zero-filling, on one thread) a field-sized buffer at every call cost as
// much as the solve itself (docs/performance.md), so it is kept per host thread and memory space and only grows.
template <class T>
T* thomasScratch(core::MemSpace space, std::size_t count) {
    thread_local core::Buffer<T> host, cuda;
    core::Buffer<T>& buffer = space == core::MemSpace::Cuda ? cuda : host;
    if (buffer.size() < count) {
        buffer = core::Buffer<T>(); // release the old one first: the peak is the new size, not the sum
        buffer = core::Buffer<T>(count, space);
    }
    return buffer.device();
}

template <uint32_t Dom, class Backend, class T>
void launchCyclicReduction(Backend const& backend, TridiagViews<T> const& views) {
    uint32_t const blocks = std::min(views.x.columns, Backend::maxGridBlocks);
    lockstep::launch(backend, lockstep::configSMem(blocks, cyclicReductionBytes<T>(views.x.levels)),
                     TridiagCyclicReductionKernel<Dom>{}, views);
}

} // namespace detail

// Solves a[k] x[k-1] + b[k] x[k] + c[k] x[k+1] = d[k] in every column (see the top of this file). x may be d.
template <class Backend, class T>
Tridiag solveTridiagonal(Backend const& backend, Field<T, Center> const& a, Field<T, Center> const& b,
                         Field<T, Center> const& c, Field<T, Center> const& d, Field<T, Center>& x,
                         Tridiag variant = Tridiag::Auto, TridiagOptions const& options = {}) {
    static_assert(std::is_floating_point_v<T>, "solveTridiagonal: T must be a floating-point type");
    char const* where = "solveTridiagonal";
    uint32_t const columns = x.columns(), n = x.grid().cells();
    detail::requireColumnField<Backend>(where, "a", a, columns, n);
    detail::requireColumnField<Backend>(where, "b", b, columns, n);
    detail::requireColumnField<Backend>(where, "c", c, columns, n);
    detail::requireColumnField<Backend>(where, "d", d, columns, n);
    detail::requireColumnField<Backend>(where, "x", x, columns, n);
    detail::requireDistinct(where, "x", x, "a", a);
    detail::requireDistinct(where, "x", x, "b", b);
    detail::requireDistinct(where, "x", x, "c", c);

    Tridiag const chosen = detail::chooseTridiag<Backend, T>(backend, n, variant, options);
    if (columns == 0) return chosen;
    detail::TridiagViews<T> const views{a.view(), b.view(), c.view(), d.view(), x.view()};
    if (chosen == Tridiag::Thomas) {
        T* const scratch = detail::thomasScratch<T>(Backend::memSpace, std::size_t{columns} * x.stride());
        if constexpr (Backend::oneWorkerPerBlock) {
            constexpr uint32_t group = 8; // columns interleaved per worker (TridiagThomasGroupBody)
            threaded::threaded(backend, threaded::independent((columns + group - 1) / group),
                               detail::TridiagThomasGroupBody<T, group>{views, scratch});
        } else {
            threaded::threaded(backend, threaded::independent(columns), detail::TridiagThomasBody<T>{views, scratch});
        }
    } else {
        detail::withCoveringDomain(
            n, [&](auto dom) { detail::launchCyclicReduction<decltype(dom)::value>(backend, views); });
    }
    return chosen;
}

} // namespace strata::ops
