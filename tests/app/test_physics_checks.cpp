// Physics against physics: the model's results compared with analytic solutions and with values computed by hand in
// the test from the formulas of the method (finite volumes with the anelastic reference density, SSP-RK3 stages,
// backward Euler), not with earlier output of the model.
//
// Every check below was made to fail once on purpose (a perturbed input or expected value, then restored); each test
// says how, and what the broken run reported.
#include <strata/app/config.hpp>
#include <strata/app/model/decomposition.hpp>
#include <strata/app/model/model.hpp>
#include <strata/app/model/run.hpp>
#include <strata/core/comms.hpp>
#define STRATA_TEST_NAME "test_physics_checks"
#include "tests/app/physics_test_support.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>
#include <filesystem>
#include <functional>
#include <limits>
#include <memory>
#include <numbers>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

using namespace strata;
using namespace strata::test;
using app::FaceField;

namespace {

double const pi = std::numbers::pi;
namespace cst = app::constants;

// The heat-equation case (K = 9.5 m2/s, H = 1000 m, a 5 K cosine mode) for `seconds` in `steps` steps: the run's
// largest |T - exact| (RunSummary.analyticError). One output interval: the whole run.
double heatError(std::string const& mode, uint32_t levels, double seconds, uint64_t steps,
                 std::vector<std::string> extra = {}) {
    double const dt = seconds / static_cast<double>(steps);
    extra.insert(extra.end(),
                 {"processes.vertical_diffusion.mode=" + mode, "grid.vertical.levels=" + std::to_string(levels),
                  "time.dt=" + num(dt), "time.steps=" + std::to_string(steps), "output.interval=" + num(seconds),
                  "backend.type=serial"});
    return runQuiet("heat_equation", extra).analyticError;
}

} // namespace

// ---- 1. implicit diffusion against the analytic heat equation --------------------------------------------------

namespace {
// On a uniform cell-centred grid with zero-flux ends, cos(pi z_k / H) at the centers is an exact eigenvector of the
// discrete operator (the mirror value beyond each end equals the boundary cell's own), with the eigenvalue
// lambda_h = (4 K / dz^2) sin^2(pi dz / (2 H)). Backward Euler multiplies its amplitude by 1 / (1 + lambda_h dt) per
// step, so the model's largest error is known in closed form: at the cell next to either end,
//   A cos(pi dz / (2 H)) |(1 + lambda_h dt)^-n - exp(-K (pi / H)^2 t)|.
double backwardEulerError(uint32_t levels, double seconds, uint64_t steps) {
    double const K = 9.5, H = 1000.0, A = 5.0, dz = H / levels, dt = seconds / static_cast<double>(steps);
    double const lambdaH = 4.0 * K / (dz * dz) * std::pow(std::sin(pi * dz / (2.0 * H)), 2);
    double const discrete = std::pow(1.0 + lambdaH * dt, -static_cast<double>(steps));
    double const exact = std::exp(-K * (pi / H) * (pi / H) * seconds);
    return A * std::cos(pi * dz / (2.0 * H)) * std::fabs(discrete - exact);
}
} // namespace

TEST_CASE("implicit diffusion: the heat equation's error equals backward Euler's, first order in time",
          "[physics][heat][convergence]") {
    // 512 levels (spatial error ~4e-6 K) and dt = 40, 20, 10 s over 4000 s (K (pi/H)^2 t = 0.375).
    // Shown to fail: run at 32 levels instead of 512 (the spatial error then dominates), the error at dt = 40 s was
    // 3.44e-3 K against the 512-level closed form 2.42e-3 K (REQUIRE within 1e-6 failed).
    std::vector<double> errors;
    for (uint64_t const steps : {100u, 200u, 400u}) {
        double const e = heatError("implicit", 512, 4000.0, steps);
        double const predicted = backwardEulerError(512, 4000.0, steps);
        WARN("implicit, 512 levels, dt " << 4000.0 / steps << " s: max |T - exact| = " << e << " K, backward Euler "
                                         << "predicts " << predicted << " K");
        REQUIRE(e == Approx(predicted).epsilon(1e-6));
        errors.push_back(e);
    }
    for (std::size_t i = 0; i + 1 < errors.size(); ++i) {
        double const ratio = errors[i] / errors[i + 1];
        WARN("halving dt: error ratio " << ratio << " (order " << std::log2(ratio) << ")");
        REQUIRE(ratio > 1.8);
        REQUIRE(ratio < 2.2);
    }
}

TEST_CASE("implicit diffusion: the heat equation converges at second order in space (dt scaled with dz^2)",
          "[physics][heat][convergence]") {
    // 16, 32, 64, 128 levels with dt = 40 (16 / n)^2 s: both error terms scale with dz^2, so each doubling divides
    // the error by 4. Also checked against the closed form of backwardEulerError.
    // Shown to fail: keeping dt = 40 s at every resolution (the time error, 2.4e-3 K, stays), the errors were
    // 6.5e-3, 3.4e-3, 2.7e-3, 2.5e-3 K and the first order 0.92 (REQUIRE order > 1.9 failed).
    std::vector<double> errors;
    for (uint32_t const n : {16u, 32u, 64u, 128u}) {
        uint64_t const steps = 100u * (n / 16) * (n / 16);
        double const e = heatError("implicit", n, 4000.0, steps);
        double const predicted = backwardEulerError(n, 4000.0, steps);
        WARN("implicit, " << n << " levels, dt " << 4000.0 / steps << " s: max |T - exact| = " << e
                          << " K (closed form " << predicted << ")");
        REQUIRE(e == Approx(predicted).epsilon(1e-5)); // 6400 steps of rounding on 288 K: ~1e-6 of 1e-4 K
        errors.push_back(e);
    }
    for (std::size_t i = 0; i + 1 < errors.size(); ++i) {
        double const order = std::log2(errors[i] / errors[i + 1]);
        WARN("doubling the levels (dt / 4): order " << order);
        REQUIRE(order > 1.9);
        REQUIRE(order < 2.1);
    }
}

// ---- 3. the heat equation and the budgets on power grids -------------------------------------------------------

