// implicit_column (the second program of examples/column_physics): nonlinear vertical diffusion made implicit with
// Strata's operator matrices.
//
// T(z) in every column is stepped by backward Euler,  T - dt D(T) = T0  with  D(T) = div(interp(K(T)) grad(T)),
// K(T) = K0 (T / T0ref)^2 (a diffusivity that grows with the temperature) and no flux through the ground or the lid.
// The equation is nonlinear; Newton's method solves it: J(T) dT = T - dt D(T) - T0, T <- T - dT, with J = I - dt dD/dT,
// where ops::jacobianOf gives dD/dT as a band matrix (dual numbers carried through the stencil expression: no
// derivative written by hand) and ops::solveTridiagonal solves the tridiagonal system. The program checks:
//   - Newton converges: the residual falls below 1e-9 K within 8 iterations, at an order of about 2 (estimated from
//     the last three residuals above the rounding floor; a Jacobian that is wrong converges linearly at best);
//   - the step conserves the column heat content sum T dz to rounding (zero-flux boundaries);
//   - the Serial, OpenMP and Threads backends give the same bits.
// It exits 1 when a check fails. IMPLICIT_COLUMN_BREAK=1 in the environment drops K's dependence on T from the
// Jacobian (the derivative of a frozen K, a Picard iteration): it converges linearly, and the program fails.
#include <strata/core/backend.hpp>
#include <strata/core/error.hpp>
#include <strata/operators/column/tridiagonal.hpp>
#include <strata/operators/matrix.hpp>
#include <strata/operators/operators.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

namespace core = strata::core;
namespace ops = strata::ops;

constexpr uint32_t levels = 40;
constexpr uint32_t columns = 8;
constexpr double zTop = 3000.0;    // m
constexpr double dt = 3600.0;      // s: far beyond the explicit limit dz^2 / (2 K)
constexpr double k0 = 50.0;        // m2 s-1 at Tref
constexpr double tRef = 290.0;     // K
constexpr double tolerance = 1e-9; // K, Newton's residual
constexpr int maxIterations = 8;

struct Result {
    std::vector<double> T; // every column, level by level
    std::vector<double> residuals;
    double heatDrift = 0; // relative change of sum T dz, worst column
};

template <class Backend>
Result step(Backend const& backend, bool broken) {
    auto const host = core::MemSpace::Host;
    auto grid = std::make_shared<ops::Grid const>(ops::Grid::stretched(levels, zTop, [](double s) { return s * s; }));
    ops::Field<double, ops::Center> t0(grid, columns, host), t(grid, columns, host), a(grid, columns, host),
        b(grid, columns, host), c(grid, columns, host), r(grid, columns, host), dT(grid, columns, host);
    for (uint32_t col = 0; col < columns; ++col)
        for (uint32_t k = 0; k < levels; ++k) {
            double const z = grid->centers()[k];
            t0.at(col, k) = tRef + 8.0 * std::exp(-z / 300.0) * (1.0 + 0.1 * col) - 0.0065 * z; // a warm surface layer
        }
    auto const grad = ops::GradientC2F{ops::SetGradient{0.0}, ops::SetGradient{0.0}};
    auto const interp = ops::InterpolateC2F{ops::Extrapolate{}, ops::Extrapolate{}};
    auto const div = ops::DivergenceF2C{ops::SetValue{0.0}, ops::SetValue{0.0}}; // no flux at the ends
    double const scale = k0 / (tRef * tRef);
    auto const diffusion = [&](auto const& v) { return div(interp(scale * v * v) * grad(v)); };
    auto const frozen = [&](auto const& v) { return div(interp(scale * t * t) * grad(v)); }; // K at the iterate
    ops::evaluate(backend, t, ops::asExpr(t0));                                              // the first iterate: T0
    Result res;
    for (int it = 0; it < maxIterations; ++it) {
        auto const jac = broken ? ops::jacobianOf(backend, t, frozen) : ops::jacobianOf(backend, t, diffusion);
        // the residual T - dt D(T) - T0, D(T) = jac.value either way
        ops::evaluate(backend, r, t - dt * jac.value - t0);
        double worst = 0;
        for (uint32_t col = 0; col < columns; ++col)
            for (uint32_t k = 0; k < levels; ++k)
                worst = std::max(worst, std::fabs(r.at(col, k)));
        res.residuals.push_back(worst);
        if (worst < tolerance) break;
        if (jac.matrix.lo != -1 || jac.matrix.hi != 1)
            throw strata::Error("the Jacobian is not tridiagonal", "implicit_column", "diagonals -1 .. 1");
        ops::evaluate(backend, a, -dt * jac.matrix.diagonal(-1));
        ops::evaluate(backend, b, 1.0 - dt * jac.matrix.diagonal(0));
        ops::evaluate(backend, c, -dt * jac.matrix.diagonal(1));
        ops::solveTridiagonal(backend, a, b, c, r, dT, ops::Tridiag::Bfb); // J dT = residual
        ops::evaluateAdd(backend, t, -1.0 * dT);                           // T - dT
    }
    for (uint32_t col = 0; col < columns; ++col) {
        double h0 = 0, h1 = 0;
        for (uint32_t k = 0; k < levels; ++k) {
            h0 += t0.at(col, k) * grid->dzCenter()[k];
            h1 += t.at(col, k) * grid->dzCenter()[k];
            res.T.push_back(t.at(col, k));
        }
        res.heatDrift = std::max(res.heatDrift, std::fabs(h1 - h0) / std::fabs(h0));
    }
    return res;
}

