// Physical processes: one class each behind one interface; the time stepper sees only Process<Backend>.
//
// A process declares the fields it reads and writes with their units, may add explicit tendencies of the
// prognostic variables (called once per Runge-Kutta stage), may take an implicit step after the explicit part, checks
// its own stability limit before the run starts, and states what it adds to the column budgets. The budgets follow
// column contents with the fixed weights of the anelastic reference state (app/model/state.hpp):
//   heat    H = cp * sum(rho0 * theta * dz)   (J m-2; theta = T / exner0)
//   water   W = sum(rho0 * q * dz)            (kg m-2)
//   tracer  M = sum(rho0 * tracer * dz)
// A process reports what crossed the column's boundaries (diffusion: the surface fluxes) and what its sources added
// (Held-Suarez: the integral of its heating; subsidence: the lateral inflow that balances its divergent mass flux),
// each computed from its own formula, not from the change of the state. The model (app/model/model.hpp) compares
// these with the change of the contents across steps and output intervals.
#pragma once

#include <strata/app/config.hpp>
#include <strata/app/io/restart.hpp>
#include <strata/app/model/column_sums.hpp>
#include <strata/app/model/implicit_diffusion.hpp>
#include <strata/app/model/kernels.hpp>
#include <strata/app/model/state.hpp>
#include <strata/core/error.hpp>
#include <strata/operators/column/integrals.hpp>
#include <strata/operators/operators.hpp>

#include <array>
#include <cmath>
#include <functional>
#include <limits>
#include <memory>
#include <numbers>
#include <sstream>
#include <string>
#include <vector>

