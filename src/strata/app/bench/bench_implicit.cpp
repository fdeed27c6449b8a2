// column/<backend>/implicit_diffusion_*/<levels>: one backward-Euler diffusion step of five variables (the model's T,
// q, tracer, u, v over a free-slip ground: one matrix for all five), on about 2^21 points a field:
//   implicit_diffusion_hand/<levels>      app::diffuseImplicitly, the model's kernel: coefficients built by hand from
//                                         rho0 K and the grid, eliminated once per column, five sweeps
//   implicit_diffusion_matrix/<levels>    the same step from the operator's expression: ops::MatrixAssembly of
//                                         div(rho0 K grad(x)) / rho0 (matrixOf's untrimmed matrix in fields kept from
//                                         call to call, as the model's implicit uses assemble it), 1 - dt M into three
//                                         coefficient fields, and ops::solveTridiagonalBatch
//                                         with the five variables as right-hand sides (one factorisation)
//   implicit_diffusion_assembly/<levels>  the matrix path's assembly alone (the matrix and the coefficients)
// The two steps agree to rounding (checked before timing: 1e-12 relative). A level update is one cell of one column
// for all five variables; min_bytes_per_point counts what the hand kernel must move: the five variables read and
// written, rho0, exner0 and rho0 K read (104 bytes).
#include <strata/app/bench/bench_common.hpp>
#include <strata/app/model/implicit_diffusion.hpp>
#include <strata/operators/column/band.hpp>
#include <strata/operators/matrix.hpp>
#include <strata/operators/operators.hpp>

#include <benchmark/benchmark.h>

#include <array>
#include <cmath>
#include <memory>
#include <string>

