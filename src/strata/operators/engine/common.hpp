// The engines' shared pieces (operators/engine.hpp): the block size, how a block walks its columns and levels,
// the store of one destination value and a kernel's target (one destination and its expression).
#pragma once

#include <strata/core/backend.hpp>
#include <strata/core/lockstep.hpp>
#include <strata/operators/field.hpp>
#include <strata/operators/stencil_node.hpp>

#include <cstddef>
#include <cstdint>
#include <type_traits>

#if defined(__x86_64__) && defined(__SSE2__) && !defined(__CUDA_ARCH__)
#include <emmintrin.h>
#define STRATA_STREAMING_STORES 1
#else
#define STRATA_STREAMING_STORES 0
#endif

namespace strata::ops {

namespace detail {

inline constexpr uint32_t engineBlockDomSize = core::defaultBlockItems;

// On the host, a kernel's whole evaluation is inlined into its loops (GCC/Clang `flatten`): left to the inliner's
// budget, the operators' apply functions stay calls in large translation units, and Direct becomes several times
// slower.
#if !defined(__CUDACC__) && defined(__GNUC__)
#define STRATA_ENGINE_FLATTEN __attribute__((flatten))
#define STRATA_ENGINE_TARGET __attribute__((noinline, flatten))
#else
#define STRATA_ENGINE_FLATTEN
#define STRATA_ENGINE_TARGET
#endif
// A kernel's code for one target is a function of its own (STRATA_ENGINE_TARGET): flattening several targets into
// one kernel function makes each slower than in a kernel of its own; a function per target keeps that speed.

// The CPU backends run a block with one worker: the kernels walk columns and levels in plain nested loops, which the
// compiler optimises better than forEachInRange2D's single loop with a wrap test per element.
template <class Backend>
inline constexpr bool oneWorkerBackend = Backend::oneWorkerPerBlock;
template <class W>
inline constexpr bool oneWorker = oneWorkerBackend<typename W::BackendType>;

// The interior run [lo, hi) of i < len, where level first + i lies at least Reach levels from both ends of a
// staggering with `levels` levels (none when lo >= hi, and none without `split`: every level on the general path).
struct InteriorRun {
    uint32_t lo, hi;
};
template <int Reach>
STRATA_HD inline InteriorRun interiorRun(bool split, uint32_t first, uint32_t len, uint32_t levels) {
    constexpr auto reach = static_cast<uint32_t>(Reach);
    auto const clamp = [len](uint32_t v) { return v < len ? v : len; };
    uint32_t lo = 0; // (a tree of depth 0 has reach 0, and nvcc warns about `first < 0u`)
    if constexpr (Reach > 0) lo = clamp(first < reach ? reach - first : 0u);
    uint32_t const hi = split && levels > first + reach ? clamp(levels - reach - first) : 0u;
    return {lo, hi};
}

// f(c, i, std::bool_constant<interior>) for c < ncols, i < len, where level first + i is interior when it lies at
// least Reach levels from both ends of a staggering with `levels` levels (interiorRun). With one worker per block,
// plain nested loops with the interior levels in a loop of their own (no boundary test left in it: it vectorises); with
// several workers, forEachInRange2D and a test per element.
template <int Reach, class W, class F>
STRATA_HD void forEachColumnLevel(W const& worker, bool split, uint32_t ncols, uint32_t first, uint32_t len,
                                  uint32_t levels, F&& f) {
    InteriorRun const interior = interiorRun<Reach>(split, first, len, levels);
    uint32_t const lo = interior.lo, hi = interior.hi; // (plain variables: the lambdas below capture them)
    if constexpr (oneWorker<W>) {
        (void)worker;
        // The interior loop carries `ivdep`: GCC need not prove that the loop's stores (a buffer, the destination)
        // alias none of its loads; they cannot (the engines write buffers no operand points into, and evaluate
        // rejects a destination that is also an operand: checkLeaves in engine.hpp). Without it GCC guards each
        // column's vectorised loop with run-time overlap checks of every pointer pair, which cost both engines
        // time (docs/performance.md). The bits are the same (no reassociation is allowed).
        for (uint32_t c = 0; c < ncols; ++c) {
            if (lo < hi) {
                for (uint32_t i = 0; i < lo; ++i)
                    f(c, i, std::false_type{});
#if defined(__GNUC__) && !defined(__clang__) && !defined(__CUDACC__)
#pragma GCC ivdep
#endif
                for (uint32_t i = lo; i < hi; ++i)
                    f(c, i, std::true_type{});
                for (uint32_t i = hi; i < len; ++i)
                    f(c, i, std::false_type{});
            } else {
                for (uint32_t i = 0; i < len; ++i)
                    f(c, i, std::false_type{});
            }
        }
    } else {
        lockstep::forEachInRange2D(worker, ncols, len, [&](uint32_t c, uint32_t i) {
            if (i >= lo && i < hi)
                f(c, i, std::true_type{});
            else
                f(c, i, std::false_type{});
        });
    }
}

// Streaming stores (x86-64: MOVNTPD/MOVNTPS, MOVNTI at the ends) write a destination's cache lines to memory
// without first reading them into the cache (a plain store's read-for-ownership): for a destination larger than the
// caches, a quarter less traffic in a kernel that reads two fields and writes one (three lines moved, not four). They
// bypass the caches, so they are for destinations too large to be read back from a cache anyway
// (EngineOptions::streamingStoreBytes), on the CPU backends only; the CPU launch loops fence them
// (lockstep::detail::storeFence) before another thread may read. Elsewhere (other CPUs, the GPU) a plain copy. `dst` is
// 16-byte aligned or not; `src` anything.
template <class T>
STRATA_HD inline void streamStore(T* dst, T const* src, uint32_t n) {
#if STRATA_STREAMING_STORES
    if constexpr (std::is_same_v<T, double> || std::is_same_v<T, float>) {
        constexpr uint32_t lane = 16 / sizeof(T);
        auto const one = [](T* d, T v) {
            if constexpr (sizeof(T) == 8) {
                long long bits;
                __builtin_memcpy(&bits, &v, sizeof bits);
                _mm_stream_si64(reinterpret_cast<long long*>(d), bits);
            } else {
                int bits;
                __builtin_memcpy(&bits, &v, sizeof bits);
                _mm_stream_si32(reinterpret_cast<int*>(d), bits);
            }
        };
        uint32_t i = 0;
        for (; i < n && reinterpret_cast<std::uintptr_t>(dst + i) % 16 != 0; ++i)
            one(dst + i, src[i]);
        for (; i + lane <= n; i += lane) {
            if constexpr (sizeof(T) == 8)
                _mm_stream_pd(dst + i, _mm_loadu_pd(src + i));
            else
                _mm_stream_ps(dst + i, _mm_loadu_ps(src + i));
        }
        for (; i < n; ++i)
            one(dst + i, src[i]);
        return;
    }
#endif
    for (uint32_t i = 0; i < n; ++i)
        dst[i] = src[i];
}

// forEachColumnLevel's walk for a destination written with streaming stores (the Shmem kernel's root), one worker
// per block: each column's values, value(c, i, std::bool_constant<interior>), go to an L1 buffer a run of levels at a
// time, then to the destination column (`out(c)`: the address of its level `first`) with streamStore. The interior
// levels keep a loop of their own (vectorised, as in forEachColumnLevel). The bits are those of the plain walk: the
// same values, stored.
template <int Reach, class T, class Out, class V>
STRATA_HD inline void streamColumnLevels(bool split, uint32_t ncols, uint32_t first, uint32_t len, uint32_t levels,
                                         Out&& out, V&& value) {
    constexpr uint32_t run = 128; // values buffered at once: 1 KiB of doubles, in L1 with the stencils' inputs
    InteriorRun const interior = interiorRun<Reach>(split, first, len, levels);
    uint32_t const lo = interior.lo, hi = interior.hi;
    // interior levels: [ilo, ihi); none when lo >= hi
    uint32_t const ilo = lo < hi ? lo : len, ihi = lo < hi ? hi : len;
    alignas(64) T buf[run];
    for (uint32_t c = 0; c < ncols; ++c) {
        T* const dst = out(c);
        for (uint32_t i0 = 0; i0 < len; i0 += run) {
            uint32_t const i1 = i0 + run < len ? i0 + run : len;
            uint32_t const a = ilo > i0 ? (ilo < i1 ? ilo : i1) : i0; // [i0, a): boundary
            uint32_t const b = ihi > a ? (ihi < i1 ? ihi : i1) : a;   // [a, b): interior; [b, i1): boundary
            // 64-bit indices, buf's from 0: with `buf[i - i0]` GCC did not vectorise the interior loop.
            std::size_t const ja = a - i0, jb = b - i0, j1 = i1 - i0;
            for (std::size_t j = 0; j < ja; ++j)
                buf[j] = value(c, i0 + j, std::false_type{});
#if defined(__GNUC__) && !defined(__clang__) && !defined(__CUDACC__)
#pragma GCC ivdep
#endif
            for (std::size_t j = ja; j < jb; ++j)
                buf[j] = value(c, i0 + j, std::true_type{});
            for (std::size_t j = jb; j < j1; ++j)
                buf[j] = value(c, i0 + j, std::false_type{});
            streamStore(dst + i0, buf, i1 - i0);
        }
    }
}

// Whole columns per block of engineBlockDomSize items, at least one: floor, so a block never holds more items than
// its workers (ceil(256 / 30) = 9 columns would be 270 items for 256 GPU threads, a second pass for 14 of them).
STRATA_HD inline uint32_t columnsPerBlock(uint32_t levels) {
    return levels >= engineBlockDomSize ? 1u : engineBlockDomSize / levels;
}

// Writes (or, with Add, adds to) one destination value.
template <bool Add, class D, class T>
STRATA_HD void store(D& slot, T value) {
    if constexpr (Add)
        slot = slot + value;
    else
        slot = value;
}

// One destination of a kernel: dest = expr, or dest += expr (Add); `perColumn` is the expression's shared bytes per
// column and `buffers` their layout (Shmem). A kernel takes one or several targets of the same columns (evaluate,
// evaluateFused).
template <bool Add, class E, class T, class S>
struct Target {
    static constexpr bool add = Add;
    using Value = T;
    E expr;
    FieldView<T, S> dest;
    uint32_t perColumn;
    BufferPlan<E::slots> buffers; // Shmem: the layout of expr's buffers (unused by Direct)
    bool stream = false;          // Shmem: written with streaming stores (one worker per block, not Add)
};

} // namespace detail

} // namespace strata::ops