namespace {
// A time step that explicit SSP-RK3 takes stably on this grid: Gershgorin's bound on the operator's eigenvalues,
// |lambda| <= max_k 2 (D_k + D_k+1) / dzCenter_k with D = K / dzFace (plain form: rho0 = 1; the end faces closed),
// times 2 (below RK3's real-axis limit 2.51).
double explicitDt(ops::Grid const& g, double K) {
    auto const& dzc = g.dzCenter();
    auto const& dzf = g.dzFace();
    uint32_t const n = g.cells();
    double bound = 0;
    for (uint32_t i = 0; i < n; ++i) {
        double const below = i > 0 ? K / dzf[i] : 0.0, above = i + 1 < n ? K / dzf[i + 1] : 0.0;
        bound = std::max(bound, 2.0 * (below + above) / dzc[i]);
    }
    return 2.0 / bound;
}
} // namespace

TEST_CASE("the heat equation on power grids (exponent 2 and 3) converges at second order, explicit and implicit",
          "[physics][heat][convergence][power]") {
    // The cosine mode is no longer an exact discrete eigenvector on a stretched grid: this measures the finite-volume
    // error of the stretched operator itself. Explicit: RK3 at a dt below the Gershgorin bound (its time error is
    // third order and negligible), over 400 s. Implicit: dt = 40 (16 / n)^2 s over 4000 s, as on the uniform grid.
    // Shown to fail: with dt fixed at 40 s in the implicit runs (the time error stays), the implicit orders were
    // 1.52, 1.08, 0.50 (power 2) and 1.56, 1.39, 0.86 (power 3): REQUIRE(order > 1.6) failed.
    struct Series {
        std::string label;
        std::vector<double> errors;
    };
    std::vector<Series> series;
    for (double const exponent : {2.0, 3.0}) {
        std::vector<std::string> const grid = {"grid.vertical.stretching=power",
                                               "grid.vertical.exponent=" + num(exponent)};
        std::string const power = "power " + num(exponent);
        if (exponent == 2.0) { // explicit: the thinnest cell is H / n^exponent, and dt goes with its square
            series.push_back({power + ", explicit", {}});
            for (uint32_t const n : {8u, 16u, 32u}) {
                auto const g = ops::Grid::stretched(n, 1000.0, [exponent](double s) { return std::pow(s, exponent); });
                auto const steps = static_cast<uint64_t>(std::ceil(400.0 / explicitDt(g, 9.5)));
                double const e = heatError("explicit", n, 400.0, steps, grid);
                WARN(power << ", explicit, " << n << " levels (thinnest cell " << g.dzCenter()[0] << " m), " << steps
                           << " steps over 400 s: max |T - exact| = " << e << " K");
                series.back().errors.push_back(e);
            }
        }
        series.push_back({power + ", implicit", {}});
        for (uint32_t const n : {16u, 32u, 64u, 128u}) {
            uint64_t const steps = 100u * (n / 16) * (n / 16);
            double const e = heatError("implicit", n, 4000.0, steps, grid);
            WARN(power << ", implicit, " << n << " levels, dt " << 4000.0 / steps << " s: max |T - exact| = " << e
                       << " K");
            series.back().errors.push_back(e);
        }
    }
    for (auto const& s : series)
        for (std::size_t i = 0; i + 1 < s.errors.size(); ++i)
            WARN(s.label << ": order " << std::log2(s.errors[i] / s.errors[i + 1]));
    // Measured: power 2 explicit 1.92, 1.98; implicit 1.86, 1.94, 1.97; power 3 implicit 1.72, 1.88, 1.95 (the
    // coarsest pair of the power-3 grid is not yet asymptotic). Every order above 1.6, the finest above 1.85.
    for (auto const& s : series)
        for (std::size_t i = 0; i + 1 < s.errors.size(); ++i) {
            INFO(s.label << ", refinement " << i);
            double const order = std::log2(s.errors[i] / s.errors[i + 1]);
            REQUIRE(order > (i + 2 == s.errors.size() ? 1.85 : 1.6));
            REQUIRE(order < 2.3);
        }
}

namespace {
// A test-only process: a constant heating and moistening that no process reports to the budgets.
class UnreportedSource : public app::Process<Serial> {
public:
    UnreportedSource()
        : Process({{"T", "K", app::Access::Tendency},
                   {"q", "kg kg-1", app::Access::Tendency},
                   {"tracer", "1", app::Access::Tendency}}) {}
    std::string name() const override { return "unreported_source"; }
    void addTendencies(app::StepContext<Serial>&, app::Prognostics const&, app::Prognostics& t, double) override {
        for (uint32_t c = 0; c < t.T.columns(); ++c)
            for (uint32_t z = 0; z < t.T.levels(); ++z) {
                t.T.at(c, z) += 1e-5;
                t.q.at(c, z) += 1e-8;
                t.tracer.at(c, z) += 1e-7;
            }
    }
};
} // namespace

TEST_CASE("budgets close on power grids (exponent 2 and 3): subsidence and the default case",
          "[physics][budget][power]") {
    // Shown to fail: the same default case on a power-3 grid with a constant source that nobody reports (below)
    // gives run residuals 0.23 (heat), 0.70 (water), 0.47 (tracer), far above 1e-12.
    struct Run {
        std::string name;
        std::vector<std::string> overrides;
    };
    std::vector<Run> runs;
    for (std::string const exponent : {"2", "3"}) {
        std::vector<std::string> const grid = {"grid.vertical.stretching=power", "grid.vertical.exponent=" + exponent};
        for (std::string const scheme : {"upwind1", "upwind3", "limited"})
            for (std::string const w : {"-0.02", "0.015"}) {
                auto o = grid;
                o.insert(o.end(), {"processes.vertical_advection.scheme=" + scheme,
                                   "processes.vertical_advection.positive_scheme=" + scheme,
                                   "processes.vertical_advection.w_max=" + w});
                runs.push_back({"subsidence_tracer", o});
            }
        auto o = grid;
        o.insert(o.end(), {"processes.vertical_diffusion.surface_heat_flux=0.05",
                           "processes.vertical_diffusion.surface_moisture_flux=2e-5",
                           "processes.vertical_diffusion.surface_tracer_flux=0.001", "time.steps=72", "time.days="});
        runs.push_back({"default", o});
    }
    for (auto const& r : runs) {
        std::string label = r.name;
        for (auto const& o : r.overrides)
            label += " " + o;
        auto const s = runQuiet(r.name, r.overrides);
        for (int b = 0; b < app::budgetCount; ++b) {
            INFO(label << ": " << app::budgetNames[b]);
            WARN(label << ": " << app::budgetNames[b] << " residual over the run " << s.runResidual[b]
                       << ", largest over an output interval " << s.maxResidual[b]);
            REQUIRE(s.runResidual[b] <= 1e-12);
            REQUIRE(s.maxResidual[b] <= 1e-12);
        }
    }
    // The check can fail on these grids: a source nobody reports.
    Case broken("default",
                {"grid.vertical.stretching=power", "grid.vertical.exponent=3", "time.steps=36", "time.days="});
    broken.model->addProcess(std::make_unique<UnreportedSource>());
    broken.steps(18);
    auto const d = broken.model->diagnostics();
    for (int b = 0; b < app::budgetCount; ++b) {
        WARN("power 3 default case with an unreported source: " << app::budgetNames[b] << " residual "
                                                                << d.runResidual[b]);
        REQUIRE(d.runResidual[b] > 1e-3);
    }
}

