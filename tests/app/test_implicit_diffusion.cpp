// Implicit vertical diffusion in one kernel (app/model/implicit_diffusion.hpp), its matrices and right-hand sides from
// the operator's expression, against an independent solution and against conservation:
//   - to rounding, backward Euler from the formula: each variable's coefficients built on the host from rho0 K and the
//     grid by hand, solved for psi1 by ops::solveTridiagonal (Thomas), theta = T / exner0 around the heat solve; a
//     reference with rho0 K off by a millionth is told apart (the comparison can fail);
//   - bit for bit on every backend: Serial, OpenMP and the checking Threads backend with 3 and 64 workers, column
//     counts that leave partial tiles, 1 to 300 levels (a tile of one column), free-slip and no-slip ground;
//   - the column content sum(rho0 psi dz) of a scalar changes by exactly dt rho0_face F through the surface (to
//     rounding), and a uniform scalar with no surface flux keeps its bits (the increment form: the formula's solve for
//     psi1 moves it, which the same check sees).
#include "tests/core/backends.hpp"
#include <strata/app/model/implicit_diffusion.hpp>
#include <strata/operators/column/tridiagonal.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <vector>

using namespace strata;
using namespace strata::app;

namespace {

constexpr auto host = core::MemSpace::Host;
using Center = ops::Field<double, ops::Center>;
using Face = ops::Field<double, ops::Face>;

struct Columns {
    std::shared_ptr<ops::Grid const> grid;
    uint32_t columns;
    Center T, q, tracer, u, v, rho, exner;
    Face rhoK;
    std::vector<double> heat, moisture, tracerFlux, zero, negHeat, negMoisture, negTracer;

    Columns(uint32_t levels, uint32_t cols)
        : grid(std::make_shared<ops::Grid const>(
              ops::Grid::stretched(levels, 20000.0, [](double s) { return std::pow(s, 1.5); }))),
          columns(cols), T(grid, cols, host), q(grid, cols, host), tracer(grid, cols, host), u(grid, cols, host),
          v(grid, cols, host), rho(grid, cols, host), exner(grid, cols, host), rhoK(grid, cols, host), heat(cols),
          moisture(cols), tracerFlux(cols), zero(cols, 0.0), negHeat(cols), negMoisture(cols), negTracer(cols) {
        for (uint32_t c = 0; c < cols; ++c) {
            heat[c] = 12.0 + 3.0 * c;
            moisture[c] = 1e-5 * (1.0 + c);
            tracerFlux[c] = -0.01 * c; // into the ground for c > 0
            negHeat[c] = -heat[c];
            negMoisture[c] = -moisture[c];
            negTracer[c] = -tracerFlux[c];
            for (uint32_t k = 0; k < levels; ++k) {
                double const z = grid->centers()[k];
                rho.at(c, k) = 1.2 * std::exp(-z / 8000.0);
                exner.at(c, k) = std::pow(1.0 - z / 44000.0, 1.2);
                T.at(c, k) = 290.0 - 0.0065 * z + std::sin(0.7 * k + c);
                q.at(c, k) = 0.01 * std::exp(-z / 2000.0) * (1.0 + 0.1 * std::cos(1.3 * k));
                tracer.at(c, k) = k % 3 == 0 ? 1.0 : 0.0;
                u.at(c, k) = 5.0 + 0.001 * z + 0.5 * c;
                v.at(c, k) = -2.0 + std::cos(0.3 * k);
            }
            for (uint32_t f = 0; f <= levels; ++f) // stiff: dt K / dz^2 up to about 1e3 near the ground
                rhoK.at(c, f) = 1.1 * (40.0 + 10.0 * c) * std::exp(-grid->faces()[f] / 3000.0);
        }
    }

