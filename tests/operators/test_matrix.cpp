// Operator matrices (matrix.hpp): for affine stencil expressions f(x), M x + b computed here from the matrix's
// diagonals equals f(x) evaluated by the engines, to rounding, for random x; the bands are the expected ones, entries
// outside the matrix are 0, Direct and Shmem give the same matrices bit for bit on every CPU backend, and a matrix
// with one entry wrong fails the comparison.
#include "tests/core/backends.hpp"
#include "tests/operators/matrix_helpers.hpp"
#include "tests/operators/random_trees.hpp"
#include <strata/operators/column/tridiagonal.hpp>
#include <strata/operators/matrix.hpp>
#include <strata/operators/operators.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <memory>
#include <vector>

using namespace strata;
using namespace strata::ops;
using strata::test::sameBits;
using strata::test::sampled;
using strata::test::stretched;

namespace {

// The largest |M x + b - f(x)| over every entry, relative to the largest |f(x)|, with M x + b summed here from the
// diagonals (entry (k, k + d) = diagonal(d)(c, k)).
template <class T, class RowS, class ColS>
double affineMismatch(BandMatrix<T, RowS, ColS> const& m, Field<T, ColS> const& x, Field<T, RowS> const& fx) {
    double worst = 0, scale = 0;
    for (uint32_t c = 0; c < x.columns(); ++c)
        for (uint32_t k = 0; k < fx.levels(); ++k) {
            double mx = m.affine.at(c, k);
            for (int d = m.lo; d <= m.hi; ++d) {
                int64_t const l = int64_t(k) + d;
                if (l >= 0 && l < int64_t(x.levels())) mx += m.diagonal(d).at(c, k) * x.at(c, static_cast<uint32_t>(l));
            }
            worst = std::max(worst, std::fabs(mx - fx.at(c, k)));
            scale = std::max(scale, std::fabs(fx.at(c, k)));
        }
    return worst / (scale > 0 ? scale : 1.0);
}

// Entries whose column lies outside the matrix are 0.
template <class T, class RowS, class ColS>
bool zeroOutside(BandMatrix<T, RowS, ColS> const& m, uint32_t columnLevels) {
    for (int d = m.lo; d <= m.hi; ++d)
        for (uint32_t c = 0; c < m.affine.columns(); ++c)
            for (uint32_t k = 0; k < m.affine.levels(); ++k) {
                int64_t const l = int64_t(k) + d;
                if ((l < 0 || l >= int64_t(columnLevels)) && m.diagonal(d).at(c, k) != 0.0) return false;
            }
    return true;
}

// f's matrix on the backend with both engines: the same bits, 0 outside, M x + b = f(x), and a band that holds
// lo .. hi (on grids of at least 8 cells; exactly lo .. hi where `exact`) within the expression's read band.
template <class Backend, class ColS, class F>
void checkAffine(Backend const& backend, Field<double, ColS> const& x, F const& f, int lo, int hi, double tolerance,
                 bool exact = true) {
    auto const direct = matrixOf(backend, x, f, Engine::Direct);
    auto const shmem = matrixOf(backend, x, f, Engine::Shmem);
    constexpr ReadBand read = readBandOf<decltype(f(x))>;
    REQUIRE(read.lo <= direct.lo);
    REQUIRE(direct.hi <= read.hi);
    if (x.grid().cells() >= 8) {
        REQUIRE(direct.lo <= lo);
        REQUIRE(direct.hi >= hi);
        if (exact) {
            REQUIRE(direct.lo == lo);
            REQUIRE(direct.hi == hi);
        }
    }
    REQUIRE(sameBits(direct, shmem));
    REQUIRE(zeroOutside(direct, x.levels()));
    using RowS = typename decltype(direct.affine)::Stagger;
    Field<double, RowS> fx(x.gridPtr(), x.columns(), core::MemSpace::Host);
    evaluate(backend, fx, f(x), Engine::Direct);
    REQUIRE(affineMismatch(direct, x, fx) <= tolerance);
}

} // namespace

