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
//   Auto     on the checking backend, the planner's rule (below); on Serial, OpenMP and Cuda, a timed choice: the
//            first calls of each expression and shape alternate the two engines and keep each one's best time,
//            later calls run the faster (detail::TimedChoice; on Cuda the timed calls wait for the device). On
//            Serial and OpenMP, where Shmem would stream its destination, streaming or plain stores are a timed
//            choice of their own, made on Auto's Shmem calls.
// Direct and Shmem run the same operator code on the same values in the same order: their results are identical bit
// for bit (the build fixes the floating-point contract, see docs/operators.md).
//
// The planner, before launch, picks for Shmem the tile of output levels a block computes (the whole column when its
// buffers fit in the shared-memory limit, else the longest tile that fits: columns of any height are tiled, with
// halos as wide as the tree's footprint; on Serial and OpenMP at most 4096 levels) and how many columns share a block
// (enough that short columns still give 256 work items on Threads, 4096 on Serial and OpenMP, whose one worker takes
// them one column at a time, 1024 on a GPU: detail::shmemBlockItems). Auto's rule takes Shmem when stencils are nested
// (depth >= 2; Direct would recompute inner stencils) or on a GPU, Direct otherwise or when not even one level fits in
// shared memory. The engines give the same bits, so the timed choice changes the speed of a run, never its results.
//
// Files: operators/engine/planner.hpp (Engine, EngineOptions, EvalPlan, the planner, Auto's timed choice),
// engine/direct.hpp and engine/shmem.hpp (the two kernels), engine/common.hpp (the column walk, a kernel's targets),
// engine/points.hpp (forEachPoint, forEachPointOfFields); this header: checks, launch, evaluate, evaluateAdd and
// evaluateFused.
#pragma once

#include <strata/core/error.hpp>
#include <strata/core/lockstep.hpp>
#include <strata/operators/engine/common.hpp>
#include <strata/operators/engine/direct.hpp>
#include <strata/operators/engine/planner.hpp>
#include <strata/operators/engine/points.hpp>
#include <strata/operators/engine/shmem.hpp>
#include <strata/operators/expr.hpp>
#include <strata/operators/field.hpp>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

