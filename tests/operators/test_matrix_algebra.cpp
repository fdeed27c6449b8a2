// Band matrices as values (matrix_algebra.hpp): applyMatrix gives M x + b in its documented order and f(x) to
// rounding (bit for bit for the interpolation and the first-order upwind product, not for the gradient);
// composeMatrices of two operators' matrices is the matrix of their composition (the diffusion operator from the
// divergence and the flux, the pentadiagonal third-order upwind divergence) and applies as f(g(x)); addMatrices is
// the matrix of the sum; every backend gives Serial's bits; a product built from a wrong factor fails the comparison,
// and mismatched or too wide products are refused.
#include "tests/core/backends.hpp"
#include "tests/operators/matrix_helpers.hpp"
#include <strata/operators/matrix.hpp>
#include <strata/operators/matrix_algebra.hpp>
#include <strata/operators/operators.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <memory>

using namespace strata;
using namespace strata::ops;
using strata::test::sameBits;
using strata::test::sampled;
using strata::test::stretched;

namespace {

// The largest difference of two fields relative to the largest magnitude of the second.
template <class T, class S>
double relativeDifference(Field<T, S> const& a, Field<T, S> const& b) {
    double worst = 0, scale = 0;
    for (uint32_t c = 0; c < a.columns(); ++c)
        for (uint32_t k = 0; k < a.levels(); ++k) {
            worst = std::max(worst, std::fabs(a.at(c, k) - b.at(c, k)));
            scale = std::max(scale, std::fabs(b.at(c, k)));
        }
    return worst / (scale > 0 ? scale : 1.0);
}

// The largest difference of two matrices' entries (over the union of their bands; missing diagonals are 0) and
// affine parts, relative to the largest entry of the second.
template <class T, class RowS, class ColS>
double relativeDifference(BandMatrix<T, RowS, ColS> const& a, BandMatrix<T, RowS, ColS> const& b) {
    auto entry = [](BandMatrix<T, RowS, ColS> const& m, int d, uint32_t c, uint32_t k) {
        return d >= m.lo && d <= m.hi ? m.diagonal(d).at(c, k) : T(0);
    };
    double worst = 0, scale = 0;
    for (int d = std::min(a.lo, b.lo); d <= std::max(a.hi, b.hi); ++d)
        for (uint32_t c = 0; c < a.affine.columns(); ++c)
            for (uint32_t k = 0; k < a.affine.levels(); ++k) {
                worst = std::max(worst, std::fabs(entry(a, d, c, k) - entry(b, d, c, k)));
                scale = std::max(scale, std::fabs(entry(b, d, c, k)));
            }
    return std::max(worst / (scale > 0 ? scale : 1.0), relativeDifference(a.affine, b.affine));
}

// M x + b summed here in applyMatrix's documented order: b first, then the diagonals from lo.
template <class T, class RowS, class ColS>
Field<T, RowS> applyHere(BandMatrix<T, RowS, ColS> const& m, Field<T, ColS> const& x) {
    Field<T, RowS> y(m.affine.gridPtr(), m.affine.columns(), core::MemSpace::Host);
    for (uint32_t c = 0; c < y.columns(); ++c)
        for (uint32_t k = 0; k < y.levels(); ++k) {
            T sum = m.affine.at(c, k);
            for (int d = m.lo; d <= m.hi; ++d) {
                int64_t const l = int64_t(k) + d;
                if (l >= 0 && l < int64_t(x.levels())) sum = sum + m.diagonal(d).at(c, k) * x.at(c, uint32_t(l));
            }
            y.at(c, k) = sum;
        }
    return y;
}

} // namespace