// ---- 2. boundary-layer K profiles ------------------------------------------------------------------------------

namespace {
app::Config column(std::string const& grid, std::string const& horizontal, std::string const& processes,
                   std::string const& initial, double dt, std::vector<std::string> const& overrides = {}) {
    return app::parseConfig("grid: {vertical: {" + grid + "}, horizontal: {" + horizontal +
                                "}}\ntime: {dt: " + num(dt) + ", steps: 1}\noutput: {interval: " + num(dt) +
                                "}\nprocesses:\n" + processes + "initial_conditions: {" + initial + "}\n",
                            "test_physics_checks", overrides);
}

// K on the faces from the diffusion process (its output) and from the model's output variable "K".
std::vector<double> processK(Case& k) {
    auto* diffusion = k.process("vertical_diffusion");
    REQUIRE(diffusion != nullptr);
    std::vector<double> out;
    REQUIRE(diffusion->output("K", out));
    REQUIRE(out.size() == std::size_t{k.state().columns} * (k.state().grid->cells() + 1));
    REQUIRE(out == k.model->outputValues("K"));
    return out;
}
} // namespace

TEST_CASE("boundary_layer K: kappa_free + (kappa - kappa_free) exp(-z / h) at every face", "[physics][profile]") {
    // Shown to fail: with h = 450 instead of 400 m in the hand formula the largest relative difference was 0.21.
    for (std::string const grid :
         {"levels: 20, top: 3000.0", "levels: 17, top: 3000.0, stretching: power, exponent: 2.5"}) {
        INFO(grid);
        Case k(column(grid, "type: columns, ncol: 2",
                      "  - vertical_diffusion: {mode: implicit, profile: boundary_layer, kappa: 12.0, kappa_free: 0.3, "
                      "boundary_layer_height: 400.0}\n",
                      "temperature: lapse_rate", 600.0));
        k.steps(1);
        auto const K = processK(k);
        auto const& zf = k.state().grid->faces();
        uint32_t const faces = static_cast<uint32_t>(zf.size());
        REQUIRE(K.size() == 2 * faces);
        double worst = 0;
        for (uint32_t c = 0; c < 2; ++c)
            for (uint32_t f = 0; f < faces; ++f) {
                double const expected = 0.3 + (12.0 - 0.3) * std::exp(-zf[f] / 400.0);
                worst = std::max(worst, std::fabs(K[c * faces + f] / expected - 1.0));
            }
        WARN(grid << ": boundary_layer K at " << faces << " faces, largest relative difference from the hand formula "
                  << worst << "; K(0) = " << K[0] << ", K(top) = " << K[faces - 1]);
        REQUIRE(worst <= 1e-14);
        REQUIRE(K[0] == 12.0);
    }
}

TEST_CASE("reed_jablonowski K: C_E |v_a| z_a below 850 hPa, decaying as exp(-((850 hPa - p) / 100 hPa)^2) above",
          "[physics][profile][moist]") {
    // An isothermal dry sounding (280 K) so that the face pressures are known by hand: p = ps exp(-g z / (Rd T)).
    // 850 hPa is at 1333 m; the grid's faces lie on both sides. Each column gets its own lowest-level wind, and other
    // winds above it (which must not matter). K is set from the state at the start of the step, with the diffusion's
    // own c_e and gustiness (surface_fluxes has others, which must not matter).
    // Shown to fail: with |v_a| computed without the gustiness in the hand formula, K at the ground of column 0
    // differed by 4.4 % (1.88366 against 1.80422 m2/s; tolerance 1e-12).
    Case k(column("levels: 12, top: 6000.0, stretching: power, exponent: 1.5", "type: columns, ncol: 3",
                  "  - surface_fluxes: {c_e: 0.003, c_h: 0.003, gustiness: 0.5}\n"
                  "  - vertical_diffusion: {mode: implicit, profile: reed_jablonowski, c_e: 0.005, gustiness: 1.5}\n",
                  "temperature: isothermal, surface_temperature: 280.0, humidity: 0.0", 600.0));
    auto& s = k.state();
    double const ua[3] = {3.0, -7.0, 0.0}, va[3] = {4.0, 2.0, 0.0};
    setField(s.now.u, [&](uint32_t c, uint32_t z) { return z == 0 ? ua[c] : 20.0 + z; });
    setField(s.now.v, [&](uint32_t c, uint32_t z) { return z == 0 ? va[c] : -5.0 * z; });
    k.steps(1);
    auto const K = processK(k);
    auto const& zf = s.grid->faces();
    uint32_t const faces = static_cast<uint32_t>(zf.size());
    double const za = 0.5 * 6000.0 * std::pow(1.0 / 12.0, 1.5); // the lowest center's height: half the first cell
    double worst = 0;
    int above = 0, below = 0;
    for (uint32_t c = 0; c < 3; ++c)
        for (uint32_t f = 0; f < faces; ++f) {
            double const p = 1e5 * std::exp(-cst::g * zf[f] / (cst::rd * 280.0));
            double const k0 = 0.005 * std::sqrt(ua[c] * ua[c] + va[c] * va[c] + 1.5 * 1.5) * za;
            double const x = (85000.0 - p) / 10000.0;
            double const expected = p >= 85000.0 ? k0 : k0 * std::exp(-x * x);
            (p >= 85000.0 ? below : above) += 1;
            double const e = std::fabs(K[c * faces + f] / expected - 1.0);
            INFO("column " << c << ", face " << f << " (z " << zf[f] << " m, p " << p << " Pa): K " << K[c * faces + f]
                           << ", by hand " << expected);
            REQUIRE(e <= 1e-12);
            worst = std::max(worst, e);
        }
    WARN("reed_jablonowski K: " << below << " faces at p >= 850 hPa and " << above << " above, largest relative "
                                << "difference from the hand formula " << worst << "; K(ground) = " << K[0] << ", "
                                << K[faces] << ", " << K[2 * faces] << " m2/s");
    REQUIRE(below >= 6);
    REQUIRE(above >= 6);
}

