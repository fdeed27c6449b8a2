// The engines' shared pieces (operators/engine.hpp): the block size, how a block walks its columns and levels,
// the store of one destination value and a kernel's target (one destination and its expression).
#pragma once

#include "core/backend.hpp"
#include "core/lockstep.hpp"
#include "operators/field.hpp"
#include "operators/stencil_node.hpp"

#include <cstdint>
#include <type_traits>

namespace strata::ops {

namespace detail {

inline constexpr uint32_t engineBlockDomSize = core::defaultBlockItems;

// On the host, a kernel's whole evaluation is inlined into its loops (GCC/Clang `flatten`): left to the inliner's
// budget, the operators' apply functions stay calls in large translation units (measured: a 2-5x slower Direct).
#if !defined(__CUDACC__) && defined(__GNUC__)
#define STRATA_ENGINE_FLATTEN __attribute__((flatten))
#define STRATA_ENGINE_TARGET __attribute__((noinline, flatten))
#else
#define STRATA_ENGINE_FLATTEN
#define STRATA_ENGINE_TARGET
#endif
// A kernel's code for one target is a function of its own (STRATA_ENGINE_TARGET): flattening several targets into
// one kernel function made each slower (measured, four advection targets: 21.6 ms fused against 17.4 ms in four
// kernels; 17.3 ms with a function per target).

// The CPU backends run a block with one worker: the kernels walk columns and levels in plain nested loops, which the
// compiler optimises better than forEachInRange2D's single loop with a wrap test per element.
template <class Backend>
inline constexpr bool oneWorkerBackend = Backend::oneWorkerPerBlock;
template <class W>
inline constexpr bool oneWorker = oneWorkerBackend<typename W::BackendType>;

// f(c, i, std::bool_constant<interior>) for c < ncols, i < len, where level first + i is interior when it lies at
// least Reach levels from both ends of a staggering with `levels` levels. With one worker per block, plain nested loops
// with the interior levels in a loop of their own (no boundary test left in it: it vectorises); with several workers,
// forEachInRange2D and a test per element.
template <int Reach, class W, class F>
STRATA_HD void forEachColumnLevel(W const& worker, bool split, uint32_t ncols, uint32_t first, uint32_t len,
                                  uint32_t levels, F&& f) {
    constexpr auto reach = static_cast<uint32_t>(Reach);
    auto const clamp = [len](uint32_t v) { return v < len ? v : len; };
    // interior: first + i >= reach and first + i + reach < levels
    uint32_t lo = 0; // (a tree of depth 0 has reach 0, and nvcc warns about `first < 0u`)
    if constexpr (Reach > 0) lo = clamp(first < reach ? reach - first : 0u);
    uint32_t const hi = split && levels > first + reach ? clamp(levels - reach - first) : 0u;
    if constexpr (oneWorker<W>) {
        (void)worker;
        // The interior loop carries `ivdep`: GCC need not prove that the loop's stores (a buffer, the destination)
        // alias none of its loads; they cannot (the engines write buffers no operand points into, and evaluate
        // rejects a destination that is also an operand: checkLeaves in engine.hpp). Without it GCC guards each
        // column's vectorised loop with run-time overlap checks of every pointer pair. Measured on the Intel machine
        // (docs/performance.md, "ivdep"): the diffusion tree 14 % faster under Direct at 256 levels, 10 % under Shmem
        // at 64; the same bits (no reassociation is allowed).
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
};

} // namespace detail

} // namespace strata::ops
