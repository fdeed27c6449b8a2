// The Shmem engine's kernel (operators/engine.hpp): every argument of every stencil node staged once per column in
// block shared memory, leaves first, one sync per tree depth; then the root from the buffers.
#pragma once

#include <strata/operators/engine/common.hpp>
#include <strata/operators/expr.hpp>
#include <strata/operators/grid.hpp>
#include <strata/operators/stencil_node.hpp>

#include <cstddef>
#include <cstdint>

namespace strata::ops {

namespace detail {

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
    BufferInfo const* buffers; // the engine's buffer plan of the expression (expr.hpp, "Buffer slots")

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
    BufferInfo const* buffers;

    template <bool Interior = false>
    STRATA_HD ShmemCtx<W, Interior> ctx(uint32_t c) const {
        return {grid, col0 + c, k0, worker, smem + c * perColumn, buffers};
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
    uint32_t tileLevels; // with several targets, one tile: at least every destination's levels
    uint32_t tiles;
    uint32_t tasks;
    bool interiorLevels;
    uint32_t groupsPerBlock = 1; // one worker, several targets: column groups a block takes through every target
};

struct ShmemKernel {
    static constexpr uint32_t blockDomSize = engineBlockDomSize;

    template <class W, class... Ts>
    STRATA_HD void operator()(W const& worker, uint32_t columns, GridView grid, ShmemLaunch launch,
                              Ts const&... targets) const {
        if constexpr (oneWorker<W> && sizeof...(Ts) > 1) {
            // One worker, several targets (one tile): a block takes `groupsPerBlock` column groups through each
            // target in turn, so that every target streams a long run of its fields (with one group per block, the
            // targets' short runs over many fields are slower than separate kernels).
            for (uint32_t b = worker.blockDomIdx(); b * launch.groupsPerBlock < launch.tasks;
                 b += worker.gridDomSize()) {
                uint32_t const g0 = b * launch.groupsPerBlock, g1 = min(g0 + launch.groupsPerBlock, launch.tasks);
                (runGroups(worker, grid, launch, columns, g0, g1, targets), ...);
            }
        } else {
            for (uint32_t task = worker.blockDomIdx(); task < launch.tasks; task += worker.gridDomSize()) {
                uint32_t const group = task / launch.tiles, tile = task % launch.tiles;
                uint32_t const col0 = group * launch.columnsPerBlock;
                uint32_t const ncols = min(launch.columnsPerBlock, columns - col0);
                // Targets one after the other, reusing the buffers: a sync between them.
                bool first = true;
                (run(worker, grid, launch, col0, ncols, tile, targets, first), ...);
                if (task + worker.gridDomSize() < launch.tasks) worker.sync(); // the next task reuses the buffers
            }
        }
    }

private:
    STRATA_HD static uint32_t min(uint32_t a, uint32_t b) { return a < b ? a : b; }

    template <class W, class Tg>
    STRATA_ENGINE_FLATTEN STRATA_HD static void run(W const& worker, GridView const& grid, ShmemLaunch const& launch,
                                                    uint32_t col0, uint32_t ncols, uint32_t tile, Tg const& t,
                                                    bool& first) {
        if (!first) worker.sync();
        first = false;
        uint32_t const k0 = tile * launch.tileLevels;
        uint32_t const k1 = min(k0 + launch.tileLevels, t.dest.levels);
        if constexpr (oneWorker<W>) {
            // One worker: each column through every depth and its root before the next column, in the first column's
            // buffers (the two passes of a hand-written loop, over one column's buffers in L1; the planner allots
            // one column's bytes).
            for (uint32_t c = 0; c < ncols; ++c)
                runColumns(worker, grid, launch, col0 + c, 1u, k0, k1, t);
        } else {
            runColumns(worker, grid, launch, col0, ncols, k0, k1, t);
        }
    }

    // Columns [col0, col0 + ncols) of the block, levels [k0, k1): every depth staged, then the root written.
    template <class W, class Tg>
    STRATA_ENGINE_FLATTEN STRATA_HD static void runColumns(W const& worker, GridView const& grid,
                                                           ShmemLaunch const& launch, uint32_t col0, uint32_t ncols,
                                                           uint32_t k0, uint32_t k1, Tg const& t) {
        using E = decltype(t.expr);
        using T = typename Tg::Value;
        BlockState<W> const state{
            &worker,       grid, col0, ncols, k0, k1, worker.dynSharedBase(), t.perColumn, launch.interiorLevels,
            t.buffers.slot};
        stageFrom<1>(worker, t.expr, state);
        constexpr int reach = E::template shmemReach<BlockState<W>::stageStencilFree>;
        if constexpr (oneWorker<W> && !Tg::add) {
            if (t.stream) {
                streamColumnLevels<reach, T>(
                    launch.interiorLevels, ncols, k0, k1 - k0, t.dest.levels,
                    [&](uint32_t c) { return &t.dest(col0 + c, Level{k0}); },
                    [&](uint32_t c, std::size_t i, auto interior) {
                        auto const ctx = state.template ctx<decltype(interior)::value>(c);
                        return static_cast<T>(t.expr.eval(ctx, Level{k0} + i));
                    });
                return;
            }
        }
        state.template forEachLevel<reach>(k0, k1 - k0, t.dest.levels, [&](uint32_t c, uint32_t i, auto interior) {
            auto const ctx = state.template ctx<decltype(interior)::value>(c);
            store<Tg::add>(t.dest(col0 + c, Level{k0} + i), static_cast<T>(t.expr.eval(ctx, Level{k0} + i)));
        });
    }

    template <class W, class Tg>
    STRATA_ENGINE_TARGET STRATA_HD static void runGroups(W const& worker, GridView const& grid,
                                                         ShmemLaunch const& launch, uint32_t columns, uint32_t g0,
                                                         uint32_t g1, Tg const& t) {
        for (uint32_t g = g0; g < g1; ++g) {
            uint32_t const col0 = g * launch.columnsPerBlock;
            bool first = true; // one worker: no sync to make
            run(worker, grid, launch, col0, min(launch.columnsPerBlock, columns - col0), 0u, t, first);
        }
    }

    template <int D, class W, class E, class B>
    STRATA_HD static void stageFrom(W const& worker, E const& expr, B const& state) {
        if constexpr (D <= E::depth) {
            detail::stageAt<D, 0>(expr, state);
            worker.sync();
            stageFrom<D + 1>(worker, expr, state);
        }
    }
};

} // namespace detail

} // namespace strata::ops