namespace strata::app {

struct FieldDecl {
    std::string name, units, role; // role: "reads", "writes", "tendency of"
};

// The quantities the budgets follow.
enum Budget : int { HeatBudget = 0, WaterBudget = 1, TracerBudget = 2 };
inline constexpr int budgetCount = 3;
inline constexpr char const* budgetNames[budgetCount] = {"heat", "water", "tracer"};

// Per-column budget terms of one step, reported by the processes, in the backend's memory (budgetCount x columns
// each): `change` is what they say entered or was added, `gross` the sum of the magnitudes of those terms (what
// crossed, whatever its sign). A process adds its terms with addColumnTerms (app/model/column_sums.hpp), in a kernel;
// the ledger folds them into its sums after the step and zeroes them (app/model/budgets.hpp). Nothing is copied.
struct BudgetTerms {
    uint32_t columns;
    core::Buffer<double> change, gross;
    BudgetTerms(uint32_t columns, core::MemSpace space)
        : columns(columns), change(budgetCount * std::size_t{columns}, space, 0.0),
          gross(budgetCount * std::size_t{columns}, space, 0.0) {}
    // `t` as a term of budget b: its amount into `change`, its magnitude into `gross`.
    ColumnTerm term(Budget b, ColumnTerm t) {
        t.sum = change.device() + std::size_t{columns} * b;
        t.gross = gross.device() + std::size_t{columns} * b;
        return t;
    }
    // scale x perColumn[c] entered column c.
    ColumnTerm term(Budget b, core::Buffer<double> const& perColumn, double scale) {
        return term(b, columnTerm(perColumn, scale));
    }
};

class StabilityError : public Error {
public:
    using Error::Error;
};

template <class Backend>
struct StepContext {
    Backend backend;
    ops::Engine engine;
    double dt;
    State& state;
    BudgetTerms& budget;
    double time = 0; // s: the model time of the step's start, or of the Runge-Kutta stage being evaluated
    // The largest value over every rank's columns (a collective call: every rank makes it, in the same order), for
    // choices that must not depend on the decomposition (sub-steps). Identity on one rank or when unset.
    std::function<double(double)> globalMax = [](double x) { return x; };
};

// A process's share of the model step's cost model (docs/performance.md, "The model step against its cost model"),
// per step, per cell (column x level) and per column (surface and boundary work):
//   bytes            the least the process moves as the step is structured, one pass over the fields per call (three
//                    Runge-Kutta stages for explicit tendencies, one call for an implicit step or a step set-up):
//                    every field a call needs read once, every field it changes read and written once, 8 bytes a
//                    value; temporaries (scratch fields, tridiagonal coefficients, staged values) are assumed to stay
//                    in fast memory. What the process moves beyond that is what fusion could save.
//   transcendentals  exp, log, pow, sin, cos and sqrt the process evaluates per step, as implemented.
struct StepCost {
    double bytesPerCell = 0, bytesPerColumn = 0;
    double transcendentalsPerCell = 0, transcendentalsPerColumn = 0;
    std::string basis; // what was counted, in words
};

template <class Backend>
class Process {
public:
    virtual ~Process() = default;
    virtual std::string name() const = 0;
    virtual std::vector<FieldDecl> fields() const = 0;
    virtual void checkStability(StepContext<Backend>&) const {}
    virtual void prepareStep(StepContext<Backend>&) {}
    // Whether addTendencies adds anything (the step skips the Runge-Kutta stages when no process does).
    virtual bool hasTendencies() const { return false; }
    // Adds this process's tendencies of `u` to `t`. `weight` = dt times the stage's weight in the step.
    virtual void addTendencies(StepContext<Backend>&, Prognostics const& /*u*/, Prognostics& /*t*/, double /*weight*/) {
    }
    virtual void implicitStep(StepContext<Backend>&, Prognostics& /*u*/) {}
    // Face fields this process can write to the output ("K", "w"); false when it has none of that name.
    virtual bool outputFace(Backend const&, std::string const&, FaceField&) { return false; }
    // Surface fields, one value per column (precipitation, surface fluxes: means since the previous call).
    virtual bool outputSurface(std::string const&, std::vector<double>&) { return false; }
    // What an output variable this process makes is in this case, for the file's long_name ("rain reaching the
    // ground (Kessler warm rain)"); empty: the catalogue's generic long_name.
    virtual std::string outputLongName(std::string const& /*name*/) const { return {}; }
    // State the process carries from step to step (running means), for restart files; most carry none.
    virtual void restartEntries(std::vector<RestartEntry>&) {}
    // Its share of the step's cost model (StepCost); a process that states none counts as free.
    virtual StepCost stepCost() const { return {0, 0, 0, 0, "not stated"}; }
};

namespace detail {

// The largest number(c, k) over the faces of a field, and where it is.
struct Worst {
    double value = 0;
    uint32_t column = 0, face = 0;
};
template <class F>
Worst worstFace(FaceField const& field, F&& number) {
    Worst w;
    for (uint32_t c = 0; c < field.columns(); ++c)
        for (uint32_t k = 0; k < field.levels(); ++k) {
            double const x = number(c, k);
            if (x > w.value) w = {x, c, k};
        }
    return w;
}

// SSP-RK3's stability interval on the negative real axis, [-2.5127, 0] (R(z) = 1 + z + z^2/2 + z^3/6, |R| = 1).
inline constexpr double rk3RealAxisLimit = 2.512745326618163;

inline std::string limitText(double limit) {
    std::ostringstream s;
    s << limit;
    return s.str();
}

inline std::string formatLimit(char const* what, double value, double limit, uint32_t col, uint32_t index,
                               char const* where = "face") {
    std::ostringstream s;
    s << what << " = " << value << " at column " << col << ", " << where << " " << index
      << " exceeds the stability limit " << limit;
    return s.str();
}

// The lowest eigenvalue of a symmetric tridiagonal matrix (diagonal a, off-diagonal b), to 1e-12 relative, by
// bisection on the Sturm count (the number of eigenvalues below x is the number of negative pivots of the LDL^T
// factorisation of the matrix minus x), inside the Gershgorin interval.
inline double lowestEigenvalue(std::vector<double> const& a, std::vector<double> const& b) {
    std::size_t const n = a.size();
    if (n == 0) return 0;
    double lo = 0, hi = 0;
    for (std::size_t i = 0; i < n; ++i) {
        double const r = (i > 0 ? std::fabs(b[i - 1]) : 0.0) + (i + 1 < n ? std::fabs(b[i]) : 0.0);
        lo = std::min(lo, a[i] - r);
        hi = std::max(hi, a[i] + r);
    }
    auto below = [&](double x) {
        std::size_t count = 0;
        double d = 1;
        for (std::size_t i = 0; i < n; ++i) {
            d = (a[i] - x) - (i > 0 ? b[i - 1] * b[i - 1] / d : 0.0);
            if (d == 0) d = -1e-300 * (std::fabs(a[i]) + 1.0); // a zero pivot counts as negative, and stays finite
            if (d < 0) ++count;
        }
        return count;
    };
    // Invariant: below(lo) == 0 and below(hi) >= 1 (Gershgorin bounds; hi may itself be an eigenvalue).
    hi = std::nextafter(hi, std::numeric_limits<double>::infinity());
    for (int i = 0; i < 200 && hi - lo > 1e-12 * std::max(std::fabs(lo), std::fabs(hi)); ++i) {
        double const mid = 0.5 * (lo + hi);
        (below(mid) >= 1 ? hi : lo) = mid;
    }
    return 0.5 * (lo + hi);
}

} // namespace detail

// ---------------------------------------------------------------------------------------------------------------
// Vertical diffusion: d(psi)/dt = (1/rho) d/dz(rho K d(psi)/dz) on theta (heat), q and the tracer, with a prescribed
// surface flux (kinematic, positive upwards) and no flux through the top.

// rho F at the surface for heat, moisture and tracer, and its negative (the boundary value of rho K dpsi/dz).
struct SurfaceFluxes {
    FaceConst rhoFace;
    double* flux[3];
    double* negated[3];
    double kinematic[3];
    STRATA_HD void operator()(uint32_t c, uint32_t) const {
        for (int i = 0; i < 3; ++i) {
            flux[i][c] = rhoFace(c, 0) * kinematic[i];
            negated[i][c] = -flux[i][c];
        }
    }
};

struct DiffusivityProfile {
    FaceView K;
    double const* zf;
    double surface, free, height;
    bool boundaryLayer;
    STRATA_HD void operator()(uint32_t c, uint32_t k) const {
        K(c, k) = boundaryLayer ? free + (surface - free) * exp(-zf[k] / height) : surface;
    }
};

// The boundary-layer diffusivity of RJ12 (eq. 18): K = C_E |v_a| z_a where p >= 850 hPa, decaying above as
// exp(-((850 hPa - p) / 100 hPa)^2); |v_a| the lowest level's wind speed with gustiness, z_a its height. The decay
// depends on the reference pressure only, which is fixed in time: ReedJablonowskiDecay computes it once (1 at and
// below 850 hPa), and each step multiplies (the same bits as evaluating the exp every step).
struct ReedJablonowskiDecay {
    FaceView decay;
    FaceConst pFace;
    STRATA_HD void operator()(uint32_t c, uint32_t k) const {
        double const above = (85000.0 - pFace(c, k)) / 10000.0;
        decay(c, k) = pFace(c, k) >= 85000.0 ? 1.0 : exp(-above * above);
    }
};
struct ReedJablonowskiDiffusivity {
    FaceView K;
    FaceConst pFace, decay;
    CenterConst u, v;
    double za, ce, gust;
    STRATA_HD void operator()(uint32_t c, uint32_t k) const {
        double const ua = u(c, 0), va = v(c, 0);
        double const k0 = ce * sqrt(ua * ua + va * va + gust * gust) * za;
        K(c, k) = pFace(c, k) >= 85000.0 ? k0 : k0 * decay(c, k);
    }
};

template <class Backend>
class VerticalDiffusion : public Process<Backend> {
public:
    VerticalDiffusion(DiffusionConfig const& cfg, SurfaceFluxesConfig const& surface, State& s)
        : m_cfg(cfg), m_surface(surface), m_K(s.grid, s.columns, s.space), m_decay(s.grid, s.columns, s.space),
          m_rhoK(s.grid, s.columns, s.space), m_heat(s.columns, s.space), m_moisture(s.columns, s.space),
          m_tracer(s.columns, s.space), m_negHeat(s.columns, s.space), m_negMoisture(s.columns, s.space),
          m_negTracer(s.columns, s.space), m_noFlux(s.columns, s.space), m_a(s.grid, s.columns, s.space),
          m_inverse(s.grid, s.columns, s.space), m_cPrime(s.grid, s.columns, s.space) {
        std::fill(m_noFlux.host().begin(), m_noFlux.host().end(), 0.0);
        m_noFlux.toDevice();
    }