TEMPLATE_TEST_CASE("matrixOf: M x + b equals the evaluated expression for affine stencil expressions",
                   "[operators][matrix]", STRATA_CPU_BACKENDS) {
    auto const backend = TestType::make();
    for (uint32_t n : {1u, 2u, 3u, 7u, 40u}) {
        INFO(n << " cells");
        auto const grid = stretched(n);
        uint32_t const cols = 3;
        auto const x = sampled<Center>(grid, cols, 0.37);
        auto const kappa = sampled<Center>(grid, cols, 0.11, 2.0); // positive
        auto const w = sampled<Face>(grid, cols, 0.53);            // both signs
        auto const xf = sampled<Face>(grid, cols, 0.29);

        auto const grad = GradientC2F{SetValue{1.5}, SetGradient{0.2}};
        auto const interp = InterpolateC2F{Extrapolate{}, Extrapolate{}};
        auto const div = DivergenceF2C{SetValue{0.25}, SetValue{-0.5}};
        {
            INFO("gradient with a value below and a gradient above");
            checkAffine(
                backend, x, [&](auto const& v) { return grad(v); }, -1, 0, 1e-15);
        }
        {
            INFO("diffusion div(interp(K) grad(x)): tridiagonal");
            checkAffine(
                backend, x, [&](auto const& v) { return div(interp(kappa) * grad(v)); }, -1, 1, 1e-14);
        }
        {
            INFO("a pointwise combination: 3 x - K div(interp(K) grad(x)) + 2");
            checkAffine(
                backend, x, [&](auto const& v) { return 3.0 * v - kappa * div(interp(kappa) * grad(v)) + 2.0; }, -1, 1,
                1e-14);
        }
        {
            INFO("the first-order upwind product with a given velocity, then its divergence");
            auto const upwind = UpwindBiasedProductC2F{SetValue{0.5}, Extrapolate{}};
            checkAffine(
                backend, x, [&](auto const& v) { return div(upwind(w, v)); }, -1, 1, 1e-14);
        }
        {
            INFO("the third-order upwind product: faces from centers -2 .. 1 inside, its divergence -2 .. 2");
            auto const upwind3 = Upwind3rdOrderBiasedProductC2F{ThirdOrderOneSided{}, FirstOrderOneSided{}};
            checkAffine(
                backend, x, [&](auto const& v) { return upwind3(w, v); }, -2, 1, 1e-14, false);
            checkAffine(
                backend, x, [&](auto const& v) { return div(upwind3(w, v)); }, -2, 2, 1e-14, false);
        }
        {
            INFO("faces to centers: a divergence of a face field");
            checkAffine(
                backend, xf, [&](auto const& v) { return div(v); }, 0, 1, 1e-15);
            INFO("with Extrapolate: the boundary rows copy their neighbour's divergence, -1 .. 2");
            auto const extrapolated = DivergenceF2C{Extrapolate{}, Extrapolate{}};
            checkAffine(
                backend, xf, [&](auto const& v) { return extrapolated(v); }, -1, 2, 1e-15);
        }
    }
}

TEST_CASE("matrixOf: the diffusion matrix has the hand-derived entries", "[operators][matrix]") {
    // div(grad(x)) with zero-flux boundaries on a uniform grid of spacing h: (x[k-1] - 2 x[k] + x[k+1]) / h^2 inside,
    // (x[1] - x[0]) / h^2 at the bottom, (x[n-2] - x[n-1]) / h^2 at the top, and b = 0.
    uint32_t const n = 10;
    double const h = 100.0;
    auto const grid = std::make_shared<Grid const>(Grid::uniform(n, n * h));
    Field<double, Center> x(grid, 2, core::MemSpace::Host);
    auto const grad = GradientC2F{SetGradient{0.0}, SetGradient{0.0}};
    auto const div = DivergenceF2C{};
    auto const m = matrixOf(core::Serial{}, x, [&](auto const& v) { return div(grad(v)); });
    REQUIRE(m.lo == -1);
    REQUIRE(m.hi == 1);
    for (uint32_t c = 0; c < 2; ++c)
        for (uint32_t k = 0; k < n; ++k) {
            double const below = k > 0 ? 1.0 / (h * h) : 0.0, above = k + 1 < n ? 1.0 / (h * h) : 0.0;
            REQUIRE(m.diagonal(-1).at(c, k) == Approx(below).margin(1e-18));
            REQUIRE(m.diagonal(1).at(c, k) == Approx(above).margin(1e-18));
            REQUIRE(m.diagonal(0).at(c, k) == Approx(-below - above).margin(1e-18));
            REQUIRE(m.affine.at(c, k) == 0.0);
        }
}