// ---- 4. columns of 1, 2 and 3 levels against values computed by hand -------------------------------------------

namespace {
// The reference state of an isothermal dry column at Tr, by hand: p = ps exp(-g z / (Rd Tr)), rho = p / (Rd Tr),
// exner = (p / p0)^(Rd / cp).
struct HandReference {
    std::vector<double> rho, rhoFace, exner, p;
    HandReference(ops::Grid const& g, double Tr) {
        auto pressure = [&](double z) { return 1e5 * std::exp(-cst::g * z / (cst::rd * Tr)); };
        for (double z : g.centers()) {
            p.push_back(pressure(z));
            rho.push_back(pressure(z) / (cst::rd * Tr));
            exner.push_back(std::pow(pressure(z) / 1e5, cst::rd / cst::cp));
        }
        for (double z : g.faces())
            rhoFace.push_back(pressure(z) / (cst::rd * Tr));
    }
    // The model's reference state is this one (to rounding).
    void check(app::State& s) const {
        for (auto* f : {&s.rho, &s.exner, &s.p})
            f->toHost();
        s.rhoFace.toHost();
        for (uint32_t c = 0; c < s.columns; ++c) {
            for (uint32_t z = 0; z < rho.size(); ++z) {
                REQUIRE(s.rho.at(c, z) == Approx(rho[z]).epsilon(1e-13));
                REQUIRE(s.exner.at(c, z) == Approx(exner[z]).epsilon(1e-13));
                REQUIRE(s.p.at(c, z) == Approx(p[z]).epsilon(1e-13));
            }
            for (uint32_t f = 0; f < rhoFace.size(); ++f)
                REQUIRE(s.rhoFace.at(c, f) == Approx(rhoFace[f]).epsilon(1e-13));
        }
    }
};

using Profile = std::vector<double>;

// One SSP-RK3 step of du/dt = F(u) in the model's Shu-Osher form.
Profile rk3(Profile const& u, double dt, std::function<Profile(Profile const&)> const& F) {
    auto stage = [&](Profile const& x, double b) {
        auto const f = F(x);
        Profile out(u.size());
        for (std::size_t i = 0; i < u.size(); ++i)
            out[i] = (1.0 - b) * u[i] + b * (x[i] + dt * f[i]);
        return out;
    };
    return stage(stage(stage(u, 1.0), 0.25), 2.0 / 3.0);
}

// The finite-volume diffusion tendency by hand: d(psi)_k/dt = (G_k+1 - G_k) / (rho0_k dzCenter_k) with
// G = rho0_face K (psi_k - psi_k-1) / dzFace on interior faces, G = 0 at the top, and at the ground either
// G = -rho0_face F (a prescribed upward flux) or, for no-slip winds, rho0_face K (psi_0 - 0) / dzFace_0.
Profile diffusionTendency(Profile const& psi, ops::Grid const& g, HandReference const& r, double K, double surfaceFlux,
                          bool noSlip = false) {
    std::size_t const n = psi.size();
    Profile G(n + 1, 0.0), t(n);
    G[0] = noSlip ? r.rhoFace[0] * K * psi[0] / g.dzFace()[0] : -r.rhoFace[0] * surfaceFlux;
    for (std::size_t f = 1; f < n; ++f)
        G[f] = r.rhoFace[f] * K * (psi[f] - psi[f - 1]) / g.dzFace()[f];
    for (std::size_t i = 0; i < n; ++i)
        t[i] = (G[i + 1] - G[i]) / (r.rho[i] * g.dzCenter()[i]);
    return t;
}

Profile columnOf(CenterField& f, uint32_t c) {
    f.toHost();
    Profile out(f.levels());
    for (uint32_t z = 0; z < f.levels(); ++z)
        out[z] = f.at(c, z);
    return out;
}

// The largest |model - hand| of the increments over one step, relative to the largest hand increment.
double incrementError(Profile const& before, Profile const& model, Profile const& hand) {
    double worst = 0, scale = 0;
    for (std::size_t i = 0; i < before.size(); ++i) {
        worst = std::max(worst, std::fabs((model[i] - before[i]) - (hand[i] - before[i])));
        scale = std::max(scale, std::fabs(hand[i] - before[i]));
    }
    return scale > 0 ? worst / scale : worst;
}
} // namespace