    std::string name() const override { return "vertical_diffusion"; }
    bool hasTendencies() const override { return m_cfg.mode == DiffusionMode::Explicit; }
    std::vector<FieldDecl> fields() const override {
        return {{"T", "K", "tendency of"},       {"u", "m s-1", "tendency of"},  {"v", "m s-1", "tendency of"},
                {"q", "kg kg-1", "tendency of"}, {"tracer", "1", "tendency of"}, {"K", "m2 s-1", "writes (faces)"},
                {"rho", "kg m-3", "reads"},      {"exner", "1", "reads"}};
    }

    // Explicit SSP-RK3 is stable while dt times every eigenvalue of the discrete operator lies in its stability
    // interval [-2.5127, 0] on the real axis. The operator is M^-1 A (M = rho0 dzCenter, A symmetric with the face
    // conductances D = rho0_face K / dzFace, D = 0 on the boundary faces: the surface flux is prescribed, the top is
    // closed), similar to the symmetric tridiagonal M^-1/2 A M^-1/2, so its eigenvalues are real. The check computes
    // the most negative one per column (detail::lowestEigenvalue, Sturm bisection): on a stretched grid that is the
    // thin bottom cell next to a thin face, which K dt / dzFace^2 does not see.
    void checkStability(StepContext<Backend>& ctx) const override {
        if (m_cfg.mode != DiffusionMode::Explicit) return;
        auto const w = worstColumn(ctx);
        if (!(w.value <= rk3RealAxisLimit))
            throw StabilityError(
                detail::formatLimit("explicit diffusion: dt |lowest eigenvalue of the diffusion operator|", w.value,
                                    rk3RealAxisLimit, w.column, w.face, "stiffest cell"),
                "processes.vertical_diffusion", "a smaller time.dt, mode: implicit, or a smaller kappa");
    }

    // dt |lowest eigenvalue| over the columns, where it is largest (and the cell of that column's largest row sum).
    detail::Worst worstColumn(StepContext<Backend>& ctx) const {
        State& s = ctx.state;
        setDiffusivity(ctx);
        m_K.toHost();
        s.rho.toHost();
        s.rhoFace.toHost();
        auto const& dzf = s.grid->dzFace();
        auto const& dzc = s.grid->dzCenter();
        uint32_t const n = s.grid->cells();
        std::vector<double> diagonal(n), offDiagonal(n > 0 ? n - 1 : 0);
        detail::Worst w;
        for (uint32_t c = 0; c < s.columns; ++c) {
            // The top face is closed; the bottom face conducts only for the winds over a no-slip ground (the
            // stricter operator of the two, so the check holds for every diffused variable).
            auto conductance = [&](uint32_t f) {
                return f == n || (f == 0 && !noSlip()) ? 0.0 : s.rhoFace.at(c, f) * m_K.at(c, f) / dzf[f];
            };
            uint32_t rowOfMax = 0;
            for (uint32_t k = 0; k < n; ++k) {
                double const m = s.rho.at(c, k) * dzc[k];
                diagonal[k] = -(conductance(k) + conductance(k + 1)) / m;
                if (k + 1 < n) offDiagonal[k] = conductance(k + 1) / std::sqrt(m * s.rho.at(c, k + 1) * dzc[k + 1]);
                if (diagonal[k] < diagonal[rowOfMax]) rowOfMax = k;
            }
            double const x = ctx.dt * -detail::lowestEigenvalue(diagonal, offDiagonal);
            if (!(x <= w.value)) w = {x, c, rowOfMax};
        }
        return w;
    }

    // SSP-RK3's stability interval on the negative real axis, [-2.5127, 0] (R(z) = 1 + z + z^2/2 + z^3/6, |R| = 1).
    static constexpr double rk3RealAxisLimit = detail::rk3RealAxisLimit;

    void prepareStep(StepContext<Backend>& ctx) override {
        State& s = ctx.state;
        setDiffusivity(ctx);
        ops::evaluate(ctx.backend, m_rhoK, s.rhoFace * m_K, ctx.engine);
        // The surface fluxes, and in the same launch their budget terms: whatever the mode, dt times the surface flux
        // enters through the bottom face.
        addColumnTerms(ctx.backend, s.columns,
                       SurfaceFluxes{std::as_const(s.rhoFace).view(),
                                     {m_heat.device(), m_moisture.device(), m_tracer.device()},
                                     {m_negHeat.device(), m_negMoisture.device(), m_negTracer.device()},
                                     {m_cfg.surfaceHeatFlux, m_cfg.surfaceMoistureFlux, m_cfg.surfaceTracerFlux}},
                       {ctx.budget.term(HeatBudget, m_heat, ctx.dt * constants::cp),
                        ctx.budget.term(WaterBudget, m_moisture, ctx.dt),
                        ctx.budget.term(TracerBudget, m_tracer, ctx.dt)});
    }

