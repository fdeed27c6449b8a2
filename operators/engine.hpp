// Evaluating an expression into a field: `evaluate(backend, dest, expr, engine, options)`, or adding it to the field:
// `evaluateAdd(backend, dest, expr, engine, options)` (dest += expr in the same pass: no scratch field, no second
// launch; the bits are those of evaluating into a scratch field of dest's type and adding that).
//
// Engines
//   Direct   every output point evaluates the whole tree from global memory (a stencil's arguments are recomputed at
//            every level the stencil reads): the baseline.
//   Shmem    every argument of every stencil node is staged once per column in block shared memory, leaves first,
//            one sync per tree depth; the root is then evaluated from the buffers and written to global memory.
//            Each leaf value is read once per column (plus tile halos), each stencil is applied once per level.
//   Auto     the planner's choice (below).
// Direct and Shmem run the same operator code on the same values in the same order: their results are identical bit
// for bit (the build fixes the floating-point contract, see docs/operators.md).
//
// The planner, before launch, picks for Shmem the tile of output levels a block computes (the whole column when its
// buffers fit in the shared-memory limit, else the longest tile that fits: columns of any height are tiled, with
// halos as wide as the tree's footprint) and how many columns share a block (enough that short columns still give
// 256 work items). Auto takes Shmem when stencils are nested (depth >= 2; Direct would recompute inner stencils) or
// on a GPU, Direct otherwise or when not even one level fits in shared memory.
#pragma once

#include "core/error.hpp"
#include "core/lockstep.hpp"
#include "operators/expr.hpp"
#include "operators/field.hpp"
#include "operators/stencil_node.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>
#include <type_traits>

namespace strata::ops {

enum class Engine { Direct, Shmem, Auto };

inline char const* engineName(Engine e) {
    switch (e) {
    case Engine::Direct: return "direct";
    case Engine::Shmem: return "shmem";
    case Engine::Auto: return "auto";
    }
    return "?";
}

struct EngineOptions {
    std::size_t sharedLimitBytes = 48 * 1024; // per block; the Cuda backend also checks the device's own limit
    uint32_t maxTileLevels = 0;               // 0: no cap (tests set one to force tiling)
    bool interiorLevels = true; // false: every level takes the general path with its boundary tests (tests compare)
};

// What the planner decided, for logs and benchmarks.
struct EvalPlan {
    Engine engine = Engine::Direct;
    int depth = 0;
    uint32_t columnsPerBlock = 1;
    uint32_t tileLevels = 0;
    uint32_t tiles = 1;
    uint32_t buffers = 0;
    uint32_t sharedBytesPerColumn = 0;
    uint32_t sharedBytes = 0;
    uint32_t blocks = 0;