TEST_CASE("matrixOf: a matrix with one entry wrong, or an expression that is not affine, fails the comparison",
          "[operators][matrix]") {
    auto const grid = stretched(12);
    auto const x = sampled<Center>(grid, 2, 0.41);
    auto const kappa = sampled<Center>(grid, 2, 0.13, 2.0);
    auto const grad = GradientC2F{SetValue{1.0}, SetValue{2.0}};
    auto const interp = InterpolateC2F{Extrapolate{}, Extrapolate{}};
    auto const div = DivergenceF2C{SetValue{0.0}, SetValue{0.0}};
    auto const f = [&](auto const& v) { return div(interp(kappa) * grad(v)); };
    auto m = matrixOf(core::Serial{}, x, f);
    Field<double, Center> fx(grid, 2, core::MemSpace::Host);
    evaluate(core::Serial{}, fx, f(x));
    REQUIRE(affineMismatch(m, x, fx) < 1e-14);
    m.diagonal(1).at(1, 5) *= 1.0 + 1e-6; // one entry a millionth off
    REQUIRE(affineMismatch(m, x, fx) > 1e-10);

    // x times grad x is not affine: its probed "matrix" does not reproduce it
    auto const nonlinear = [&](auto const& v) { return v * div(grad(v)); };
    auto const q = matrixOf(core::Serial{}, x, nonlinear);
    evaluate(core::Serial{}, fx, nonlinear(x));
    REQUIRE(affineMismatch(q, x, fx) > 1e-3);
}

TEST_CASE("readBandOf: the levels an expression reads around its output level", "[operators][matrix]") {
    using X = Field<double, Center>;
    auto const grad = GradientC2F{SetValue{0.0}, SetValue{0.0}};
    auto const div = DivergenceF2C{};
    auto const interp = InterpolateC2F{Extrapolate{}, Extrapolate{}};
    X const* x = nullptr;
    using Grad = decltype(grad(*x));
    using Diffusion = decltype(div(interp(*x) * grad(*x)));
    using Scaled = decltype(2.0 * *x);
    STATIC_REQUIRE(readBandOf<Grad>.lo == -1);
    STATIC_REQUIRE(readBandOf<Grad>.hi == 0);
    // DivergenceF2C reads faces k - 1 .. k + 2 (its Extrapolate boundary rows copy a neighbour's divergence)
    STATIC_REQUIRE(readBandOf<Diffusion>.lo == -2);
    STATIC_REQUIRE(readBandOf<Diffusion>.hi == 2);
    STATIC_REQUIRE(readBandOf<Scaled>.lo == 0);
    STATIC_REQUIRE(readBandOf<Scaled>.hi == 0);
    STATIC_REQUIRE(!readBandOf<decltype(asExpr(2.0))>.any);
}

