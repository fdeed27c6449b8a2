// Bulk surface fluxes over a sea of prescribed temperature (Reed & Jablonowski 2012, "RJ12", section 2d, with the
// coefficients of Thatcher & Jablonowski 2016, "TJ16"). It acts after the explicit part of a step, in process order,
// and reports to the budgets what entered each column, computed from its own flux formulas.
#pragma once

#include <strata/app/model/process.hpp>
#include <strata/app/model/thermodynamics.hpp>

#include <cmath>
#include <string>
#include <vector>

namespace strata::app {

// The depth the surface fluxes are deposited over (the lowest cell's heat capacity they change):
//   cell: the lowest cell, dzCenter_0 of density rho0 (Strata's default): what enters the cell is the flux the
//         formulas give, so energy and water are conserved exactly;
//   z_a:  the height of the lowest level, z_a = half the lowest cell (RJ12 and TJ16's discretisation): the lowest
//         level relaxes twice as fast, and the cell receives rho0 dzCenter_0 / (rho0_s z_a) (about 2) times the flux
//         the formulas give. The output fluxes are the formulas' values; the budgets count what entered the cell.
enum class SurfaceLayerDepth { Cell, Za };
STRATA_CHOICES(SurfaceLayerDepth, Choice<SurfaceLayerDepth>{"cell", SurfaceLayerDepth::Cell},
               Choice<SurfaceLayerDepth>{"z_a", SurfaceLayerDepth::Za});

struct SurfaceFluxesSettings {
    static constexpr std::string_view process = "surface_fluxes";
    double ce = 0.0044;           // exchange coefficient of moisture (TJ16)
    double ch = 0.0044;           // exchange coefficient of heat (TJ16)
    double gustiness = 1.0;       // m/s added (in quadrature) to the lowest level's wind speed
    Switch heat = Switch::On;     // the sensible heat flux (T)
    Switch moisture = Switch::On; // evaporation (q)
    Switch momentum = Switch::On; // the bulk drag (u, v); TJ16 leaves the winds to Held-Suarez's friction
    SurfaceLayerDepth depth = SurfaceLayerDepth::Cell;

