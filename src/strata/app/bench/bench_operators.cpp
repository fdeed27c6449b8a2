// operators/: column-stencil expressions evaluated by the engines, and by a hand-written fused loop, on fields of
// about 2^23 points (64 MiB per field, twice the 32 MiB L3; columns = 2^23 / levels), so that no field stays in cache
// from one pass to the next.
//   operators/<backend>/<expression>/<variant>/<levels>
//     expression  grad, div_grad, diffusion, advection, depth4: bench_expressions.hpp (their trees, boundary
//                 conditions and byte model); bench_cuda.cu runs the same expressions on the GPU
//     variant     direct | shmem | auto (ops::evaluate with that engine), hand (plain C++ loops over columns and
//                 levels, the same boundary conditions and the same arithmetic in the same order: the practical limit
//                 of a fused loop; OpenMP: `omp parallel for` over columns), kokkos (diffusion on Serial only, when
//                 the build found Kokkos: the same tree as a Kokkos TeamPolicy with team scratch, bench_kokkos.cpp)
//     levels      16, 32, 64, 128, 256, 1024
//   operators/<backend>/<expression>/auto_paired/<levels>
//                 Auto against both engines, paired: 12 rounds after Auto's trials and early re-checks (44 calls),
//                 each round a block of three calls of each of Auto, Direct and Shmem (the six orders in turn; a
//                 block's first call not timed: it pays for the previous engine's dirty cache lines). Counters: each
//                 variant's median and mean timed call (auto_ms, direct_ms, shmem_ms, *_mean_ms, 24 calls each) and
//                 auto_vs_best_pct, Auto's median over the faster engine's median, in per cent. The three share each
//                 stretch of the machine's time, so a slow second or a drift hits them alike; the separate auto,
//                 direct and shmem benchmarks above each own their stretch (docs/performance.md, "Auto, paired").
//                 One repetition, whatever --benchmark_repetitions says.
//   operators/serial/diffusion_l2/<variant>/<levels>
//                 the diffusion tree over 2^14 points instead (three fields of 128 KiB, which stay in a 1 MiB L2
//                 between calls; destinations this small take plain stores), variants direct, shmem, auto, hand and
//                 kokkos, levels 64 and 256: a loop that runs as fast here as over 2^23 points is bound by the core,
//                 not by memory (docs/performance.md, "What bounds the engines on the AMD")
//   operators/serial/diffusion/shmem_plain/<levels>
//                 Shmem with plain stores (EngineOptions::streamingStoreBytes past any size) instead of the streaming
//                 stores it takes for these 64 MiB destinations, levels 64, 256, 1024: an A/B of the two in one build
//                 (scripts/bench --ab-filters 'diffusion/shmem/' 'diffusion/shmem_plain/')
//   operators/serial/diffusion/shmem_items<N>/<levels>
//                 Shmem with N (1024, 4096) column levels a block instead of the CPU default of 256
//                 (EngineOptions::shmemBlockItems): how much of Shmem's time per column is the block's, levels 64,
//                 256, 1024
// Every result is compared bit for bit with the hand-written loop after the timed loop (an error if it differs).
#include <strata/app/bench/bench_common.hpp>
#include <strata/app/bench/bench_expressions.hpp>
#include <strata/operators/operators.hpp>
#if defined(STRATA_BENCH_KOKKOS)
#include <strata/app/bench/bench_kokkos.hpp>
#endif

#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace {

using namespace strata;
using namespace strata::ops;

constexpr uint32_t targetPoints = 1u << 23;
constexpr int pairedRounds = 12; // auto_paired: rounds (each engine's block of 1 + pairedTimed calls per round)
constexpr int pairedTimed = 2;

using bench::Expr;
enum class Variant { Direct, Shmem, Auto, Hand, Kokkos };

char const* variantName(Variant v) {
    switch (v) {
    case Variant::Direct: return "direct";
    case Variant::Shmem: return "shmem";
    case Variant::Auto: return "auto";
    case Variant::Hand: return "hand";
    case Variant::Kokkos: return "kokkos";
    }
    return "?";
}

