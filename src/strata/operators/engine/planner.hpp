// The engines' planner (operators/engine.hpp): Engine, EngineOptions, the plan of an evaluation (EvalPlan) for one
// or several targets, and Auto's timed choice on the one-worker CPU backends and the GPU.
#pragma once

#include <strata/core/backend.hpp>
#include <strata/core/error.hpp>
#include <strata/operators/engine/common.hpp>
#include <strata/operators/stencil_node.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <tuple>

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
    std::size_t sharedLimitBytes = core::defaultSharedLimitBytes; // per block; Cuda also checks the device's limit
    uint32_t maxTileLevels = 0; // 0: no cap of its own (tests set one to force tiling; see also shmemBlockItems)
    bool interiorLevels = true; // false: every level takes the general path with its boundary tests (tests compare)
    bool timedAuto = true;      // Auto on Serial, OpenMP and Cuda times both engines (false: the planner's rule)
    // Shmem: the column levels a block takes at once (its columns: this / tile levels, at least one, as the shared-
    // memory limit allows, except on Serial and OpenMP, whose one worker reuses one column's buffers for each column;
    // there also the longest tile of a single target); 0: the backend's default,
    // detail::shmemBlockItems (strata-bench's operators/{serial,cuda}/.../shmem_items<N> variants measure others).
    uint32_t shmemBlockItems = 0;
    // Serial and OpenMP, the Shmem engine: a destination of at least this many bytes (not evaluateAdd's, which reads
    // it) is written with streaming stores, past the caches (detail::streamStore; Direct keeps plain stores). Default
    // 32 MiB, the last-level cache of the machine docs/performance.md describes: a smaller destination can be read
    // back from the cache, where streaming stores gain nothing; a larger one goes to memory, where they save the read
    // of every line written. SIZE_MAX: never; 0: always (tests).
    std::size_t streamingStoreBytes = std::size_t{32} << 20;
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
    uint32_t groupsPerBlock = 1; // Shmem, several targets on a one-worker backend: column groups per block
    bool timed = false;          // Auto's engine came from its timed choice
    uint32_t targets = 1;        // destinations computed by the one kernel (evaluateFused)
    uint32_t streamed = 0;       // of them, written with streaming stores (EngineOptions::streamingStoreBytes)

    std::string describe() const {
        std::ostringstream s;
        s << engineName(engine) << (timed ? " (timed auto)" : "") << " depth=" << depth;
        if (targets > 1) s << " targets=" << targets;
        if (streamed > 0) s << " streamed=" << streamed;
        if (engine == Engine::Shmem)
            s << " columns/block=" << columnsPerBlock << " tile=" << tileLevels << " tiles=" << tiles
              << " buffers=" << buffers << " shared=" << sharedBytes << "B";
        s << " blocks=" << blocks;
        return s.str();
    }
};

namespace detail {

// The Shmem engine's buffer plan of one expression, laid out by a visitor over its tree (StencilNode::walk): each
// argument that the kernels stage (stagedArg) gets `tileLen + hi - lo` values at the next 16-byte boundary of the
// column's shared region, in the order of the walk (parents before children).
struct BufferLayout {
    uint32_t tileLen = 0;
    bool stageStencilFree = true; // every stencil-free argument gets a buffer (else only those that divide)
    BufferInfo* slots = nullptr;  // where to write the layout (null: only count the bytes)
    uint32_t bytes = 0;
    uint32_t buffers = 0;

