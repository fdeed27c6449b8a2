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
//   Auto     on a GPU and the checking backend, the planner's rule (below); on Serial and OpenMP, a timed choice: the
//            first calls of each expression and shape alternate the two engines and keep each one's best time,
//            later calls run the faster (detail::TimedChoice).
// Direct and Shmem run the same operator code on the same values in the same order: their results are identical bit
// for bit (the build fixes the floating-point contract, see docs/operators.md).
//
// The planner, before launch, picks for Shmem the tile of output levels a block computes (the whole column when its
// buffers fit in the shared-memory limit, else the longest tile that fits: columns of any height are tiled, with
// halos as wide as the tree's footprint) and how many columns share a block (enough that short columns still give
// 256 work items). Auto's rule takes Shmem when stencils are nested (depth >= 2; Direct would recompute inner
// stencils) or on a GPU, Direct otherwise or when not even one level fits in shared memory. The engines give the same
// bits, so the timed choice changes the speed of a run, never its results.
#pragma once

#include "core/error.hpp"
#include "core/lockstep.hpp"
#include "operators/expr.hpp"
#include "operators/field.hpp"
#include "operators/stencil_node.hpp"

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

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
    bool timedAuto = true;      // Auto on Serial and OpenMP times both engines (false: the planner's rule)
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

    std::string describe() const {
        std::ostringstream s;
        s << engineName(engine) << (timed ? " (timed auto)" : "") << " depth=" << depth;
        if (targets > 1) s << " targets=" << targets;
        if (engine == Engine::Shmem)
            s << " columns/block=" << columnsPerBlock << " tile=" << tileLevels << " tiles=" << tiles
              << " buffers=" << buffers << " shared=" << sharedBytes << "B";
        s << " blocks=" << blocks;
        return s.str();
    }
};

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
    uint32_t tileLevels; // with several targets, one tile: at least every destination's levels
    uint32_t tiles;
    uint32_t tasks;
    bool interiorLevels;
    uint32_t groupsPerBlock = 1; // one worker, several targets: column groups a block takes through every target
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

// One destination of a kernel: dest = expr, or dest += expr (Add); `perColumn` is the expression's shared bytes per
// column (Shmem). A kernel takes one or several targets of the same columns (evaluate, evaluateFused).
template <bool Add, class E, class T, class S>
struct Target {
    static constexpr bool add = Add;
    using Value = T;
    E expr;
    FieldView<T, S> dest;
    uint32_t perColumn;
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

struct ShmemKernel {
    static constexpr uint32_t blockDomSize = engineBlockDomSize;