TEMPLATE_TEST_CASE("applyMatrix, composeMatrices, addMatrices: the matrices of applications, compositions and sums",
                   "[operators][matrix][algebra]", STRATA_CPU_BACKENDS) {
    auto const backend = TestType::make();
    for (uint32_t n : {1u, 2u, 3u, 7u, 40u}) {
        INFO(n << " cells");
        auto const grid = stretched(n);
        uint32_t const cols = 3;
        auto const x = sampled<Center>(grid, cols, 0.37);
        auto const kappa = sampled<Center>(grid, cols, 0.11, 2.0); // positive
        auto const w = sampled<Face>(grid, cols, 0.53);            // both signs
        auto const grad = GradientC2F{SetValue{1.5}, SetGradient{0.2}};
        auto const interp = InterpolateC2F{Extrapolate{}, Extrapolate{}};
        auto const div = DivergenceF2C{SetValue{0.25}, SetValue{-0.5}};
        auto const flux = [&](auto const& v) { return interp(kappa) * grad(v); };
        auto const diffusion = [&](auto const& v) { return div(interp(kappa) * grad(v)); };

        Field<double, Face> xf(grid, cols, core::MemSpace::Host);
        Field<double, Center> y(grid, cols, core::MemSpace::Host), fx(grid, cols, core::MemSpace::Host);
        auto const mDiv = matrixOf(backend, xf, [&](auto const& v) { return div(v); });
        auto const mFlux = matrixOf(backend, x, flux);
        auto const mDiffusion = matrixOf(backend, x, diffusion);

        // applyMatrix: the documented order, and f(x) to rounding
        applyMatrix(backend, mDiffusion, x, y);
        REQUIRE(sameBits(y, applyHere(mDiffusion, x)));
        evaluate(backend, fx, diffusion(x), Engine::Direct);
        REQUIRE(relativeDifference(y, fx) < 1e-13);

        // composeMatrices: div o (interp(K) grad) is the diffusion operator's matrix, and applies as f(g(x))
        auto const composed = composeMatrices(backend, mDiv, mFlux);
        REQUIRE(composed.lo == mDiv.lo + mFlux.lo);
        REQUIRE(composed.hi == mDiv.hi + mFlux.hi);
        CHECK(relativeDifference(composed, mDiffusion) < 1e-13);
        applyMatrix(backend, composed, x, y);
        REQUIRE(relativeDifference(y, fx) < 1e-13);
        // its affine part is applyMatrix(f, bg)'s bits
        Field<double, Center> fOfB(grid, cols, core::MemSpace::Host);
        applyMatrix(backend, mDiv, mFlux.affine, fOfB);
        REQUIRE(sameBits(composed.affine, fOfB));

        // the third-order upwind divergence, pentadiagonal, from its two factors
        auto const upwind3 = Upwind3rdOrderBiasedProductC2F{ThirdOrderOneSided{}, FirstOrderOneSided{}};
        auto const mUpwind = matrixOf(
            backend, x, [&](auto const& v) { return upwind3(w, v); }, Engine::Auto, MatrixOptions{.trim = false});
        auto const mDivUpwind = matrixOf(backend, x, [&](auto const& v) { return div(upwind3(w, v)); });
        auto const upwindComposed = composeMatrices(backend, mDiv, mUpwind);
        CHECK(relativeDifference(upwindComposed, mDivUpwind) < 1e-13);

        // addMatrices: the matrix of f + g
        auto const mPointwise = matrixOf(backend, x, [&](auto const& v) { return 3.0 * v + 2.0; });
        auto const sum = addMatrices(backend, mDiffusion, mPointwise);
        REQUIRE(sum.lo == std::min(mDiffusion.lo, mPointwise.lo));
        REQUIRE(sum.hi == std::max(mDiffusion.hi, mPointwise.hi));
        CHECK(relativeDifference(
                  sum, matrixOf(backend, x, [&](auto const& v) { return diffusion(v) + 3.0 * v + 2.0; })) < 1e-13);

        // every backend gives Serial's bits
        core::Serial const serial;
        REQUIRE(sameBits(composed, composeMatrices(serial, mDiv, mFlux)));
        REQUIRE(sameBits(upwindComposed, composeMatrices(serial, mDiv, mUpwind)));
        REQUIRE(sameBits(sum, addMatrices(serial, mDiffusion, mPointwise)));
        Field<double, Center> ySerial(grid, cols, core::MemSpace::Host);
        applyMatrix(backend, mDiffusion, x, y);
        applyMatrix(serial, mDiffusion, x, ySerial);
        REQUIRE(sameBits(y, ySerial));
    }
}