    void addTendencies(StepContext<Backend>& ctx, Prognostics const& u, Prognostics& t, double) override {
        if (m_cfg.mode != DiffusionMode::Explicit) return;
        State& s = ctx.state;
        auto const grad = ops::GradientC2F{ops::SetGradient{0.0}, ops::SetGradient{0.0}};
        // The bottom face carries rho K dpsi/dz = -rho F (F the upward surface flux), the top face none.
        auto div = [](core::Buffer<double> const& negatedSurfaceFlux) {
            return ops::DivergenceF2C{ops::SetValue{ops::ColumnValues<double>{negatedSurfaceFlux.device()}},
                                      ops::SetValue{0.0}};
        };
        ops::evaluateAdd(ctx.backend, t.T, s.exner * (div(m_negHeat)(m_rhoK * grad(u.T / s.exner)) / s.rho),
                         ctx.engine);
        ops::evaluateAdd(ctx.backend, t.q, div(m_negMoisture)(m_rhoK * grad(u.q)) / s.rho, ctx.engine);
        ops::evaluateAdd(ctx.backend, t.tracer, div(m_negTracer)(m_rhoK * grad(u.tracer)) / s.rho, ctx.engine);
        // Winds: no stress through the top; at the ground either u = v = 0 on the face (no-slip: the bottom face's
        // flux comes from the gradient over the half cell) or no stress (free-slip).
        auto momentum = [&](CenterField const& x, CenterField& tx) {
            if (noSlip()) {
                auto const gradNoSlip = ops::GradientC2F{ops::SetValue{0.0}, ops::SetGradient{0.0}};
                auto const divNoSlip = ops::DivergenceF2C{ops::NoBC{}, ops::SetValue{0.0}};
                ops::evaluateAdd(ctx.backend, tx, divNoSlip(m_rhoK * gradNoSlip(x)) / s.rho, ctx.engine);
            } else {
                ops::evaluateAdd(ctx.backend, tx, div(m_noFlux)(m_rhoK * grad(x)) / s.rho, ctx.engine);
            }
        };
        momentum(u.u, t.u);
        momentum(u.v, t.v);
    }

    // Backward Euler for T (through theta = T / exner0), q, tracer, u and v, in one kernel
    // (app/model/implicit_diffusion.hpp: the matrix is built and factored once per column and ground condition).
    void implicitStep(StepContext<Backend>& ctx, Prognostics& u) override {
        if (m_cfg.mode != DiffusionMode::Implicit) return;
        State& s = ctx.state;
        diffuseImplicitly(ctx.backend, s.columns,
                          ImplicitDiffusionColumns{u.T.view(), u.q.view(), u.tracer.view(), u.u.view(), u.v.view(),
                                                   std::as_const(s.rho).view(), std::as_const(s.exner).view(),
                                                   std::as_const(m_rhoK).view(), m_heat.device(), m_moisture.device(),
                                                   m_tracer.device(), m_noFlux.device(), m_a.view(), m_inverse.view(),
                                                   m_cPrime.view(), s.grid->view(Backend::memSpace), ctx.dt, noSlip()});
    }

    StepCost stepCost() const override {
        // Set-up once per step: K on faces (reads p_face, writes rho0 K: 24 B per face with rho_face; the
        // Reed-Jablonowski profile reads u, v at the lowest level and takes a sqrt per face, its decay above
        // 850 hPa computed once; the other profiles an exp per face) and the surface fluxes per column (rho_face in,
        // 6 values out: 56 B).
        double const perFace = m_cfg.profile == DiffusionProfile::Constant ? 0.0 : 1.0;
        StepCost c{24.0, 56.0 + (m_cfg.profile == DiffusionProfile::ReedJablonowski ? 16.0 : 0.0), perFace, perFace,
                   ""};
        // Five variables (T, q, tracer, u, v) share rho0, exner0 and rho0 K (24 B); each is read and written (16 B).
        if (m_cfg.mode == DiffusionMode::Explicit) {
            c.bytesPerCell += 3 * (24.0 + 5 * 24.0); // per stage: psi read, tendency read and written
            c.basis = "3 stages x (5 variables x 24 B + rho0, exner0, rho0 K) + K set-up";
        } else {
            c.bytesPerCell += 24.0 + 5 * 16.0; // one implicit solve per variable, Thomas sweeps in fast memory
            c.basis = "5 tridiagonal solves (psi in and out, rho0, exner0, rho0 K) + K set-up";
        }
        return c;
    }

    bool outputFace(Backend const& backend, std::string const& name, FaceField& out) override {
        if (name != "K") return false;
        ops::evaluate(backend, out, m_K, ops::Engine::Direct);
        return true;
    }

private:
    bool noSlip() const { return m_cfg.surfaceMomentum == SurfaceMomentum::NoSlip; }

    void setDiffusivity(StepContext<Backend>& ctx) const {
        State const& s = ctx.state;
        if (m_cfg.profile == DiffusionProfile::ReedJablonowski) {
            if (!m_decayReady) {
                forEachPoint(ctx.backend, s.columns, m_decay.levels(),
                             ReedJablonowskiDecay{m_decay.view(), s.pFace.view()});
                m_decayReady = true;
            }
            forEachPoint(ctx.backend, s.columns, m_K.levels(),
                         ReedJablonowskiDiffusivity{
                             m_K.view(), s.pFace.view(), std::as_const(m_decay).view(), s.now.u.view(), s.now.v.view(),
                             s.grid->centers()[0] - s.grid->faces()[0], m_surface.ce, m_surface.gustiness});
            return;
        }
        auto const g = ctx.state.grid->view(Backend::memSpace);
        forEachPoint(ctx.backend, ctx.state.columns, m_K.levels(),
                     DiffusivityProfile{m_K.view(), g.zf, m_cfg.kappa, m_cfg.kappaFree, m_cfg.boundaryLayerHeight,
                                        m_cfg.profile == DiffusionProfile::BoundaryLayer});
    }