    ImplicitDiffusionFields kernel(double dt, bool noSlip) {
        return {T.view(),
                q.view(),
                tracer.view(),
                u.view(),
                v.view(),
                std::as_const(rho).view(),
                std::as_const(exner).view(),
                std::as_const(rhoK).view(),
                negHeat.data(),
                negMoisture.data(),
                negTracer.data(),
                zero.data(),
                grid->view(host),
                dt,
                noSlip};
    }
};

// Backward Euler from the formula: each variable's coefficients by hand, solved for psi1 by the library's Thomas.
// rhoKScale: 1, or a reference broken on purpose.
void reference(Columns& s, double dt, bool noSlip, double rhoKScale = 1.0) {
    uint32_t const n = s.grid->cells();
    auto const& dzc = s.grid->dzCenter();
    auto const& rdzf = s.grid->rdzFace();
    Center a(s.grid, s.columns, host), b(s.grid, s.columns, host), c(s.grid, s.columns, host),
        d(s.grid, s.columns, host), theta(s.grid, s.columns, host);
    auto solve = [&](Center& psi, std::vector<double> const& flux, bool ground) {
        for (uint32_t col = 0; col < s.columns; ++col)
            for (uint32_t k = 0; k < n; ++k) {
                double const perMass = 1.0 / (s.rho.at(col, k) * dzc[k]);
                d.at(col, k) = psi.at(col, k) + (k == 0 ? dt * flux[col] * perMass : 0.0);
                double const below = k > 0 ? rhoKScale * s.rhoK.at(col, k) * rdzf[k] : 0.0;
                double const above = k + 1 < n ? rhoKScale * s.rhoK.at(col, k + 1) * rdzf[k + 1] : 0.0;
                double const groundTerm =
                    k == 0 && ground ? dt * rhoKScale * s.rhoK.at(col, 0) * rdzf[0] * perMass : 0.0;
                a.at(col, k) = -dt * below * perMass;
                c.at(col, k) = -dt * above * perMass;
                b.at(col, k) = 1.0 - a.at(col, k) - c.at(col, k) + groundTerm;
            }
        ops::solveTridiagonal(core::Serial{}, a, b, c, d, psi, ops::Tridiag::Thomas);
    };
    for (uint32_t col = 0; col < s.columns; ++col)
        for (uint32_t k = 0; k < n; ++k)
            theta.at(col, k) = s.T.at(col, k) / s.exner.at(col, k);
    solve(theta, s.heat, false);
    for (uint32_t col = 0; col < s.columns; ++col)
        for (uint32_t k = 0; k < n; ++k)
            s.T.at(col, k) = theta.at(col, k) * s.exner.at(col, k);
    solve(s.q, s.moisture, false);
    solve(s.tracer, s.tracerFlux, false);
    solve(s.u, s.zero, noSlip);
    solve(s.v, s.zero, noSlip);
}

bool identical(Center const& x, Center const& y) {
    for (uint32_t c = 0; c < x.columns(); ++c)
        for (uint32_t k = 0; k < x.levels(); ++k) {
            double const p = x.at(c, k), r = y.at(c, k);
            if (std::memcmp(&p, &r, sizeof p) != 0) return false;
        }
    return true;
}

double content(Columns const& s, Center const& psi, uint32_t col) {
    double sum = 0.0;
    for (uint32_t k = 0; k < s.grid->cells(); ++k)
        sum += s.rho.at(col, k) * psi.at(col, k) * s.grid->dzCenter()[k];
    return sum;
}

} // namespace

// Whether x agrees with y to `tolerance` relative to the largest |y| of each column.
bool close(Center const& x, Center const& y, double tolerance) {
    for (uint32_t c = 0; c < x.columns(); ++c) {
        double scale = 0.0;
        for (uint32_t k = 0; k < x.levels(); ++k)
            scale = std::max(scale, std::fabs(y.at(c, k)));
        for (uint32_t k = 0; k < x.levels(); ++k)
            if (!(std::fabs(x.at(c, k) - y.at(c, k)) <= tolerance * scale)) return false;
    }
    return true;
}

TEST_CASE("implicit diffusion from the operator's expression equals backward Euler from the formula to rounding",
          "[model][diffusion]") {
    double const dt = 1800.0;
    for (uint32_t levels : {1u, 2u, 7u, 30u, 254u})
        for (bool noSlip : {false, true}) {
            Columns expected(levels, 9), got(levels, 9), broken(levels, 9);
            reference(expected, dt, noSlip);
            reference(broken, dt, noSlip, 1.0 + 1e-6);
            diffuseImplicitly(core::Serial{}, 9, got.kernel(dt, noSlip));
            INFO(levels << " levels, " << (noSlip ? "no-slip" : "free-slip"));
            // (stiff: dt K / dz^2 up to about 1e3, so the two solves' rounding differs by up to about 1e3 ulps)
            CHECK(close(got.T, expected.T, 1e-12));
            CHECK(close(got.q, expected.q, 1e-12));
            CHECK(close(got.tracer, expected.tracer, 1e-12));
            CHECK(close(got.u, expected.u, 1e-12));
            CHECK(close(got.v, expected.v, 1e-12));
            if (levels > 1) { // (one level: nothing diffuses, rho0 K does not enter)
                CHECK_FALSE(close(got.q, broken.q, 1e-12));
                CHECK_FALSE(close(got.u, broken.u, 1e-12));
            }
        }
}

