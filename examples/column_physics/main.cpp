// column_physics: a column process of one's own, written on Strata's kernel and operator layers.
//
// Temperature T(z) in every column of a stretched vertical grid is stepped by two processes:
//   1. vertical diffusion, explicit:  dT/dt = -dF/dz  with the heat flux  F = -K dT/dz  on the faces and no flux
//      through the ground or the lid (stencil operators in one lazy expression, run by evaluate() with the Direct
//      or the Shmem engine);
//   2. Newtonian relaxation toward a reference profile, exact over a step:  T <- Tref + (T - Tref) exp(-dt / tau)
//      (a `threaded` kernel: one block per column, the levels spread over the block's workers).
// The same code runs on the Serial, OpenMP and Threads backends (and on Cuda when nvcc compiles this file), and the
// program checks what would go wrong if the physics or the port were broken:
//   - diffusion with zero-flux boundaries conserves the column heat content, sum T dz, to rounding: a flux through a
//     boundary, a sign error or a slip of staggering changes it by many orders of magnitude more than allowed;
//   - relaxation shrinks a column's distance to the profile, sum |T - Tref| dz, by exactly exp(-dt / tau) per step;
//   - every backend and engine gives the same bits as Serial with Direct;
//   - the OpenMP backend ran its blocks on more than one thread when OpenMP offers several (a build that links the
//     OpenMP runtime without compiling with -fopenmp runs them on one thread without a word).
// It exits 1 when a check fails. COLUMN_PHYSICS_BREAK=1 in the environment opens the lid (the divergence extrapolates
// at the top instead of taking a zero flux there): the conservation check then fails, and the program exits 1.
#include <strata/core/backend.hpp>
#include <strata/core/error.hpp>
#include <strata/core/threaded.hpp>
#include <strata/operators/column/integrals.hpp>
#include <strata/operators/operators.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace core = strata::core;
namespace ops = strata::ops;
namespace threaded = strata::threaded;

constexpr uint32_t levels = 40; // a compile-time constant: the threaded kernel's interdependent axis
constexpr uint32_t columns = 32;
constexpr int steps = 120;
constexpr double zTop = 12000.0;                // m
constexpr double tau = 6 * 3600.0;              // relaxation time scale, s
constexpr double conservationTolerance = 1e-12; // relative change of sum T dz in one diffusion step
constexpr double relaxationTolerance = 1e-10;   // relative error of the distance's decay in one step

// The relaxation of one column: the ClimaComms `@threaded` shape, columns independent, levels interdependent. A
// functor rather than a lambda, so that nvcc compiles it for the device too.
struct Relax {
    ops::FieldView<double, ops::Center> T;
    ops::FieldView<double const, ops::Center> Tref;
    double const* dz; // cell thicknesses, in the backend's memory
    double decay;     // exp(-dt / tau)
    double* before;   // per column: sum |T - Tref| dz before the step
    double* after;    // and after it

    template <class Ctx>
    STRATA_HD void operator()(Ctx& ctx, uint32_t col) const {
        auto distBefore = ctx.template staticSharedArray<double, levels>();
        auto distAfter = ctx.template staticSharedArray<double, levels>();
        ctx.syncInterdependent([&](uint32_t k) {
            double const anomaly = T(col, k) - Tref(col, k);
            T(col, k) = Tref(col, k) + anomaly * decay;
            double const now = T(col, k) - Tref(col, k); // what was stored, not what was meant
            distBefore[k] = (anomaly < 0 ? -anomaly : anomaly) * dz[k];
            distAfter[k] = (now < 0 ? -now : now) * dz[k];
        });
        // Every level is in shared memory now. One worker sums the column bottom up: one order of additions on every
        // backend and worker count, hence the same bits.
        ctx.syncInterdependent([&](uint32_t k) {
            if (k != 0) return;
            double b = 0, a = 0;
            for (uint32_t j = 0; j < levels; ++j) {
                b += distBefore[j];
                a += distAfter[j];
            }
            before[col] = b;
            after[col] = a;
        });
    }
};

struct Setup {
    std::shared_ptr<ops::Grid const> grid;
    std::vector<double> T0, K, Tref; // column by column, `levels` values each
    double dt = 0;
};

struct Result {
    std::vector<double> T;      // the final temperature, column by column
    double worstDrift = 0;      // max over steps and columns of |change of sum T dz| / sum T dz in a diffusion step
    double worstRelaxError = 0; // max of |after - decay * before| / before
    bool monotone = true;       // relaxation shrank every column's distance at every step
    std::string plan;           // how evaluate() ran the diffusion tendency
};

