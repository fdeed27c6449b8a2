// UpwindLimitedProductC2F: positivity and boundedness of advection with the flux-limited product, against the
// unlimited third-order product in the same runs (so the test can fail), plus the limiter's pointwise properties.
//
// The runs advect a tracer q consistently with continuity: the density rho and the tracer mass s = rho q are stepped
// together with one mass flux, m = UpwindBiasedProductC2F(w, rho) (first-order upwind), and the tracer flux is the
// limited (or unlimited) product of m and q = s / rho:
//   d rho / dt = -div(m),   d s / dt = -div(flux(m, s / rho)).
// With a constant w, rho stays exactly 1 and q = s. For the limited product every forward-Euler step gives
// q_new = q + sum_j c_j (q_j - q) / rho_new over the neighbours j with c_j >= 0, and sum_j c_j <= rho_new when the
// outflow Courant numbers of each cell add up to at most 1/2 (docs/operators.md): q_new is a convex combination of
// neighbouring values, so q stays within [0, max q0]; SSP-RK3 stages are convex combinations of such steps.
#include <strata/operators/operators.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <vector>

using namespace strata;
using namespace strata::ops;

namespace {

constexpr uint32_t kCells = 200;
constexpr uint32_t kColumns = 2;
constexpr double kTop = 1.0;
constexpr double kCourant = 0.5; // the largest |w| dt / dz of the run

using CField = Field<double, Center>;
using FField = Field<double, Face>;

template <class S>
bool identical(Field<double, S> const& a, Field<double, S> const& b) {
    for (uint32_t c = 0; c < a.columns(); ++c)
        if (std::memcmp(a.column(c).data(), b.column(c).data(), a.levels() * sizeof(double)) != 0) return false;
    return true;
}

enum class Stepper { ForwardEuler, SspRk3 };
char const* stepperName(Stepper s) { return s == Stepper::ForwardEuler ? "forward Euler" : "SSP-RK3"; }

struct RunResult {
    double minQ = std::numeric_limits<double>::infinity();
    double maxQ = -std::numeric_limits<double>::infinity();
    double minRho = std::numeric_limits<double>::infinity();
    double mass0 = 0, mass = 0; // tracer mass, sum of s dz, at the start and the end
    CField q;
};

// Advects the top-hat q0 by w for `steps` steps of dt; flux(m, q) is the tracer flux, div the divergence operator.
// Records the extremes of q and rho after every stage.
template <class Backend, class Flux, class Div>
RunResult advect(Backend const& backend, Engine engine, std::shared_ptr<Grid const> const& grid, FField const& w,
                 CField const& q0, Flux const& flux, Div const& div, Stepper stepper, double dt, uint32_t steps) {
    auto const massFlux = UpwindBiasedProductC2F{Extrapolate{}, Extrapolate{}};
    CField rho(grid, kColumns, backend.memSpace, 1.0), s(grid, kColumns, backend.memSpace);
    CField rho1(grid, kColumns, backend.memSpace), s1(grid, kColumns, backend.memSpace);
    CField rho2(grid, kColumns, backend.memSpace), s2(grid, kColumns, backend.memSpace);
    CField dRho(grid, kColumns, backend.memSpace), dS(grid, kColumns, backend.memSpace);
    RunResult r{.q = CField(grid, kColumns, backend.memSpace)};
    evaluate(backend, s, asExpr(q0) * 1.0);
    auto const& dz = grid->dzCenter();
    auto const tracerMass = [&](CField const& f) {
        double sum = 0;
        for (uint32_t c = 0; c < kColumns; ++c)
            for (uint32_t k = 0; k < kCells; ++k)
                sum += f.at(c, k) * dz[k];
        return sum;
    };
    auto const record = [&](CField const& rh, CField const& sm) {
        for (uint32_t c = 0; c < kColumns; ++c)
            for (uint32_t k = 0; k < kCells; ++k) {
                double const q = sm.at(c, k) / rh.at(c, k);
                r.minQ = std::min(r.minQ, q);
                r.maxQ = std::max(r.maxQ, q);
                r.minRho = std::min(r.minRho, rh.at(c, k));
            }
    };
    // dRho, dS = the tendencies at (rh, sm).
    auto const tendencies = [&](CField const& rh, CField const& sm) {
        evaluate(backend, dRho, -div(massFlux(w, rh)), engine);
        evaluate(backend, dS, -div(flux(massFlux(w, rh), sm / rh)), engine);
    };
    r.mass0 = tracerMass(s);
    for (uint32_t step = 0; step < steps; ++step) {
        if (stepper == Stepper::ForwardEuler) {
            tendencies(rho, s);
            evaluate(backend, rho1, rho + dt * dRho);
            evaluate(backend, s1, s + dt * dS);
            evaluate(backend, rho, rho1 * 1.0);
            evaluate(backend, s, s1 * 1.0);
        } else { // Shu and Osher's three stages
            tendencies(rho, s);
            evaluate(backend, rho1, rho + dt * dRho);
            evaluate(backend, s1, s + dt * dS);
            record(rho1, s1);
            tendencies(rho1, s1);
            evaluate(backend, rho2, 0.75 * rho + 0.25 * (rho1 + dt * dRho));
            evaluate(backend, s2, 0.75 * s + 0.25 * (s1 + dt * dS));
            record(rho2, s2);
            tendencies(rho2, s2);
            evaluate(backend, rho1, (1.0 / 3.0) * rho + (2.0 / 3.0) * (rho2 + dt * dRho));
            evaluate(backend, s1, (1.0 / 3.0) * s + (2.0 / 3.0) * (s2 + dt * dS));
            evaluate(backend, rho, rho1 * 1.0);
            evaluate(backend, s, s1 * 1.0);
        }
        record(rho, s);
    }
    r.mass = tracerMass(s);
    evaluate(backend, r.q, s / rho);
    return r;
}

// A top-hat: 1 on cells [lo, hi) of column 0, shifted by 10 cells in column 1; 0 elsewhere.
CField topHat(std::shared_ptr<Grid const> const& grid, uint32_t lo, uint32_t hi) {
    CField q(grid, kColumns, core::MemSpace::Host, 0.0);
    for (uint32_t c = 0; c < kColumns; ++c)
        for (uint32_t k = lo + 10 * c; k < hi + 10 * c; ++k)
            q.at(c, k) = 1.0;
    return q;
}

} // namespace