// The fields of one level count, kept while consecutive benchmarks use the same level count (they are registered
// level count first).
struct Data {
    uint32_t levels, columns;
    std::shared_ptr<Grid const> grid;
    Field<double, Center> theta, kappa, q, outC, refC;
    Field<double, Face> w, outF, refF;
    Data(uint32_t n, uint32_t cols)
        : levels(n), columns(cols), grid(std::make_shared<Grid const>(Grid::uniform(n, 20000.0))),
          theta(grid, cols, core::MemSpace::Host), kappa(grid, cols, core::MemSpace::Host),
          q(grid, cols, core::MemSpace::Host), outC(grid, cols, core::MemSpace::Host),
          refC(grid, cols, core::MemSpace::Host), w(grid, cols, core::MemSpace::Host),
          outF(grid, cols, core::MemSpace::Host), refF(grid, cols, core::MemSpace::Host) {
        for (uint32_t c = 0; c < cols; ++c)
            bench::fillColumn(c, n, theta, kappa, q, w);
    }
};

Data& dataFor(uint32_t levels) { return bench::dataForLevels<Data>(levels, targetPoints); }

// The fields of the diffusion_l2 variants: 2^14 points, kept apart from the large ones.
constexpr uint32_t cachePoints = 1u << 14;
Data& cacheDataFor(uint32_t levels) {
    static std::unique_ptr<Data> data;
    if (!data || data->levels != levels) {
        data.reset();
        data = std::make_unique<Data>(levels, cachePoints / levels);
    }
    return *data;
}

// ---------------------------------------------------------------------------------------------------------------
// Hand-written loops: per column, the face values a divergence needs go to a small buffer (L1), then the centers.
// The arithmetic is the operators' (stencils.hpp), operation for operation, so the results are the same bits.

struct HandLoop {
    uint32_t n, columns;
    double const* rdzc;   // n: 1 / dzCenter
    double const* rdzf;   // n + 1: 1 / dzFace
    double const* wBelow; // n + 1: interpolation weights (grid.hpp)
    double const* wAbove;

    static double absVal(double x) { return x < 0.0 ? -x : x; }

    // interp(K) at interior face k (1 <= k <= n - 1)
    double interpFace(double const* K, uint32_t k) const { return K[k - 1] * wBelow[k] + K[k] * wAbove[k]; }
    // div(SetValue 0, SetValue 0) of interior faces f[1..n-1] into out[0..n-1] (n >= 2)
    void divergenceOf(double const* f, double* out) const {
        out[0] = (f[1] - 0.0) * rdzc[0];
        for (uint32_t k = 1; k + 1 < n; ++k)
            out[k] = (f[k + 1] - f[k]) * rdzc[k];
        out[n - 1] = (0.0 - f[n - 1]) * rdzc[n - 1];
    }
    // the diffusion flux interp(K) * grad(theta) at interior faces
    void diffusionFlux(double const* K, double const* th, double* f) const {
        for (uint32_t k = 1; k < n; ++k)
            f[k] = interpFace(K, k) * ((th[k] - th[k - 1]) * rdzf[k]);
    }