namespace {

using namespace strata;
using namespace strata::ops;

constexpr uint32_t targetPoints = 1u << 21;
constexpr double stepSeconds = 600.0;

enum class Path { Hand, Matrix, Assembly };

char const* pathName(Path p) {
    switch (p) {
    case Path::Hand: return "implicit_diffusion_hand";
    case Path::Matrix: return "implicit_diffusion_matrix";
    case Path::Assembly: return "implicit_diffusion_assembly";
    }
    return "?";
}

using CenterField = Field<double, Center>;
using FaceField = Field<double, Face>;

struct Data {
    uint32_t levels, columns;
    std::shared_ptr<Grid const> grid;
    std::array<CenterField, 5> vars; // T, q, tracer, u, v
    CenterField rho, exner, a, inverse, cPrime, lower, diagonal, upper;
    FaceField rhoK;
    core::Buffer<double> zeros;
    MatrixAssembly<double, Center, Center> assembly; // the matrix's fields, kept from call to call
    static CenterField center(std::shared_ptr<Grid const> const& g, uint32_t cols) {
        return {g, cols, core::MemSpace::Host};
    }
    Data(uint32_t n, uint32_t cols)
        : levels(n), columns(cols),
          grid(std::make_shared<Grid const>(Grid::uniform(n, 3000.0))), vars{center(grid, cols), center(grid, cols),
                                                                             center(grid, cols), center(grid, cols),
                                                                             center(grid, cols)},
          rho(center(grid, cols)), exner(grid, cols, core::MemSpace::Host, 1.0), a(center(grid, cols)),
          inverse(center(grid, cols)), cPrime(center(grid, cols)), lower(center(grid, cols)),
          diagonal(center(grid, cols)), upper(center(grid, cols)), rhoK(grid, cols, core::MemSpace::Host),
          zeros(cols, core::MemSpace::Host, 0.0) {
        reset();
        for (uint32_t col = 0; col < cols; ++col) {
            for (uint32_t k = 0; k < n; ++k)
                rho.at(col, k) = 1.2 * std::exp(-grid->centers()[k] / 8000.0);
            for (uint32_t k = 0; k <= n; ++k)
                rhoK.at(col, k) = 1.2 * std::exp(-grid->faces()[k] / 8000.0) * (5.0 + 0.001 * (col % 97));
        }
    }
    void reset() {
        for (uint32_t j = 0; j < vars.size(); ++j)
            for (uint32_t col = 0; col < columns; ++col)
                for (uint32_t k = 0; k < levels; ++k)
                    vars[j].at(col, k) = (j == 0 ? 290.0 : 1.0) + std::sin(0.3 * k + 0.01 * col + j);
    }
};

Data& dataFor(uint32_t levels) { return bench::dataForLevels<Data>(levels, targetPoints); }

template <class Backend>
void stepHand(Backend const& backend, Data& d) {
    app::diffuseImplicitly(
        backend, d.columns,
        app::ImplicitDiffusionColumns{d.vars[0].view(), d.vars[1].view(), d.vars[2].view(), d.vars[3].view(),
                                      d.vars[4].view(), std::as_const(d.rho).view(), std::as_const(d.exner).view(),
                                      std::as_const(d.rhoK).view(), d.zeros.device(), d.zeros.device(),
                                      d.zeros.device(), d.zeros.device(), d.a.view(), d.inverse.view(), d.cPrime.view(),
                                      d.grid->view(Backend::memSpace), stepSeconds, false, 31u});
}

// (1 - dt M) x' = x + dt b: the coefficient fields from the operator's matrix (b is 0: no flux through either end).
template <class Backend>
void assemble(Backend const& backend, Data& d) {
    auto const grad = GradientC2F{SetGradient{0.0}, SetGradient{0.0}};
    auto const div = DivergenceF2C{SetValue{0.0}, SetValue{0.0}};
    auto const& m = d.assembly(backend, d.vars[0], [&](auto const& x) { return div(d.rhoK * grad(x)) / d.rho; });
    evaluate(backend, d.lower, -stepSeconds * m.diagonal(-1), Engine::Direct);
    evaluate(backend, d.diagonal, 1.0 - stepSeconds * m.diagonal(0), Engine::Direct);
    evaluate(backend, d.upper, -stepSeconds * m.diagonal(1), Engine::Direct);
}

template <class Backend>
void stepMatrix(Backend const& backend, Data& d) {
    assemble(backend, d);
    std::array<CenterField const*, 5> const rhs{&d.vars[0], &d.vars[1], &d.vars[2], &d.vars[3], &d.vars[4]};
    std::array<CenterField*, 5> const out{&d.vars[0], &d.vars[1], &d.vars[2], &d.vars[3], &d.vars[4]};
    solveTridiagonalBatch(backend, d.lower, d.diagonal, d.upper, rhs, out, Tridiag::Thomas);
}

// The two steps from the same state agree to rounding.
template <class Backend>
bool pathsAgree(Backend const& backend, Data& d) {
    d.reset();
    stepHand(backend, d);
    std::array<std::vector<double>, 5> hand;
    for (uint32_t j = 0; j < 5; ++j)
        for (uint32_t col = 0; col < d.columns; ++col)
            for (uint32_t k = 0; k < d.levels; ++k)
                hand[j].push_back(d.vars[j].at(col, k));
    d.reset();
    stepMatrix(backend, d);
    for (uint32_t j = 0; j < 5; ++j) {
        std::size_t i = 0;
        for (uint32_t col = 0; col < d.columns; ++col)
            for (uint32_t k = 0; k < d.levels; ++k, ++i)
                if (!(std::fabs(d.vars[j].at(col, k) - hand[j][i]) <= 1e-12 * std::fabs(hand[j][i]))) return false;
    }
    d.reset();
    return true;
}

template <class Backend>
void bmImplicit(benchmark::State& state, Path path, uint32_t levels) {
    Backend const backend{};
    Data& d = dataFor(levels);
    if (!pathsAgree(backend, d)) {
        state.SkipWithError("the matrix path's step differs from the hand kernel's beyond 1e-12");
        return;
    }
    for (auto _ : state) {
        switch (path) {
        case Path::Hand: stepHand(backend, d); break;
        case Path::Matrix: stepMatrix(backend, d); break;
        case Path::Assembly: assemble(backend, d); break;
        }
        benchmark::ClobberMemory();
    }
    double const cols = d.columns;
    bench::reportThroughput<Backend>(state, levels * cols, 104.0 * levels * cols);
    state.counters["levels"] = levels;
    state.counters["columns"] = cols;
}

int const registered = [] {
    for (uint32_t levels : {30u, 64u})
        for (bool parallel : {false, true})
            for (Path path : {Path::Hand, Path::Matrix, Path::Assembly}) {
                std::string const name = std::string("column/") + (parallel ? "openmp" : "serial") + "/" +
                                         pathName(path) + "/" + std::to_string(levels);
                if (parallel)
                    bench::add(name, [=](benchmark::State& s) { bmImplicit<core::OpenMP>(s, path, levels); });
                else
                    bench::add(name, [=](benchmark::State& s) { bmImplicit<core::Serial>(s, path, levels); });
            }
    return 0;
}();

} // namespace