    template <class V>
    void describe(V& v) {
        v.field("c_e", ce, detail::atLeast(0.0));
        v.field("c_h", ch, detail::atLeast(0.0));
        v.field("gustiness", gustiness, detail::atLeast(0.0));
        v.field("heat", heat, detail::named<Switch>());
        v.field("moisture", moisture, detail::named<Switch>());
        v.field("momentum", momentum, detail::named<Switch>());
        v.field("surface_layer_depth", depth, detail::named<SurfaceLayerDepth>());
    }
    static std::vector<VariableInfo> outputs() {
        using S = Staggering;
        using F = Source;
        return {{"surface_upward_sensible_heat_flux", "W m-2",
                 "sensible heat flux from the sea, mean since the previous output", "surface_upward_sensible_heat_flux",
                 S::Column, F::Process, true, "time: mean"},
                {"surface_upward_latent_heat_flux", "W m-2",
                 "latent heat flux from the sea, mean since the previous output", "surface_upward_latent_heat_flux",
                 S::Column, F::Process, true, "time: mean"},
                {"water_evaporation_flux", "kg m-2 s-1", "evaporation from the sea, mean since the previous output",
                 "water_evaporation_flux", S::Column, F::Process, true, "time: mean"}};
    }
    bool operator==(SurfaceFluxesSettings const&) const = default;
};

// The fluxes, from the lowest level (subscript a):
//   E = C_E |v_a| (q_sat(T_s, p_s) - q_a),  H = C_H |v_a| (T_s - T_a),  tau = -C_d |v_a| v_a,
//   |v_a| = sqrt(u_a^2 + v_a^2 + gust^2),  C_d = 0.0007 + 0.000065 |v_a| below 20 m/s, 0.002 above,
// implicitly as in RJ12:
//   x_a(n+1) = (x_a + a x_s) / (1 + a),  x_s = T_s, q_sat,s or 0,
//   a = dt rho0_s C |v_a| / (rho0 dzCenter_0)   (surface_layer_depth: cell; the bottom face's density rho0_s)
//   a = dt C |v_a| / z_a                         (surface_layer_depth: z_a, RJ12's formula).
// A part switched off has C = 0 and leaves its variables untouched.

struct SurfaceFluxConfigView {
    double ce, ch, gust;
    bool heat, moisture, momentum, cellDepth;
};

struct SurfaceFluxKernel {
    CenterView T, q, u, v;
    CenterConst rho;
    FaceConst rhoFace, pFace;
    double const* sst;
    double* heat;            // out, per column: rho0_s H (K kg m-2 s-1), the formula's flux
    double* moisture;        // out, per column: rho0_s E (kg m-2 s-1)
    double* heatEntered;     // out: what entered the lowest cell per unit area and time (= heat with depth cell)
    double* moistureEntered; //
    double dzCenter0, za, dt;
    SurfaceFluxConfigView cfg;
    STRATA_HD void operator()(uint32_t c, uint32_t) const {
        double const ua = u(c, 0), va = v(c, 0);
        double const speed = sqrt(ua * ua + va * va + cfg.gust * cfg.gust);
        double const toCell = cfg.cellDepth ? dt * rhoFace(c, 0) * speed / (rho(c, 0) * dzCenter0) : dt * speed / za;
        // The cell's mass over the mass the formulas' flux is spread over: 1 for the cell, about 2 for z_a.
        double const entered = cfg.cellDepth ? 1.0 : rho(c, 0) * dzCenter0 / (rhoFace(c, 0) * za);
        double const qs = moist::saturationHumidity(sst[c], pFace(c, 0));
        if (cfg.heat) {
            double const aH = toCell * cfg.ch;
            T(c, 0) = (T(c, 0) + aH * sst[c]) / (1.0 + aH);
            // The flux that did it, from the flux formula at the new state (what the implicit step applies).
            heat[c] = rhoFace(c, 0) * cfg.ch * speed * (sst[c] - T(c, 0));
        } else {
            heat[c] = 0.0;
        }
        if (cfg.moisture) {
            double const aE = toCell * cfg.ce;
            q(c, 0) = (q(c, 0) + aE * qs) / (1.0 + aE);
            moisture[c] = rhoFace(c, 0) * cfg.ce * speed * (qs - q(c, 0));
        } else {
            moisture[c] = 0.0;
        }
        heatEntered[c] = heat[c] * entered;
        moistureEntered[c] = moisture[c] * entered;
        if (cfg.momentum) {
            double const cd = speed < 20.0 ? 0.0007 + 0.000065 * speed : 0.002;
            double const aD = toCell * cd;
            u(c, 0) = ua / (1.0 + aD);
            v(c, 0) = va / (1.0 + aD);
        }
    }
};

template <class Backend>
class BulkSurfaceFluxes : public Process<Backend> {
public:
    using Settings = SurfaceFluxesSettings;
    static std::vector<FieldDecl> declarations(Config const& cfg) {
        // T, q, u and v are adjusted at the lowest level only, each when its part is on (the winds are read for the
        // speed in any case).
        auto const& s = cfg.settings<Settings>();
        auto adjusted = [](Switch on) { return isOn(on) ? Access::Adjusts : Access::Reads; };
        return {{"T", "K", adjusted(s.heat)},
                {"q", "kg kg-1", adjusted(s.moisture)},
                {"u", "m s-1", adjusted(s.momentum)},
                {"v", "m s-1", adjusted(s.momentum)},
                {"rho", "kg m-3", Access::Reads},
                {"rho_face", "kg m-3", Access::Reads},
                {"p_face", "Pa", Access::Reads},
                {"exner", "1", Access::Reads},
                {"latitude", "degrees_north", Access::Reads}};
    }