    std::string describe() const {
        std::ostringstream s;
        s << engineName(engine) << " depth=" << depth;
        if (engine == Engine::Shmem)
            s << " columns/block=" << columnsPerBlock << " tile=" << tileLevels << " tiles=" << tiles
              << " buffers=" << buffers << " shared=" << sharedBytes << "B";
        s << " blocks=" << blocks;
        return s.str();
    }
};

namespace detail {

inline constexpr uint32_t engineBlockDomSize = 256;
inline constexpr uint32_t maxGrid = 65535;

// On the host, a kernel's whole evaluation is inlined into its loops (GCC/Clang `flatten`): left to the inliner's
// budget, the operators' apply functions stay calls in large translation units (measured: a 2-5x slower Direct).
#if !defined(__CUDACC__) && defined(__GNUC__)
#define STRATA_ENGINE_FLATTEN __attribute__((flatten))
#else
#define STRATA_ENGINE_FLATTEN
#endif

// The CPU backends run a block with one worker: the kernels walk columns and levels in plain nested loops, which the
// compiler optimises better than forEachInRange2D's single loop with a wrap test per element.
template <class Backend>
inline constexpr bool oneWorkerBackend = std::is_same_v<Backend, core::Serial> || std::is_same_v<Backend, core::OpenMP>;
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
        for (uint32_t c = 0; c < ncols; ++c) {
            if (lo < hi) {
                for (uint32_t i = 0; i < lo; ++i)
                    f(c, i, std::false_type{});
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

// A context: where a stencil node's arguments come from (`shmem`), and whether the level is interior (at least the
// expression's reach from both ends: the operators drop their boundary branches, see expr.hpp).
template <bool Interior>
struct DirectCtx {
    static constexpr bool shmem = false;
    static constexpr bool interior = Interior;
    GridView const& grid; // a reference: a context is built per element, and copying the grid's five fields there
    uint32_t col;         // kept it in memory (measured with -march=native: Shmem 5x slower)
};

template <class W, bool Interior>
struct ShmemCtx {
    static constexpr bool shmem = true;
    static constexpr bool interior = Interior;
    static constexpr bool stageStencilFree = !oneWorker<W>; // see stagedArg (stencil_node.hpp)
    GridView const& grid;
    uint32_t col;
    uint32_t k0;
    W const* worker;
    std::byte* base;

    template <class V>
    STRATA_HD auto span(uint32_t offset, uint32_t capacity) const {
        return lockstep::makeSharedSpan(*worker, reinterpret_cast<V*>(base + offset), capacity);
    }
};

template <class W>
struct BlockState {
    static constexpr bool stageStencilFree = !oneWorker<W>;
    W const* worker;
    GridView grid;
    uint32_t col0, ncols, k0, k1;
    std::byte* smem;
    uint32_t perColumn;
    bool interiorLevels;

    template <bool Interior = false>
    STRATA_HD ShmemCtx<W, Interior> ctx(uint32_t c) const {
        return {grid, col0 + c, k0, worker, smem + c * perColumn};
    }

    // f(c, i, interior) for every column c of the block and i = 0..len-1 (level first + i of `levels`), spread over
    // the workers; see forEachColumnLevel.
    template <int Reach, class F>
    STRATA_HD void forEachLevel(uint32_t first, uint32_t len, uint32_t levels, F&& f) const {
        forEachColumnLevel<Reach>(*worker, interiorLevels, ncols, first, len, levels, f);
    }
};

struct ShmemLaunch {
    uint32_t columnsPerBlock;
    uint32_t tileLevels;
    uint32_t tiles;
    uint32_t tasks;
    uint32_t perColumn;
    bool interiorLevels;
};

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

template <bool Add>
struct DirectKernel {
    static constexpr uint32_t blockDomSize = engineBlockDomSize;
    template <class W, class E, class T, class S>
    STRATA_ENGINE_FLATTEN STRATA_HD void operator()(W const& worker, E const& expr, FieldView<T, S> dest, GridView grid,
                                                    bool interiorLevels) const {
        // Block b computes columns [b * columnsPerBlock, ...) : whole columns, so a worker walks levels without
        // dividing, and neighbouring workers write neighbouring levels.
        uint32_t const perBlock = columnsPerBlock(dest.levels);
        for (uint32_t b = worker.blockDomIdx(); b * perBlock < dest.columns; b += worker.gridDomSize()) {
            uint32_t const col0 = b * perBlock;
            uint32_t const ncols = col0 + perBlock <= dest.columns ? perBlock : dest.columns - col0;
            forEachColumnLevel<E::reach>(worker, interiorLevels, ncols, 0u, dest.levels, dest.levels,
                                         [&](uint32_t c, uint32_t k, auto interior) {
                                             DirectCtx<decltype(interior)::value> const ctx{grid, col0 + c};
                                             store<Add>(dest(col0 + c, Level{k}),
                                                        static_cast<T>(expr.eval(ctx, Level{k})));
                                         });
        }
    }
};

template <bool Add>
struct ShmemKernel {
    static constexpr uint32_t blockDomSize = engineBlockDomSize;

    template <class W, class E, class T, class S>
    STRATA_ENGINE_FLATTEN STRATA_HD void operator()(W const& worker, E const& expr, FieldView<T, S> dest, GridView grid,
                                                    ShmemLaunch launch) const {
        for (uint32_t task = worker.blockDomIdx(); task < launch.tasks; task += worker.gridDomSize()) {
            uint32_t const group = task / launch.tiles, tile = task % launch.tiles;
            uint32_t const col0 = group * launch.columnsPerBlock;
            uint32_t const ncols = min(launch.columnsPerBlock, dest.columns - col0);
            uint32_t const k0 = tile * launch.tileLevels;
            uint32_t const k1 = min(k0 + launch.tileLevels, dest.levels);
            BlockState<W> const state{
                &worker, grid, col0, ncols, k0, k1, worker.dynSharedBase(), launch.perColumn, launch.interiorLevels};
            stageFrom<1>(worker, expr, state);
            state.template forEachLevel<E::reach>(k0, k1 - k0, dest.levels, [&](uint32_t c, uint32_t i, auto interior) {
                auto const ctx = state.template ctx<decltype(interior)::value>(c);
                store<Add>(dest(col0 + c, Level{k0} + i), static_cast<T>(expr.eval(ctx, Level{k0} + i)));
            });
            if (task + worker.gridDomSize() < launch.tasks) worker.sync(); // the next task reuses the buffers
        }
    }

private:
    STRATA_HD static uint32_t min(uint32_t a, uint32_t b) { return a < b ? a : b; }

    template <int D, class W, class E, class B>
    STRATA_HD static void stageFrom(W const& worker, E const& expr, B const& state) {
        if constexpr (D <= E::depth) {
            expr.template stage<D>(state);
            worker.sync();
            stageFrom<D + 1>(worker, expr, state);
        }
    }
};

template <class E>
uint32_t sharedBytesPerColumn(E expr, bool stageStencilFree, uint32_t tileLevels, uint32_t* buffers = nullptr) {
    PlanState p;
    p.tileLen = tileLevels;
    p.stageStencilFree = stageStencilFree;
    expr.plan(p, 0, 0);
    if (buffers) *buffers = p.buffers;
    return (p.bytes + 15u) / 16u * 16u;
}

template <class Backend>
constexpr bool isGpu = std::is_same_v<Backend, core::Cuda>;

// Whole columns per block, as in the Direct kernel: no division per point to find (column, level), and on the
// one-worker CPU backends a plain loop over a column's levels, which the compiler vectorises.
struct PointKernel {
    static constexpr uint32_t blockDomSize = 256;
    static constexpr uint32_t maxGrid = 65535;
    STRATA_HD static uint32_t columnsPerBlock(uint32_t levels) { return detail::columnsPerBlock(levels); }

    template <class W, class F>
    STRATA_HD void operator()(W const& worker, F const& f, uint32_t columns, uint32_t levels) const {
        uint32_t const perBlock = columnsPerBlock(levels);
        for (uint32_t b = worker.blockDomIdx(); b * perBlock < columns; b += worker.gridDomSize()) {
            uint32_t const col0 = b * perBlock;
            uint32_t const ncols = columns - col0 < perBlock ? columns - col0 : perBlock;
            // pointwise: no interior split
            forEachColumnLevel<0>(worker, false, ncols, 0u, levels, levels,
                                  [&](uint32_t c, uint32_t k, auto) { f(col0 + c, k); });
        }
    }
};

// f(i, col, k) for i < Fields, for the columns of each block in turn: field by field within a block, so that a
// kernel over several fields keeps the few streams of one field at a time (seven fields' streams at once thrash the
// L1 sets when the fields share their alignment: measured, docs/performance.md). A GPU block takes the columns of
// 256 items; a CPU block (one worker) about 32768 points, 256 KiB of a field, long enough for the prefetchers.
template <uint32_t Fields>
struct FieldsPointKernel {
    static constexpr uint32_t blockDomSize = 256;
    template <bool OneWorker>
    STRATA_HD static uint32_t columnsPerBlock(uint32_t levels) {
        if constexpr (OneWorker)
            return levels >= 32768u ? 1u : 32768u / levels;
        else
            return detail::columnsPerBlock(levels);
    }
    template <class W, class F>
    STRATA_HD void operator()(W const& worker, F const& f, uint32_t columns, uint32_t levels) const {
        uint32_t const perBlock = columnsPerBlock<oneWorker<W>>(levels);
        for (uint32_t b = worker.blockDomIdx(); b * perBlock < columns; b += worker.gridDomSize()) {
            uint32_t const col0 = b * perBlock;
            uint32_t const ncols = columns - col0 < perBlock ? columns - col0 : perBlock;
            for (uint32_t i = 0; i < Fields; ++i)
                forEachColumnLevel<0>(worker, false, ncols, 0u, levels, levels,
                                      [&](uint32_t c, uint32_t k, auto) { f(i, col0 + c, k); });
        }
    }
};

} // namespace detail

// f(i, col, k) for i < Fields and every level of every column: one kernel over several fields of the same shape
// (the model's Runge-Kutta stages over its seven prognostic fields), one launch instead of Fields.
template <uint32_t Fields, class Backend, class F>
void forEachPointOfFields(Backend const& backend, uint32_t columns, uint32_t levels, F const& f) {
    if (columns == 0 || levels == 0) return;
    using K = detail::FieldsPointKernel<Fields>;
    uint32_t const perBlock = K::template columnsPerBlock<detail::oneWorkerBackend<Backend>>(levels);
    uint32_t const blocks = (columns + perBlock - 1) / perBlock;
    lockstep::launch(backend,
                     lockstep::config(blocks < detail::PointKernel::maxGrid ? blocks : detail::PointKernel::maxGrid),
                     K{}, f, columns, levels);
}

// f(col, k) for every level of every column of a `columns` x `levels` field, with the engines' column walk: the
// pointwise kernels that are not expressions (a functor struct, so that nvcc compiles the same code for Cuda).
template <class Backend, class F>
void forEachPoint(Backend const& backend, uint32_t columns, uint32_t levels, F const& f) {
    if (columns == 0 || levels == 0) return;
    uint32_t const perBlock = detail::PointKernel::columnsPerBlock(levels);
    uint32_t const blocks = (columns + perBlock - 1) / perBlock;
    lockstep::launch(backend,
                     lockstep::config(blocks < detail::PointKernel::maxGrid ? blocks : detail::PointKernel::maxGrid),
                     detail::PointKernel{}, f, columns, levels);
}

// Plans the evaluation of `expr` into a destination of `columns` x `levels`, and lays out its buffers.
template <class Backend, class E>
EvalPlan planEvaluation(Backend const& backend, E& expr, uint32_t columns, uint32_t levels, Engine engine,
                        EngineOptions const& options) {
    (void)backend;
    EvalPlan plan;
    plan.depth = E::depth;
    std::size_t limit = options.sharedLimitBytes;
    if constexpr (detail::isGpu<Backend>) limit = std::min(limit, core::sharedMemoryPerBlock(backend));

    constexpr bool stageStencilFree = !detail::oneWorkerBackend<Backend>;
    bool wantShmem = engine == Engine::Shmem;
    if (engine == Engine::Auto) wantShmem = E::depth >= 2 || (detail::isGpu<Backend> && E::depth >= 1);
    if (E::depth == 0) wantShmem = false; // nothing to stage

    if (wantShmem) {
        uint32_t tile = levels;
        if (options.maxTileLevels > 0) tile = std::min(tile, options.maxTileLevels);
        auto fits = [&](uint32_t t) { return detail::sharedBytesPerColumn(expr, stageStencilFree, t) <= limit; };
        if (!fits(tile)) {
            uint32_t lo = 0, hi = tile; // largest t in [1, tile] that fits, by bisection (bytes grow with t)
            while (hi - lo > 1) {
                uint32_t const mid = lo + (hi - lo) / 2;
                (fits(mid) ? lo : hi) = mid;
            }
            tile = lo;
        }
        if (tile == 0) {
            if (engine == Engine::Shmem) {
                std::ostringstream msg;
                msg << "the expression needs " << detail::sharedBytesPerColumn(expr, stageStencilFree, 1)
                    << " bytes of shared memory for a single level";
                throw Error(msg.str(), "evaluate (Shmem engine)",
                            "at most " + std::to_string(limit) + " bytes (EngineOptions::sharedLimitBytes)");
            }
            wantShmem = false;
        } else {
            uint32_t buffers = 0;
            uint32_t const perColumn = detail::sharedBytesPerColumn(expr, stageStencilFree, tile, &buffers);
            uint32_t cpb = std::max<uint32_t>(1, detail::engineBlockDomSize / tile);
            if (perColumn > 0) cpb = std::min<uint32_t>(cpb, static_cast<uint32_t>(limit / perColumn));
            cpb = std::max<uint32_t>(1, std::min(cpb, columns));
            plan.engine = Engine::Shmem;
            plan.tileLevels = tile;
            plan.tiles = (levels + tile - 1) / tile;
            plan.columnsPerBlock = cpb;
            plan.buffers = buffers;
            plan.sharedBytesPerColumn = perColumn;
            plan.sharedBytes = perColumn * cpb;
            uint32_t const tasks = (columns + cpb - 1) / cpb * plan.tiles;
            plan.blocks = std::min(tasks, detail::maxGrid);
            PlanState p;
            p.tileLen = tile;
            p.stageStencilFree = stageStencilFree;
            expr.plan(p, 0, 0); // the real layout, kept in the expression the kernel receives
        }
    }
    if (!wantShmem) {
        plan.engine = Engine::Direct;
        uint32_t const columnsPerBlock = detail::columnsPerBlock(levels);
        plan.columnsPerBlock = columnsPerBlock;
        plan.blocks = std::min((columns + columnsPerBlock - 1) / columnsPerBlock, detail::maxGrid);
    }
    return plan;
}

namespace detail {
// Every field leaf of `expr` has `columns` columns and its staggering's levels on a grid of n cells, and none is
// `dest` (null: no destination); else strata::Error from `where`.
template <class E>
void checkLeaves(E const& expr, uint32_t columns, uint32_t n, void const* dest, char const* where) {
    expr.forEachLeaf([&](auto const& leaf) {
        using L = std::remove_cvref_t<decltype(leaf)>;
        if constexpr (requires { leaf.field; }) {
            using LS = typename L::Stagger;
            if (leaf.field.columns != columns || leaf.field.levels != LS::levels(n)) {
                std::ostringstream msg;
                msg << "an operand has " << leaf.field.columns << " columns x " << leaf.field.levels << " levels";
                throw Error(msg.str(), where,
                            std::to_string(columns) + " columns on a grid of " + std::to_string(n) + " cells");
            }
            // (Fields of no columns own no storage and may share a null pointer: nothing to alias.)
            if (dest != nullptr && columns > 0 && static_cast<void const*>(leaf.field.data) == dest)
                throw Error("the destination field is also an operand", where,
                            "a destination that the expression does not read (stencils read neighbouring levels)");
        }
    });
}

template <bool Add, class Backend, class T, class S, class X>
EvalPlan evaluateInto(Backend const& backend, Field<T, S>& dest, X const& x, Engine engine,
                      EngineOptions const& options) {
    auto expr = asExpr(x);
    using E = decltype(expr);
    static_assert(std::is_same_v<typename E::Stagger, S> || std::is_same_v<typename E::Stagger, AnyStagger>,
                  "evaluate: the expression's staggering differs from the destination field's (Center vs Face)");
    uint32_t const n = dest.grid().cells();
    auto destView = dest.view();
    checkLeaves(expr, dest.columns(), n, static_cast<void const*>(destView.data), "evaluate");
    EvalPlan const plan = planEvaluation(backend, expr, dest.columns(), dest.levels(), engine, options);
    if (dest.columns() == 0) return plan;
    GridView const grid = dest.grid().view(Backend::memSpace);
    if (plan.engine == Engine::Direct) {
        lockstep::launch(backend, lockstep::config(plan.blocks), detail::DirectKernel<Add>{}, expr, destView, grid,
                         options.interiorLevels);
    } else {
        detail::ShmemLaunch const launch{plan.columnsPerBlock,
                                         plan.tileLevels,
                                         plan.tiles,
                                         (dest.columns() + plan.columnsPerBlock - 1) / plan.columnsPerBlock *
                                             plan.tiles,
                                         plan.sharedBytesPerColumn,
                                         options.interiorLevels};
        lockstep::launch(backend, lockstep::configSMem(plan.blocks, plan.sharedBytes), detail::ShmemKernel<Add>{}, expr,
                         destView, grid, launch);
    }
    return plan;
}
} // namespace detail

// Evaluates `expr` into every level of every column of `dest`. Returns the plan that was used.
template <class Backend, class T, class S, class X>
EvalPlan evaluate(Backend const& backend, Field<T, S>& dest, X const& x, Engine engine = Engine::Auto,
                  EngineOptions const& options = {}) {
    return detail::evaluateInto<false>(backend, dest, x, engine, options);
}

// dest += expr at every level of every column, in one pass (the fused form of evaluating into a scratch field and
// adding it: the same bits). `dest` must not be an operand of `expr`, as for evaluate.
template <class Backend, class T, class S, class X>
EvalPlan evaluateAdd(Backend const& backend, Field<T, S>& dest, X const& x, Engine engine = Engine::Auto,
                     EngineOptions const& options = {}) {
    return detail::evaluateInto<true>(backend, dest, x, engine, options);
}

} // namespace strata::ops