TEMPLATE_TEST_CASE("matrixOf: an implicit diffusion step solved from the operator's matrix satisfies its equation",
                   "[operators][matrix]", STRATA_CPU_BACKENDS) {
    // x - dt f(x) = x0 with f(x) = div(interp(K) grad(x)) affine (a surface flux as the bottom boundary value): from
    // f(x) = M x + b, (I - dt M) x = x0 + dt b is tridiagonal. The solution, put back into the expression, satisfies
    // the equation to rounding.
    auto const backend = TestType::make();
    auto const grid = stretched(30);
    uint32_t const cols = 4;
    double const dt = 600.0;
    auto const x0 = sampled<Center>(grid, cols, 0.21, 290.0);
    auto const kappa = sampled<Center>(grid, cols, 0.17, 12.0); // m^2/s, positive
    auto const grad = GradientC2F{SetValue{295.0}, SetGradient{0.003}};
    auto const interp = InterpolateC2F{Extrapolate{}, Extrapolate{}};
    auto const div = DivergenceF2C{SetValue{-0.02}, SetValue{0.0}};
    auto const f = [&](auto const& v) { return div(interp(kappa) * grad(v)); };
    auto const m = matrixOf(backend, x0, f);
    REQUIRE(m.lo == -1);
    REQUIRE(m.hi == 1);
    Field<double, Center> a(grid, cols, core::MemSpace::Host), b(grid, cols, core::MemSpace::Host),
        c(grid, cols, core::MemSpace::Host), d(grid, cols, core::MemSpace::Host), x(grid, cols, core::MemSpace::Host);
    evaluate(backend, a, -dt * m.diagonal(-1));
    evaluate(backend, b, 1.0 - dt * m.diagonal(0));
    evaluate(backend, c, -dt * m.diagonal(1));
    evaluate(backend, d, x0 + dt * m.affine);
    solveTridiagonal(backend, a, b, c, d, x, Tridiag::Bfb);
    Field<double, Center> fx(grid, cols, core::MemSpace::Host);
    evaluate(backend, fx, f(x));
    double worst = 0;
    for (uint32_t col = 0; col < cols; ++col)
        for (uint32_t k = 0; k < 30; ++k)
            worst = std::max(worst, std::fabs(x.at(col, k) - dt * fx.at(col, k) - x0.at(col, k)));
    CAPTURE(worst);
    REQUIRE(worst <
            1e-10); // the state is about 290, dt f(x) about 1: 1e-10 is some 2000 ulps of the state (3e-12 seen)
    // and the step did something: the solution differs from x0 by more than that
    double change = 0;
    for (uint32_t col = 0; col < cols; ++col)
        for (uint32_t k = 0; k < 30; ++k)
            change = std::max(change, std::fabs(x.at(col, k) - x0.at(col, k)));
    CAPTURE(change);
    REQUIRE(change > 1e-3);
}

namespace {

// The largest |J[k][l] - (f(x + h e_l) - f(x - h e_l))[k] / 2h| over every entry of every column, relative to the
// largest |J| entry: the Jacobian against centred finite differences, the whole dense matrix (a band too narrow, an
// entry in the wrong place or of the wrong size shows).
template <class Backend, class RowS, class ColS, class F>
double finiteDifferenceMismatch(Backend const& backend, BandMatrix<double, RowS, ColS> const& j,
                                Field<double, ColS> const& x, F const& f) {
    Field<double, ColS> xp(x.gridPtr(), x.columns(), core::MemSpace::Host),
        xm(x.gridPtr(), x.columns(), core::MemSpace::Host);
    Field<double, RowS> fp(x.gridPtr(), x.columns(), core::MemSpace::Host),
        fm(x.gridPtr(), x.columns(), core::MemSpace::Host);
    double worst = 0, scale = 0;
    for (uint32_t l = 0; l < x.levels(); ++l) {
        evaluate(backend, xp, asExpr(x)); // copies
        evaluate(backend, xm, asExpr(x));
        std::vector<double> h(x.columns());
        for (uint32_t c = 0; c < x.columns(); ++c) {
            h[c] = 1e-5 * (1.0 + std::fabs(x.at(c, l)));
            xp.at(c, l) += h[c];
            xm.at(c, l) -= h[c];
        }
        evaluate(backend, fp, f(xp));
        evaluate(backend, fm, f(xm));
        for (uint32_t c = 0; c < x.columns(); ++c)
            for (uint32_t k = 0; k < fp.levels(); ++k) {
                int const d = int(l) - int(k);
                double const entry = d >= j.lo && d <= j.hi ? j.diagonal(d).at(c, k) : 0.0;
                double const difference = (fp.at(c, k) - fm.at(c, k)) / ((x.at(c, l) + h[c]) - (x.at(c, l) - h[c]));
                worst = std::max(worst, std::fabs(entry - difference));
                scale = std::max(scale, std::fabs(entry));
            }
    }
    return worst / (scale > 0 ? scale : 1.0);
}

template <class Backend, class ColS, class F>
void checkJacobian(Backend const& backend, Field<double, ColS> const& x, F const& f, double tolerance) {
    auto const direct = jacobianOf(backend, x, f, Engine::Direct);
    auto const shmem = jacobianOf(backend, x, f, Engine::Shmem);
    REQUIRE(sameBits(direct.matrix, shmem.matrix));
    using RowS = typename decltype(direct.value)::Stagger;
    // the value is f(x) evaluated in T, bit for bit (a dual's value part is the same operations)
    Field<double, RowS> fx(x.gridPtr(), x.columns(), core::MemSpace::Host);
    evaluate(backend, fx, f(x), Engine::Direct);
    for (uint32_t c = 0; c < x.columns(); ++c)
        REQUIRE(std::memcmp(direct.value.column(c).data(), fx.column(c).data(), fx.levels() * sizeof(double)) == 0);
    CAPTURE(direct.matrix.lo, direct.matrix.hi);
    REQUIRE(finiteDifferenceMismatch(backend, direct.matrix, x, f) < tolerance);
}

} // namespace

