// One backward-Euler diffusion step of five variables two ways, for strata-bench's
// column/<backend>/implicit_diffusion_* suites (bench_implicit.cpp on the CPU backends, bench_cuda.cu on Cuda):
//   Path::Model     app::diffuseImplicitly, the model's kernel: each row of the matrix and each right-hand side from
//                   the operator's expression where the solve needs it (ops::tridiagonalRowAt), the matrix eliminated
//                   once per column, five sweeps, in one kernel
//   Path::Matrix    the same step from the operator's expression: ops::MatrixAssembly of div(rho0 K grad(x)) / rho0
//                   (matrixOf's untrimmed matrix in fields kept from call to call, as the model's implicit uses
//                   assemble it), 1 - dt M into three coefficient fields, and ops::solveTridiagonalBatch with the
//                   five variables as right-hand sides (one factorisation)
//   Path::Assembly  the matrix path's assembly alone (the matrix and the coefficients)
// The variables are the model's T, q, tracer, u and v over a free-slip ground (one matrix for all five).
#pragma once

#include <strata/app/model/implicit_diffusion.hpp>
#include <strata/operators/column/band.hpp>
#include <strata/operators/matrix.hpp>
#include <strata/operators/operators.hpp>

#include <array>
#include <cmath>
#include <memory>
#include <utility>
#include <vector>

namespace strata::bench::implicit {

constexpr double stepSeconds = 600.0;
// What the model's kernel must move per level update: the five variables read and written, rho0, exner0 and rho0 K
// read.
constexpr double bytesPerLevelUpdate = 104.0;

enum class Path { Model, Matrix, Assembly };

inline char const* pathName(Path p) {
    switch (p) {
    case Path::Model: return "implicit_diffusion_model";
    case Path::Matrix: return "implicit_diffusion_matrix";
    case Path::Assembly: return "implicit_diffusion_assembly";
    }
    return "?";
}

// One level count's fields in memory space Space (written on the host mirror, then copied to Space).
template <core::MemSpace Space>
struct Data {
    using CenterField = ops::Field<double, ops::Center>;
    using FaceField = ops::Field<double, ops::Face>;
    uint32_t levels, columns;
    std::shared_ptr<ops::Grid const> grid;
    std::array<CenterField, 5> vars; // T, q, tracer, u, v
    CenterField rho, exner, lower, diagonal, upper;
    FaceField rhoK;
    core::Buffer<double> zeros;
    ops::MatrixAssembly<double, ops::Center, ops::Center> assembly; // the matrix's fields, kept from call to call
    static CenterField center(std::shared_ptr<ops::Grid const> const& g, uint32_t cols) { return {g, cols, Space}; }
    Data(uint32_t n, uint32_t cols)
        : levels(n), columns(cols), grid(std::make_shared<ops::Grid const>(ops::Grid::uniform(n, 3000.0))),
          vars{center(grid, cols), center(grid, cols), center(grid, cols), center(grid, cols), center(grid, cols)},
          rho(center(grid, cols)), exner(grid, cols, Space, 1.0), lower(center(grid, cols)),
          diagonal(center(grid, cols)), upper(center(grid, cols)), rhoK(grid, cols, Space), zeros(cols, Space, 0.0) {
        for (uint32_t col = 0; col < cols; ++col) {
            for (uint32_t k = 0; k < n; ++k)
                rho.at(col, k) = 1.2 * std::exp(-grid->centers()[k] / 8000.0);
            for (uint32_t k = 0; k <= n; ++k)
                rhoK.at(col, k) = 1.2 * std::exp(-grid->faces()[k] / 8000.0) * (5.0 + 0.001 * (col % 97));
        }
        rho.toDevice();
        rhoK.toDevice();
        reset();
    }
    // The variables' initial state.
    void reset() {
        for (uint32_t j = 0; j < vars.size(); ++j) {
            for (uint32_t col = 0; col < columns; ++col)
                for (uint32_t k = 0; k < levels; ++k)
                    vars[j].at(col, k) = (j == 0 ? 290.0 : 1.0) + std::sin(0.3 * k + 0.01 * col + j);
            vars[j].toDevice();
        }
    }
    // The variables' values, read back to the host.
    std::vector<double> values() {
        std::vector<double> out;
        for (auto& v : vars) {
            v.toHost();
            for (uint32_t col = 0; col < columns; ++col)
                for (uint32_t k = 0; k < levels; ++k)
                    out.push_back(v.at(col, k));
        }
        return out;
    }
};

template <class Backend, core::MemSpace Space>
void stepModel(Backend const& backend, Data<Space>& d) {
    app::diffuseImplicitly(
        backend, d.columns,
        app::ImplicitDiffusionFields{d.vars[0].view(), d.vars[1].view(), d.vars[2].view(), d.vars[3].view(),
                                     d.vars[4].view(), std::as_const(d.rho).view(), std::as_const(d.exner).view(),
                                     std::as_const(d.rhoK).view(), d.zeros.device(), d.zeros.device(), d.zeros.device(),
                                     d.zeros.device(), d.grid->view(Backend::memSpace), stepSeconds, false, 31u});
}

// (1 - dt M) x' = x + dt b: the coefficient fields from the operator's matrix (b is 0: no flux through either end).
template <class Backend, core::MemSpace Space>
void assemble(Backend const& backend, Data<Space>& d) {
    using namespace ops;
    auto const grad = GradientC2F{SetGradient{0.0}, SetGradient{0.0}};
    auto const div = DivergenceF2C{SetValue{0.0}, SetValue{0.0}};
    auto const& m = d.assembly(backend, d.vars[0], [&](auto const& x) { return div(d.rhoK * grad(x)) / d.rho; });
    evaluate(backend, d.lower, -stepSeconds * m.diagonal(-1), Engine::Direct);
    evaluate(backend, d.diagonal, 1.0 - stepSeconds * m.diagonal(0), Engine::Direct);
    evaluate(backend, d.upper, -stepSeconds * m.diagonal(1), Engine::Direct);
}

template <class Backend, core::MemSpace Space>
void stepMatrix(Backend const& backend, Data<Space>& d) {
    using CenterField = typename Data<Space>::CenterField;
    assemble(backend, d);
    std::array<CenterField const*, 5> const rhs{&d.vars[0], &d.vars[1], &d.vars[2], &d.vars[3], &d.vars[4]};
    std::array<CenterField*, 5> const out{&d.vars[0], &d.vars[1], &d.vars[2], &d.vars[3], &d.vars[4]};
    ops::solveTridiagonalBatch(backend, d.lower, d.diagonal, d.upper, rhs, out, ops::Tridiag::Thomas);
}

template <class Backend, core::MemSpace Space>
void step(Backend const& backend, Data<Space>& d, Path path) {
    switch (path) {
    case Path::Model: stepModel(backend, d); break;
    case Path::Matrix: stepMatrix(backend, d); break;
    case Path::Assembly: assemble(backend, d); break;
    }
}

// Whether the two steps from the same state agree to rounding (1e-12 relative); leaves the initial state.
template <class Backend, core::MemSpace Space>
bool pathsAgree(Backend const& backend, Data<Space>& d) {
    d.reset();
    stepModel(backend, d);
    std::vector<double> const model = d.values();
    d.reset();
    stepMatrix(backend, d);
    std::vector<double> const matrix = d.values();
    d.reset();
    for (std::size_t i = 0; i < model.size(); ++i)
        if (!(std::fabs(matrix[i] - model[i]) <= 1e-12 * std::fabs(model[i]))) return false;
    return true;
}

} // namespace strata::bench::implicit