namespace strata::ops {

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

// Launches the kernel of `plan` over targets of `columns` columns (one launch, whatever the number of targets).
template <class Backend, class... Ts>
void launchTargets(Backend const& backend, EvalPlan const& plan, uint32_t columns, GridView const& grid,
                   EngineOptions const& options, Ts const&... targets) {
    if (plan.engine == Engine::Direct) {
        lockstep::launch(backend, lockstep::config(plan.blocks), DirectKernel{}, columns, plan.columnsPerBlock, grid,
                         options.interiorLevels, targets...);
    } else {
        ShmemLaunch const launch{plan.columnsPerBlock,
                                 plan.tileLevels,
                                 plan.tiles,
                                 (columns + plan.columnsPerBlock - 1) / plan.columnsPerBlock * plan.tiles,
                                 options.interiorLevels,
                                 plan.groupsPerBlock};
        lockstep::launch(backend, lockstep::configSMem(plan.blocks, plan.sharedBytes), ShmemKernel{}, columns, grid,
                         launch, targets...);
    }
}

// One host-side destination of evaluateFused: ops::assign(dest, expr) or ops::accumulate(dest, expr).
template <bool Add, class T, class S, class X>
struct Assignment {
    static constexpr bool add = Add;
    using Value = T;
    using Stagger = S;
    Field<T, S>* dest;
    X x;
};

template <class A, class E>
constexpr void checkStagger() {
    static_assert(std::is_same_v<typename E::Stagger, typename A::Stagger> ||
                      std::is_same_v<typename E::Stagger, AnyStagger>,
                  "evaluate: the expression's staggering differs from the destination field's (Center vs Face)");
}

template <class Backend, std::size_t... I, class... As>
EvalPlan evaluateAssignments(Backend const& backend, Engine engine, EngineOptions const& options,
                             std::index_sequence<I...>, As const&... as) {
    constexpr std::size_t count = sizeof...(As);
    auto exprs = std::make_tuple(asExpr(as.x)...);
    using Exprs = decltype(exprs);
    (checkStagger<As, std::tuple_element_t<I, Exprs>>(), ...);
    constexpr int depth = std::max({std::tuple_element_t<I, Exprs>::depth...});

    auto const& d0 = *std::get<0>(std::forward_as_tuple(as...)).dest;
    uint32_t const columns = d0.columns(), n = d0.grid().cells();
    void const* const dests[] = {static_cast<void const*>(std::as_const(*as.dest).view().data)...};
    (
        [&](auto const& a, auto const& expr) {
            if (&a.dest->grid() != &d0.grid() || a.dest->columns() != columns)
                throw Error("destinations on different grids or of different columns (" +
                                std::to_string(a.dest->columns()) + " and " + std::to_string(columns) + ")",
                            "evaluateFused", "destinations of the same columns on the same grid");
            for (void const* d : dests)
                checkLeaves(expr, columns, n, d, count == 1 ? "evaluate" : "evaluateFused");
        }(as, std::get<I>(exprs)),
        ...);
    for (std::size_t i = 0; i < count; ++i)
        for (std::size_t j = 0; j < i; ++j)
            if (columns > 0 && dests[i] == dests[j])
                throw Error("the same field is two destinations", "evaluateFused", "distinct destination fields");

    uint32_t const levels[] = {as.dest->levels()...};
    constexpr bool timedBackend = oneWorkerBackend<Backend> || isGpu<Backend>; // Serial, OpenMP, Cuda
    bool const timed = engine == Engine::Auto && options.timedAuto && timedBackend && depth >= 1;
    bool const rule = depth >= 2 || (isGpu<Backend> && depth >= 1);
    bool const wantShmem = engine == Engine::Shmem || (engine == Engine::Auto && (timed || rule));
    bool fused = true;
    uint32_t perColumn[count];
    std::tuple<BufferPlan<std::tuple_element_t<I, Exprs>::slots>...> layouts; // the engine's, not the expressions'
    EvalPlan plan = planTargets(backend, columns, levels, wantShmem, engine == Engine::Shmem, options, &fused,
                                perColumn, exprs, layouts);
    if (!fused) { // several targets whose Shmem plans need tiles: one evaluation each
        EvalPlan last;
        ((last = evaluateAssignments(backend, engine, options, std::index_sequence<0>{}, as)), ...);
        return last;
    }
    if (columns == 0) return plan;
    GridView const grid = d0.grid().view(Backend::memSpace);
    // Streaming stores: Shmem's large destinations of doubles or floats, written (not added to), on a one-worker
    // backend of an x86-64 CPU (elsewhere streamStore would be a plain copy through the buffer: no gain). Not Direct's:
    // its one pass would become two (the values through an L1 buffer), which costs it more than the stores save
    // (docs/performance.md). Auto times them against plain stores (below).
    bool plainStores = false; // Auto's timed choice of the store kind (below) took plain stores
    auto const streams = [&](EvalPlan const& p, auto const& a) {
        using A = std::remove_cvref_t<decltype(a)>;
        using T = typename A::Value;
        constexpr bool streamable = STRATA_STREAMING_STORES && (std::is_same_v<T, double> || std::is_same_v<T, float>);
        return streamable && oneWorkerBackend<Backend> && !A::add && p.engine == Engine::Shmem && !plainStores &&
               std::size_t{a.dest->stride()} * columns * sizeof(T) >= options.streamingStoreBytes;
    };
    auto const launch = [&](EvalPlan& p) {
        p.streamed = (0u + ... + (streams(p, as) ? 1u : 0u));
        launchTargets(backend, p, columns, grid, options,
                      Target<As::add, std::tuple_element_t<I, Exprs>, typename As::Value, typename As::Stagger>{
                          std::get<I>(exprs), as.dest->view(), perColumn[I], std::get<I>(layouts), streams(p, as)}...);
    };
    // The timed choice exists only on the one-worker backends and the GPU: on Threads (the checking backend) it is not
    // even instantiated.
    if constexpr (timedBackend) {
        if (timed && plan.engine == Engine::Shmem) {
            int threads = 1; // OpenMP: its thread count; Cuda: the device (each device its own choice)
            if constexpr (Backend::hostParallel) threads = core::openmpThreads();
            if constexpr (isGpu<Backend>) threads = backend.device;
            TimedChoiceKey const key{columns,
                                     levels[0],
                                     options.maxTileLevels,
                                     options.shmemBlockItems,
                                     options.sharedLimitBytes,
                                     threads,
                                     options.interiorLevels,
                                     options.streamingStoreBytes};
            using Choices = TimedChoices<TypeList<Backend, As..., Exprs>>;
            bool timing = false;
            Engine const pick = Choices::next(key, &timing);
            if (pick == Engine::Direct)
                plan = planTargets(backend, columns, levels, false, false, options, &fused, perColumn, exprs, layouts);
            plan.timed = true;
            // Where Shmem would write with streaming stores, the store kind is a timed choice of its own (the same
            // rules; its "Shmem" the streaming stores, its "Direct" plain ones): whether they pay depends on the CPU
            // and the column (docs/performance.md, "Streaming stores"), and the bits are the same either way.
            using StoreChoices = TimedChoices<TypeList<Backend, As..., Exprs, EngineOptions>>;
            bool storeTiming = false;
            Engine store = Engine::Shmem;
            if (pick == Engine::Shmem && (false || ... || streams(plan, as))) {
                store = StoreChoices::next(key, &storeTiming);
                plainStores = store == Engine::Direct;
            }
            if (timing || storeTiming) {
                core::synchronize(backend); // on a GPU: the work launched before is not this launch's time
                auto const t0 = std::chrono::steady_clock::now();
                launch(plan);
                core::synchronize(backend);
                double const seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
                if (timing) Choices::record(key, pick, seconds);
                if (storeTiming) StoreChoices::record(key, store, seconds);
                return plan;
            }
        }
    }
    launch(plan);
    return plan;
}
} // namespace detail