    DiffusionConfig m_cfg;
    SurfaceFluxesConfig m_surface;
    mutable FaceField m_K;
    mutable FaceField m_decay;         // Reed-Jablonowski's decay above 850 hPa, fixed in time
    mutable bool m_decayReady = false; // (computed on first use: the constructor has no backend)
    FaceField m_rhoK;
    core::Buffer<double> m_heat, m_moisture, m_tracer; // rho_face F at the surface (kinematic flux times density)
    core::Buffer<double> m_negHeat, m_negMoisture, m_negTracer;
    core::Buffer<double> m_noFlux;        // zeros: no flux through the bottom face (winds over a free-slip ground)
    CenterField m_a, m_inverse, m_cPrime; // the implicit solve's elimination, per column
};

// ---------------------------------------------------------------------------------------------------------------
// Vertical advection by a prescribed large-scale vertical velocity w(z) = wMax sin(pi z / top) on faces, in the
// advective form consistent with anelastic continuity:
//   d(psi)/dt = -w d(psi)/dz = -(1/rho0) [ d/dz(rho0 w psi) - psi d/dz(rho0 w) ]
// written with the flux operators: the face flux rho0 w psi from the configured upwind product, its divergence, and
// the divergence of the mass flux rho0 w. Where d/dz(rho0 w) != 0, continuity says air enters or leaves the column
// sideways (large-scale horizontal convergence); in this form that air carries the column's own psi, so a uniform psi
// stays uniform (the flux form alone, -(1/rho0) d/dz(rho0 w psi), would make a source -psi (1/rho0) d/dz(rho0 w)).
// The column content of rho0 psi then changes by the lateral inflow, integral of psi d/dz(rho0 w) dz: the process
// reports that term to the budgets. The bottom and top faces carry no flux (w = 0 there).

struct SubsidenceProfile {
    FaceView w;
    double const* zf;
    double wMax, top, zBottom;
    STRATA_HD void operator()(uint32_t c, uint32_t k) const {
        w(c, k) = wMax * sin(3.14159265358979323846 * (zf[k] - zBottom) / (top - zBottom));
    }
};

// rho0 w the same on every face (an updraft whose air neither converges nor diverges: KiD, Shipway & Hill 2012):
// w = wMax rho0(bottom face) / rho0(face).
struct UniformMassFluxProfile {
    FaceView w;
    FaceConst rhoFace;
    double wMax;
    STRATA_HD void operator()(uint32_t c, uint32_t k) const { w(c, k) = wMax * rhoFace(c, 0) / rhoFace(c, k); }
};

template <class Backend>
class VerticalAdvection : public Process<Backend> {
public:
    VerticalAdvection(AdvectionConfig const& cfg, State& s)
        : m_cfg(cfg), m_w(s.grid, s.columns, s.space), m_rhoW(s.grid, s.columns, s.space),
          m_faceFlux(s.grid, s.columns, s.space), m_divRhoW(s.grid, s.columns, s.space),
          m_columns(5 * s.columns, s.space) {}

    std::string name() const override { return "vertical_advection"; }
    bool hasTendencies() const override { return true; }
    std::vector<FieldDecl> fields() const override {
        return {{"T", "K", "tendency of"},
                {"q", "kg kg-1", "tendency of"},
                {"tracer", "1", "tendency of"},
                {"w", "m s-1", "writes (faces)"},
                {"rho", "kg m-3", "reads"}};
    }

    // Courant number of the upwind face velocity against the thinner neighbouring cell. SSP-RK3 keeps the forward
    // Euler limits: 1 for the upwind products, 0.5 for the flux-limited one (its limiter reaches 2).
    void checkStability(StepContext<Backend>& ctx) const override {
        auto peak = ctx; // a time-dependent amplitude is checked at its peak
        if (m_cfg.duration > 0) peak.time = 0.5 * m_cfg.duration;
        setVelocity(peak);
        m_velocityReady = false; // w now holds the peak's: the step sets its own
        m_w.toHost();
        auto const& dzc = ctx.state.grid->dzCenter();
        std::size_t const cells = dzc.size();
        auto const w = detail::worstFace(m_w, [&](uint32_t c, uint32_t k) {
            double const dz = std::min(dzc[k > 0 ? k - 1 : 0], dzc[k < cells ? k : cells - 1]); // the thinner neighbour
            return std::fabs(m_w.at(c, k)) * ctx.dt / dz;
        });
        double const limit = courantLimit();
        if (!(w.value <= limit))
            throw StabilityError(
                detail::formatLimit("advective Courant number |w| dt / dz", w.value, limit, w.column, w.face),
                "processes.vertical_advection", "a smaller time.dt or a smaller |w_max|");
    }

    void prepareStep(StepContext<Backend>& ctx) override {
        // A steady w (and rho0 w: the reference state is fixed in time) is set once, not every step.
        if (m_cfg.duration > 0 || !m_velocityReady) {
            setVelocity(ctx);
            setMassFlux(ctx);
            m_velocityReady = true;
        }
    }

    void addTendencies(StepContext<Backend>& ctx, Prognostics const& u, Prognostics& t, double weight) override {
        State& s = ctx.state;
        if (m_cfg.duration > 0) { // the velocity of this stage's time
            setVelocity(ctx);
            setMassFlux(ctx);
        }
        // Heat is advected as potential temperature: dT/dt = exner d(theta)/dt. The four positive variables share
        // their scheme: their tendencies come from one kernel (ops::evaluateFused), then their budget terms.
        withDivergence([&](auto const& div) {
            withScheme(m_cfg.scheme, [&](auto const& flux) {
                ops::evaluateAdd(ctx.backend, t.T, tendency(ctx, div, flux, u.T / s.exner, s.exner), ctx.engine);
            });
            withScheme(m_cfg.positiveScheme, [&](auto const& flux) {
                ops::evaluateFused(ctx.backend, ctx.engine, ops::EngineOptions{},
                                   ops::accumulate(t.q, tendency(ctx, div, flux, u.q, 1.0)),
                                   ops::accumulate(t.qc, tendency(ctx, div, flux, u.qc, 1.0)),
                                   ops::accumulate(t.qr, tendency(ctx, div, flux, u.qr, 1.0)),
                                   ops::accumulate(t.tracer, tendency(ctx, div, flux, u.tracer, 1.0)));
            });
            // The budget terms, weighted by the stage, per variable in this order: an open column's boundary
            // fluxes, then the lateral inflow integral(psi d/dz(rho0 w) dz) (the five integrals in one launch). A
            // closed column's terms are added in that launch; an open column's in a kernel per variable, after its
            // boundary fluxes are evaluated (into m_faceFlux, which the next variable overwrites).
            Budget const budgets[5] = {HeatBudget, WaterBudget, WaterBudget, WaterBudget, TracerBudget};
            double const scales[5] = {constants::cp, 1.0, 1.0, 1.0, 1.0};
            ColumnTerm lateral[5];
            AddColumnTerms closed;
            for (uint32_t i = 0; i < 5; ++i) {
                lateral[i] = ctx.budget.term(budgets[i], m_columns, weight * scales[i]);
                lateral[i].offset = i * s.columns;
                if (!open()) closed.add(lateral[i]);
            }
            ops::columnIntegralsOfThen(ctx.backend, m_divRhoW, m_columns, closed, (u.T / s.exner) * m_divRhoW,
                                       u.q * m_divRhoW, u.qc * m_divRhoW, u.qr * m_divRhoW, u.tracer * m_divRhoW);
            if (open()) {
                withScheme(m_cfg.scheme,
                           [&](auto const& flux) { addThroughEnds(ctx, flux, u.T / s.exner, lateral[0]); });
                withScheme(m_cfg.positiveScheme, [&](auto const& flux) {
                    addThroughEnds(ctx, flux, u.q, lateral[1]);
                    addThroughEnds(ctx, flux, u.qc, lateral[2]);
                    addThroughEnds(ctx, flux, u.qr, lateral[3]);
                    addThroughEnds(ctx, flux, u.tracer, lateral[4]);
                });
            }
        });
    }