    template <class A>
    void argument(std::size_t slot, int32_t lo, int32_t hi) {
        if constexpr (isBuffered<A>) {
            if (!(stageStencilFree ? stagedArg<A, true> : stagedArg<A, false>)) return; // read where used
            auto const capacity = static_cast<uint32_t>(static_cast<int32_t>(tileLen) + hi - lo);
            uint32_t const offset = (bytes + 15u) / 16u * 16u;
            bytes = offset + static_cast<uint32_t>(sizeof(typename A::Value)) * capacity;
            ++buffers;
            if (slots) slots[slot] = BufferInfo{offset, capacity, lo, hi};
        }
    }
};

// The shared bytes per column of expr's buffers for a tile of `tileLevels` levels; with `layout`, their layout too.
template <class E>
uint32_t sharedBytesPerColumn(E const& expr, bool stageStencilFree, uint32_t tileLevels, uint32_t* buffers = nullptr,
                              BufferPlan<E::slots>* layout = nullptr) {
    BufferLayout v;
    v.tileLen = tileLevels;
    v.stageStencilFree = stageStencilFree;
    if (layout) {
        *layout = BufferPlan<E::slots>{};
        v.slots = layout->slot;
    }
    detail::walkAt<0>(expr, v, 0, 0);
    if (buffers) *buffers = v.buffers;
    return (v.bytes + 15u) / 16u * 16u;
}

template <class Backend>
constexpr bool isGpu = Backend::isGpu;

// The column levels a Shmem block takes by default: one per worker (256) on the Threads backend; 1024 on a GPU, so
// each of a block's 256 workers stages four values between two syncs: more loads in flight between two barriers,
// where one load per worker leaves the memory system idle.
//
// With one worker (Serial, OpenMP) oneWorkerBlockItems, and no tile longer than that: the worker takes a block's
// columns one at a time, each staged and then written (the two passes of a hand-written loop over one column's
// buffers in L1), so a block's size only spreads the block's own setup (its buffer plan, its loop bounds) over more
// columns; Direct's one-worker blocks take as many levels (docs/performance.md measures the choices).
inline constexpr uint32_t oneWorkerBlockItems = 4096;
template <class Backend>
constexpr uint32_t shmemBlockItems = isGpu<Backend>              ? 1024u
                                     : oneWorkerBackend<Backend> ? oneWorkerBlockItems
                                                                 : engineBlockDomSize;

// Auto's timed choice for one expression type and shape. The first `trials` calls alternate Shmem and Direct (Shmem
// first) and keep each engine's fastest time, so that a first call's page faults or cold caches do not decide; later
// calls take the engine with the lower best time, except the re-checks, which time the other engine again: one call
// in every `recheckEvery`, and where the two best times are within `closeCall` of each other also the 4th, 8th, 16th
// and 32nd call after the trials. A choice made from trials that the machine's noise slowed (on a busy machine the
// trials can pick the clearly slower engine) is mended at the next re-check that runs undisturbed: soon after the
// trials when the call was close, and at the price of one call in 64 on the slower engine (three, for a close call).
// (The early re-checks of a clear choice would cost more than they could mend: each runs the slower engine.) A close
// call's re-check is a run of `closeRun` calls of the other engine: an engine's time depends on what ran before it
// (the Shmem engine's streaming stores are slower right after a Direct call than after several Shmem calls, so
// alternating single calls undervalue it), and the run's later calls time it after itself, as it will run once
// chosen. Deterministic given the times recorded (tests feed it times).
class TimedChoice {
public:
    static constexpr int trials = 4;
    static constexpr int recheckEvery = 64;
    static constexpr double closeCall = 1.25; // the slower best time at most this times the faster one
    static constexpr int closeRun = 3;        // a close call's re-check: this many calls of the other engine in a row
    // Whether the i-th call after the trials (from 1) is a re-check, when the best times are close or not.
    static constexpr bool isRecheck(long long i, bool close) {
        return i < recheckEvery ? close && i >= 4 && (i & (i - 1)) == 0 : i % recheckEvery == 0;
    }