TEST_CASE("explicit anelastic diffusion of 1-, 2- and 3-level columns with surface fluxes, by hand",
          "[physics][small][diffusion]") {
    // One RK3 step of the finite-volume formula with the reference density (theta for heat, dT = exner d(theta)),
    // a prescribed surface flux of heat, moisture and tracer, and no-slip winds; all by hand in the test.
    // Shown to fail: dropping exner from the hand heat tendency gave a relative difference of 5.2e-3 on the T
    // increment of the 1-level column (tolerance 1e-9).
    double const K = 10.0, Fh = 0.1, Fq = 1e-4, Ft = 0.01, dt = 5.0;
    for (std::string const grid : {"levels: 1, top: 300.0", "levels: 2, top: 300.0", "levels: 3, top: 300.0",
                                   "levels: 3, top: 300.0, stretching: power, exponent: 2"}) {
        INFO(grid);
        Case k(
            column(grid, "type: columns, ncol: 1",
                   "  - vertical_diffusion: {mode: explicit, profile: constant, kappa: 10.0, surface_heat_flux: 0.1, "
                   "surface_moisture_flux: 1e-4, surface_tracer_flux: 0.01, surface_momentum: no_slip}\n",
                   "temperature: isothermal, surface_temperature: 280.0, humidity: 0.0", dt));
        k.model->checkStability();
        auto& s = k.state();
        auto const& g = *s.grid;
        HandReference const r(g, 280.0);
        r.check(s);
        setField(s.now.T, [](uint32_t, uint32_t z) { return 281.0 - 1.5 * z * z; });
        setField(s.now.q, [](uint32_t, uint32_t z) { return 0.01 - 0.003 * z; });
        setField(s.now.tracer, [](uint32_t, uint32_t z) { return z == 1 ? 1.0 : 0.2; });
        setField(s.now.u, [](uint32_t, uint32_t z) { return 5.0 + 3.0 * z; });
        setField(s.now.v, [](uint32_t, uint32_t z) { return -2.0 + z; });
        Profile const T0 = columnOf(s.now.T, 0), q0 = columnOf(s.now.q, 0), c0 = columnOf(s.now.tracer, 0),
                      u0 = columnOf(s.now.u, 0), v0 = columnOf(s.now.v, 0);
        k.steps(1);
        auto const heat = [&](Profile const& T) {
            Profile theta(T.size());
            for (std::size_t i = 0; i < T.size(); ++i)
                theta[i] = T[i] / r.exner[i];
            auto t = diffusionTendency(theta, g, r, K, Fh);
            for (std::size_t i = 0; i < T.size(); ++i)
                t[i] *= r.exner[i];
            return t;
        };
        double const eT = incrementError(T0, columnOf(s.now.T, 0), rk3(T0, dt, heat));
        double const eq = incrementError(
            q0, columnOf(s.now.q, 0), rk3(q0, dt, [&](Profile const& x) { return diffusionTendency(x, g, r, K, Fq); }));
        double const ec =
            incrementError(c0, columnOf(s.now.tracer, 0),
                           rk3(c0, dt, [&](Profile const& x) { return diffusionTendency(x, g, r, K, Ft); }));
        auto const wind = [&](Profile const& x) { return diffusionTendency(x, g, r, K, 0.0, true); };
        double const eu = incrementError(u0, columnOf(s.now.u, 0), rk3(u0, dt, wind));
        double const ev = incrementError(v0, columnOf(s.now.v, 0), rk3(v0, dt, wind));
        WARN(grid << ": one explicit step, relative increment errors T " << eT << ", q " << eq << ", tracer " << ec
                  << ", u " << eu << ", v " << ev << "; dT(0) = " << columnOf(s.now.T, 0)[0] - T0[0] << " K");
        for (double e : {eT, eq, ec, eu, ev})
            REQUIRE(e <= 1e-9);
        if (g.cells() == 1) // one level: only the surface flux acts, dT = dt exner rho_s F / (rho0 dz)
            REQUIRE(columnOf(s.now.T, 0)[0] - T0[0] ==
                    Approx(dt * r.exner[0] * r.rhoFace[0] * Fh / (r.rho[0] * 300.0)).epsilon(1e-9));
    }
}

TEST_CASE("Held-Suarez on one level: relaxation and friction by the RK3 multiplier, with Teq, kT, kv by hand",
          "[physics][small][held_suarez]") {
    // One level 1 km thick at +-45 degrees: p = ps exp(-g 500 / (Rd 280)), sigma = p / ps = 0.9408 > sigma_b. RK3 on
    // dx/dt = -k x multiplies x by R(-k dt) = 1 - k dt + (k dt)^2 / 2 - (k dt)^3 / 6 per step.
    // Shown to fail: with cos^2 instead of cos^4 in the hand kT, T - Teq after 10 steps was 19.5294 K in the model
    // and 19.4683 K by hand (tolerance 1e-11 relative).
    Case k(column("levels: 1, top: 1000.0", "type: latlon, nlat: 2, nlon: 1", "  - held_suarez\n",
                  "temperature: isothermal, surface_temperature: 280.0, humidity: 0.0", 600.0));
    auto& s = k.state();
    setField(s.now.T, [](uint32_t c, uint32_t) { return 300.0 - 10.0 * c; });
    setField(s.now.u, [](uint32_t, uint32_t) { return 10.0; });
    setField(s.now.v, [](uint32_t, uint32_t) { return -4.0; });
    int const steps = 10;
    k.steps(steps);
    double const p = 1e5 * std::exp(-cst::g * 500.0 / (cst::rd * 280.0)), sigma = p / 1e5, day = 86400.0;
    auto R = [](double z) { return 1.0 + z + z * z / 2.0 + z * z * z / 6.0; };
    for (uint32_t c = 0; c < 2; ++c) {
        double const phi = s.latitude.host()[c] * pi / 180.0;
        REQUIRE(std::fabs(s.latitude.host()[c]) == Approx(45.0));
        double const teq = std::max(
            200.0, (315.0 - 60.0 * std::pow(std::sin(phi), 2) - 10.0 * std::log(p / 1e5) * std::pow(std::cos(phi), 2)) *
                       std::pow(p / 1e5, cst::rd / cst::cp));
        double const above = (sigma - 0.7) / 0.3;
        double const kt = (1.0 / 40.0 + (0.25 - 1.0 / 40.0) * above * std::pow(std::cos(phi), 4)) / day;
        double const kv = 1.0 * above / day;
        double const T0 = 300.0 - 10.0 * c;
        double const T = teq + (T0 - teq) * std::pow(R(-kt * 600.0), steps);
        double const u = 10.0 * std::pow(R(-kv * 600.0), steps), v = -4.0 * std::pow(R(-kv * 600.0), steps);
        double const modelT = columnOf(s.now.T, c)[0], modelU = columnOf(s.now.u, c)[0],
                     modelV = columnOf(s.now.v, c)[0];
        WARN("Held-Suarez, 1 level, latitude "
             << s.latitude.host()[c] << ": Teq " << teq << " K, kT " << kt * day << " /day, kv " << kv * day
             << " /day; after 10 steps T - Teq = " << modelT - teq << " K (by hand " << T - teq << "), u " << modelU
             << " (by hand " << u << ")");
        REQUIRE((modelT - teq) == Approx(T - teq).epsilon(1e-11));
        REQUIRE(modelU == Approx(u).epsilon(1e-12));
        REQUIRE(modelV == Approx(v).epsilon(1e-12));
    }
}