    void grad(double const* th, double* out) const {
        out[0] = (th[0] - 300.0) * rdzf[0];
        for (uint32_t k = 1; k < n; ++k)
            out[k] = (th[k] - th[k - 1]) * rdzf[k];
        out[n] = 0.0;
    }
    void divGrad(double const* th, double* out, double* f) const {
        for (uint32_t k = 1; k < n; ++k)
            f[k] = (th[k] - th[k - 1]) * rdzf[k];
        divergenceOf(f, out);
    }
    void diffusion(double const* K, double const* th, double* out, double* f) const {
        diffusionFlux(K, th, f);
        divergenceOf(f, out);
    }
    void advection(double const* w, double const* x, double* out, double* f) const {
        // upwind3 at face 1 (bottom, one-sided), faces 2 .. n-2 (interior), face n-1 (top, one-sided); times w.
        // ThirdOrderOneSided at the face next to a boundary: w (2 x0 + 5 x1 - x2) / 6, x counted from that boundary.
        {
            double const wk = w[1];
            f[1] = wk * (wk * ((2.0 * x[0] + 5.0 * x[1] - x[2]) * (1.0 / 6.0)));
        }
        for (uint32_t k = 2; k + 2 <= n; ++k) {
            double const wk = w[k];
            double const xm = x[k - 2], x0 = x[k - 1], xp = x[k], xpp = x[k + 1];
            double const u =
                (wk * (7.0 * (xp + x0) - (xpp + xm)) - absVal(wk) * (3.0 * (xp - x0) - (xpp - xm))) * (1.0 / 12.0);
            f[k] = wk * u;
        }
        {
            double const wk = w[n - 1];
            double const t0 = x[n - 1], t1 = x[n - 2], t2 = x[n - 3]; // indexed from the top inwards
            f[n - 1] = wk * (wk * ((2.0 * t0 + 5.0 * t1 - t2) * (1.0 / 6.0)));
        }
        divergenceOf(f, out);
    }
    void depth4(double const* K, double const* th, double* out, double* f, double* inner) const {
        diffusionFlux(K, th, f);
        divergenceOf(f, inner);
        for (uint32_t k = 1; k < n; ++k)
            f[k] = interpFace(K, k) * ((inner[k] - inner[k - 1]) * rdzf[k]);
        divergenceOf(f, out);
    }
};

template <bool Parallel>
void runHand(Data& d, Expr e, bool intoReference) {
    HandLoop const h{d.levels,
                     d.columns,
                     d.grid->rdzCenter().data(),
                     d.grid->rdzFace().data(),
                     d.grid->interpBelow().data(),
                     d.grid->interpAbove().data()};
    auto const th = std::as_const(d.theta).view(), K = std::as_const(d.kappa).view(), q = std::as_const(d.q).view();
    auto const w = std::as_const(d.w).view();
    auto const outC = (intoReference ? d.refC : d.outC).view();
    auto const outF = (intoReference ? d.refF : d.outF).view();
    auto const columns = static_cast<int64_t>(d.columns);
#pragma omp parallel if (Parallel)
    {
        std::vector<double> f(d.levels + 1), inner(d.levels);
#pragma omp for schedule(static)
        for (int64_t c = 0; c < columns; ++c) {
            auto const col = static_cast<uint32_t>(c);
            double const* thc = &th(col, 0);
            switch (e) {
            case Expr::Grad: h.grad(thc, &outF(col, 0)); break;
            case Expr::DivGrad: h.divGrad(thc, &outC(col, 0), f.data()); break;
            case Expr::Diffusion: h.diffusion(&K(col, 0), thc, &outC(col, 0), f.data()); break;
            case Expr::Advection: h.advection(&w(col, 0), &q(col, 0), &outC(col, 0), f.data()); break;
            case Expr::Depth4: h.depth4(&K(col, 0), thc, &outC(col, 0), f.data(), inner.data()); break;
            }
        }
    }
}

#if defined(STRATA_BENCH_KOKKOS)
void runKokkos(Data& d) {
    bench::KokkosColumns const a{d.levels,
                                 d.columns,
                                 d.outC.stride(),
                                 std::as_const(d.kappa).view().data,
                                 std::as_const(d.theta).view().data,
                                 d.outC.view().data,
                                 d.grid->rdzCenter().data(),
                                 d.grid->rdzFace().data(),
                                 d.grid->interpBelow().data(),
                                 d.grid->interpAbove().data()};
    bench::kokkosDiffusion(a);
}
#endif

template <class T, class S>
bool sameBits(Field<T, S> const& a, Field<T, S> const& b) {
    for (uint32_t c = 0; c < a.columns(); ++c)
        if (std::memcmp(a.column(c).data(), b.column(c).data(), a.levels() * sizeof(T)) != 0) return false;
    return true;
}