TEMPLATE_TEST_CASE("jacobianOf: the Jacobian of nonlinear stencil expressions matches centred finite differences",
                   "[operators][matrix]", STRATA_CPU_BACKENDS) {
    auto const backend = TestType::make();
    auto const grid = stretched(16);
    uint32_t const cols = 2;
    auto const x = sampled<Center>(grid, cols, 0.31, 3.0); // positive: the velocity below keeps one sign
    auto const kappa = sampled<Center>(grid, cols, 0.19, 2.0);
    auto const grad = GradientC2F{SetValue{2.5}, SetGradient{0.01}};
    auto const interp = InterpolateC2F{Extrapolate{}, Extrapolate{}};
    auto const div = DivergenceF2C{SetValue{0.1}, SetValue{0.0}};
    auto const upwind3 = Upwind3rdOrderBiasedProductC2F{ThirdOrderOneSided{}, FirstOrderOneSided{}};
    // 1e-8: centred differences with h = 1e-5 (1 + |x|) agree to 2e-10 at worst here
    {
        INFO("x div(interp(K) grad(x))");
        checkJacobian(
            backend, x, [&](auto const& v) { return v * div(interp(kappa) * grad(v)); }, 1e-8);
    }
    {
        INFO("diffusion with a state-dependent diffusivity: div(interp(x x) grad(x))");
        checkJacobian(
            backend, x, [&](auto const& v) { return div(interp(v * v) * grad(v)); }, 1e-8);
    }
    {
        INFO("Burgers-like advection: div(upwind3(interp(x) / 1000, x)), pentadiagonal");
        checkJacobian(
            backend, x, [&](auto const& v) { return div(upwind3(interp(v) * 1e-3, v)); }, 1e-8);
    }
    {
        INFO("a quotient: x / (1 + x x)");
        checkJacobian(
            backend, x, [&](auto const& v) { return v / (1.0 + v * v); }, 1e-8);
    }
}