TEST_CASE("Coriolis on one level: the RK3 rotation by hand and an inertial oscillation of period 2 pi / |f|",
          "[physics][small][winds]") {
    // w = (u - ug) + i (v - vg) obeys dw/dt = -i f w: RK3 multiplies it by R(-i f dt) per step, and the exact
    // solution turns it by -f t: after one inertial period 2 pi / |f| it is back where it started, after half a period
    // it points the other way. 100 steps a period.
    // Shown to fail: with f = Omega sin(phi) (a factor 2 missing) in the hand multiplier, the first step already
    // differed by 0.36 m/s (tolerance 1e-12 |w0|).
    double const f45 = 2.0 * cst::omega * std::sin(pi / 4.0), period = 2.0 * pi / f45, dt = period / 100.0;
    Case k(column("levels: 1, top: 1000.0", "type: latlon, nlat: 2, nlon: 1", "  - coriolis: {u_g: 10.0, v_g: -3.0}\n",
                  "temperature: isothermal, surface_temperature: 280.0, humidity: 0.0", dt));
    k.model->checkStability();
    auto& s = k.state();
    setField(s.now.u, [](uint32_t, uint32_t) { return 2.0; });
    setField(s.now.v, [](uint32_t, uint32_t) { return 5.0; });
    std::complex<double> const w0(2.0 - 10.0, 5.0 + 3.0);
    auto windOf = [&](uint32_t c) {
        return std::complex<double>(columnOf(s.now.u, c)[0] - 10.0, columnOf(s.now.v, c)[0] + 3.0);
    };
    auto R = [](std::complex<double> z) { return 1.0 + z + z * z / 2.0 + z * z * z / 6.0; };
    for (int n = 1; n <= 100; ++n) {
        k.steps(1);
        for (uint32_t c = 0; c < 2; ++c) {
            double const f = 2.0 * cst::omega * std::sin(s.latitude.host()[c] * pi / 180.0);
            std::complex<double> const hand = w0 * std::pow(R({0.0, -f * dt}), n);
            INFO("step " << n << ", latitude " << s.latitude.host()[c]);
            REQUIRE(std::abs(windOf(c) - hand) <= 1e-12 * std::abs(w0));
            if (n == 50) REQUIRE(std::abs(windOf(c) + w0) <= 1e-4 * std::abs(w0)); // half a period: reversed
            if (n == 25) // a quarter period: turned by -90 degrees in the north (clockwise), +90 in the south
                REQUIRE(std::abs(windOf(c) - w0 * std::complex<double>(0.0, f > 0 ? -1.0 : 1.0)) <=
                        1e-4 * std::abs(w0));
        }
    }
    for (uint32_t c = 0; c < 2; ++c) {
        double const e = std::abs(windOf(c) - w0) / std::abs(w0);
        WARN("inertial oscillation at latitude " << s.latitude.host()[c] << ": after one period 2 pi / |f| = " << period
                                                 << " s the wind is " << e << " (relative) from its start");
        REQUIRE(e <= 1e-4);
    }
}

namespace {
// The subsidence tendency of scheme upwind1 by hand, advective form:
//   d(psi)_k/dt = -[(F_k+1 - F_k) - psi_k (M_k+1 - M_k)] / (rho0_k dzCenter_k)
// with M = rho0_face w on the faces (0 at both ends), F = M psi_upwind (psi of the cell below where w > 0, above
// where w < 0), w = w_max sin(pi z / top).
Profile subsidenceTendency(Profile const& psi, ops::Grid const& g, HandReference const& r, double wMax) {
    std::size_t const n = psi.size();
    double const top = g.faces().back();
    Profile M(n + 1, 0.0), F(n + 1, 0.0), t(n);
    for (std::size_t f = 1; f < n; ++f) {
        M[f] = r.rhoFace[f] * wMax * std::sin(pi * g.faces()[f] / top);
        F[f] = M[f] * (M[f] > 0 ? psi[f - 1] : psi[f]);
    }
    for (std::size_t i = 0; i < n; ++i)
        t[i] = -((F[i + 1] - F[i]) - psi[i] * (M[i + 1] - M[i])) / (r.rho[i] * g.dzCenter()[i]);
    return t;
}
} // namespace

TEST_CASE("subsidence on 2 and 3 levels: a uniform tracer stays 1, a step moves by the upwind1 increment by hand",
          "[physics][small][advection]") {
    // Sinking (w_max < 0) and rising air over 2 and 3 levels of 1.5 and 1 km, one RK3 step of 600 s at a Courant
    // number up to 0.26. Tracer and q: a step (1 in the top cell, 0 below; 1 in the bottom cell for rising air);
    // potential temperature uniform (stays uniform, T = 300 exner).
    // Shown to fail: the flux form alone (without the psi d/dz(rho0 w) term) in the hand tendency gave 0.134 and
    // 0.839 for the 2-level column where the model has 0.136 and 1 (relative increment error 1.0).
    for (uint32_t const levels : {2u, 3u})
        for (double const wMax : {-0.4, 0.3}) {
            INFO(levels << " levels, w_max " << wMax);
            Case k(column("levels: " + std::to_string(levels) + ", top: 3000.0", "type: columns, ncol: 1",
                          "  - vertical_advection: {scheme: upwind1, positive_scheme: upwind1, w_max: " + num(wMax) +
                              "}\n",
                          "temperature: isothermal, surface_temperature: 280.0, humidity: 0.0", 600.0));
            k.model->checkStability();
            auto& s = k.state();
            auto const& g = *s.grid;
            HandReference const r(g, 280.0);
            r.check(s);
            auto step = [&](uint32_t, uint32_t z) { return (wMax < 0 ? z + 1 == levels : z == 0) ? 1.0 : 0.0; };
            setField(s.now.tracer, step);
            setField(s.now.q, [&](uint32_t c, uint32_t z) { return 0.01 * step(c, z); });
            setField(s.now.T, [&](uint32_t, uint32_t z) { return 300.0 * r.exner[z]; });
            Profile const c0 = columnOf(s.now.tracer, 0);
            k.steps(1);
            Profile const hand = rk3(c0, 600.0, [&](Profile const& x) { return subsidenceTendency(x, g, r, wMax); });
            Profile const tracer = columnOf(s.now.tracer, 0), q = columnOf(s.now.q, 0), T = columnOf(s.now.T, 0);
            double const e = incrementError(c0, tracer, hand);
            std::ostringstream shown;
            for (std::size_t i = 0; i < levels; ++i)
                shown << " " << tracer[i] << " (by hand " << hand[i] << ")";
            WARN(levels << " levels, w_max " << wMax << ": tracer after one step" << shown.str()
                        << "; relative increment error " << e);
            REQUIRE(e <= 1e-12);
            for (std::size_t i = 0; i < levels; ++i) {
                REQUIRE(q[i] == Approx(0.01 * tracer[i]).margin(1e-17));
                REQUIRE(T[i] / r.exner[i] == Approx(300.0).epsilon(1e-14));
            }
            // The step moved: the cell next to the step gained a visible amount.
            REQUIRE(std::fabs(hand[wMax < 0 ? levels - 2 : 1]) > 0.05);

            // A uniform tracer stays 1.
            setField(s.now.tracer, [](uint32_t, uint32_t) { return 1.0; });
            k.steps(5);
            for (double x : columnOf(s.now.tracer, 0))
                REQUIRE(std::fabs(x - 1.0) <= 1e-14);
        }
}

