// The model state of the local columns and its anelastic reference state.
//
// Prognostic (cell centers): T (K), u and v (m/s, eastward and northward wind), q (water vapour), qc (cloud water)
// and qr (rain), all kg/kg, tracer (1).
//
// Reference state (fixed for the whole run, per column): pressure p0(z) on faces and centers, density rho0(z) on
// centers and faces, and the Exner function (p0 / 1000 hPa)^(Rd/cp) on centers. It is the hydrostatic state of the
// initial sounding with its virtual temperature Tv = T (1 + (Rv/Rd - 1) q), computed once when the model starts
// (computeReferenceState, app/model/model.cpp). As in anelastic single-column and LES models, these are the mass
// weights of every process and every budget: the column content sum(rho0 psi dz) of a quantity is then defined the
// same way at every time, so budgets compare contents across steps and output intervals. The fields keep their short
// names (p, rho, exner, pFace, rhoFace) because every process reads them.
#pragma once

#include <strata/app/model/variables.hpp>
#include <strata/core/memory.hpp>
#include <strata/operators/field.hpp>
#include <strata/operators/grid.hpp>

#include <array>
#include <memory>
#include <string_view>

namespace strata::app {

namespace constants {
inline constexpr double g = 9.80616;     // m s-2
inline constexpr double rd = 287.04;     // J kg-1 K-1
inline constexpr double cp = 1004.64;    // J kg-1 K-1
inline constexpr double kappa = rd / cp; // Rd / cp
inline constexpr double rv = 461.5;      // J kg-1 K-1, water vapour
inline constexpr double epsilon = rd / rv;
inline constexpr double p0 = 100000.0;    // Pa, reference pressure of potential temperature
inline constexpr double day = 86400.0;    // s
inline constexpr double omega = 7.292e-5; // s-1, the Earth's rotation rate
} // namespace constants

using CenterField = ops::Field<double, ops::Center>;
using FaceField = ops::Field<double, ops::Face>;

// The prognostic variables, as a unit the time stepper combines, in the catalogue's order (app/model/variables.hpp).
struct Prognostics {
    CenterField T, u, v, q, qc, qr, tracer;
    Prognostics(std::shared_ptr<ops::Grid const> const& grid, uint32_t columns, core::MemSpace space)
        : T(grid, columns, space), u(grid, columns, space), v(grid, columns, space), q(grid, columns, space),
          qc(grid, columns, space), qr(grid, columns, space), tracer(grid, columns, space) {}
    static constexpr std::size_t count = 7;
    std::array<CenterField*, count> all() { return {&T, &u, &v, &q, &qc, &qr, &tracer}; }
    std::array<CenterField const*, count> all() const { return {&T, &u, &v, &q, &qc, &qr, &tracer}; }
    // The field of a prognostic variable's name; nullptr for another name.
    CenterField* find(std::string_view name) {
        for (std::size_t i = 0; i < count; ++i)
            if (prognostic(i).name == name) return all()[i];
        return nullptr;
    }
};
static_assert(Prognostics::count == prognosticCount() && prognostic(0).name == "T" && prognostic(1).name == "u" &&
                  prognostic(2).name == "v" && prognostic(3).name == "q" && prognostic(4).name == "qc" &&
                  prognostic(5).name == "qr" && prognostic(6).name == "tracer",
              "Prognostics holds the catalogue's prognostic variables, in its order");

struct State {
    std::shared_ptr<ops::Grid const> grid;
    uint32_t columns;
    core::MemSpace space;
    Prognostics now;           // the state being advanced (the current RK stage during a step)
    Prognostics start;         // the state at the start of the step
    Prognostics initial;       // the state at t = 0: budgets integrate rho0 (psi - psi_initial), not a large offset
    Prognostics tendency;      // the sum of the explicit tendencies of a stage
    CenterField scratch;       // one process's tendency before it is added
    CenterField p, rho, exner; // the reference state (fixed in time)
    FaceField pFace, rhoFace;
    core::Buffer<double> surfacePressure; // Pa, per column
    core::Buffer<double> latitude;        // degrees, per column

    State(std::shared_ptr<ops::Grid const> g, uint32_t cols, core::MemSpace s)
        : grid(std::move(g)), columns(cols), space(s), now(grid, cols, s), start(grid, cols, s), initial(grid, cols, s),
          tendency(grid, cols, s), scratch(grid, cols, s), p(grid, cols, s), rho(grid, cols, s), exner(grid, cols, s),
          pFace(grid, cols, s), rhoFace(grid, cols, s), surfacePressure(cols, s), latitude(cols, s) {}

    // The fields of the catalogue's names (a prognostic variable's current value, or a reference field); nullptr for
    // a name the state holds none of in that staggering.
    CenterField* center(std::string_view name) {
        if (CenterField* f = now.find(name)) return f;
        return name == "p" ? &p : name == "rho" ? &rho : name == "exner" ? &exner : nullptr;
    }
    FaceField* face(std::string_view name) {
        return name == "p_face" ? &pFace : name == "rho_face" ? &rhoFace : nullptr;
    }
    core::Buffer<double>* perColumn(std::string_view name) {
        return name == "latitude" ? &latitude : name == "surface_pressure" ? &surfacePressure : nullptr;
    }
};

} // namespace strata::app
