// Physical processes: one class each behind one interface; the time stepper sees only Process<Backend>.
//
// A process declares the fields it reads and writes with their units, may add explicit tendencies of the
// prognostic variables (called once per Runge-Kutta stage), may take an implicit step after the explicit part, checks
// its own stability limit before the run starts, and states what it adds to the column budgets:
//   heat    H = cp * sum(rho * theta * dz)   (J m-2; theta = T / exner, rho and exner frozen for the step)
//   tracer  M = sum(rho * tracer * dz)
// Conservative processes add their boundary fluxes (diffusion: the surface flux; advection: none); a source
// (Held-Suarez relaxation) adds the integral of its tendency. The stepper checks that the budget closes.
#pragma once

#include "app/config.hpp"
#include "app/model/kernels.hpp"
#include "app/model/state.hpp"
#include "core/error.hpp"
#include "operators/column/integrals.hpp"
#include "operators/column/tridiagonal.hpp"
#include "operators/operators.hpp"

#include <cmath>
#include <memory>
#include <numbers>
#include <sstream>
#include <string>
#include <vector>

namespace strata::app {

struct FieldDecl {
    std::string name, units, role; // role: "reads", "writes", "tendency of"
};

// Per-column expected budget changes over one step, accumulated by the processes (host memory).
struct BudgetTerms {
    std::vector<double> heat, tracer;
    explicit BudgetTerms(uint32_t columns = 0) : heat(columns, 0.0), tracer(columns, 0.0) {}
    void reset() {
        std::fill(heat.begin(), heat.end(), 0.0);
        std::fill(tracer.begin(), tracer.end(), 0.0);
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
};

template <class Backend>
class Process {
public:
    virtual ~Process() = default;
    virtual std::string name() const = 0;
    virtual std::vector<FieldDecl> fields() const = 0;
    virtual void checkStability(StepContext<Backend>&) const {}
    virtual void prepareStep(StepContext<Backend>&) {}
    // Adds this process's tendencies of `u` to `t`. `weight` = dt times the stage's weight in the step.
    virtual void addTendencies(StepContext<Backend>&, Prognostics const& /*u*/, Prognostics& /*t*/, double /*weight*/) {
    }
    virtual void implicitStep(StepContext<Backend>&, Prognostics& /*u*/) {}
    // Face fields this process can write to the output ("K", "w"); false when it has none of that name.
    virtual bool outputFace(Backend const&, std::string const&, FaceField&) { return false; }
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

inline std::string formatLimit(char const* what, double value, double limit, uint32_t col, uint32_t face) {
    std::ostringstream s;
    s << what << " = " << value << " at column " << col << ", face " << face << " exceeds the stability limit "
      << limit;
    return s.str();
}

// t += scratch, after `scratch` was evaluated.
template <class Backend>
void accumulate(Backend const& b, CenterField& t, CenterField const& scratch) {
    forEachPoint(b, t.columns(), t.levels(), AddInto{t.view(), scratch.view()});
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

// Backward-Euler coefficients for one scalar: a x[k-1] + b x[k] + c x[k+1] = d.
struct ImplicitCoefficients {
    CenterView a, b, c, d;
    CenterConst psi, rho;
    FaceConst rhoK;
    double const* surfaceFlux; // rho_face * F at the surface, per column
    ops::GridView grid;
    double dt;
    STRATA_HD void operator()(uint32_t col, uint32_t k) const {
        uint32_t const n = grid.n();
        double const m = rho(col, k) * grid.dzCenter[k];
        double const below = k > 0 ? rhoK(col, k) / grid.dzFace[k] : 0.0;
        double const above = k + 1 < n ? rhoK(col, k + 1) / grid.dzFace[k + 1] : 0.0;
        a(col, k) = -dt * below / m;
        c(col, k) = -dt * above / m;
        b(col, k) = 1.0 - a(col, k) - c(col, k);
        d(col, k) = psi(col, k) + (k == 0 ? dt * surfaceFlux[col] / m : 0.0);
    }
};

struct ToTheta {
    CenterView theta;
    CenterConst T, exner;
    STRATA_HD void operator()(uint32_t c, uint32_t k) const { theta(c, k) = T(c, k) / exner(c, k); }
};
struct FromTheta {
    CenterView T;
    CenterConst theta, exner;
    STRATA_HD void operator()(uint32_t c, uint32_t k) const { T(c, k) = theta(c, k) * exner(c, k); }
};

template <class Backend>
class VerticalDiffusion : public Process<Backend> {
public:
    VerticalDiffusion(DiffusionConfig const& cfg, State& s)
        : m_cfg(cfg), m_K(s.grid, s.columns, s.space), m_rhoK(s.grid, s.columns, s.space), m_heat(s.columns, s.space),
          m_moisture(s.columns, s.space), m_tracer(s.columns, s.space), m_negHeat(s.columns, s.space),
          m_negMoisture(s.columns, s.space), m_negTracer(s.columns, s.space), m_a(s.grid, s.columns, s.space),
          m_b(s.grid, s.columns, s.space), m_c(s.grid, s.columns, s.space), m_d(s.grid, s.columns, s.space) {}

    std::string name() const override { return "vertical_diffusion"; }
    std::vector<FieldDecl> fields() const override {
        return {{"T", "K", "tendency of"},         {"q", "kg kg-1", "tendency of"}, {"tracer", "1", "tendency of"},
                {"K", "m2 s-1", "writes (faces)"}, {"rho", "kg m-3", "reads"},      {"exner", "1", "reads"}};
    }

    void checkStability(StepContext<Backend>& ctx) const override {
        if (m_cfg.mode != "explicit") return;
        setDiffusivity(ctx);
        m_K.toHost();
        auto const& dzf = ctx.state.grid->dzFace();
        uint32_t const top = m_K.levels() - 1;
        auto const w = detail::worstFace(m_K, [&](uint32_t c, uint32_t k) {
            // Boundary faces carry no diffusive flux (the surface flux is prescribed, the top is closed).
            return k == 0 || k == top ? 0.0 : m_K.at(c, k) * ctx.dt / (dzf[k] * dzf[k]);
        });
        if (w.value > limit)
            throw StabilityError(
                detail::formatLimit("explicit diffusion number K dt / dz^2", w.value, limit, w.column, w.face),
                "processes.vertical_diffusion", "a smaller time.dt, mode: implicit, or a smaller kappa");
    }

    void prepareStep(StepContext<Backend>& ctx) override {
        State& s = ctx.state;
        setDiffusivity(ctx);
        ops::evaluate(ctx.backend, m_rhoK, s.rhoFace * m_K, ctx.engine);
        forEachPoint(ctx.backend, s.columns, 1,
                     SurfaceFluxes{std::as_const(s.rhoFace).view(),
                                   {m_heat.device(), m_moisture.device(), m_tracer.device()},
                                   {m_negHeat.device(), m_negMoisture.device(), m_negTracer.device()},
                                   {m_cfg.surfaceHeatFlux, m_cfg.surfaceMoistureFlux, m_cfg.surfaceTracerFlux}});
        m_heat.toHost();
        m_tracer.toHost();
        // Whatever the mode, the step adds dt times the surface flux to the column budgets.
        for (uint32_t c = 0; c < s.columns; ++c) {
            ctx.budget.heat[c] += ctx.dt * constants::cp * m_heat.host()[c];
            ctx.budget.tracer[c] += ctx.dt * m_tracer.host()[c];
        }
    }

    void addTendencies(StepContext<Backend>& ctx, Prognostics const& u, Prognostics& t, double) override {
        if (m_cfg.mode != "explicit") return;
        State& s = ctx.state;
        auto const grad = ops::GradientC2F{ops::SetGradient{0.0}, ops::SetGradient{0.0}};
        // The bottom face carries rho K dpsi/dz = -rho F (F the upward surface flux), the top face none.
        auto div = [](core::Buffer<double> const& negatedSurfaceFlux) {
            return ops::DivergenceF2C{ops::SetValue{ops::ColumnValues<double>{negatedSurfaceFlux.device()}},
                                      ops::SetValue{0.0}};
        };
        ops::evaluate(ctx.backend, s.scratch, s.exner * (div(m_negHeat)(m_rhoK * grad(u.T / s.exner)) / s.rho),
                      ctx.engine);
        detail::accumulate(ctx.backend, t.T, s.scratch);
        ops::evaluate(ctx.backend, s.scratch, div(m_negMoisture)(m_rhoK * grad(u.q)) / s.rho, ctx.engine);
        detail::accumulate(ctx.backend, t.q, s.scratch);
        ops::evaluate(ctx.backend, s.scratch, div(m_negTracer)(m_rhoK * grad(u.tracer)) / s.rho, ctx.engine);
        detail::accumulate(ctx.backend, t.tracer, s.scratch);
    }

    void implicitStep(StepContext<Backend>& ctx, Prognostics& u) override {
        if (m_cfg.mode != "implicit") return;
        State& s = ctx.state;
        auto const g = s.grid->view(Backend::memSpace);
        auto solve = [&](CenterField& psi, core::Buffer<double> const& flux) {
            forEachPoint(ctx.backend, s.columns, psi.levels(),
                         ImplicitCoefficients{m_a.view(), m_b.view(), m_c.view(), m_d.view(), std::as_const(psi).view(),
                                              std::as_const(s.rho).view(), std::as_const(m_rhoK).view(), flux.device(),
                                              g, ctx.dt});
            ops::solveTridiagonal(ctx.backend, m_a, m_b, m_c, m_d, psi, ops::Tridiag::Bfb);
        };
        forEachPoint(ctx.backend, s.columns, u.T.levels(),
                     ToTheta{s.scratch.view(), std::as_const(u.T).view(), std::as_const(s.exner).view()});
        solve(s.scratch, m_heat);
        forEachPoint(ctx.backend, s.columns, u.T.levels(),
                     FromTheta{u.T.view(), std::as_const(s.scratch).view(), std::as_const(s.exner).view()});
        solve(u.q, m_moisture);
        solve(u.tracer, m_tracer);
    }

    bool outputFace(Backend const& backend, std::string const& name, FaceField& out) override {
        if (name != "K") return false;
        ops::evaluate(backend, out, m_K, ops::Engine::Direct);
        return true;
    }

private:
    static constexpr double limit = 0.5;

    void setDiffusivity(StepContext<Backend>& ctx) const {
        auto const g = ctx.state.grid->view(Backend::memSpace);
        forEachPoint(ctx.backend, ctx.state.columns, m_K.levels(),
                     DiffusivityProfile{m_K.view(), g.zf, m_cfg.kappa, m_cfg.kappaFree, m_cfg.boundaryLayerHeight,
                                        m_cfg.profile == "boundary_layer"});
    }

    DiffusionConfig m_cfg;
    mutable FaceField m_K;
    FaceField m_rhoK;
    core::Buffer<double> m_heat, m_moisture, m_tracer; // rho_face F at the surface (kinematic flux times density)
    core::Buffer<double> m_negHeat, m_negMoisture, m_negTracer;
    CenterField m_a, m_b, m_c, m_d;
};

// ---------------------------------------------------------------------------------------------------------------
// Vertical advection by a prescribed subsidence w(z) = wMax sin(pi z / top) on faces, in flux form
// d(psi)/dt = -(1/rho) d/dz(rho w psi), with no flux through the bottom and top faces (conservative).

struct SubsidenceProfile {
    FaceView w;
    double const* zf;
    double wMax, top, zBottom;
    STRATA_HD void operator()(uint32_t c, uint32_t k) const {
        w(c, k) = wMax * sin(3.14159265358979323846 * (zf[k] - zBottom) / (top - zBottom));
    }
};

template <class Backend>
class VerticalAdvection : public Process<Backend> {
public:
    VerticalAdvection(AdvectionConfig const& cfg, State& s)
        : m_cfg(cfg), m_w(s.grid, s.columns, s.space), m_rhoW(s.grid, s.columns, s.space) {}

    std::string name() const override { return "vertical_advection"; }
    std::vector<FieldDecl> fields() const override {
        return {{"T", "K", "tendency of"},
                {"q", "kg kg-1", "tendency of"},
                {"tracer", "1", "tendency of"},
                {"w", "m s-1", "writes (faces)"},
                {"rho", "kg m-3", "reads"}};
    }

    void checkStability(StepContext<Backend>& ctx) const override {
        setVelocity(ctx);
        m_w.toHost();
        auto const& dzc = ctx.state.grid->dzCenter();
        std::size_t const cells = dzc.size();
        auto const w = detail::worstFace(m_w, [&](uint32_t c, uint32_t k) {
            double const dz = std::min(dzc[k > 0 ? k - 1 : 0], dzc[k < cells ? k : cells - 1]); // the thinner neighbour
            return std::fabs(m_w.at(c, k)) * ctx.dt / dz;
        });
        if (w.value > limit)
            throw StabilityError(
                detail::formatLimit("advective Courant number |w| dt / dz", w.value, limit, w.column, w.face),
                "processes.vertical_advection", "a smaller time.dt or a smaller |w_max|");
    }

    void prepareStep(StepContext<Backend>& ctx) override {
        setVelocity(ctx);
        ops::evaluate(ctx.backend, m_rhoW, ctx.state.rhoFace * m_w, ctx.engine);
    }

    void addTendencies(StepContext<Backend>& ctx, Prognostics const& u, Prognostics& t, double) override {
        State& s = ctx.state;
        // Heat is advected as potential temperature: dT/dt = exner d(theta)/dt.
        add(ctx, t.T, u.T / s.exner, s.exner);
        add(ctx, t.q, u.q, 1.0);
        add(ctx, t.tracer, u.tracer, 1.0);
    }

    bool outputFace(Backend const& backend, std::string const& name, FaceField& out) override {
        if (name != "w") return false;
        ops::evaluate(backend, out, m_w, ops::Engine::Direct);
        return true;
    }

private:
    static constexpr double limit = 1.0;

    // tendency += -factor * (1/rho) d/dz(rho w psi), the face flux from the configured upwind product.
    template <class Psi, class Factor>
    void add(StepContext<Backend>& ctx, CenterField& tendency, Psi const& psi, Factor const& factor) {
        State& s = ctx.state;
        auto const div = ops::DivergenceF2C{ops::SetValue{0.0}, ops::SetValue{0.0}}; // closed column
        if (m_cfg.scheme == "upwind1") {
            auto const flux = ops::UpwindBiasedProductC2F{ops::Extrapolate{}, ops::Extrapolate{}};
            ops::evaluate(ctx.backend, s.scratch, -(factor * (div(flux(m_rhoW, psi)) / s.rho)), ctx.engine);
        } else {
            auto const flux = ops::Upwind3rdOrderBiasedProductC2F{ops::ThirdOrderOneSided{}, ops::ThirdOrderOneSided{}};
            ops::evaluate(ctx.backend, s.scratch, -(factor * (div(flux(m_rhoW, psi)) / s.rho)), ctx.engine);
        }
        detail::accumulate(ctx.backend, tendency, s.scratch);
    }

    void setVelocity(StepContext<Backend>& ctx) const {
        auto const g = ctx.state.grid->view(Backend::memSpace);
        auto const& zf = ctx.state.grid->faces();
        forEachPoint(ctx.backend, ctx.state.columns, m_w.levels(),
                     SubsidenceProfile{m_w.view(), g.zf, m_cfg.wMax, zf.back(), zf.front()});
    }

    AdvectionConfig m_cfg;
    mutable FaceField m_w;
    FaceField m_rhoW;
};

// ---------------------------------------------------------------------------------------------------------------
// Held-Suarez (1994) radiative relaxation: dT/dt = -kT (T - Teq), with
//   Teq = max(Tmin, (Tmax - dTy sin^2 phi - dThz log(p/p0) cos^2 phi) (p/p0)^kappa)
//   kT  = ka + (ks - ka) max(0, (sigma - sigmaB) / (1 - sigmaB)) cos^4 phi,  sigma = p / ps.

struct HeldSuarezTendency {
    CenterView tend;
    CenterConst T, p;
    FaceConst pFace;
    double const* sinLat; // per column: sin and cos of the latitude, computed once (not at every level and step)
    double const* cosLat;
    HeldSuarezConfig cfg;
    STRATA_HD void operator()(uint32_t c, uint32_t k) const {
        double const s = sinLat[c], co = cosLat[c];
        double const pr = p(c, k) / cfg.p0;
        double teq = (cfg.tMax - cfg.deltaTy * s * s - cfg.deltaThetaZ * log(pr) * co * co) * pow(pr, constants::kappa);
        teq = teq > cfg.tMin ? teq : cfg.tMin;
        double const sigma = p(c, k) / pFace(c, 0);
        double const above = (sigma - cfg.sigmaB) / (1.0 - cfg.sigmaB);
        double const kt = (cfg.ka + (cfg.ks - cfg.ka) * (above > 0 ? above : 0.0) * co * co * co * co) / 86400.0;
        tend(c, k) = -kt * (T(c, k) - teq);
    }
};

template <class Backend>
class HeldSuarez : public Process<Backend> {
public:
    HeldSuarez(HeldSuarezConfig const& cfg, State& s)
        : m_cfg(cfg), m_heat(s.grid, s.columns, s.space), m_column(s.columns, s.space), m_sinLat(s.columns, s.space),
          m_cosLat(s.columns, s.space) {
        for (uint32_t c = 0; c < s.columns; ++c) {
            double const phi = s.latitude.host()[c] * 3.14159265358979323846 / 180.0;
            m_sinLat.host()[c] = std::sin(phi);
            m_cosLat.host()[c] = std::cos(phi);
        }
        m_sinLat.toDevice();
        m_cosLat.toDevice();
    }

    std::string name() const override { return "held_suarez"; }
    std::vector<FieldDecl> fields() const override {
        return {{"T", "K", "tendency of"}, {"p", "Pa", "reads"}, {"latitude", "degrees_north", "reads"}};
    }

    void addTendencies(StepContext<Backend>& ctx, Prognostics const& u, Prognostics& t, double weight) override {
        State& s = ctx.state;
        forEachPoint(ctx.backend, s.columns, s.scratch.levels(),
                     HeldSuarezTendency{s.scratch.view(), std::as_const(u.T).view(), std::as_const(s.p).view(),
                                        std::as_const(s.pFace).view(), m_sinLat.device(), m_cosLat.device(), m_cfg});
        detail::accumulate(ctx.backend, t.T, s.scratch);
        // A heat source: its integral cp sum(rho dT/dt / exner dz), weighted by the stage, goes into the budget.
        ops::evaluate(ctx.backend, m_heat, s.rho * s.scratch / s.exner, ops::Engine::Direct);
        ops::columnIntegral(ctx.backend, m_heat, m_column);
        m_column.toHost();
        for (uint32_t c = 0; c < s.columns; ++c)
            ctx.budget.heat[c] += weight * constants::cp * m_column.host()[c];
    }

private:
    HeldSuarezConfig m_cfg;
    CenterField m_heat;
    core::Buffer<double> m_column;
    core::Buffer<double> m_sinLat, m_cosLat;
};

} // namespace strata::app