TEST_CASE("one level with every process of configs/default.yaml: runs, finite, physical, budgets closed",
          "[physics][small]") {
    // Shown to fail: with T set to NaN after 10 of the steps, REQUIRE(finite) failed.
    for (std::string const top : {"30000.0", "1000.0"}) {
        INFO("1 level, top " << top);
        std::vector<std::string> const o = {"grid.vertical.levels=1", "grid.vertical.top=" + top};
        Case k("default", o);
        k.model->checkStability();
        k.steps(288);
        auto& s = k.state();
        double lowT = 1e9, highT = 0, lowQ = 1e9, highWind = 0;
        bool finite = true;
        for (uint32_t c = 0; c < s.columns; ++c) {
            for (auto* f : s.now.all())
                finite = finite && std::isfinite(columnOf(*f, c)[0]);
            lowT = std::min(lowT, columnOf(s.now.T, c)[0]);
            highT = std::max(highT, columnOf(s.now.T, c)[0]);
            lowQ = std::min(lowQ, columnOf(s.now.q, c)[0]);
            highWind = std::max(highWind, std::hypot(columnOf(s.now.u, c)[0], columnOf(s.now.v, c)[0]));
        }
        auto const d = k.model->diagnostics();
        WARN("default case, 1 level, top " << top << " m, 2 days: T in [" << lowT << ", " << highT << "] K, lowest q "
                                           << lowQ << ", largest wind " << highWind << " m/s; budget residuals "
                                           << d.runResidual[0] << ", " << d.runResidual[1] << ", " << d.runResidual[2]);
        REQUIRE(finite);
        REQUIRE(lowT > 150.0);
        REQUIRE(highT < 350.0);
        REQUIRE(lowQ >= 0.0);
        REQUIRE(highWind < 100.0);
        for (int b = 0; b < app::budgetCount; ++b)
            REQUIRE(d.runResidual[b] <= 1e-12);
        // The whole run with its output (a NetCDF file with one level).
        auto const summary = runQuiet("default", o);
        REQUIRE(std::isfinite(summary.finalMeanT));
        for (int b = 0; b < app::budgetCount; ++b)
            REQUIRE(summary.runResidual[b] <= 1e-12);
    }
}

TEST_CASE("the state check finds a NaN, an Inf and out-of-range values, with column and level", "[physics][state]") {
    Case k("default", {});
    REQUIRE_FALSE(k.model->checkState().has_value());
    auto& s = k.state();
    auto set = [&](CenterField& f, uint32_t c, uint32_t z, double x) {
        f.toHost();
        double const old = f.at(c, z);
        f.at(c, z) = x;
        f.toDevice();
        return old;
    };
    struct Probe {
        CenterField* field;
        char const* name;
        double value;
    };
    for (Probe const p :
         {Probe{&s.now.T, "T", std::nan("")}, Probe{&s.now.T, "T", std::numeric_limits<double>::infinity()},
          Probe{&s.now.T, "T", 99.0}, Probe{&s.now.u, "u", -401.0}, Probe{&s.now.q, "q", -1e-9},
          Probe{&s.now.qr, "qr", 0.3}, Probe{&s.now.tracer, "tracer", std::nan("")}}) {
        INFO(p.name << " = " << p.value);
        double const old = set(*p.field, 5, 7, p.value);
        auto const v = k.model->checkState();
        REQUIRE(v.has_value());
        CHECK(v->variable == p.name);
        CHECK(v->column == 5);
        CHECK(v->level == 7);
        CHECK((std::isnan(p.value) ? std::isnan(v->value) : v->value == p.value));
        set(*p.field, 5, 7, old);
        REQUIRE_FALSE(k.model->checkState().has_value());
    }
}

// The state check's kernel (Model::checkState): RangeCheck bodies, one per variable, in one ops::columnKernel. On
// Threads the kernel stages tiles of 256 / levels neighbouring columns in shared memory; on Serial one worker walks a
// column. The expected answer is built here from where the bad values were put: each column's first variable (in the
// bodies' order) with a value out of [0, 2], NaN or Inf at any level; +inf for a clean column. The bad values sit at
// the first and the last level, in the first column of a tile, in the partial last tile (300 columns of 30 levels:
// tiles of 8, the last one of 4), and in columns with two bad variables.
TEST_CASE("the state check's kernel finds each column's first variable out of range, in tiles and not",
          "[physics][state]") {
    constexpr double inf = std::numeric_limits<double>::infinity();
    for (uint32_t const levels : {30u, 300u}) {
        auto const grid = std::make_shared<ops::Grid const>(ops::Grid::uniform(levels, 12000.0, 0.0));
        uint32_t const cols = 300;
        std::vector<CenterField> fields;
        for (int i = 0; i < 3; ++i)
            fields.emplace_back(grid, cols, core::MemSpace::Host);
        for (auto& f : fields)
            for (uint32_t c = 0; c < cols; ++c)
                for (uint32_t k = 0; k < levels; ++k)
                    f.at(c, k) = 1.0 + 0.5 * std::sin(0.1 * c + 0.2 * k); // inside [0, 2]
        struct Bad {
            int variable;
            uint32_t column, level;
            double value;
        };
        std::vector<Bad> const bad = {{2, 3, levels - 1, 2.5}, {0, 8, 0, std::nan("")}, {2, 9, 4, -1.0},
                                      {1, 9, levels - 1, 5.0}, {1, 150, 3, -1e-9},      {0, 299, 17, inf},
                                      {2, 299, 0, 3.0},        {1, 7, 12, -inf}};
        std::vector<double> want(cols, inf);
        for (auto const& b : bad) {
            fields[b.variable].at(b.column, b.level) = b.value;
            want[b.column] = std::min(want[b.column], static_cast<double>(b.variable));
        }
        for (auto& f : fields)
            f.toDevice();
        auto check = [&](auto const& backend, char const* name) {
            INFO(name << ", " << levels << " levels");
            core::Buffer<double> first(cols, core::MemSpace::Host, -7.0);
            auto body = [&](int i) {
                return app::RangeCheck{std::as_const(fields[i]).view(), 0.0, 2.0, static_cast<double>(i),
                                       first.device()};
            };
            ops::columnKernel<double>(backend, cols, levels, body(0), body(1), body(2));
            first.toHost();
            for (uint32_t c = 0; c < cols; ++c) {
                INFO("column " << c);
                REQUIRE(first.host()[c] == want[c]);
            }
        };
        check(core::Serial{}, "Serial");
        check(core::Threads{7, true}, "Threads, 7 workers");
        check(core::Threads{32, true}, "Threads, 32 workers");
    }
}

