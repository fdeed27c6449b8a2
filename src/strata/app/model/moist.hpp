// Moist processes of the simple-physics suite (Reed & Jablonowski 2012, "RJ12"; Thatcher & Jablonowski 2016, "TJ16"):
// large-scale condensation and bulk surface fluxes over a prescribed sea surface. Both act after the explicit part of
// a step, in process order (RJ12 takes them one after the other, as here), and report to the budgets what left or
// entered each column, computed from their own flux formulas.
#pragma once

#include <strata/app/model/processes.hpp>
#include <strata/app/model/thermodynamics.hpp>

#include <cmath>
#include <string>
#include <vector>

namespace strata::app {

// ---------------------------------------------------------------------------------------------------------------
// Large-scale condensation (RJ12 section 2c): where q > q_sat(T, p0), the excess condenses, heats the air and falls
// out at once as precipitation: dq from moist::condensation, T += (L/cp) dq, q -= dq.

struct CondensationKernel {
    CenterView T, q, condensed;
    CenterConst p;
    STRATA_HD void operator()(uint32_t c, uint32_t k) const {
        double const dq = moist::condensation(T(c, k), q(c, k), p(c, k));
        condensed(c, k) = dq;
        T(c, k) = T(c, k) + (moist::latentHeat / constants::cp) * dq;
        q(c, k) = q(c, k) - dq;
    }
};

template <class Backend>
class LargeScaleCondensation : public Process<Backend> {
public:
    explicit LargeScaleCondensation(State& s)
        : m_condensed(s.grid, s.columns, s.space), m_weighted(s.grid, s.columns, s.space),
          m_columns(2 * s.columns, s.space), m_precipitation(s.columns, s.space) {}

    std::string name() const override { return "large_scale_condensation"; }
    std::vector<FieldDecl> fields() const override {
        return {{"T", "K", "adjusts"},
                {"q", "kg kg-1", "adjusts"},
                {"p", "Pa", "reads"},
                {"precipitation_flux", "kg m-2 s-1", "writes (surface)"}};
    }

    void implicitStep(StepContext<Backend>& ctx, Prognostics& u) override {
        State& s = ctx.state;
        forEachPoint(ctx.backend, s.columns, u.T.levels(),
                     CondensationKernel{u.T.view(), u.q.view(), m_condensed.view(), std::as_const(s.p).view()});
        // What fell out: the rain sum(rho0 dq dz) leaves the water budget (-rain) and enters the precipitation mean
        // as the rate rain / dt over dt; the heat L sum(rho0 dq / exner0 dz) is released. Both integrals and their
        // terms in one launch.
        ColumnTerm heat = ctx.budget.term(HeatBudget, m_columns, moist::latentHeat);
        heat.offset = s.columns; // the second integral
        ops::columnIntegralsOfThen(ctx.backend, m_weighted, m_columns,
                                   columnTerms({ctx.budget.term(WaterBudget, m_columns, -1.0),
                                                m_precipitation.adding(m_columns, 1.0, ctx.dt, ctx.dt), heat}),
                                   s.rho * m_condensed, s.rho * m_condensed / s.exner);
        m_precipitation.tick(ctx.dt);
    }

    StepCost stepCost() const override {
        // T and q read and written, p read, rho0 and exner0 read for the two budget integrals (2 values per column);
        // one exp per cell (q_sat).
        return {32.0 + 8.0 + 16.0, 16.0, 1.0, 0.0, "T, q in and out; p, rho0, exner0 in; exp per cell (q_sat)"};
    }

    std::string outputLongName(std::string const& name) const override {
        return name == "precipitation_flux" ? "precipitation (large-scale condensation), mean since the previous output"
                                            : "";
    }