    StepCost stepCost() const override {
        // Per stage, five advected variables (theta, q, qc, qr, tracer): psi read and its tendency read and written
        // (5 x 24 B), shared rho0, exner0, rho0 w and d/dz(rho0 w) (32 B); the budget's column integrals (5 values
        // per column). A time-dependent w (duration > 0) is set at the step's start and at every stage: rho_face in,
        // w and rho0 w out (24 B per face), rho0 w in and its divergence out (16 B) and a sin per face, 4 times; a
        // steady one once, before the first step.
        bool const unsteady = m_cfg.duration > 0;
        double const sets = unsteady ? 4.0 : 0.0;
        return {3 * (32.0 + 5 * 24.0) + sets * 40.0, 3 * 5 * 8.0 + sets * 24.0, sets, sets,
                unsteady
                    ? "3 stages x (5 variables x 24 B + rho0, exner0, rho0 w, its divergence) + w 4 times, a "
                      "sin per face"
                    : "3 stages x (5 variables x 24 B + rho0, exner0, rho0 w, its divergence); w steady, set once"};
    }

    std::string outputLongName(std::string const& name) const override {
        if (name != "w") return {};
        std::string const when = m_cfg.duration > 0 ? ", varying in time" : "";
        if (m_cfg.profile == AdvectionProfile::UniformMassFlux)
            return std::string(m_cfg.wMax > 0 ? "prescribed updraft" : "prescribed downdraft") +
                   " velocity (rho0 w uniform in height" + when + ")";
        return std::string(m_cfg.wMax < 0 ? "prescribed subsidence velocity" : "prescribed ascent velocity") +
               " (sine profile" + when + ")";
    }

    bool outputFace(Backend const& backend, std::string const& name, FaceField& out) override {
        if (name != "w") return false;
        ops::evaluate(backend, out, m_w, ops::Engine::Direct);
        return true;
    }

private:
    // The flux-limited product keeps q >= 0 while the outflow Courant numbers of a cell add up to <= 1/2
    // (docs/operators.md): with outflow through at most both faces, |w| dt / dz <= 1/4 per face.
    double courantLimit() const {
        return m_cfg.scheme == AdvectionScheme::Limited || m_cfg.positiveScheme == AdvectionScheme::Limited ? 0.25
                                                                                                            : 1.0;
    }

    // f(div): the divergence of the column's faces. An open column (uniform mass flux) takes its boundary fluxes from
    // the upwind products' own boundary values (inflow: the value of the cell next to the boundary) and reports them
    // to the budget; a closed one has w = 0 on the bottom and top faces, so no flux crosses them.
    template <class F>
    void withDivergence(F const& f) const {
        if (open())
            f(ops::DivergenceF2C{});
        else
            f(ops::DivergenceF2C{ops::SetValue{0.0}, ops::SetValue{0.0}});
    }

    // f(flux): the upwind product of the scheme.
    template <class F>
    static void withScheme(AdvectionScheme scheme, F const& f) {
        if (scheme == AdvectionScheme::Upwind1)
            f(ops::UpwindBiasedProductC2F{ops::Extrapolate{}, ops::Extrapolate{}});
        else if (scheme == AdvectionScheme::Limited)
            f(ops::UpwindLimitedProductC2F{ops::FirstOrderOneSided{}, ops::FirstOrderOneSided{}});
        else
            f(ops::Upwind3rdOrderBiasedProductC2F{ops::ThirdOrderOneSided{}, ops::ThirdOrderOneSided{}});
    }

    bool open() const { return m_cfg.profile == AdvectionProfile::UniformMassFlux; }

    // The tendency -factor (1/rho0) [d/dz(rho0 w psi) - psi d/dz(rho0 w)].
    template <class Div, class Flux, class Psi, class Factor>
    auto tendency(StepContext<Backend>& ctx, Div const& div, Flux const& flux, Psi const& psi,
                  Factor const& factor) const {
        return -(factor * ((div(flux(m_rhoW, psi)) - psi * m_divRhoW) / ctx.state.rho));
    }

    // An open column's budget terms of one variable, in one kernel: the flux through its ends (bottom less top),
    // then its lateral inflow (`lateral`, whose budget and weight it shares).
    template <class Flux, class Psi>
    void addThroughEnds(StepContext<Backend>& ctx, Flux const& flux, Psi const& psi, ColumnTerm const& lateral) {
        ops::evaluate(ctx.backend, m_faceFlux, flux(m_rhoW, psi), ctx.engine);
        auto const faces = std::as_const(m_faceFlux).view();
        ColumnTerm ends = lateral;
        ends.values = faces.data;
        ends.stride = faces.stride;
        ends.offset = 0;
        ends.difference = true;
        ends.minusOffset = faces.levels - 1;
        addColumnTerms(ctx.backend, ctx.state.columns, {ends, lateral});
    }