TEMPLATE_TEST_CASE("implicit diffusion in one kernel: the same bits on every backend", "[model][diffusion]",
                   test::OpenMPBackend, test::ThreadsBackend<3>, test::ThreadsBackend<64>, STRATA_SMALL_GRID_BACKENDS) {
    auto const backend = TestType::make();
    double const dt = 1800.0;
    // 300 columns: at 1 level tiles of 256 columns and one of 44; at 30 levels 37 tiles of 8 columns (31 doubles
    // apart) and one of 4, 5 x 8 solves over a tile's 64 workers; 255 levels, a column a tile; 300 levels, a column
    // deeper than 256 values
    for (uint32_t levels : {1u, 2u, 7u, 30u, 255u, 300u})
        for (uint32_t columns : {1u, 4u, 9u, 300u})
            for (bool noSlip : {false, true})
                for (uint32_t diffused : {31u, 7u, 26u}) {
                    if (diffused != 31u && levels != 30u) continue; // (partial sets: one level count is enough)
                    Columns expected(levels, columns), got(levels, columns);
                    auto e = expected.kernel(dt, noSlip), g = got.kernel(dt, noSlip);
                    e.diffused = g.diffused = diffused;
                    diffuseImplicitly(core::Serial{}, columns, e);
                    diffuseImplicitly(backend, columns, g);
                    INFO(levels << " levels, " << columns << " columns, " << (noSlip ? "no-slip" : "free-slip")
                                << ", variables " << diffused);
                    CHECK(identical(got.T, expected.T));
                    CHECK(identical(got.q, expected.q));
                    CHECK(identical(got.tracer, expected.tracer));
                    CHECK(identical(got.u, expected.u));
                    CHECK(identical(got.v, expected.v));
                }
}

TEST_CASE("implicit diffusion conserves column contents up to the surface flux, keeps a uniform scalar uniform",
          "[model][diffusion]") {
    double const dt = 1800.0;
    Columns s(30, 5), formula(30, 5); // the same state
    std::vector<double> q0(s.columns), tracer0(s.columns);
    for (uint32_t c = 0; c < s.columns; ++c) {
        q0[c] = content(s, s.q, c);
        tracer0[c] = content(s, s.tracer, c);
        for (uint32_t k = 0; k < 30; ++k)
            s.v.at(c, k) = s.u.at(c, k) = formula.v.at(c, k) = 288.15; // uniform, no flux: stays 288.15
    }
    diffuseImplicitly(core::Serial{}, s.columns, s.kernel(dt, false));
    reference(formula, dt, false);
    bool formulaKeepsUniform = true;
    for (uint32_t c = 0; c < s.columns; ++c) {
        INFO("column " << c);
        // Backward Euler conserves sum(M psi) exactly in exact arithmetic: the surface flux is all that enters.
        CHECK(content(s, s.q, c) - q0[c] == Approx(dt * s.moisture[c]).epsilon(1e-9));
        CHECK(content(s, s.tracer, c) - tracer0[c] == Approx(dt * s.tracerFlux[c]).margin(1e-9 * tracer0[c]));
        for (uint32_t k = 0; k < 30; ++k) {
            CHECK(s.v.at(c, k) == 288.15);
            CHECK(s.u.at(c, k) == 288.15);
            formulaKeepsUniform = formulaKeepsUniform && formula.v.at(c, k) == 288.15;
        }
        // Diffusion smooths: the tracer's 1-0-0 pattern is no longer 0 or 1 anywhere away from the ends.
        CHECK(s.tracer.at(c, 15) > 0.0);
        CHECK(s.tracer.at(c, 15) < 1.0);
    }
    // The check sees a drift of an ulp: solving for psi1 (the formula's reference) does not keep the bits.
    CHECK_FALSE(formulaKeepsUniform);
}