    Engine next() const {
        if (m_calls < trials) return m_calls % 2 == 0 ? Engine::Shmem : Engine::Direct;
        if (m_runLeft > 0) return m_runEngine;
        Engine const faster = m_best[1] < m_best[0] ? Engine::Shmem : Engine::Direct;
        if (!recheckStarts()) return faster;
        return faster == Engine::Shmem ? Engine::Direct : Engine::Shmem;
    }
    // Whether the next call is timed (a trial or a re-check): it must then be recorded, else skipped.
    bool timing() const { return m_calls < trials || m_runLeft > 0 || recheckStarts(); }
    void record(Engine engine, double seconds) {
        // A re-check that was due starts a run: `closeRun` calls when the call is close, else one; both judged before
        // this time counts, as timing() and next() judged them. (Host threads that share a choice may record two
        // calls timed at the same index: the second one continues the run, it does not start another.)
        if (m_runLeft == 0 && recheckStarts()) {
            m_runEngine = engine;
            m_runLeft = close() ? closeRun : 1;
        }
        if (m_runLeft > 0) --m_runLeft;
        double& best = m_best[engine == Engine::Shmem ? 1 : 0];
        best = std::min(best, seconds);
        ++m_calls;
    }
    void skip() { ++m_calls; } // an untimed call
    double best(Engine engine) const { return m_best[engine == Engine::Shmem ? 1 : 0]; }

private:
    bool close() const { return std::max(m_best[0], m_best[1]) <= closeCall * std::min(m_best[0], m_best[1]); }
    bool recheckStarts() const { return m_calls >= trials && isRecheck(m_calls - trials + 1, close()); }