TEST_CASE("jacobianOf: an affine expression's Jacobian is its matrix, and a Jacobian broken on purpose fails",
          "[operators][matrix]") {
    auto const grid = stretched(12);
    auto const x = sampled<Center>(grid, 2, 0.43, 1.0);
    auto const kappa = sampled<Center>(grid, 2, 0.23, 2.0);
    auto const grad = GradientC2F{SetValue{1.0}, SetGradient{0.0}};
    auto const interp = InterpolateC2F{Extrapolate{}, Extrapolate{}};
    auto const div = DivergenceF2C{SetValue{0.0}, SetValue{0.0}};
    auto const affine = [&](auto const& v) { return div(interp(kappa) * grad(v)) + 3.0 * v; };
    auto const m = matrixOf(core::Serial{}, x, affine);
    auto const jac = jacobianOf(core::Serial{}, x, affine);
    REQUIRE(jac.matrix.lo == m.lo);
    REQUIRE(jac.matrix.hi == m.hi);
    for (int d = m.lo; d <= m.hi; ++d)
        for (uint32_t c = 0; c < 2; ++c)
            for (uint32_t k = 0; k < 12; ++k)
                REQUIRE(
                    jac.matrix.diagonal(d).at(c, k) ==
                    Approx(m.diagonal(d).at(c, k)).epsilon(1e-13).margin(1e-13 * std::fabs(m.diagonal(0).at(c, k))));

    auto const nonlinear = [&](auto const& v) { return v * div(interp(kappa) * grad(v)); };
    auto broken = jacobianOf(core::Serial{}, x, nonlinear);
    REQUIRE(finiteDifferenceMismatch(core::Serial{}, broken.matrix, x, nonlinear) < 1e-6);
    broken.matrix.diagonal(-1).at(1, 6) *= 1.001; // one entry a thousandth off
    REQUIRE(finiteDifferenceMismatch(core::Serial{}, broken.matrix, x, nonlinear) > 1e-5);
}

TEST_CASE("matrixOf with MatrixOptions{.trim = false}: the read band, the diagonals outside the true band 0, the "
          "others the trimmed matrix's bits",
          "[operators][matrix]") {
    auto const grid = stretched(12);
    auto const x = sampled<Center>(grid, 2, 0.47);
    auto const kappa = sampled<Center>(grid, 2, 0.21, 2.0);
    auto const grad = GradientC2F{SetValue{1.0}, SetGradient{0.0}};
    auto const interp = InterpolateC2F{Extrapolate{}, Extrapolate{}};
    auto const div = DivergenceF2C{SetValue{0.0}, SetValue{0.0}};
    auto const f = [&](auto const& v) { return div(interp(kappa) * grad(v)); };
    auto const trimmed = matrixOf(core::Serial{}, x, f);
    auto const full = matrixOf(core::Serial{}, x, f, Engine::Auto, MatrixOptions{.trim = false});
    constexpr ReadBand read = readBandOf<decltype(f(x))>;
    REQUIRE(full.lo == read.lo);
    REQUIRE(full.hi == read.hi);
    REQUIRE(trimmed.lo == -1);
    REQUIRE(trimmed.hi == 1);
    for (int d = full.lo; d <= full.hi; ++d)
        for (uint32_t c = 0; c < 2; ++c)
            for (uint32_t k = 0; k < 12; ++k) {
                double const expected = d >= trimmed.lo && d <= trimmed.hi ? trimmed.diagonal(d).at(c, k) : 0.0;
                double const entry = full.diagonal(d).at(c, k);
                REQUIRE(std::memcmp(&entry, &expected, sizeof(double)) == 0);
            }
}

