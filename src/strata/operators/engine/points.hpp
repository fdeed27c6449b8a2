// Pointwise kernels that are not expressions, with the engines' column walk (operators/engine.hpp):
// forEachPoint and forEachPointOfFields.
#pragma once

#include <strata/operators/engine/common.hpp>

#include <cstdint>

namespace strata::ops {

namespace detail {

// Whole columns per block, as in the Direct kernel: no division per point to find (column, level), and on the
// one-worker CPU backends a plain loop over a column's levels, which the compiler vectorises.
struct PointKernel {
    static constexpr uint32_t blockDomSize = engineBlockDomSize;
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

// f(i, col, k) for i < Fields. On the one-worker CPU backends field by field within a block of columns, so that a
// kernel over several fields keeps the few streams of one field at a time (seven fields' streams at once thrash the
// L1 sets when the fields share their alignment; docs/performance.md); a CPU block takes about 32768 points, 256 KiB
// of a field, long enough for the prefetchers. With many workers (the GPU) a block takes the columns of 256 items of
// one field: each worker's one load, update and store, the fields' blocks side by side in one launch (with the fields
// in turn within a block, each worker's loads of the fields would come one after another, fewer in flight).
template <uint32_t Fields>
struct FieldsPointKernel {
    static constexpr uint32_t blockDomSize = engineBlockDomSize;
    template <bool OneWorker>
    STRATA_HD static uint32_t columnsPerBlock(uint32_t levels) {
        if constexpr (OneWorker)
            return levels >= 32768u ? 1u : 32768u / levels;
        else
            return detail::columnsPerBlock(levels);
    }
    // Blocks of the launch: the column blocks of every field (many workers) or of all fields at once (one worker).
    template <bool OneWorker>
    STRATA_HD static uint32_t tasks(uint32_t columns, uint32_t levels) {
        uint32_t const perBlock = columnsPerBlock<OneWorker>(levels);
        uint32_t const blocks = (columns + perBlock - 1) / perBlock;
        return OneWorker ? blocks : blocks * Fields;
    }
    template <class W, class F>
    STRATA_HD void operator()(W const& worker, F const& f, uint32_t columns, uint32_t levels) const {
        uint32_t const perBlock = columnsPerBlock<oneWorker<W>>(levels);
        uint32_t const blocks = (columns + perBlock - 1) / perBlock;
        uint32_t const count = oneWorker<W> ? blocks : blocks * Fields; // tasks(), without its divisions again
        for (uint32_t task = worker.blockDomIdx(); task < count; task += worker.gridDomSize()) {
            uint32_t const b = oneWorker<W> ? task : task % blocks;
            uint32_t const col0 = b * perBlock;
            uint32_t const ncols = columns - col0 < perBlock ? columns - col0 : perBlock;
            if constexpr (oneWorker<W>) {
                for (uint32_t i = 0; i < Fields; ++i)
                    forEachColumnLevel<0>(worker, false, ncols, 0u, levels, levels,
                                          [&](uint32_t c, uint32_t k, auto) { f(i, col0 + c, k); });
            } else {
                uint32_t const i = task / blocks;
                forEachColumnLevel<0>(worker, false, ncols, 0u, levels, levels,
                                      [&](uint32_t c, uint32_t k, auto) { f(i, col0 + c, k); });
            }
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
    uint32_t const blocks = K::template tasks<detail::oneWorkerBackend<Backend>>(columns, levels);
    lockstep::launch(backend, lockstep::config(blocks < Backend::maxGridBlocks ? blocks : Backend::maxGridBlocks), K{},
                     f, columns, levels);
}

// f(col, k) for every level of every column of a `columns` x `levels` field, with the engines' column walk: the
// pointwise kernels that are not expressions (a functor struct, so that nvcc compiles the same code for Cuda).
template <class Backend, class F>
void forEachPoint(Backend const& backend, uint32_t columns, uint32_t levels, F const& f) {
    if (columns == 0 || levels == 0) return;
    uint32_t const perBlock = detail::PointKernel::columnsPerBlock(levels);
    uint32_t const blocks = (columns + perBlock - 1) / perBlock;
    lockstep::launch(backend, lockstep::config(blocks < Backend::maxGridBlocks ? blocks : Backend::maxGridBlocks),
                     detail::PointKernel{}, f, columns, levels);
}

} // namespace strata::ops