// The destinations of evaluateFused: dest = expr, and dest += expr (the expression kept as an expression: a field
// operand becomes its leaf, a view).
template <class T, class S, class X>
auto assign(Field<T, S>& dest, X const& x) {
    return detail::Assignment<false, T, S, decltype(asExpr(x))>{&dest, asExpr(x)};
}
template <class T, class S, class X>
auto accumulate(Field<T, S>& dest, X const& x) {
    return detail::Assignment<true, T, S, decltype(asExpr(x))>{&dest, asExpr(x)};
}

// Evaluates `expr` into every level of every column of `dest`. Returns the plan that was used.
template <class Backend, class T, class S, class X>
EvalPlan evaluate(Backend const& backend, Field<T, S>& dest, X const& x, Engine engine = Engine::Auto,
                  EngineOptions const& options = {}) {
    return detail::evaluateAssignments(backend, engine, options, std::index_sequence<0>{}, assign(dest, x));
}

// dest += expr at every level of every column, in one pass (the fused form of evaluating into a scratch field and
// adding it: the same bits). `dest` must not be an operand of `expr`, as for evaluate.
template <class Backend, class T, class S, class X>
EvalPlan evaluateAdd(Backend const& backend, Field<T, S>& dest, X const& x, Engine engine = Engine::Auto,
                     EngineOptions const& options = {}) {
    return detail::evaluateAssignments(backend, engine, options, std::index_sequence<0>{}, accumulate(dest, x));
}

// Several destinations in one kernel: `evaluateFused(backend, engine, options, assign(a, ea), accumulate(b, eb), ...)`.
// A block takes its columns through every target in turn, so the leaves the expressions share are still in cache
// (on a GPU, in L1/L2) when the next target reads them, and the evaluation is one launch instead of one per
// destination. The bits are those of evaluating (or evaluateAdd-ing) each target on its own, in any order: no
// expression may read a destination, and the destinations are distinct fields of the same columns on the same grid.
// Shmem takes each column whole (the buffers of the largest target); when some target's column does not fit in one
// tile, the targets are evaluated one by one instead. Returns the plan (`targets` the number fused in one kernel).
template <class Backend, class... As>
EvalPlan evaluateFused(Backend const& backend, Engine engine, EngineOptions const& options, As const&... as) {
    static_assert(sizeof...(As) >= 1, "evaluateFused: give at least one destination (ops::assign, ops::accumulate)");
    return detail::evaluateAssignments(backend, engine, options, std::index_sequence_for<As...>{}, as...);
}

} // namespace strata::ops