TEMPLATE_TEST_CASE(
    "MatrixAssembly: matrixOf's untrimmed bits on every call, into the same fields while x keeps its shape",
    "[operators][matrix]", STRATA_CPU_BACKENDS) {
    auto const backend = TestType::make();
    auto const grid = stretched(12);
    auto kappa = sampled<Center>(grid, 3, 0.21, 2.0);
    auto const grad = GradientC2F{SetValue{1.0}, SetGradient{0.0}};
    auto const interp = InterpolateC2F{Extrapolate{}, Extrapolate{}};
    auto const div = DivergenceF2C{SetValue{0.0}, SetValue{0.0}};
    MatrixAssembly<double, Center, Center> assembly;
    double const* first = nullptr;
    for (int call = 0; call < 3; ++call) {
        INFO("call " << call);
        // The coefficient changes from call to call, as a time step's would; x too.
        kappa = sampled<Center>(grid, 3, 0.21 + 0.1 * call, 2.0);
        auto const x = sampled<Center>(grid, 3, 0.47 + call);
        auto const f = [&](auto const& v) { return div(interp(kappa) * grad(v)); };
        auto const& m = assembly(backend, x, f);
        auto const expected = matrixOf(backend, x, f, Engine::Auto, MatrixOptions{.trim = false});
        REQUIRE(sameBits(m, expected));
        if (call == 0) first = std::as_const(m.affine).view().data;
        REQUIRE(std::as_const(m.affine).view().data == first); // the same fields
    }
    // Another shape: fields of its own, and still matrixOf's bits.
    auto const other = stretched(5);
    auto const y = sampled<Center>(other, 2, 0.9);
    auto const kappa2 = sampled<Center>(other, 2, 0.3, 2.0);
    auto const g = [&](auto const& v) { return div(interp(kappa2) * grad(v)); };
    auto const& m = assembly(backend, y, g);
    REQUIRE(m.affine.columns() == 2);
    REQUIRE(m.affine.levels() == 5);
    REQUIRE(sameBits(m, matrixOf(backend, y, g, Engine::Auto, MatrixOptions{.trim = false})));
}

