// The Direct engine's kernel (operators/engine.hpp): every output point evaluates the whole tree from global memory.
#pragma once

#include <strata/operators/engine/common.hpp>
#include <strata/operators/expr.hpp>
#include <strata/operators/grid.hpp>

#include <cstdint>

namespace strata::ops {

namespace detail {

// A context: where a stencil node's arguments come from (`shmem`), and whether the level is interior (at least the
// expression's reach from both ends: the operators drop their boundary branches, see expr.hpp).
template <bool Interior>
struct DirectCtx {
    static constexpr bool shmem = false;
    static constexpr bool interior = Interior;
    GridView const& grid; // a reference: a context is built per element, and a copy of the grid's five fields there
    uint32_t col;         // is kept in memory rather than registers (with -march=native, several times slower)
};

struct DirectKernel {
    static constexpr uint32_t blockDomSize = engineBlockDomSize;
    template <class W, class... Ts>
    STRATA_HD void operator()(W const& worker, uint32_t columns, uint32_t perBlock, GridView grid, bool interiorLevels,
                              Ts const&... targets) const {
        // Block b computes columns [b * perBlock, ...) : whole columns, so a worker walks levels without dividing,
        // and neighbouring workers write neighbouring levels; with several targets, one after the other.
        for (uint32_t b = worker.blockDomIdx(); b * perBlock < columns; b += worker.gridDomSize()) {
            uint32_t const col0 = b * perBlock;
            uint32_t const ncols = col0 + perBlock <= columns ? perBlock : columns - col0;
            (run(worker, grid, interiorLevels, col0, ncols, targets), ...);
        }
    }

private:
    template <class W, class Tg>
    STRATA_ENGINE_TARGET STRATA_HD static void run(W const& worker, GridView const& grid, bool interiorLevels,
                                                   uint32_t col0, uint32_t ncols, Tg const& t) {
        using E = decltype(t.expr);
        using T = typename Tg::Value;
        forEachColumnLevel<E::reach>(worker, interiorLevels, ncols, 0u, t.dest.levels, t.dest.levels,
                                     [&](uint32_t c, uint32_t k, auto interior) {
                                         DirectCtx<decltype(interior)::value> const ctx{grid, col0 + c};
                                         store<Tg::add>(t.dest(col0 + c, Level{k}),
                                                        static_cast<T>(t.expr.eval(ctx, Level{k})));
                                     });
    }
};

} // namespace detail

} // namespace strata::ops