TEST_CASE("applyMatrix is bit for bit with the expression for the interpolation and the first-order upwind product, "
          "not for the gradient",
          "[operators][matrix][algebra]") {
    core::Serial const serial;
    auto const grid = stretched(40);
    auto const x = sampled<Center>(grid, 4, 0.37);
    auto const w = sampled<Face>(grid, 4, 0.53); // both signs
    Field<double, Face> y(grid, 4, core::MemSpace::Host), fx(grid, 4, core::MemSpace::Host);
    auto bitForBit = [&](auto const& f) {
        applyMatrix(serial, matrixOf(serial, x, f), x, y);
        evaluate(serial, fx, f(x), Engine::Direct);
        return sameBits(y, fx);
    };
    auto const interp = InterpolateC2F{Extrapolate{}, SetValue{3.0}};
    auto const upwind = UpwindBiasedProductC2F{SetValue{0.5}, Extrapolate{}};
    auto const grad = GradientC2F{SetValue{1.5}, SetGradient{0.2}};
    REQUIRE(bitForBit([&](auto const& v) { return interp(v); }));
    REQUIRE(bitForBit([&](auto const& v) { return upwind(w, v); }));
    REQUIRE_FALSE(bitForBit([&](auto const& v) { return grad(v); }));
    REQUIRE(relativeDifference(y, fx) < 1e-14); // to rounding
}

TEST_CASE("composeMatrices: a product built from a wrong factor fails the comparison; mismatched or too wide "
          "products are refused",
          "[operators][matrix][algebra]") {
    core::Serial const serial;
    auto const grid = stretched(12);
    auto const x = sampled<Center>(grid, 2, 0.41);
    auto const kappa = sampled<Center>(grid, 2, 0.13, 2.0);
    auto const grad = GradientC2F{SetValue{1.0}, SetValue{2.0}};
    auto const interp = InterpolateC2F{Extrapolate{}, Extrapolate{}};
    auto const div = DivergenceF2C{SetValue{0.0}, SetValue{0.0}};
    Field<double, Face> xf(grid, 2, core::MemSpace::Host);
    auto const mDiv = matrixOf(serial, xf, [&](auto const& v) { return div(v); });
    auto mFlux = matrixOf(serial, x, [&](auto const& v) { return interp(kappa) * grad(v); });
    auto const mDiffusion = matrixOf(serial, x, [&](auto const& v) { return div(interp(kappa) * grad(v)); });
    REQUIRE(relativeDifference(composeMatrices(serial, mDiv, mFlux), mDiffusion) < 1e-13);
    mFlux.diagonal(0).at(1, 5) *= 1.0 + 1e-6; // one entry of the factor a millionth off
    REQUIRE(relativeDifference(composeMatrices(serial, mDiv, mFlux), mDiffusion) > 1e-9);

    // a grid of its own
    auto const other = stretched(12);
    Field<double, Face> xfOther(other, 2, core::MemSpace::Host);
    auto const mDivOther = matrixOf(serial, xfOther, [&](auto const& v) { return div(v); });
    REQUIRE_THROWS_WITH(composeMatrices(serial, mDivOther, mFlux),
                        Catch::Contains("composeMatrices") && Catch::Contains("different grids"));
    Field<double, Center> y(grid, 2, core::MemSpace::Host);
    REQUIRE_THROWS_WITH(applyMatrix(serial, mDivOther, xf, y), Catch::Contains("applyMatrix"));
    // 5 + 5 - 1 = 9 diagonals, then 9 + 9 - 1 = 17 > maxMatrixBand
    auto const w = sampled<Face>(grid, 2, 0.53);
    auto const upwind3 = Upwind3rdOrderBiasedProductC2F{ThirdOrderOneSided{}, FirstOrderOneSided{}};
    auto const m5 = matrixOf(serial, x, [&](auto const& v) { return div(upwind3(w, v)); });
    REQUIRE(m5.hi - m5.lo + 1 == 5);
    auto const m9 = composeMatrices(serial, m5, m5);
    REQUIRE(m9.hi - m9.lo + 1 == 9);
    REQUIRE_THROWS_WITH(composeMatrices(serial, m9, m9), Catch::Contains("17 diagonals"));
}