int runAll() {
    bool const broken = [] {
        char const* v = std::getenv("IMPLICIT_COLUMN_BREAK");
        return v && v[0] == '1';
    }();
    std::printf(
        "implicit_column: %u columns x %u levels, one backward-Euler step of %.0f s, Newton with jacobianOf%s\n",
        columns, levels, dt, broken ? "; IMPLICIT_COLUMN_BREAK=1: K frozen in the Jacobian" : "");
    bool ok = true;
    std::vector<double> reference;
    auto const check = [&](char const* name, Result const& r) {
        if (reference.empty()) reference = r.T;
        bool const same = std::memcmp(r.T.data(), reference.data(), reference.size() * sizeof(double)) == 0;
        bool const converged = r.residuals.back() < tolerance;
        // the order of convergence from the last three residuals above the rounding floor (1e-8 K):
        // log(r2 / r1) / log(r1 / r0), about 2 for Newton, about 1 or below for an approximate Jacobian
        std::vector<double> above;
        for (double x : r.residuals)
            if (x > 1e-8) above.push_back(x);
        std::size_t const n = above.size();
        double const order =
            n >= 3 ? std::log(above[n - 1] / above[n - 2]) / std::log(above[n - 2] / above[n - 3]) : 0.0;
        bool const quadratic = order >= 1.5;
        bool const conserved = r.heatDrift <= 1e-13;
        bool const pass = same && converged && quadratic && conserved;
        ok = ok && pass;
        std::printf("  %-8s residuals", name);
        for (double x : r.residuals)
            std::printf(" %.1e", x);
        std::printf("  order %.2f  heat drift %.1e  %s  %s\n", order, r.heatDrift, same ? "same bits" : "BITS DIFFER",
                    pass ? "ok" : "FAILED");
    };
    check("serial", step(core::Serial{}, broken));
    check("openmp", step(core::OpenMP{}, broken));
    check("threads", step(core::Threads{4, true}, broken));
    std::printf("%s (Newton to %.0e K at an order of at least 1.5; heat drift at most 1e-13)\n", ok ? "PASS" : "FAIL",
                tolerance);
    return ok ? 0 : 1;
}

int main() {
    try {
        return runAll();
    } catch (strata::Error const& e) {
        std::fprintf(stderr, "implicit_column: %s\n", e.what());
        return 1;
    }
}
