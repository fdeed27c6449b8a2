// Stencils are exact where their formula is: linear profiles on uniform and stretched grids.
#include "tests/core/backends.hpp"
#include <strata/operators/operators.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <memory>

using namespace strata;
using namespace strata::ops;

namespace {
std::shared_ptr<Grid const> stretchedGrid(uint32_t n) {
    return std::make_shared<Grid const>(Grid::stretched(n, 1000.0, [](double s) { return s * s * 0.5 + 0.5 * s; }));
}

template <class S>
void fillLinear(Field<double, S>& f, double a, double b) {
    auto const& z = std::is_same_v<S, Center> ? f.grid().centers() : f.grid().faces();
    for (uint32_t c = 0; c < f.columns(); ++c)
        for (uint32_t k = 0; k < f.levels(); ++k)
            f.at(c, k) = a + b * z[k] + c;
}
} // namespace

TEMPLATE_TEST_CASE("gradients, divergences and interpolations are exact on linear profiles", "[operators]",
                   STRATA_CPU_BACKENDS) {
    auto const backend = TestType::make();
    auto grid = stretchedGrid(17);
    uint32_t const cols = 5;
    Field<double, Center> theta(grid, cols, core::MemSpace::Host);
    Field<double, Face> flux(grid, cols, core::MemSpace::Host);
    fillLinear(theta, 300.0, 0.01);
    fillLinear(flux, -2.0, 0.003);
    Field<double, Face> onFaces(grid, cols, core::MemSpace::Host);
    Field<double, Center> onCenters(grid, cols, core::MemSpace::Host);

    for (Engine engine : {Engine::Direct, Engine::Shmem}) {
        INFO("engine " << engineName(engine));
        evaluate(backend, onFaces, GradientC2F{SetGradient{0.01}, SetGradient{0.01}}(theta), engine);
        for (uint32_t c = 0; c < cols; ++c)
            for (uint32_t k = 0; k <= 17; ++k)
                REQUIRE(onFaces.at(c, k) == Approx(0.01).epsilon(1e-12));

        evaluate(backend, onCenters, DivergenceF2C{}(flux), engine);
        for (uint32_t c = 0; c < cols; ++c)
            for (uint32_t k = 0; k < 17; ++k)
                REQUIRE(onCenters.at(c, k) == Approx(0.003).epsilon(1e-12));

        evaluate(backend, onFaces, InterpolateC2F{Extrapolate{}, Extrapolate{}}(theta), engine);
        for (uint32_t c = 0; c < cols; ++c)
            for (uint32_t k = 1; k < 17; ++k)
                REQUIRE(onFaces.at(c, k) == Approx(300.0 + 0.01 * grid->faces()[k] + c).epsilon(1e-14));

        // Nested: the divergence of the gradient of a linear profile is zero in the interior.
        evaluate(backend, onCenters, DivergenceF2C{}(GradientC2F{SetGradient{0.01}, SetGradient{0.01}}(theta)), engine);
        for (uint32_t c = 0; c < cols; ++c)
            for (uint32_t k = 0; k < 17; ++k)
                REQUIRE(std::fabs(onCenters.at(c, k)) < 1e-14);
    }
}

TEMPLATE_TEST_CASE("single precision fields: engines agree bit for bit and stay close to double", "[operators]",
                   strata::test::SerialBackend, strata::test::ThreadsBackend<7>) {
    auto const backend = TestType::make();
    auto grid = stretchedGrid(33);
    uint32_t const cols = 3;
    Field<float, Center> thetaF(grid, cols, core::MemSpace::Host), kF(grid, cols, core::MemSpace::Host);
    Field<double, Center> thetaD(grid, cols, core::MemSpace::Host), kD(grid, cols, core::MemSpace::Host);
    for (uint32_t c = 0; c < cols; ++c)
        for (uint32_t k = 0; k < 33; ++k) {
            double const z = grid->centers()[k];
            thetaD.at(c, k) = thetaF.at(c, k) = static_cast<float>(300.0 + 0.01 * z + std::sin(0.01 * z + c));
            kD.at(c, k) = kF.at(c, k) = static_cast<float>(1.0 + 0.001 * z);
        }
    auto const grad = GradientC2F{SetValue{300.0}, SetGradient{0.0}};
    auto const interp = InterpolateC2F{Extrapolate{}, Extrapolate{}};
    auto const div = DivergenceF2C{SetValue{0.0}, SetValue{0.0}};
    Field<float, Center> direct(grid, cols, core::MemSpace::Host), shmem(grid, cols, core::MemSpace::Host);
    Field<double, Center> reference(grid, cols, core::MemSpace::Host);
    evaluate(backend, direct, div(interp(kF) * grad(thetaF)), Engine::Direct);
    evaluate(backend, shmem, div(interp(kF) * grad(thetaF)), Engine::Shmem);
    evaluate(backend, reference, div(interp(kD) * grad(thetaD)), Engine::Direct);
    double scale = 0;
    for (uint32_t c = 0; c < cols; ++c)
        for (uint32_t k = 0; k < 33; ++k)
            scale = std::max(scale, std::fabs(reference.at(c, k)));
    for (uint32_t c = 0; c < cols; ++c)
        for (uint32_t k = 0; k < 33; ++k) {
            REQUIRE(direct.at(c, k) == shmem.at(c, k));
            REQUIRE(std::fabs(direct.at(c, k) - reference.at(c, k)) <= 1e-3 * scale);
        }
}

TEMPLATE_TEST_CASE("evaluateAdd adds the expression to the destination with the bits of evaluate plus an addition",
                   "[operators]", STRATA_CPU_BACKENDS) {
    auto const backend = TestType::make();
    auto grid = stretchedGrid(23);
    uint32_t const cols = 7;
    Field<double, Center> theta(grid, cols, core::MemSpace::Host), kappa(grid, cols, core::MemSpace::Host);
    for (uint32_t c = 0; c < cols; ++c)
        for (uint32_t k = 0; k < 23; ++k) {
            theta.at(c, k) = 300.0 + std::sin(0.7 * k + c);
            kappa.at(c, k) = 1.0 + 0.1 * std::cos(0.3 * k * c);
        }
    auto const tree = DivergenceF2C{SetValue{0.5}, SetValue{0.0}}(
        InterpolateC2F{Extrapolate{}, Extrapolate{}}(kappa)*GradientC2F{SetValue{300.0}, SetGradient{0.0}}(theta));
    for (Engine engine : {Engine::Direct, Engine::Shmem}) {
        INFO("engine " << engineName(engine));
        Field<double, Center> scratch(grid, cols, core::MemSpace::Host), sum(grid, cols, core::MemSpace::Host);
        for (uint32_t c = 0; c < cols; ++c)
            for (uint32_t k = 0; k < 23; ++k)
                sum.at(c, k) = 1e-3 * (k + 1) - 0.5 * c; // what was there before
        Field<double, Center> expected(grid, cols, core::MemSpace::Host);
        evaluate(backend, scratch, tree, engine);
        for (uint32_t c = 0; c < cols; ++c)
            for (uint32_t k = 0; k < 23; ++k)
                expected.at(c, k) = sum.at(c, k) + scratch.at(c, k);
        evaluateAdd(backend, sum, tree, engine);
        for (uint32_t c = 0; c < cols; ++c)
            for (uint32_t k = 0; k < 23; ++k) {
                INFO("column " << c << ", level " << k);
                REQUIRE(sum.at(c, k) == expected.at(c, k)); // bit for bit, not approximately
            }
        REQUIRE_THROWS_AS(evaluateAdd(backend, theta, tree, engine), Error); // the destination is an operand
    }
}
