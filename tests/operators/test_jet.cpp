// Rows of an expression's Jacobian in one evaluation (operators/jet.hpp) against the operator-matrix tools of
// matrix.hpp, which probe the whole read band in separate evaluations:
//   - linear trees (the diffusion operator with fluxes or a Dirichlet ground, an interpolation product): each row's
//     three entries equal matrixOf's to rounding, and the value part is the plain evaluation bit for bit;
//   - a nonlinear tree: the rows equal jacobianOf's (dual numbers, one evaluation per probe) to rounding;
//   - the caller's claim that W covers what a row reads can fail: the divergence of the third-order upwind product
//     reads -2 .. 2, and seeded<3> sums entries two apart into one component, which the comparison sees; seeded<5>
//     gives the entries.
#include "tests/operators/matrix_helpers.hpp"
#include <strata/operators/jet.hpp>
#include <strata/operators/matrix.hpp>
#include <strata/operators/operators.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>

using namespace strata;
using namespace strata::ops;
using strata::test::sampled;
using strata::test::stretched;

namespace {

constexpr auto host = core::MemSpace::Host;

// The largest difference between the rows at x (seeded: the expression of a seeded leaf, plain: the same expression
// of x) and band matrix m's diagonals -1 .. 1, relative to the largest entry; and whether every value part equals the
// plain evaluation's bits.
template <class Seeded, class Plain, class M>
std::pair<double, bool> compareRows(Seeded const& seeded, Plain const& plain, M const& m, Grid const& grid,
                                    uint32_t columns) {
    GridView const g = grid.view(host);
    uint32_t const n = grid.cells();
    double worst = 0.0, scale = 0.0;
    bool valuesExact = true;
    for (uint32_t c = 0; c < columns; ++c)
        for (uint32_t k = 0; k < n; ++k) {
            TridiagonalRow<double> const r = tridiagonalRowAt(seeded, g, c, k);
            double const expected[3] = {k > 0 && m.lo <= -1 ? m.diagonal(-1).at(c, k) : 0.0, m.diagonal(0).at(c, k),
                                        k + 1 < n && m.hi >= 1 ? m.diagonal(1).at(c, k) : 0.0};
            double const got[3] = {r.lower, r.diagonal, r.upper};
            for (int i = 0; i < 3; ++i) {
                worst = std::max(worst, std::fabs(got[i] - expected[i]));
                scale = std::max(scale, std::fabs(expected[i]));
            }
            double const value = valueAt(plain, g, c, k);
            valuesExact = valuesExact && std::memcmp(&value, &r.value, sizeof value) == 0;
        }
    return {worst / (scale > 0 ? scale : 1.0), valuesExact};
}

} // namespace

TEST_CASE("tridiagonalRowAt: the rows of linear trees are matrixOf's, the values the plain evaluation's",
          "[operators][jet]") {
    for (uint32_t levels : {1u, 2u, 3u, 7u, 40u}) {
        INFO(levels << " levels");
        auto const grid = stretched(levels);
        uint32_t const columns = 3;
        auto const x = sampled<Center>(grid, columns, 0.4, 2.0);
        auto const K = sampled<Face>(grid, columns, 0.9, 3.0); // positive
        auto const w = sampled<Face>(grid, columns, 1.3);
        auto const grad = GradientC2F{SetGradient{0.0}, SetGradient{0.0}};
        auto const fluxDiv = DivergenceF2C{SetValue{-0.25}, SetValue{0.0}};
        auto const dirichletGrad = GradientC2F{SetValue{1.5}, SetGradient{0.0}};
        auto const div = DivergenceF2C{NoBC{}, SetValue{0.0}};
        auto const interp = InterpolateC2F{SetValue{0.5}, Extrapolate{}};
        // Rows within 1e-14 of matrixOf's, values with the plain evaluation's bits.
        auto const agreesWithMatrixOf = [&](char const* what, auto const& f) {
            INFO(what);
            auto const [mismatch, exact] =
                compareRows(f(seeded<3>(x)), f(x), matrixOf(core::Serial{}, x, f), *grid, columns);
            CHECK(mismatch < 1e-14);
            CHECK(exact);
        };
        agreesWithMatrixOf("the diffusion operator with a surface flux",
                           [&](auto const& v) { return fluxDiv(K * grad(v)); });
        agreesWithMatrixOf("the diffusion operator over a Dirichlet ground",
                           [&](auto const& v) { return div(K * dirichletGrad(v)); });
        agreesWithMatrixOf("a product with an interpolation: w * interp(x), faces from centers, then its divergence",
                           [&](auto const& v) { return div(w * interp(v)); });
    }
}

TEST_CASE("tridiagonalRowAt: the rows of a nonlinear tree are jacobianOf's", "[operators][jet]") {
    for (uint32_t levels : {2u, 7u, 40u}) {
        INFO(levels << " levels");
        auto const grid = stretched(levels);
        uint32_t const columns = 3;
        auto const x = sampled<Center>(grid, columns, 0.4, 2.0);
        auto const K = sampled<Face>(grid, columns, 0.9, 3.0);
        auto const grad = GradientC2F{SetGradient{0.0}, SetGradient{0.0}};
        auto const div = DivergenceF2C{SetValue{0.0}, SetValue{0.0}};
        // x d/dz(K dx/dz) / (1 + x x): products and a quotient of x
        auto const f = [&](auto const& v) { return v * div(K * grad(v)) / (1.0 + v * v); };
        auto const jac = jacobianOf(core::Serial{}, x, f);
        auto const [mismatch, exact] = compareRows(f(seeded<3>(x)), f(x), jac.matrix, *grid, columns);
        CHECK(mismatch < 1e-13);
        CHECK(exact);
    }
}

TEST_CASE("tridiagonalRowAt: a W narrower than what a row reads sums two entries, and the comparison sees it",
          "[operators][jet]") {
    auto const grid = stretched(12);
    uint32_t const columns = 2;
    auto const x = sampled<Center>(grid, columns, 0.4, 2.0);
    auto const w = sampled<Face>(grid, columns, 1.3);
    auto const upwind3 = Upwind3rdOrderBiasedProductC2F{ThirdOrderOneSided{}, FirstOrderOneSided{}};
    auto const div = DivergenceF2C{};
    auto const f = [&](auto const& v) { return div(upwind3(w, v)); };
    auto const m = matrixOf(core::Serial{}, x, f); // trimmed: its entries lie in -2 .. 2
    REQUIRE(m.lo == -2);
    REQUIRE(m.hi == 2);
    auto const wide = compareRows(f(seeded<5>(x)), f(x), m, *grid, columns);
    CHECK(wide.first < 1e-14);
    auto const narrow = compareRows(f(seeded<3>(x)), f(x), m, *grid, columns);
    CHECK(narrow.first > 1e-3);
}