    template <class W, class... Ts>
    STRATA_HD void operator()(W const& worker, uint32_t columns, GridView grid, ShmemLaunch launch,
                              Ts const&... targets) const {
        if constexpr (oneWorker<W> && sizeof...(Ts) > 1) {
            // One worker, several targets (one tile): a block takes `groupsPerBlock` column groups through each
            // target in turn, so that every target streams a long run of its fields (measured: with one group per
            // block, the targets' short runs over many fields were slower than separate kernels).
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
        using E = decltype(t.expr);
        using T = typename Tg::Value;
        if (!first) worker.sync();
        first = false;
        uint32_t const k0 = tile * launch.tileLevels;
        uint32_t const k1 = min(k0 + launch.tileLevels, t.dest.levels);
        BlockState<W> const state{
            &worker, grid, col0, ncols, k0, k1, worker.dynSharedBase(), t.perColumn, launch.interiorLevels};
        stageFrom<1>(worker, t.expr, state);
        state.template forEachLevel<E::reach>(k0, k1 - k0, t.dest.levels, [&](uint32_t c, uint32_t i, auto interior) {
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
constexpr bool isGpu = Backend::isGpu;

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

// f(i, col, k) for i < Fields, for the columns of each block in turn: field by field within a block, so that a
// kernel over several fields keeps the few streams of one field at a time (seven fields' streams at once thrash the
// L1 sets when the fields share their alignment: measured, docs/performance.md). A GPU block takes the columns of
// 256 items; a CPU block (one worker) about 32768 points, 256 KiB of a field, long enough for the prefetchers.
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

namespace detail {

// Auto's timed choice for one expression type and shape. The first `trials` calls alternate Shmem and Direct (Shmem
// first) and keep each engine's fastest time, so that a first call's page faults or cold caches do not decide; every
// later call takes the engine with the lower best time. Deterministic given the times recorded (tests feed it times).
class TimedChoice {
public:
    static constexpr int trials = 4;

    Engine next() const {
        if (m_calls < trials) return m_calls % 2 == 0 ? Engine::Shmem : Engine::Direct;
        return m_best[1] < m_best[0] ? Engine::Shmem : Engine::Direct;
    }
    bool timing() const { return m_calls < trials; }
    void record(Engine engine, double seconds) {
        double& best = m_best[engine == Engine::Shmem ? 1 : 0];
        best = std::min(best, seconds);
        ++m_calls;
    }
    double best(Engine engine) const { return m_best[engine == Engine::Shmem ? 1 : 0]; }

private:
    double m_best[2] = {std::numeric_limits<double>::infinity(), std::numeric_limits<double>::infinity()};
    int m_calls = 0;
};

// The timed choices of one instantiation of evaluate (expression type, destination type, backend, add or not), per
// shape and the options that change a plan; shared by the host threads that evaluate (a lock per call: ~0.1 us).
struct TimedChoiceKey {
    uint32_t columns, levels, maxTileLevels;
    std::size_t sharedLimitBytes;
    int threads;
    bool interiorLevels;
    auto operator<=>(TimedChoiceKey const&) const = default;
};

template <class...>
struct TypeList {};

template <class Instantiation>
class TimedChoices {
public:
    static Engine next(TimedChoiceKey const& key, bool* timing) {
        std::lock_guard<std::mutex> lock(mutex());
        TimedChoice const& c = map()[key];
        *timing = c.timing();
        return c.next();
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
// level fits, else Direct), for Direct otherwise. Lays out the Shmem buffers in `expr`.
template <class Backend, class E>
EvalPlan planFor(Backend const& backend, E& expr, uint32_t columns, uint32_t levels, bool wantShmem, bool required,
                 EngineOptions const& options) {
    (void)backend;
    EvalPlan plan;
    plan.depth = E::depth;
    std::size_t limit = options.sharedLimitBytes;
    if constexpr (detail::isGpu<Backend>) limit = std::min(limit, core::sharedMemoryPerBlock(backend));

    constexpr bool stageStencilFree = !detail::oneWorkerBackend<Backend>;
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
            plan.blocks = std::min(tasks, Backend::maxGridBlocks);
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
        plan.blocks = std::min((columns + columnsPerBlock - 1) / columnsPerBlock, Backend::maxGridBlocks);
    }
    return plan;
}

} // namespace detail

// Plans the evaluation of `expr` into a destination of `columns` x `levels`, and lays out its buffers. Auto here is
// the planner's rule (evaluate's timed choice on Serial and OpenMP picks between the plans of the two engines).
template <class Backend, class E>
EvalPlan planEvaluation(Backend const& backend, E& expr, uint32_t columns, uint32_t levels, Engine engine,
                        EngineOptions const& options) {
    bool wantShmem = engine == Engine::Shmem;
    if (engine == Engine::Auto) wantShmem = E::depth >= 2 || (detail::isGpu<Backend> && E::depth >= 1);
    return detail::planFor(backend, expr, columns, levels, wantShmem, engine == Engine::Shmem, options);
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

// Several targets on a one-worker CPU backend: the points of a block (256 KiB of doubles per field), so that each
// target streams long runs (measured on advection's four targets: 1024 points 20.3 ms, 4096 18.0, 32768 17.3, the
// four kernels of evaluateAdd 17.6).
inline constexpr uint32_t fusedPointsPerBlock = 32768;

// One host-side destination of evaluateFused: ops::assign(dest, expr) or ops::accumulate(dest, expr).
template <bool Add, class T, class S, class X>
struct Assignment {
    static constexpr bool add = Add;
    using Value = T;
    using Stagger = S;
    Field<T, S>* dest;
    X x;
};

// The plan of one or several targets in one kernel. One target: planFor's plan (tiles allowed). Several: each
// expression planned for its own destination, the whole column of every destination in one tile (`fused` false when
// a Shmem plan would need tiles: the caller then evaluates the targets one by one), the fewest columns per block any
// target allows, the largest buffers any target needs. `perColumn[t]`: target t's shared bytes per column.
template <class Backend, class... Es>
EvalPlan planTargets(Backend const& backend, uint32_t columns, uint32_t const* levels, bool wantShmem, bool required,
                     EngineOptions const& options, bool* fused, uint32_t* perColumn, Es&... exprs) {
    std::size_t i = 0;
    EvalPlan const each[] = {planFor(backend, exprs, columns, levels[i++], wantShmem, required, options)...};
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
            plan.sharedBytes = plan.sharedBytesPerColumn * plan.columnsPerBlock;
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
    bool const timed = engine == Engine::Auto && options.timedAuto && oneWorkerBackend<Backend> && depth >= 1;
    bool const rule = depth >= 2 || (isGpu<Backend> && depth >= 1);
    bool const wantShmem = engine == Engine::Shmem || (engine == Engine::Auto && (timed || rule));
    bool fused = true;
    uint32_t perColumn[count];
    EvalPlan plan = planTargets(backend, columns, levels, wantShmem, engine == Engine::Shmem, options, &fused,
                                perColumn, std::get<I>(exprs)...);
    if (!fused) { // several targets whose Shmem plans need tiles: one evaluation each
        EvalPlan last;
        ((last = evaluateAssignments(backend, engine, options, std::index_sequence<0>{}, as)), ...);
        return last;
    }
    if (columns == 0) return plan;
    GridView const grid = d0.grid().view(Backend::memSpace);
    auto const launch = [&](EvalPlan const& p) {
        launchTargets(backend, p, columns, grid, options,
                      Target<As::add, std::tuple_element_t<I, Exprs>, typename As::Value, typename As::Stagger>{
                          std::get<I>(exprs), as.dest->view(), perColumn[I]}...);
    };
    if (!timed || plan.engine != Engine::Shmem) {
        launch(plan);
        return plan;
    }
    int threads = 1;
    if constexpr (std::is_same_v<Backend, core::OpenMP>) threads = core::openmpThreads();
    TimedChoiceKey const key{
        columns, levels[0], options.maxTileLevels, options.sharedLimitBytes, threads, options.interiorLevels};
    using Choices = TimedChoices<TypeList<Backend, As..., Exprs>>;
    bool timing = false;
    Engine const pick = Choices::next(key, &timing);
    if (pick == Engine::Direct) {
        plan = planTargets(backend, columns, levels, false, false, options, &fused, perColumn, std::get<I>(exprs)...);
    }
    plan.timed = true;
    if (!timing) {
        launch(plan);
        return plan;
    }
    auto const t0 = std::chrono::steady_clock::now();
    launch(plan);
    Choices::record(key, pick, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
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