    // The amplitude at time t: steady, or wMax sin(pi t / duration) until `duration`, then 0.
    double amplitude(double t) const {
        if (m_cfg.duration <= 0) return m_cfg.wMax;
        return t < m_cfg.duration ? m_cfg.wMax * std::sin(std::numbers::pi * t / m_cfg.duration) : 0.0;
    }

    // rho0 w on faces and its divergence d/dz(rho0 w) on centers, from the velocity just set. The divergence is the
    // same for every advected variable, so it is evaluated once here rather than inside each tendency and integral
    // (the same operator on the same values: the same bits).
    void setMassFlux(StepContext<Backend>& ctx) {
        ops::evaluate(ctx.backend, m_rhoW, ctx.state.rhoFace * m_w, ctx.engine);
        withDivergence([&](auto const& div) { ops::evaluate(ctx.backend, m_divRhoW, div(m_rhoW), ctx.engine); });
    }

    void setVelocity(StepContext<Backend>& ctx) const {
        auto const g = ctx.state.grid->view(Backend::memSpace);
        auto const& zf = ctx.state.grid->faces();
        double const a = amplitude(ctx.time);
        if (open())
            forEachPoint(ctx.backend, ctx.state.columns, m_w.levels(),
                         UniformMassFluxProfile{m_w.view(), std::as_const(ctx.state.rhoFace).view(), a});
        else
            forEachPoint(ctx.backend, ctx.state.columns, m_w.levels(),
                         SubsidenceProfile{m_w.view(), g.zf, a, zf.back(), zf.front()});
    }

    AdvectionConfig m_cfg;
    mutable FaceField m_w;
    mutable bool m_velocityReady = false; // w and rho0 w hold the steady profile
    FaceField m_rhoW, m_faceFlux;
    CenterField m_divRhoW;          // d/dz(rho0 w), set with rho0 w: read by every variable's tendency and budget
    core::Buffer<double> m_columns; // the five budget integrals of a stage: theta, q, qc, qr, tracer
};

// ---------------------------------------------------------------------------------------------------------------
// Held-Suarez (1994) radiative relaxation: dT/dt = -kT (T - Teq), with
//   Teq = max(Tmin, (Tmax - dTy sin^2 phi - dThz log(p/p0) cos^2 phi) (p/p0)^kappa)
//   kT  = ka + (ks - ka) max(0, (sigma - sigmaB) / (1 - sigmaB)) cos^4 phi,  sigma = p / ps.
// and Rayleigh friction of the winds, du/dt = -kv u, dv/dt = -kv v, kv = kf max(0, (sigma - sigmaB) / (1 - sigmaB)).
// p is the reference pressure, fixed in time: Teq, kT and kv are computed once, when the process is made.

struct HeldSuarezCoefficients {
    CenterView teq, kt, kv;
    CenterConst p;
    FaceConst pFace;
    double const* latitude; // degrees, per column
    HeldSuarezConfig cfg;
    STRATA_HD void operator()(uint32_t c, uint32_t k) const {
        double const phi = latitude[c] * 3.14159265358979323846 / 180.0;
        double const s = sin(phi), co = cos(phi);
        double const pr = p(c, k) / cfg.p0;
        double const t =
            (cfg.tMax - cfg.deltaTy * s * s - cfg.deltaThetaZ * log(pr) * co * co) * pow(pr, constants::kappa);
        teq(c, k) = t > cfg.tMin ? t : cfg.tMin;
        double const sigma = p(c, k) / pFace(c, 0);
        double const above = (sigma - cfg.sigmaB) / (1.0 - cfg.sigmaB);
        kt(c, k) = (cfg.ka + (cfg.ks - cfg.ka) * (above > 0 ? above : 0.0) * co * co * co * co) / 86400.0;
        kv(c, k) = cfg.kf * (above > 0 ? above : 0.0) / 86400.0;
    }
};

// Held-Suarez's tendencies of a stage in one pass: linear damping of the winds, -kv u and -kv v added in place, and
// the relaxation of temperature, -kT (T - Teq), into `heating` (for the heat budget) and added to T's tendency. One
// kernel rather than three (winds, heating, the heating added to T's tendency): the bytes are nearly the same, and
// two launches a stage are saved, which is what these small kernels cost on a GPU.
struct HeldSuarezTendencies {
    CenterView tu, tv, tT, heating;
    CenterConst u, v, T, kv, teq, kt;
    STRATA_HD void operator()(uint32_t c, uint32_t k) const {
        tu(c, k) = tu(c, k) - kv(c, k) * u(c, k);
        tv(c, k) = tv(c, k) - kv(c, k) * v(c, k);
        double const h = -kt(c, k) * (T(c, k) - teq(c, k));
        heating(c, k) = h;
        tT(c, k) = tT(c, k) + h;
    }
};

template <class Backend>
class HeldSuarez : public Process<Backend> {
public:
    // Needs the reference state (s.p, s.pFace) and the latitudes of s.
    HeldSuarez(HeldSuarezConfig const& cfg, State& s, Backend const& backend)
        : m_cfg(cfg), m_teq(s.grid, s.columns, s.space), m_kt(s.grid, s.columns, s.space),
          m_kv(s.grid, s.columns, s.space), m_heat(s.grid, s.columns, s.space), m_column(s.columns, s.space) {
        forEachPoint(backend, s.columns, m_teq.levels(),
                     HeldSuarezCoefficients{m_teq.view(), m_kt.view(), m_kv.view(), std::as_const(s.p).view(),
                                            std::as_const(s.pFace).view(), s.latitude.device(), m_cfg});
    }

    std::string name() const override { return "held_suarez"; }
    bool hasTendencies() const override { return true; }
    std::vector<FieldDecl> fields() const override {
        return {{"T", "K", "tendency of"},
                {"u", "m s-1", "tendency of"},
                {"v", "m s-1", "tendency of"},
                {"p", "Pa", "reads"},
                {"latitude", "degrees_north", "reads"}};
    }