// Steps the column physics on one backend with one engine. `div` is the divergence operator with its boundary
// conditions: the physics (a closed column) or the broken variant.
template <class Backend, class Divergence>
Result run(Backend const& backend, ops::Engine engine, Setup const& s, Divergence const& div) {
    constexpr core::MemSpace space = Backend::memSpace;
    ops::Field<double, ops::Center> T(s.grid, columns, space), K(s.grid, columns, space);
    ops::Field<double, ops::Center> Tref(s.grid, columns, space), tendency(s.grid, columns, space);
    for (uint32_t c = 0; c < columns; ++c)
        for (uint32_t k = 0; k < levels; ++k) {
            T.at(c, k) = s.T0[c * levels + k];
            K.at(c, k) = s.K[c * levels + k];
            Tref.at(c, k) = s.Tref[c * levels + k];
        }
    T.toDevice(); // at() writes the host mirror; on the CPU backends the two are one array and this copies nothing
    K.toDevice();
    Tref.toDevice();

    // The diffusion tendency as one expression, built once and evaluated every step. The gradient's boundary
    // conditions only complete its stencil at faces 0 and n; the divergence's SetValue{0} replaces the flux there.
    auto const grad = ops::GradientC2F{ops::SetGradient{0.0}, ops::SetGradient{0.0}};
    auto const interp = ops::InterpolateC2F{ops::Extrapolate{}, ops::Extrapolate{}};
    auto const heatFlux = -(interp(K) * grad(T)); // F = -K dT/dz, on faces (K m/s)
    auto const diffusion = -div(heatFlux);        // dT/dt = -dF/dz, on centers (K/s)

    core::Buffer<double> heatBefore(columns, space), heatAfter(columns, space);
    core::Buffer<double> distBefore(columns, space), distAfter(columns, space);
    double const decay = std::exp(-s.dt / tau);
    Relax const relax{.T = T.view(),
                      .Tref = std::as_const(Tref).view(),
                      .dz = s.grid->view(space).dzCenter, // the grid's arrays where the backend's kernels read
                      .decay = decay,
                      .before = distBefore.device(),
                      .after = distAfter.device()};

    Result r;
    for (int step = 0; step < steps; ++step) {
        ops::columnIntegral(backend, T, heatBefore);
        r.plan = ops::evaluate(backend, tendency, diffusion, engine).describe();
        ops::evaluateAdd(backend, T, s.dt * tendency, engine); // forward Euler: T += dt dT/dt
        ops::columnIntegral(backend, T, heatAfter);
        threaded::threaded(backend, threaded::independent(columns),
                           threaded::interdependent<levels>(threaded::sharedBytesFor<double, levels>(2)), relax);

        for (auto* b : {&heatBefore, &heatAfter, &distBefore, &distAfter})
            b->toHost();
        for (uint32_t c = 0; c < columns; ++c) {
            double const h0 = heatBefore.host()[c], h1 = heatAfter.host()[c];
            double const d0 = distBefore.host()[c], d1 = distAfter.host()[c];
            r.worstDrift = std::max(r.worstDrift, std::abs(h1 - h0) / std::abs(h0));
            r.worstRelaxError = std::max(r.worstRelaxError, std::abs(d1 - decay * d0) / d0);
            r.monotone = r.monotone && d1 < d0;
        }
    }
    T.toHost();
    for (uint32_t c = 0; c < columns; ++c)
        r.T.insert(r.T.end(), T.column(c).begin(), T.column(c).end());
    return r;
}

// Records which host thread ran each index of a plain parallel loop (CPU backends only).
struct RecordThread {
    std::thread::id* ids;
    void operator()(uint32_t i) const { ids[i] = std::this_thread::get_id(); }
};

int threadsUsedByOpenMP() {
    std::vector<std::thread::id> ids(64 * core::defaultBlockItems); // 64 blocks of the loop's block size
    threaded::threaded(core::OpenMP{}, threaded::independent(static_cast<uint32_t>(ids.size())),
                       RecordThread{ids.data()});
    return static_cast<int>(std::set<std::thread::id>(ids.begin(), ids.end()).size());
}

