// Evaluating an expression into a field: `evaluate(backend, dest, expr, engine, options)`.
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
template <class W>
inline constexpr bool oneWorker =
    std::is_same_v<typename W::BackendType, core::Serial> || std::is_same_v<typename W::BackendType, core::OpenMP>;

struct DirectCtx {
    static constexpr bool shmem = false;
    GridView grid;
    uint32_t col;
};

template <class W>
struct ShmemCtx {
    static constexpr bool shmem = true;
    GridView grid;
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
    W const* worker;
    GridView grid;
    uint32_t col0, ncols, k0, k1;
    std::byte* smem;
    uint32_t perColumn;

    STRATA_HD ShmemCtx<W> ctx(uint32_t c) const { return {grid, col0 + c, k0, worker, smem + c * perColumn}; }

    // f(c, i) for every column c of the block and i = 0..len-1, spread over the workers.
    template <class F>
    STRATA_HD void forEachLevel(uint32_t len, F&& f) const {
        if constexpr (oneWorker<W>) {
            for (uint32_t c = 0; c < ncols; ++c)
                for (uint32_t i = 0; i < len; ++i)
                    f(c, i);
        } else {
            lockstep::forEachInRange2D(*worker, ncols, len, f);
        }
    }
};

struct ShmemLaunch {
    uint32_t columnsPerBlock;
    uint32_t tileLevels;
    uint32_t tiles;
    uint32_t tasks;
    uint32_t perColumn;
};

struct DirectKernel {
    static constexpr uint32_t blockDomSize = engineBlockDomSize;
    template <class W, class E, class T, class S>
    STRATA_ENGINE_FLATTEN STRATA_HD void operator()(W const& worker, E const& expr, FieldView<T, S> dest,
                                                    GridView grid) const {
        // Block b computes columns [b * columnsPerBlock, ...) : whole columns, so a worker walks levels without
        // dividing, and neighbouring workers write neighbouring levels.
        uint32_t const columnsPerBlock = (blockDomSize + dest.levels - 1) / dest.levels;
        for (uint32_t b = worker.blockDomIdx(); b * columnsPerBlock < dest.columns; b += worker.gridDomSize()) {
            uint32_t const col0 = b * columnsPerBlock;
            uint32_t const ncols = col0 + columnsPerBlock <= dest.columns ? columnsPerBlock : dest.columns - col0;
            auto const point = [&](uint32_t c, uint32_t k) {
                dest(col0 + c, k) = static_cast<T>(expr.eval(DirectCtx{grid, col0 + c}, k));
            };
            if constexpr (oneWorker<W>) {
                for (uint32_t c = 0; c < ncols; ++c)
                    for (uint32_t k = 0; k < dest.levels; ++k)
                        point(c, k);
            } else {
                lockstep::forEachInRange2D(worker, ncols, dest.levels, point);
            }
        }
    }
};

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
            BlockState<W> const state{&worker, grid, col0, ncols, k0, k1, worker.dynSharedBase(), launch.perColumn};
            stageFrom<1>(worker, expr, state);
            state.forEachLevel(k1 - k0, [&](uint32_t c, uint32_t i) {
                dest(col0 + c, k0 + i) = static_cast<T>(expr.eval(state.ctx(c), k0 + i));
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
uint32_t sharedBytesPerColumn(E expr, uint32_t tileLevels, uint32_t* buffers = nullptr) {
    PlanState p;
    p.tileLen = tileLevels;
    expr.plan(p, 0, 0);
    if (buffers) *buffers = p.buffers;
    return (p.bytes + 15u) / 16u * 16u;
}

template <class Backend>
constexpr bool isGpu = std::is_same_v<Backend, core::Cuda>;

} // namespace detail

// Plans the evaluation of `expr` into a destination of `columns` x `levels`, and lays out its buffers.
template <class Backend, class E>
EvalPlan planEvaluation(Backend const& backend, E& expr, uint32_t columns, uint32_t levels, Engine engine,
                        EngineOptions const& options) {
    (void)backend;
    EvalPlan plan;
    plan.depth = E::depth;
    std::size_t limit = options.sharedLimitBytes;
    if constexpr (detail::isGpu<Backend>) limit = std::min(limit, core::sharedMemoryPerBlock(backend));

    bool wantShmem = engine == Engine::Shmem;
    if (engine == Engine::Auto) wantShmem = E::depth >= 2 || (detail::isGpu<Backend> && E::depth >= 1);
    if (E::depth == 0) wantShmem = false; // nothing to stage

    if (wantShmem) {
        uint32_t tile = levels;
        if (options.maxTileLevels > 0) tile = std::min(tile, options.maxTileLevels);
        auto fits = [&](uint32_t t) { return detail::sharedBytesPerColumn(expr, t) <= limit; };
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
                msg << "the expression needs " << detail::sharedBytesPerColumn(expr, 1)
                    << " bytes of shared memory for a single level";
                throw Error(msg.str(), "evaluate (Shmem engine)",
                            "at most " + std::to_string(limit) + " bytes (EngineOptions::sharedLimitBytes)");
            }
            wantShmem = false;
        } else {
            uint32_t buffers = 0;
            uint32_t const perColumn = detail::sharedBytesPerColumn(expr, tile, &buffers);
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
            expr.plan(p, 0, 0); // the real layout, kept in the expression the kernel receives
        }
    }
    if (!wantShmem) {
        plan.engine = Engine::Direct;
        uint32_t const columnsPerBlock = (detail::engineBlockDomSize + levels - 1) / levels;
        plan.columnsPerBlock = columnsPerBlock;
        plan.blocks = std::min((columns + columnsPerBlock - 1) / columnsPerBlock, detail::maxGrid);
    }
    return plan;
}