    BulkSurfaceFluxes(Config const& cfg, ProcessEnv<Backend>& env)
        : Process<Backend>(env.declared()), m_cfg(cfg.settings<Settings>()), m_rho(env.center("rho")),
          m_rhoFace(env.face("rho_face")), m_pFace(env.face("p_face")), m_exner(env.center("exner")),
          m_sst(env.columns(), env.space()), m_heat(env.columns(), env.space()), m_moisture(env.columns(), env.space()),
          m_heatEntered(env.columns(), env.space()), m_moistureEntered(env.columns(), env.space()),
          m_sensible(env.columns(), env.space()), m_latent(env.columns(), env.space()),
          m_evaporation(env.columns(), env.space()) {
        auto& latitude = env.perColumn("latitude");
        latitude.toHost();
        for (uint32_t c = 0; c < env.columns(); ++c)
            m_sst.host()[c] = moist::seaSurfaceTemperature(latitude.host()[c]);
        m_sst.toDevice();
    }

    std::string name() const override { return std::string(Settings::process); }

    void implicitStep(StepContext<Backend>& ctx, Prognostics& u) override {
        // The fluxes and, in the same launch, into the budgets dt cp h / exner0 (heat as theta: T / exner0) and
        // dt e, into the surface means the fluxes cp h, L e and e over dt.
        auto const exner = std::as_const(m_exner).view();
        ColumnTerm heat = ctx.budget.term(HeatBudget, m_heatEntered, ctx.dt * constants::cp);
        heat.divisorField = exner.data; // level 0 of each column
        heat.divisorStride = exner.stride;
        bool const cell = m_cfg.depth == SurfaceLayerDepth::Cell;
        addColumnTerms(ctx.backend, ctx.columns,
                       SurfaceFluxKernel{u.T.view(),
                                         u.q.view(),
                                         u.u.view(),
                                         u.v.view(),
                                         std::as_const(m_rho).view(),
                                         std::as_const(m_rhoFace).view(),
                                         std::as_const(m_pFace).view(),
                                         m_sst.device(),
                                         m_heat.device(),
                                         m_moisture.device(),
                                         m_heatEntered.device(),
                                         m_moistureEntered.device(),
                                         ctx.grid->dzCenter()[0],
                                         ctx.grid->centers()[0] - ctx.grid->faces()[0],
                                         ctx.dt,
                                         {m_cfg.ce, m_cfg.ch, m_cfg.gustiness, isOn(m_cfg.heat), isOn(m_cfg.moisture),
                                          isOn(m_cfg.momentum), cell}},
                       {heat, ctx.budget.term(WaterBudget, m_moistureEntered, ctx.dt),
                        m_sensible.adding(m_heat, constants::cp, ctx.dt),
                        m_latent.adding(m_moisture, moist::latentHeat, ctx.dt),
                        m_evaporation.adding(m_moisture, 1.0, ctx.dt)});
        for (auto* m : {&m_sensible, &m_latent, &m_evaporation})
            m->tick(ctx.dt);
    }

    StepCost stepCost() const override {
        // Per column, the lowest level only: T, q, u, v read and written (64 B), rho0, rho_face, p_face, SST read
        // (32 B), exner0 for the budget (8 B), two fluxes out (16 B); a sqrt and an exp (q_sat at the surface).
        return {0.0, 64.0 + 32.0 + 8.0 + 16.0, 0.0, 2.0, "lowest level of each column; sqrt and exp per column"};
    }

    bool output(std::string_view name, std::vector<double>& out) override {
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

    void restartEntries(std::vector<RestartEntry>& entries) override {
        m_sensible.restartEntries("surface_sensible", entries);
        m_latent.restartEntries("surface_latent", entries);
        m_evaporation.restartEntries("surface_evaporation", entries);
    }

private:
    Settings m_cfg;
    CenterField const& m_rho;
    FaceField const& m_rhoFace;
    FaceField const& m_pFace;
    CenterField const& m_exner;
    core::Buffer<double> m_sst, m_heat, m_moisture, m_heatEntered, m_moistureEntered;
    ColumnMean m_sensible, m_latent, m_evaporation;
};

} // namespace strata::app