    double m_best[2] = {std::numeric_limits<double>::infinity(), std::numeric_limits<double>::infinity()};
    long long m_calls = 0;
    int m_runLeft = 0;                   // calls left in the current re-check run
    Engine m_runEngine = Engine::Direct; // the engine the run times
};

// The timed choices of one instantiation of evaluate (expression type, destination type, backend, add or not), per
// shape and the options that change a plan; shared by the host threads that evaluate (a lock per call, cheap against
// a kernel).
struct TimedChoiceKey {
    uint32_t columns, levels, maxTileLevels, shmemBlockItems;
    std::size_t sharedLimitBytes;
    int threads;
    bool interiorLevels;
    std::size_t streamingStoreBytes;
    auto operator<=>(TimedChoiceKey const&) const = default;
};

template <class...>
struct TypeList {};

template <class Instantiation>
class TimedChoices {
public:
    static Engine next(TimedChoiceKey const& key, bool* timing) {
        std::lock_guard<std::mutex> lock(mutex());
        TimedChoice& c = map()[key];
        *timing = c.timing();
        Engine const engine = c.next();
        if (!*timing) c.skip();
        return engine;
    }
    static void record(TimedChoiceKey const& key, Engine engine, double seconds) {
        std::lock_guard<std::mutex> lock(mutex());
        map()[key].record(engine, seconds);
    }

private:
    static std::mutex& mutex() {
        static std::mutex m;
        return m;
    }
    static std::map<TimedChoiceKey, TimedChoice>& map() {
        static std::map<TimedChoiceKey, TimedChoice> m;
        return m;
    }
};

// The plan for Shmem when `wantShmem` (the longest tile that fits; with `required`, strata::Error when not even one
// level fits, else Direct), for Direct otherwise. Lays out the Shmem buffers of `expr` in `layout`.
template <class Backend, class E>
EvalPlan planFor(Backend const& backend, E const& expr, BufferPlan<E::slots>& layout, uint32_t columns, uint32_t levels,
                 bool wantShmem, bool required, EngineOptions const& options, bool oneTarget = true) {
    (void)backend;
    EvalPlan plan;
    plan.depth = E::depth;
    std::size_t limit = options.sharedLimitBytes;
    if constexpr (detail::isGpu<Backend>) limit = std::min(limit, core::sharedMemoryPerBlock(backend));

    constexpr bool stageStencilFree = !detail::oneWorkerBackend<Backend>;
    if (E::depth == 0) wantShmem = false; // nothing to stage

    if (wantShmem) {
        uint32_t const items = options.shmemBlockItems > 0 ? options.shmemBlockItems : shmemBlockItems<Backend>;
        uint32_t tile = levels;
        if (options.maxTileLevels > 0) tile = std::min(tile, options.maxTileLevels);
        // One worker, one target: no tile longer than a block's items (see shmemBlockItems). Several targets keep
        // whole columns (planTargets): their blocks take long runs of columns instead (fusedPointsPerBlock).
        if constexpr (detail::oneWorkerBackend<Backend>)
            if (oneTarget) tile = std::min(tile, items);
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
            if (required) {
                std::ostringstream msg;
                msg << "the expression needs " << detail::sharedBytesPerColumn(expr, stageStencilFree, 1)
                    << " bytes of shared memory for a single level";
                throw Error(msg.str(), "evaluate (Shmem engine)",
                            "at most " + std::to_string(limit) + " bytes (EngineOptions::sharedLimitBytes)");
            }
            wantShmem = false;
        } else {
            uint32_t buffers = 0;
            uint32_t const perColumn = detail::sharedBytesPerColumn(expr, stageStencilFree, tile, &buffers, &layout);
            uint32_t cpb = std::max<uint32_t>(1, items / tile);
            // (One worker: the kernel reuses one column's buffers for each column of a block.)
            if (perColumn > 0 && !detail::oneWorkerBackend<Backend>)
                cpb = std::min<uint32_t>(cpb, static_cast<uint32_t>(limit / perColumn));
            cpb = std::max<uint32_t>(1, std::min(cpb, columns));
            plan.engine = Engine::Shmem;
            plan.tileLevels = tile;
            plan.tiles = (levels + tile - 1) / tile;
            plan.columnsPerBlock = cpb;
            plan.buffers = buffers;
            plan.sharedBytesPerColumn = perColumn;
            plan.sharedBytes = detail::oneWorkerBackend<Backend> ? perColumn : perColumn * cpb;
            uint32_t const tasks = (columns + cpb - 1) / cpb * plan.tiles;
            plan.blocks = std::min(tasks, Backend::maxGridBlocks);
        }
    }
    if (!wantShmem) {
        plan.engine = Engine::Direct;
        // One worker: a block takes a run of columns, as Shmem's does, so that its setup is spread over more columns.
        uint32_t const columnsPerBlock = detail::oneWorkerBackend<Backend>
                                             ? std::max(1u, oneWorkerBlockItems / std::max(1u, levels))
                                             : detail::columnsPerBlock(levels);
        plan.columnsPerBlock = columnsPerBlock;
        plan.blocks = std::min((columns + columnsPerBlock - 1) / columnsPerBlock, Backend::maxGridBlocks);
    }
    return plan;
}

// Several targets on a one-worker CPU backend: the points of a block (256 KiB of doubles per field), so that each
// target streams long runs (short runs over many fields are slower than separate kernels; docs/performance.md).
inline constexpr uint32_t fusedPointsPerBlock = 32768;