    bool outputSurface(std::string const& name, std::vector<double>& out) override {
        if (name != "precipitation_flux") return false;
        m_precipitation.takeMean(out);
        return true;
    }

private:
    CenterField m_condensed, m_weighted;
    core::Buffer<double> m_columns; // the rain and the heat integrals
    ColumnMean m_precipitation;     // kg m-2 s-1

public:
    void restartEntries(std::vector<RestartEntry>& entries) override {
        m_precipitation.restartEntries("condensation_precipitation", entries);
    }
};

// ---------------------------------------------------------------------------------------------------------------
// Bulk surface fluxes over the sea (RJ12 section 2d, TJ16 coefficients), from the lowest level (subscript a):
//   E = C_E |v_a| (q_sat(T_s, p_s) - q_a),  H = C_H |v_a| (T_s - T_a),  tau = -C_d |v_a| v_a,
//   |v_a| = sqrt(u_a^2 + v_a^2 + gust^2),  C_d = 0.0007 + 0.000065 |v_a| below 20 m/s, 0.002 above,
// into the lowest cell (mass rho0 dzCenter_0 through the bottom face of density rho0_s), implicitly as in RJ12:
//   x_a(n+1) = (x_a + a x_s) / (1 + a),  a = dt rho0_s C |v_a| / (rho0 dzCenter_0),  x_s = T_s, q_sat,s or 0.

struct SurfaceFluxConfigView {
    double ce, ch, gust;
};

struct SurfaceFluxKernel {
    CenterView T, q, u, v;
    CenterConst rho;
    FaceConst rhoFace, pFace;
    double const* sst;
    double* heat;     // out, per column: rho0_s H (K kg m-2 s-1)
    double* moisture; // out, per column: rho0_s E (kg m-2 s-1)
    double dzCenter0, dt;
    SurfaceFluxConfigView cfg;
    STRATA_HD void operator()(uint32_t c, uint32_t) const {
        double const ua = u(c, 0), va = v(c, 0);
        double const speed = sqrt(ua * ua + va * va + cfg.gust * cfg.gust);
        double const cd = speed < 20.0 ? 0.0007 + 0.000065 * speed : 0.002;
        double const toCell = dt * rhoFace(c, 0) * speed / (rho(c, 0) * dzCenter0);
        double const qs = moist::saturationHumidity(sst[c], pFace(c, 0));
        double const aH = toCell * cfg.ch, aE = toCell * cfg.ce, aD = toCell * cd;
        T(c, 0) = (T(c, 0) + aH * sst[c]) / (1.0 + aH);
        q(c, 0) = (q(c, 0) + aE * qs) / (1.0 + aE);
        u(c, 0) = ua / (1.0 + aD);
        v(c, 0) = va / (1.0 + aD);
        // The fluxes that did it, from the flux formulas at the new state (what the implicit step applies).
        heat[c] = rhoFace(c, 0) * cfg.ch * speed * (sst[c] - T(c, 0));
        moisture[c] = rhoFace(c, 0) * cfg.ce * speed * (qs - q(c, 0));
    }
};

template <class Backend>
class BulkSurfaceFluxes : public Process<Backend> {
public:
    BulkSurfaceFluxes(SurfaceFluxesConfig const& cfg, State& s)
        : m_cfg(cfg), m_sst(s.columns, s.space), m_heat(s.columns, s.space), m_moisture(s.columns, s.space),
          m_sensible(s.columns, s.space), m_latent(s.columns, s.space), m_evaporation(s.columns, s.space) {
        s.latitude.toHost();
        for (uint32_t c = 0; c < s.columns; ++c)
            m_sst.host()[c] = moist::seaSurfaceTemperature(s.latitude.host()[c]);
        m_sst.toDevice();
    }

    std::string name() const override { return "surface_fluxes"; }
    std::vector<FieldDecl> fields() const override {
        return {{"T", "K", "adjusts (lowest level)"},
                {"q", "kg kg-1", "adjusts (lowest level)"},
                {"u", "m s-1", "adjusts (lowest level)"},
                {"v", "m s-1", "adjusts (lowest level)"},
                {"surface_upward_sensible_heat_flux", "W m-2", "writes (surface)"},
                {"surface_upward_latent_heat_flux", "W m-2", "writes (surface)"},
                {"water_evaporation_flux", "kg m-2 s-1", "writes (surface)"}};
    }

    void implicitStep(StepContext<Backend>& ctx, Prognostics& u) override {
        State& s = ctx.state;
        // The fluxes and, in the same launch, into the budgets dt cp h / exner0 (heat as theta: T / exner0) and
        // dt e, into the surface means the fluxes cp h, L e and e over dt.
        auto const exner = std::as_const(s.exner).view();
        ColumnTerm heat = ctx.budget.term(HeatBudget, m_heat, ctx.dt * constants::cp);
        heat.divisorField = exner.data; // level 0 of each column
        heat.divisorStride = exner.stride;
        addColumnTerms(
            ctx.backend, s.columns,
            SurfaceFluxKernel{u.T.view(),
                              u.q.view(),
                              u.u.view(),
                              u.v.view(),
                              std::as_const(s.rho).view(),
                              std::as_const(s.rhoFace).view(),
                              std::as_const(s.pFace).view(),
                              m_sst.device(),
                              m_heat.device(),
                              m_moisture.device(),
                              s.grid->dzCenter()[0],
                              ctx.dt,
                              {m_cfg.ce, m_cfg.ch, m_cfg.gustiness}},
            {heat, ctx.budget.term(WaterBudget, m_moisture, ctx.dt), m_sensible.adding(m_heat, constants::cp, ctx.dt),
             m_latent.adding(m_moisture, moist::latentHeat, ctx.dt), m_evaporation.adding(m_moisture, 1.0, ctx.dt)});
        for (auto* m : {&m_sensible, &m_latent, &m_evaporation})
            m->tick(ctx.dt);
    }

    StepCost stepCost() const override {
        // Per column, the lowest level only: T, q, u, v read and written (64 B), rho0, rho_face, p_face, SST read
        // (32 B), exner0 for the budget (8 B), two fluxes out (16 B); a sqrt and an exp (q_sat at the surface).
        return {0.0, 64.0 + 32.0 + 8.0 + 16.0, 0.0, 2.0, "lowest level of each column; sqrt and exp per column"};
    }

    bool outputSurface(std::string const& name, std::vector<double>& out) override {
        if (name == "surface_upward_sensible_heat_flux")
            m_sensible.takeMean(out);
        else if (name == "surface_upward_latent_heat_flux")
            m_latent.takeMean(out);
        else if (name == "water_evaporation_flux")
            m_evaporation.takeMean(out);
        else
            return false;
        return true;
    }

private:
    SurfaceFluxesConfig m_cfg;
    core::Buffer<double> m_sst, m_heat, m_moisture;
    ColumnMean m_sensible, m_latent, m_evaporation;

public:
    void restartEntries(std::vector<RestartEntry>& entries) override {
        m_sensible.restartEntries("surface_sensible", entries);
        m_latent.restartEntries("surface_latent", entries);
        m_evaporation.restartEntries("surface_evaporation", entries);
    }
};

} // namespace strata::app