// Evaluates `expr` into every level of every column of `dest`. Returns the plan that was used.
template <class Backend, class T, class S, class X>
EvalPlan evaluate(Backend const& backend, Field<T, S>& dest, X const& x, Engine engine = Engine::Auto,
                  EngineOptions const& options = {}) {
    auto expr = asExpr(x);
    using E = decltype(expr);
    static_assert(std::is_same_v<typename E::Stagger, S> || std::is_same_v<typename E::Stagger, AnyStagger>,
                  "evaluate: the expression's staggering differs from the destination field's (Center vs Face)");
    uint32_t const n = dest.grid().cells();
    auto destView = dest.view();
    expr.forEachLeaf([&](auto const& leaf) {
        using L = std::remove_cvref_t<decltype(leaf)>;
        if constexpr (requires { leaf.field; }) {
            using LS = typename L::Stagger;
            if (leaf.field.columns != dest.columns() || leaf.field.levels != LS::levels(n)) {
                std::ostringstream msg;
                msg << "an operand has " << leaf.field.columns << " columns x " << leaf.field.levels << " levels";
                throw Error(msg.str(), "evaluate",
                            std::to_string(dest.columns()) + " columns on a grid of " + std::to_string(n) + " cells");
            }
            if (static_cast<void const*>(leaf.field.data) == static_cast<void const*>(destView.data))
                throw Error("the destination field is also an operand", "evaluate",
                            "a destination that the expression does not read (stencils read neighbouring levels)");
        }
    });
    EvalPlan const plan = planEvaluation(backend, expr, dest.columns(), dest.levels(), engine, options);
    if (dest.columns() == 0) return plan;
    GridView const grid = dest.grid().view(Backend::memSpace);
    if (plan.engine == Engine::Direct) {
        lockstep::launch(backend, lockstep::config(plan.blocks), detail::DirectKernel{}, expr, destView, grid);
    } else {
        detail::ShmemLaunch const launch{
            plan.columnsPerBlock, plan.tileLevels, plan.tiles,
            (dest.columns() + plan.columnsPerBlock - 1) / plan.columnsPerBlock * plan.tiles, plan.sharedBytesPerColumn};
        lockstep::launch(backend, lockstep::configSMem(plan.blocks, plan.sharedBytes), detail::ShmemKernel{}, expr,
                         destView, grid, launch);
    }
    return plan;
}

} // namespace strata::ops