// The plan of one or several targets in one kernel. One target: planFor's plan (tiles allowed). Several: each
// expression planned for its own destination, the whole column of every destination in one tile (`fused` false when
// a Shmem plan would need tiles: the caller then evaluates the targets one by one), the fewest columns per block any
// target allows, the largest buffers any target needs. `perColumn[t]`: target t's shared bytes per column; `layouts`:
// each target's buffer plan, as the kernel receives it.
template <class Backend, class... Es>
EvalPlan planTargets(Backend const& backend, uint32_t columns, uint32_t const* levels, bool wantShmem, bool required,
                     EngineOptions const& options, bool* fused, uint32_t* perColumn, std::tuple<Es...> const& exprs,
                     std::tuple<BufferPlan<Es::slots>...>& layouts) {
    EvalPlan each[sizeof...(Es)];
    [&]<std::size_t... I>(std::index_sequence<I...>) {
        ((each[I] = planFor(backend, std::get<I>(exprs), std::get<I>(layouts), columns, levels[I], wantShmem, required,
                            options, sizeof...(Es) == 1)),
         ...);
    }
    (std::index_sequence_for<Es...>{});
    *fused = true;
    for (std::size_t t = 0; t < sizeof...(Es); ++t)
        perColumn[t] = each[t].engine == Engine::Shmem ? each[t].sharedBytesPerColumn : 0u;
    if constexpr (sizeof...(Es) == 1) {
        return each[0];
    } else {
        EvalPlan plan;
        plan.targets = sizeof...(Es);
        plan.engine = Engine::Shmem;
        uint32_t maxLevels = 0;
        for (std::size_t t = 0; t < sizeof...(Es); ++t) {
            plan.depth = std::max(plan.depth, each[t].depth);
            maxLevels = std::max(maxLevels, levels[t]);
            if (each[t].engine != Engine::Shmem && each[t].depth > 0) plan.engine = Engine::Direct; // does not fit
            if (each[t].engine == Engine::Shmem && each[t].tiles > 1) *fused = false;
        }
        if (plan.depth == 0 || !wantShmem) plan.engine = Engine::Direct;
        if (plan.engine == Engine::Shmem) {
            plan.columnsPerBlock = ~0u;
            for (std::size_t t = 0; t < sizeof...(Es); ++t) {
                if (each[t].engine != Engine::Shmem) continue; // a depth-0 target: no buffers
                plan.columnsPerBlock = std::min(plan.columnsPerBlock, each[t].columnsPerBlock);
                plan.buffers = std::max(plan.buffers, each[t].buffers);
                plan.sharedBytesPerColumn = std::max(plan.sharedBytesPerColumn, each[t].sharedBytesPerColumn);
            }
            plan.tileLevels = maxLevels;
            plan.tiles = 1;
            plan.sharedBytes = oneWorkerBackend<Backend> ? plan.sharedBytesPerColumn
                                                         : plan.sharedBytesPerColumn * plan.columnsPerBlock;
            uint32_t const groups = (columns + plan.columnsPerBlock - 1) / plan.columnsPerBlock;
            if constexpr (oneWorkerBackend<Backend>)
                plan.groupsPerBlock = std::max(1u, fusedPointsPerBlock / (plan.columnsPerBlock * maxLevels));
            plan.blocks = std::min((groups + plan.groupsPerBlock - 1) / plan.groupsPerBlock, Backend::maxGridBlocks);
        } else {
            *fused = true; // Direct needs no tiles
            for (std::size_t t = 0; t < sizeof...(Es); ++t)
                perColumn[t] = 0;
            plan.columnsPerBlock = columnsPerBlock(maxLevels);
            if constexpr (oneWorkerBackend<Backend>)
                plan.columnsPerBlock = std::max(1u, fusedPointsPerBlock / maxLevels); // long runs, as for Shmem
            plan.blocks = std::min((columns + plan.columnsPerBlock - 1) / plan.columnsPerBlock, Backend::maxGridBlocks);
        }
        return plan;
    }
}

} // namespace detail

// Plans the evaluation of `expr` into a destination of `columns` x `levels` (for logs and benchmarks: evaluate
// plans again). Auto here is the planner's rule (evaluate's timed choice on Serial, OpenMP and Cuda picks between the
// plans of the two engines).
template <class Backend, class E>
EvalPlan planEvaluation(Backend const& backend, E const& expr, uint32_t columns, uint32_t levels, Engine engine,
                        EngineOptions const& options) {
    bool wantShmem = engine == Engine::Shmem;
    if (engine == Engine::Auto) wantShmem = E::depth >= 2 || (detail::isGpu<Backend> && E::depth >= 1);
    BufferPlan<E::slots> layout;
    return detail::planFor(backend, expr, layout, columns, levels, wantShmem, engine == Engine::Shmem, options);
}

} // namespace strata::ops