    void addTendencies(StepContext<Backend>& ctx, Prognostics const& u, Prognostics& t, double weight) override {
        State& s = ctx.state;
        forEachPoint(ctx.backend, s.columns, t.u.levels(),
                     HeldSuarezTendencies{t.u.view(), t.v.view(), t.T.view(), s.scratch.view(),
                                          std::as_const(u.u).view(), std::as_const(u.v).view(),
                                          std::as_const(u.T).view(), std::as_const(m_kv).view(),
                                          std::as_const(m_teq).view(), std::as_const(m_kt).view()});
        // A heat source: its integral cp sum(rho0 dT/dt / exner0 dz), weighted by the stage, goes into the budget.
        ops::columnIntegralsOfThen(ctx.backend, m_heat, m_column,
                                   columnTerms({ctx.budget.term(HeatBudget, m_column, weight * constants::cp)}),
                                   s.rho * s.scratch / s.exner);
    }

    // Relaxation and friction are linear decays at rates kT and kv (1/s): SSP-RK3 is stable for k dt within its
    // real-axis interval, the same limit as explicit diffusion's.
    void checkStability(StepContext<Backend>& ctx) const override {
        State const& s = ctx.state;
        auto& kt = const_cast<CenterField&>(m_kt);
        auto& kv = const_cast<CenterField&>(m_kv);
        kt.toHost();
        kv.toHost();
        double const limit = detail::rk3RealAxisLimit;
        for (uint32_t c = 0; c < s.columns; ++c)
            for (uint32_t k = 0; k < kt.levels(); ++k) {
                if (!(kt.at(c, k) * ctx.dt <= limit))
                    throw StabilityError(
                        detail::formatLimit("Held-Suarez relaxation kT dt", kt.at(c, k) * ctx.dt, limit, c, k, "level"),
                        "processes.held_suarez.ks",
                        "ka, ks (1/day) and time.dt with kT dt <= " + detail::limitText(limit));
                if (!(kv.at(c, k) * ctx.dt <= limit))
                    throw StabilityError(
                        detail::formatLimit("Held-Suarez friction kv dt", kv.at(c, k) * ctx.dt, limit, c, k, "level"),
                        "processes.held_suarez.kf", "kf (1/day) and time.dt with kv dt <= " + detail::limitText(limit));
            }
    }

    StepCost stepCost() const override {
        // Per stage: T, u, v, Teq, kT, kv, rho0 and exner0 read (64 B), the tendencies of T, u, v read and written
        // (48 B), the heating's column integral (8 B per column). Teq, kT and kv are computed once, at start.
        return {3 * (64.0 + 48.0), 3 * 8.0, 0.0, 0.0,
                "3 stages x (T, u, v, Teq, kT, kv, rho0, exner0 in; 3 tendencies in and out)"};
    }

    CenterField const& equilibriumTemperature() const { return m_teq; }
    CenterField const& relaxationRate() const { return m_kt; }
    CenterField const& frictionRate() const { return m_kv; }

private:
    HeldSuarezConfig m_cfg;
    CenterField m_teq, m_kt, m_kv;
    CenterField m_heat;
    core::Buffer<double> m_column;
};

// ---------------------------------------------------------------------------------------------------------------
// Coriolis force with the large-scale pressure gradient written as a geostrophic wind (ug, vg):
//   du/dt = f (v - vg),  dv/dt = -f (u - ug),  f = 2 Omega sin(latitude).
// Pointwise; with friction or mixing the winds turn towards low pressure (Ekman).

struct CoriolisTendency {
    CenterView tu, tv;
    CenterConst u, v;
    double const* f; // per column
    double ug, vg;
    STRATA_HD void operator()(uint32_t c, uint32_t k) const {
        tu(c, k) = tu(c, k) + f[c] * (v(c, k) - vg);
        tv(c, k) = tv(c, k) - f[c] * (u(c, k) - ug);
    }
};

template <class Backend>
class Coriolis : public Process<Backend> {
public:
    Coriolis(CoriolisConfig const& cfg, State& s) : m_cfg(cfg), m_f(s.columns, s.space), m_fHost(s.columns) {
        s.latitude.toHost();
        for (uint32_t c = 0; c < s.columns; ++c)
            m_f.host()[c] = m_fHost[c] = coriolisParameter(s.latitude.host()[c]);
        m_f.toDevice();
    }

    static double coriolisParameter(double latitudeDegrees) {
        return 2.0 * constants::omega * std::sin(latitudeDegrees * std::numbers::pi / 180.0);
    }

    std::string name() const override { return "coriolis"; }
    bool hasTendencies() const override { return true; }
    std::vector<FieldDecl> fields() const override {
        return {{"u", "m s-1", "tendency of"}, {"v", "m s-1", "tendency of"}, {"latitude", "degrees_north", "reads"}};
    }

    // SSP-RK3 on the imaginary axis is stable for |f| dt <= sqrt(3).
    void checkStability(StepContext<Backend>& ctx) const override {
        for (uint32_t c = 0; c < ctx.state.columns; ++c) {
            double const x = std::fabs(m_fHost[c]) * ctx.dt;
            if (!(x <= std::sqrt(3.0)))
                throw StabilityError(detail::formatLimit("Coriolis number |f| dt", x, std::sqrt(3.0), c, 0, "level"),
                                     "time.dt", "a time step below sqrt(3) / |f|");
        }
    }

    void addTendencies(StepContext<Backend>& ctx, Prognostics const& u, Prognostics& t, double) override {
        forEachPoint(ctx.backend, ctx.state.columns, t.u.levels(),
                     CoriolisTendency{t.u.view(), t.v.view(), std::as_const(u.u).view(), std::as_const(u.v).view(),
                                      m_f.device(), m_cfg.ug, m_cfg.vg});
    }

    StepCost stepCost() const override {
        // Per stage: u, v read, the tendencies of u, v read and written; f per column.
        return {3 * (16.0 + 32.0), 3 * 8.0, 0.0, 0.0, "3 stages x (u, v in; 2 tendencies in and out)"};
    }

private:
    CoriolisConfig m_cfg;
    core::Buffer<double> m_f;
    std::vector<double> m_fHost; // the same on the host (the buffer's mirror is not read after toDevice)
};

} // namespace strata::app