template <class Backend>
void bmOperator(benchmark::State& state, Expr e, Variant v, uint32_t levels, uint32_t shmemBlockItems = 0,
                bool inCache = false, bool plainStores = false) {
    constexpr bool parallel = Backend::hostParallel;
    Backend const backend{};
    Data& d = inCache ? cacheDataFor(levels) : dataFor(levels);
    Engine const engine = v == Variant::Shmem ? Engine::Shmem : v == Variant::Auto ? Engine::Auto : Engine::Direct;
    EvalPlan plan;
    EngineOptions options;
    options.shmemBlockItems = shmemBlockItems;
    if (plainStores) options.streamingStoreBytes = ~std::size_t{0};
    for (auto _ : state) {
        if (v == Variant::Hand) runHand<parallel>(d, e, false);
#if defined(STRATA_BENCH_KOKKOS)
        else if (v == Variant::Kokkos)
            runKokkos(d);
#endif
        else
            plan = bench::evaluateExpr(backend, d, e, engine, options);
        benchmark::ClobberMemory();
    }
    runHand<parallel>(d, e, true);
    bool const same = e == Expr::Grad ? sameBits(d.outF, d.refF) : sameBits(d.outC, d.refC);
    if (!same) state.SkipWithError("result differs from the hand-written loop");

    double const n = levels, cols = d.columns;
    bench::reportThroughput<Backend>(state, bench::exprOutputLevels(e, n) * cols,
                                     bench::exprBytesPerColumn(e, n) * cols);
    state.counters["levels"] = n;
    state.counters["columns"] = cols;
    state.counters["depth"] = bench::exprDepth(e);
#if defined(STRATA_BENCH_KOKKOS)
    if (v == Variant::Kokkos) {
        state.SetLabel(std::string("Kokkos TeamPolicy + team scratch, ") + bench::kokkosExecutionSpace());
        return;
    }
#endif
    state.SetLabel(v == Variant::Hand ? std::string("hand-written loop") : plan.describe());
}

// Auto, Direct and Shmem in blocks within each round (see the header): medians of their timed calls.
template <class Backend>
void bmAutoPaired(benchmark::State& state, Expr e, uint32_t levels) {
    constexpr bool parallel = Backend::hostParallel;
    Backend const backend{};
    Data& d = dataFor(levels);
    Engine const engines[3] = {Engine::Auto, Engine::Direct, Engine::Shmem};
    // Auto's steady state: its trials and its early re-checks of a close call (runs of calls 4, 8, 16 and 32 after
    // the trials: ops::detail::TimedChoice) are over before the rounds, a one-off per shape and process.
    for (int i = 0; i < ops::detail::TimedChoice::trials + 40; ++i)
        bench::evaluateExpr(backend, d, e, Engine::Auto);
    // Each round runs the three in one of the six orders (round by round through all six), each as a block of
    // 1 + pairedTimed calls of which the first is not timed: on the CPU a call pays for the dirty lines the previous
    // one left in the cache (Direct's plain stores; Shmem's streaming stores leave none), so a call right after
    // another engine's is not what that engine costs when it runs after itself, as Auto's chosen engine does.
    static constexpr int orders[6][3] = {{0, 1, 2}, {1, 2, 0}, {2, 0, 1}, {0, 2, 1}, {2, 1, 0}, {1, 0, 2}};
    std::vector<double> times[3];
    EvalPlan autoPlan;
    long round = 0, autoShmemCalls = 0;
    for (auto _ : state) {
        for (int v : orders[round % 6]) {
            for (int i = 0; i <= pairedTimed; ++i) {
                auto const t0 = std::chrono::steady_clock::now();
                EvalPlan const plan = bench::evaluateExpr(backend, d, e, engines[v]);
                double const t =
                    std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
                if (i > 0) times[v].push_back(t);
                if (v == 0) {
                    autoPlan = plan;
                    if (i > 0 && plan.engine == Engine::Shmem) ++autoShmemCalls;
                }
                benchmark::ClobberMemory();
            }
        }
        ++round;
    }
    bench::evaluateExpr(backend, d, e, Engine::Auto);
    runHand<parallel>(d, e, true);
    bool const same = e == Expr::Grad ? sameBits(d.outF, d.refF) : sameBits(d.outC, d.refC);
    if (!same) state.SkipWithError("result differs from the hand-written loop");
    auto const median = [](std::vector<double> v) {
        std::sort(v.begin(), v.end());
        std::size_t const n = v.size();
        return n == 0 ? 0.0 : n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
    };
    auto const mean = [](std::vector<double> const& v) {
        double s = 0;
        for (double x : v)
            s += x;
        return v.empty() ? 0.0 : s / static_cast<double>(v.size());
    };
    char const* names[3] = {"auto", "direct", "shmem"};
    double med[3];
    for (int v = 0; v < 3; ++v) {
        med[v] = median(times[v]);
        state.counters[std::string(names[v]) + "_ms"] = med[v];
        state.counters[std::string(names[v]) + "_mean_ms"] = mean(times[v]);
    }
    double const best = std::min(med[1], med[2]);
    state.counters["auto_vs_best_pct"] = best > 0 ? 100.0 * (med[0] / best - 1.0) : 0.0;
    state.counters["auto_mean_vs_best_pct"] =
        best > 0 ? 100.0 * (mean(times[0]) / std::min(mean(times[1]), mean(times[2])) - 1.0) : 0.0;
    state.counters["levels"] = levels;
    state.counters["rounds"] = static_cast<double>(round);
    state.counters["auto_shmem_calls"] = static_cast<double>(autoShmemCalls); // of the timed calls
    state.counters["faster"] = med[2] < med[1] ? 2 : 1;                       // 1 Direct, 2 Shmem (by the medians)
    state.SetLabel("auto took " + autoPlan.describe());
}