TEST_CASE("the limited product keeps a top-hat within [0, 1]; the third-order product does not",
          "[operators][positivity]") {
    auto const grid = std::make_shared<Grid const>(Grid::uniform(kCells, kTop));
    double const dz = kTop / kCells;
    auto const limited = UpwindLimitedProductC2F{FirstOrderOneSided{}, FirstOrderOneSided{}};
    auto const third = Upwind3rdOrderBiasedProductC2F{FirstOrderOneSided{}, FirstOrderOneSided{}};
    auto const open = DivergenceF2C{};                               // the boundary faces carry w x there
    auto const closed = DivergenceF2C{SetValue{0.0}, SetValue{0.0}}; // no flux through the ground or the lid
    constexpr uint32_t steps = 300;

    struct Case {
        char const* name;
        double (*w)(double z); // unit amplitude
        uint32_t lo, hi;       // the top-hat (column 0)
        bool closedColumn;
    };
    // Constant w: 300 steps at Courant 0.5 move the top-hat 150 cells, the front of its smeared edge through the
    // outflow face (the mass change printed). Varying w (both signs, zero at the ends):
    // sin(3 pi z) rises below z = 1/3, sinks between 1/3 and 2/3 (the flow converges at 1/3) and rises above; the
    // top-hat straddles the line z = 1/3, where the flow converges (sin) or diverges (-sin). The varying runs use the
    // closed divergence of the model.
    Case const cases[] = {
        {"w = +1", [](double) { return 1.0; }, 20, 40, false},
        {"w = -1", [](double) { return -1.0; }, 150, 170, false},
        {"w = sin(3 pi z)", [](double z) { return std::sin(3.0 * M_PI * z); }, 50, 80, true},
        {"w = -sin(3 pi z)", [](double z) { return -std::sin(3.0 * M_PI * z); }, 50, 80, true},
    };
    std::printf("\nTop-hat (0 and 1) advected %u steps, max Courant %.2f, %u cells: extremes of q over every stage\n",
                steps, kCourant, kCells);
    std::printf("%-18s %-14s %-34s %12s %12s %12s\n", "velocity", "stepper", "flux", "min q", "max q - 1",
                "mass change");
    for (Case const& cs : cases) {
        FField w(grid, kColumns, core::MemSpace::Host);
        for (uint32_t c = 0; c < kColumns; ++c)
            for (uint32_t k = 0; k <= kCells; ++k)
                w.at(c, k) = cs.w(grid->faces()[k]);
        double const dt = kCourant * dz; // |w| <= 1
        CField const q0 = topHat(grid, cs.lo, cs.hi);
        for (Stepper stepper : {Stepper::ForwardEuler, Stepper::SspRk3}) {
            auto const run = [&](auto const& backend, Engine engine, auto const& flux) {
                if (cs.closedColumn) return advect(backend, engine, grid, w, q0, flux, closed, stepper, dt, steps);
                return advect(backend, engine, grid, w, q0, flux, open, stepper, dt, steps);
            };
            INFO(cs.name << ", " << stepperName(stepper));
            RunResult const lim = run(core::Serial{}, Engine::Direct, limited);
            RunResult const unl = run(core::Serial{}, Engine::Direct, third);
            for (auto const& [r, name] :
                 {std::pair{&lim, "UpwindLimitedProductC2F"}, std::pair{&unl, "Upwind3rdOrderBiasedProductC2F"}})
                std::printf("%-18s %-14s %-34s %12.4e %12.4e %12.3e\n", cs.name, stepperName(stepper), name, r->minQ,
                            r->maxQ - 1.0, (r->mass - r->mass0) / r->mass0);
            // Limited: never below 0, never above the initial maximum 1, to rounding: the exact update is a convex
            // combination, computed as s + dt dS (measured: down to -4e-15 where the exact value is 0 or tiny).
            CHECK(lim.minQ >= -1e-14);
            CHECK(lim.maxQ <= 1.0 + 1e-14);
            CHECK(lim.minRho > 0.0);
            // The closed column conserves the tracer mass (to rounding).
            if (cs.closedColumn) CHECK(std::fabs(lim.mass - lim.mass0) <= 1e-12 * lim.mass0);
            // Unlimited: undershoots (and overshoots) the same top-hat.
            CHECK(unl.minQ < -1e-3);
            CHECK(unl.maxQ > 1.0 + 1e-3);
            // The limited run gives the same bits with the Shmem engine on a checked multi-worker backend.
            if (stepper == Stepper::SspRk3) {
                RunResult const shm = run(core::Threads{4, true}, Engine::Shmem, limited);
                CHECK(identical(shm.q, lim.q));
            }
        }
    }
    std::fflush(stdout);
}