namespace {

// The Jacobian of a random tree against centred finite differences, entries where the tree is smooth within h: where
// the one-sided differences (f(x + h) - f(x)) / h and (f(x) - f(x - h)) / h disagree by more than 1e-3 of the
// largest entry, a kink of an upwind product or the limiter lies within h (the Jacobian then carries one side's
// derivative) and the entry is counted as skipped instead.
struct TreeMismatch {
    double worst = 0; // relative to the largest |J| entry
    int compared = 0;
    int skipped = 0;
};

template <class Backend, class F>
TreeMismatch smoothMismatch(Backend const& backend, BandMatrix<double, Center, Center> const& j,
                            Field<double, Center> const& x, F const& f) {
    auto const host = core::MemSpace::Host;
    Field<double, Center> xp(x.gridPtr(), x.columns(), host), xm(x.gridPtr(), x.columns(), host);
    Field<double, Center> f0(x.gridPtr(), x.columns(), host), fp(x.gridPtr(), x.columns(), host),
        fm(x.gridPtr(), x.columns(), host);
    evaluate(backend, f0, f(x));
    double scale = 0;
    for (int d = j.lo; d <= j.hi; ++d)
        for (uint32_t c = 0; c < x.columns(); ++c)
            for (double const v : j.diagonal(d).column(c))
                scale = std::max(scale, std::fabs(v));
    scale = scale > 0 ? scale : 1.0;
    TreeMismatch m;
    for (uint32_t l = 0; l < x.levels(); ++l) {
        evaluate(backend, xp, asExpr(x));
        evaluate(backend, xm, asExpr(x));
        std::vector<double> h(x.columns());
        for (uint32_t c = 0; c < x.columns(); ++c) {
            h[c] = 1e-6 * (1.0 + std::fabs(x.at(c, l)));
            xp.at(c, l) += h[c];
            xm.at(c, l) -= h[c];
        }
        evaluate(backend, fp, f(xp));
        evaluate(backend, fm, f(xm));
        for (uint32_t c = 0; c < x.columns(); ++c) {
            double const up = xp.at(c, l) - x.at(c, l), down = x.at(c, l) - xm.at(c, l);
            for (uint32_t k = 0; k < x.levels(); ++k) {
                double const right = (fp.at(c, k) - f0.at(c, k)) / up, left = (f0.at(c, k) - fm.at(c, k)) / down;
                if (std::fabs(right - left) > 1e-3 * scale) {
                    ++m.skipped;
                    continue;
                }
                int const d = int(l) - int(k);
                double const entry = d >= j.lo && d <= j.hi ? j.diagonal(d).at(c, k) : 0.0;
                double const centred = (fp.at(c, k) - fm.at(c, k)) / (up + down);
                m.worst = std::max(m.worst, std::fabs(entry - centred) / scale);
                ++m.compared;
            }
        }
    }
    return m;
}

// Random tree Seed of stencil depth Depth as a function of x, both its center leaves (test::TreeLeavesOf): Direct and
// Shmem give the same Jacobian bits, its value has f(x)'s bits, it matches centred differences where the tree is
// smooth, and the same Jacobian with one entry 1e-3 of the largest off fails that comparison.
template <uint64_t Seed, int Depth>
void checkRandomTreeJacobian() {
    core::Serial const backend;
    auto const grid = stretched(10);
    uint32_t const cols = 2;
    auto const x = sampled<Center>(grid, cols, 0.37 + 0.01 * (Seed % 13), 1.0);
    auto const f0 = sampled<Face>(grid, cols, 0.29, 0.2);
    auto const f1 = sampled<Face>(grid, cols, 0.61, -0.3);
    std::vector<double> const perColumn = {0.7, -1.3};
    auto const f = [&](auto const& v) {
        test::TreeLeavesOf<std::decay_t<decltype(v)>> const l{{&v, &v}, {&f0, &f1}, {perColumn.data()}};
        return test::gen<Seed, Depth, Center>(l);
    };
    auto direct = jacobianOf(backend, x, f, Engine::Direct);
    auto const shmem = jacobianOf(backend, x, f, Engine::Shmem);
    CAPTURE(Seed, Depth, direct.matrix.lo, direct.matrix.hi);
    REQUIRE(sameBits(direct.matrix, shmem.matrix));
    Field<double, Center> fx(grid, cols, core::MemSpace::Host);
    evaluate(backend, fx, f(x), Engine::Direct);
    for (uint32_t c = 0; c < cols; ++c)
        REQUIRE(std::memcmp(direct.value.column(c).data(), fx.column(c).data(), fx.levels() * sizeof(double)) == 0);
    double largest = 0; // the tree depends on x
    for (int d = direct.matrix.lo; d <= direct.matrix.hi; ++d)
        for (uint32_t c = 0; c < cols; ++c)
            for (double const v : direct.matrix.diagonal(d).column(c))
                largest = std::max(largest, std::fabs(v));
    REQUIRE(largest > 0);
    TreeMismatch const m = smoothMismatch(backend, direct.matrix, x, f);
    WARN("random tree " << Seed << " of depth " << Depth << ": band " << direct.matrix.lo << " .. " << direct.matrix.hi
                        << ", Jacobian against centred differences " << m.worst << " of its largest"
                        << " entry over " << m.compared << " entries (" << m.skipped << " at a kink skipped)");
    REQUIRE(m.compared > 100);
    REQUIRE(m.worst < 1e-6);
    // Broken on purpose: the largest entry of the main diagonal 1e-3 of the scale off.
    auto& diagonal = direct.matrix.diagonal(0);
    uint32_t bc = 0, bk = 0;
    for (uint32_t c = 0; c < cols; ++c)
        for (uint32_t k = 0; k < diagonal.levels(); ++k)
            if (std::fabs(diagonal.at(c, k)) > std::fabs(diagonal.at(bc, bk))) bc = c, bk = k;
    diagonal.at(bc, bk) += 1e-3 * std::max(1.0, std::fabs(diagonal.at(bc, bk)));
    REQUIRE(smoothMismatch(backend, direct.matrix, x, f).worst > 1e-6);
}

} // namespace

TEST_CASE("jacobianOf: random stencil trees, as functions of one leaf, against centred differences",
          "[operators][matrix]") {
    SECTION("11 2") { checkRandomTreeJacobian<11, 2>(); }
    SECTION("23 2") { checkRandomTreeJacobian<23, 2>(); }
    SECTION("37 2") { checkRandomTreeJacobian<37, 2>(); }
    SECTION("53 3") { checkRandomTreeJacobian<53, 3>(); }
    SECTION("73 3") { checkRandomTreeJacobian<73, 3>(); }
}
