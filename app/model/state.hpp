// The model state of the local columns, and the quantities frozen for one time step.
//
// Prognostic (cell centers): T (K), q (kg/kg), tracer (1). Diagnosed at the start of every step from T and the
// surface pressure: pressure on faces and centers (hydrostatic, operators/column/integrals.hpp), density
// rho = p / (Rd T), face density (interpolated), and the Exner function (p / p0)^(Rd/cp). These stay fixed during the
// step, so the mass weights of the budgets are the same before and after it.
#pragma once

#include "core/memory.hpp"
#include "operators/field.hpp"
#include "operators/grid.hpp"

#include <memory>

namespace strata::app {

namespace constants {
inline constexpr double g = 9.80616;     // m s-2
inline constexpr double rd = 287.04;     // J kg-1 K-1
inline constexpr double cp = 1004.64;    // J kg-1 K-1
inline constexpr double kappa = rd / cp; // Rd / cp
inline constexpr double p0 = 100000.0;   // Pa, reference pressure of potential temperature
inline constexpr double day = 86400.0;   // s
} // namespace constants

using CenterField = ops::Field<double, ops::Center>;
using FaceField = ops::Field<double, ops::Face>;

// The three prognostic variables, as a unit the time stepper combines.
struct Prognostics {
    CenterField T, q, tracer;
    Prognostics(std::shared_ptr<ops::Grid const> const& grid, uint32_t columns, core::MemSpace space)
        : T(grid, columns, space), q(grid, columns, space), tracer(grid, columns, space) {}
};

struct State {
    std::shared_ptr<ops::Grid const> grid;
    uint32_t columns;
    core::MemSpace space;
    Prognostics now;           // the state being advanced (the current RK stage during a step)
    Prognostics start;         // the state at the start of the step
    Prognostics tendency;      // the sum of the explicit tendencies of a stage
    CenterField scratch;       // one process's tendency before it is added
    CenterField p, rho, exner; // frozen for the step
    FaceField pFace, rhoFace;
    core::Buffer<double> surfacePressure; // Pa, per column
    core::Buffer<double> latitude;        // degrees, per column

    State(std::shared_ptr<ops::Grid const> g, uint32_t cols, core::MemSpace s)
        : grid(std::move(g)), columns(cols), space(s), now(grid, cols, s), start(grid, cols, s),
          tendency(grid, cols, s), scratch(grid, cols, s), p(grid, cols, s), rho(grid, cols, s),
          exner(grid, cols, s), pFace(grid, cols, s), rhoFace(grid, cols, s), surfacePressure(cols, s),
          latitude(cols, s) {}
};

} // namespace strata::app