Setup makeSetup() {
    Setup s;
    // Finer near the ground: faces at zTop s (1 + s) / 2, s = k / n, cells from about 150 m to 450 m thick.
    s.grid =
        std::make_shared<ops::Grid const>(ops::Grid::stretched(levels, zTop, [](double x) { return x * (1 + x) / 2; }));
    double dzMin = zTop, kMax = 0;
    for (uint32_t c = 0; c < columns; ++c)
        for (uint32_t k = 0; k < levels; ++k) {
            double const z = s.grid->centers()[k];
            double const tref = 288.0 - 0.0065 * z; // the standard lapse rate
            s.Tref.push_back(tref);
            s.T0.push_back(tref + 2.0 * std::sin(3.14159265358979 * z / zTop * (1 + c % 3)) + 1.5 * std::exp(-z / 800));
            s.K.push_back((10.0 + 90.0 * std::exp(-z / 1500)) * (1 + 0.25 * (c % 4))); // m2/s, largest at the ground
            kMax = std::max(kMax, s.K.back());
            dzMin = std::min(dzMin, s.grid->dzCenter()[k]);
        }
    s.dt = 0.25 * dzMin * dzMin / kMax; // half of the explicit scheme's stability limit dz^2 / (2 K)
    return s;
}

int runAll() {
    Setup const s = makeSetup();
    bool const broken = [] {
        char const* v = std::getenv("COLUMN_PHYSICS_BREAK");
        return v && v[0] == '1';
    }();
    std::printf("column_physics: %u columns x %u levels, %d steps of %.1f s, tau = %.0f s%s\n", columns, levels, steps,
                s.dt, tau, broken ? "; COLUMN_PHYSICS_BREAK=1: the lid leaks" : "");

    auto const closed = ops::DivergenceF2C{ops::SetValue{0.0}, ops::SetValue{0.0}}; // no flux at faces 0 and n
    auto const leaky = ops::DivergenceF2C{ops::SetValue{0.0}, ops::Extrapolate{}};  // top center copies center n-2
    auto const runOne = [&](auto const& backend, ops::Engine engine) {
        return broken ? run(backend, engine, s, leaky) : run(backend, engine, s, closed);
    };

    bool ok = true;
    std::vector<double> reference;
    auto const report = [&](char const* backend, char const* engine, Result const& r) {
        if (reference.empty()) reference = r.T;
        bool const same = std::memcmp(r.T.data(), reference.data(), reference.size() * sizeof(double)) == 0;
        bool const pass =
            same && r.monotone && r.worstDrift <= conservationTolerance && r.worstRelaxError <= relaxationTolerance;
        ok = ok && pass;
        std::printf("  %-8s %-6s heat drift %.1e  relaxation error %.1e  %s  %s  [%s]\n", backend, engine, r.worstDrift,
                    r.worstRelaxError, same ? "same bits" : "BITS DIFFER", pass ? "ok" : "FAILED", r.plan.c_str());
    };
    for (auto engine : {ops::Engine::Direct, ops::Engine::Shmem}) {
        char const* name = engine == ops::Engine::Direct ? "direct" : "shmem";
        report("serial", name, runOne(core::Serial{}, engine));
        report("openmp", name, runOne(core::OpenMP{}, engine));
        report("threads", name, runOne(core::Threads{4, true}, engine)); // 4 workers per block, shared memory checked
#if defined(STRATA_HAVE_CUDA) && defined(__CUDACC__)
        if (core::cudaDeviceCount() > 0) report("cuda", name, runOne(core::Cuda{}, engine));
#endif
    }

    // Column 0's heat content, start and end (relaxation changes it, diffusion does not).
    double h0 = 0, h1 = 0;
    for (uint32_t k = 0; k < levels; ++k) {
        h0 += s.T0[k] * s.grid->dzCenter()[k];
        h1 += reference[k] * s.grid->dzCenter()[k];
    }
    std::printf("column 0: sum T dz = %.6e K m at the start, %.6e K m at the end\n", h0, h1);

    int const offered = core::openmpThreads(), used = threadsUsedByOpenMP();
    bool const parallel = offered < 2 || used > 1;
    ok = ok && parallel;
    std::printf("openmp: %d threads offered, a loop of 64 blocks ran on %d%s\n", offered, used,
                parallel ? "" : ": FAILED (compile and link with -fopenmp)");
    std::printf("%s (allowed: heat drift %.0e, relaxation error %.0e)\n", ok ? "PASS" : "FAIL", conservationTolerance,
                relaxationTolerance);
    return ok ? 0 : 1;
}

int main() {
    try {
        return runAll();
    } catch (strata::Error const& e) { // what Strata's checks throw: a misuse, or a race the Threads backend caught
        std::fprintf(stderr, "column_physics: %s\n", e.what());
        return 1;
    }
}