TEST_CASE("the limited product of a constant is w times the constant, bit for bit", "[operators][positivity]") {
    for (uint32_t n : {1u, 2u, 3u, 4u, 5u, 64u}) {
        INFO(n << " cells");
        auto const grid =
            std::make_shared<Grid const>(Grid::stretched(n, 1000.0, [](double s) { return s + 0.2 * s * (1.0 - s); }));
        FField w(grid, kColumns, core::MemSpace::Host);
        CField x(grid, kColumns, core::MemSpace::Host);
        std::vector<double> const value = {0.1, -3.7e5};
        for (uint32_t c = 0; c < kColumns; ++c) {
            for (uint32_t k = 0; k < n; ++k)
                x.at(c, k) = value[c];
            for (uint32_t k = 0; k <= n; ++k)
                w.at(c, k) = std::sin(0.9 * k + c) * 0.37; // both signs
        }
        auto const expr = UpwindLimitedProductC2F{FirstOrderOneSided{}, FirstOrderOneSided{}}(w, x);
        for (Engine engine : {Engine::Direct, Engine::Shmem}) {
            FField out(grid, kColumns, core::MemSpace::Host);
            evaluate(core::Threads{3, true}, out, expr, engine);
            for (uint32_t c = 0; c < kColumns; ++c)
                for (uint32_t k = 0; k <= n; ++k) {
                    INFO("column " << c << ", face " << k);
                    REQUIRE(out.at(c, k) == w.at(c, k) * value[c]);
                }
        }
    }
}

// Koren's limiter keeps the face value between the upwind and the downwind cell (0 <= phi <= 2 r), and at most
// twice the upwind difference away from the upwind cell (phi <= 2); plateaus (zero differences) give no NaN.
TEST_CASE("the limited face value is bounded by its neighbours, and finite on plateaus", "[operators][positivity]") {
    uint32_t const n = 400;
    auto const grid = std::make_shared<Grid const>(Grid::uniform(n, 1.0));
    FField w(grid, kColumns, core::MemSpace::Host);
    CField x(grid, kColumns, core::MemSpace::Host);
    uint64_t state = 12345;
    auto const next = [&] { // a small LCG: reproducible values in [0, 1)
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        return static_cast<double>(state >> 11) / 9007199254740992.0;
    };
    for (uint32_t c = 0; c < kColumns; ++c) {
        for (uint32_t k = 0; k < n; ++k) // random values with repeats: runs of equal values and zero differences
            x.at(c, k) = next() < 0.3 && k > 0 ? x.at(c, k - 1) : std::floor(next() * 8.0) * 0.125;
        for (uint32_t k = 0; k <= n; ++k)
            w.at(c, k) = next() < 0.1 ? 0.0 : next() - 0.5;
    }
    FField out(grid, kColumns, core::MemSpace::Host);
    evaluate(core::Serial{}, out, UpwindLimitedProductC2F{FirstOrderOneSided{}, FirstOrderOneSided{}}(w, x));
    for (uint32_t c = 0; c < kColumns; ++c) {
        for (uint32_t k = 2; k + 2 <= n; ++k) {
            INFO("column " << c << ", face " << k);
            double const wk = w.at(c, k);
            REQUIRE(std::isfinite(out.at(c, k)));
            if (wk == 0.0) {
                REQUIRE(out.at(c, k) == 0.0);
                continue;
            }
            bool const up = wk > 0;
            double const xu = x.at(c, up ? k - 1 : k), xd = x.at(c, up ? k : k - 1), xuu = x.at(c, up ? k - 2 : k + 1);
            double const face = out.at(c, k) / wk;
            double const tol = 1e-15;
            REQUIRE(face >= std::min(xu, xd) - tol);
            REQUIRE(face <= std::max(xu, xd) + tol);
            REQUIRE(std::fabs(face - xu) <= std::fabs(xu - xuu) + tol);
        }
    }
}