TEST_CASE("the state check reports the first variable in order, in its lowest column", "[physics][state]") {
    Case k("default", {});
    auto& s = k.state();
    auto put = [](CenterField& f, uint32_t c, uint32_t z, double x) {
        f.toHost();
        f.at(c, z) = x;
        f.toDevice();
    };
    put(s.now.q, 3, 2, -1.0);    // a later variable in a lower column
    put(s.now.u, 9, 4, 500.0);   // the first variable in order with a bad value ...
    put(s.now.u, 6, 11, -450.0); // ... whose lowest bad column is this one
    put(s.now.v, 1, 0, std::nan(""));
    auto const v = k.model->checkState();
    REQUIRE(v.has_value());
    CHECK(v->variable == "u");
    CHECK(v->column == 6);
    CHECK(v->level == 11);
    CHECK(v->value == -450.0);
}

// A batch of ColumnTerms in one kernel, against the processes' host formulas of before (dt cp h / exner0; rain / dt
// over dt; the open column's end fluxes; -rain), for the sums and for the gross magnitudes, bit for bit. On Serial and
// on Threads (one kernel over the columns either way).
TEST_CASE("column terms add the amounts the host formulas give, bit for bit", "[physics][budget]") {
    auto const grid = std::make_shared<ops::Grid const>(ops::Grid::uniform(10, 12000.0, 0.0));
    uint32_t const cols = 37;
    double const dt = 600.0, cp = app::constants::cp;
    auto check = [&](auto const& backend, char const* name) {
        INFO(name);
        core::Buffer<double> h(cols, core::MemSpace::Host), rain(cols, core::MemSpace::Host);
        CenterField exner(grid, cols, core::MemSpace::Host);
        FaceField flux(grid, cols, core::MemSpace::Host);
        std::vector<double> hv(cols), rv(cols), ex0(cols), bottom(cols), top(cols); // the host's own copies
        for (uint32_t c = 0; c < cols; ++c) {
            h.host()[c] = hv[c] = std::sin(1.3 * c) * 40.0;
            rain.host()[c] = rv[c] = 1e-4 * (c % 5) + 1e-7 * c;
            for (uint32_t z = 0; z < 10; ++z)
                exner.at(c, z) = 1.0 - 0.03 * z - 1e-3 * c;
            for (uint32_t z = 0; z <= 10; ++z)
                flux.at(c, z) = std::cos(0.7 * c + z);
            ex0[c] = exner.at(c, 0);
            bottom[c] = flux.at(c, 0);
            top[c] = flux.at(c, 10);
        }
        for (auto* b : {&h, &rain})
            b->toDevice();
        exner.toDevice();
        flux.toDevice();
        core::Buffer<double> sum(2 * cols, core::MemSpace::Host, 0.25), gross(2 * cols, core::MemSpace::Host, 0.5),
            mean(cols, core::MemSpace::Host, 0.125);
        auto into = [&](app::ColumnTerm t, uint32_t slot) {
            t.sum = sum.device() + slot * cols;
            t.gross = gross.device() + slot * cols;
            return t;
        };
        app::ColumnTerm heat = app::columnTerm(h, dt * cp);
        heat.divisorField = std::as_const(exner).view().data;
        heat.divisorStride = std::as_const(exner).view().stride;
        app::ColumnTerm ends;
        ends.values = std::as_const(flux).view().data;
        ends.stride = std::as_const(flux).view().stride;
        ends.difference = true;
        ends.minusOffset = 10;
        ends.scale = 0.5 * cp;
        app::ColumnTerm precipitation = app::columnTerm(rain);
        precipitation.sum = mean.device();
        precipitation.divisor = dt;
        precipitation.factor = dt;
        app::addColumnTerms(backend, cols,
                            {into(heat, 0), into(ends, 0), into(app::columnTerm(rain, -1.0), 1), precipitation});
        for (auto* b : {&sum, &gross, &mean})
            b->toHost();
        for (uint32_t c = 0; c < cols; ++c) {
            INFO("column " << c);
            double const a0 = dt * cp * hv[c] / ex0[c], a1 = 0.5 * cp * (bottom[c] - top[c]);
            double const s0 = (0.25 + a0) + a1, g0 = (0.5 + std::fabs(a0)) + std::fabs(a1);
            double const s1 = 0.25 + -rv[c], g1 = 0.5 + std::fabs(-rv[c]);
            double const m = 0.125 + rv[c] / dt * dt;
            REQUIRE(std::memcmp(&sum.host()[c], &s0, sizeof(double)) == 0);
            REQUIRE(std::memcmp(&gross.host()[c], &g0, sizeof(double)) == 0);
            REQUIRE(std::memcmp(&sum.host()[cols + c], &s1, sizeof(double)) == 0);
            REQUIRE(std::memcmp(&gross.host()[cols + c], &g1, sizeof(double)) == 0);
            REQUIRE(std::memcmp(&mean.host()[c], &m, sizeof(double)) == 0);
        }
    };
    check(core::Serial{}, "Serial");
    check(core::Threads{7, true}, "Threads, 7 workers");
}