int const registered = [] {
    for (uint32_t levels : {16u, 32u, 64u, 128u, 256u, 1024u}) {
        for (bool parallel : {false, true}) {
            for (Expr e : bench::allExprs) {
                for (Variant v : {Variant::Direct, Variant::Shmem, Variant::Auto, Variant::Hand, Variant::Kokkos}) {
#if defined(STRATA_BENCH_KOKKOS)
                    if (v == Variant::Kokkos && (parallel || e != Expr::Diffusion)) continue;
#else
                    if (v == Variant::Kokkos) continue;
#endif
                    std::string const name = std::string("operators/") + (parallel ? "openmp" : "serial") + "/" +
                                             bench::exprName(e) + "/" + variantName(v) + "/" + std::to_string(levels);
                    if (parallel)
                        bench::add(name, [=](benchmark::State& s) { bmOperator<core::OpenMP>(s, e, v, levels); });
                    else
                        bench::add(name, [=](benchmark::State& s) { bmOperator<core::Serial>(s, e, v, levels); });
                }
                std::string const paired = std::string("operators/") + (parallel ? "openmp" : "serial") + "/" +
                                           bench::exprName(e) + "/auto_paired/" + std::to_string(levels);
                if (parallel)
                    bench::add(paired, [=](benchmark::State& s) { bmAutoPaired<core::OpenMP>(s, e, levels); })
                        ->Iterations(pairedRounds)
                        ->Repetitions(1);
                else
                    bench::add(paired, [=](benchmark::State& s) { bmAutoPaired<core::Serial>(s, e, levels); })
                        ->Iterations(pairedRounds)
                        ->Repetitions(1);
            }
        }
    }
    for (uint32_t levels : {64u, 256u})
        for (Variant v : {Variant::Direct, Variant::Shmem, Variant::Auto, Variant::Hand, Variant::Kokkos}) {
#if !defined(STRATA_BENCH_KOKKOS)
            if (v == Variant::Kokkos) continue;
#endif
            bench::add("operators/serial/diffusion_l2/" + std::string(variantName(v)) + "/" + std::to_string(levels),
                       [=](benchmark::State& s) { bmOperator<core::Serial>(s, Expr::Diffusion, v, levels, 0, true); });
        }
    for (uint32_t levels : {64u, 256u, 1024u})
        bench::add("operators/serial/diffusion/shmem_plain/" + std::to_string(levels), [=](benchmark::State& s) {
            bmOperator<core::Serial>(s, Expr::Diffusion, Variant::Shmem, levels, 0, false, true);
        });
    for (uint32_t levels : {64u, 256u, 1024u})
        for (uint32_t items : {1024u, 4096u}) {
            std::string const name =
                "operators/serial/diffusion/shmem_items" + std::to_string(items) + "/" + std::to_string(levels);
            bench::add(name, [=](benchmark::State& s) {
                bmOperator<core::Serial>(s, Expr::Diffusion, Variant::Shmem, levels, items);
            });
        }
    return 0;
}();

} // namespace
