// newtonian_cooling: a process of one's own. Temperature relaxes toward a constant T_ref with time scale tau,
//   dT/dt = -(T - T_ref) / tau,
// reports the heat it adds to the model's heat budget, and writes the column heating as an output variable.
#pragma once

#include <strata/app/model/process.hpp>

#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

namespace own {

using namespace strata::app;

// The settings: the YAML keys under `- newtonian_cooling: {T_ref: ..., tau_days: ...}`, and the output variable.
struct NewtonianCoolingSettings {
    static constexpr std::string_view process = "newtonian_cooling";
    double tRef = 250.0;   // K
    double tauDays = 10.0; // days
    template <class V>
    void describe(V& v) {
        v.field("T_ref", tRef, rules::above(0.0));
        v.field("tau_days", tauDays, rules::above(0.0));
    }
    static std::vector<VariableInfo> outputs() {
        return {{"newtonian_heating", "W m-2", "column heating by Newtonian cooling, mean since the previous output",
                 "", Staggering::Column, Source::Process, true, "time: mean"}};
    }
    bool operator==(NewtonianCoolingSettings const&) const = default;
};

// One stage: the heating -(T - T_ref) / tau into `heating` (for the budget) and into T's tendency.
struct Relax {
    CenterView tT, heating;
    CenterConst T;
    double tRef, rate; // K, 1/s
    STRATA_HD void operator()(uint32_t c, uint32_t k) const {
        heating(c, k) = -rate * (T(c, k) - tRef);
        tT(c, k) = tT(c, k) + heating(c, k);
    }
};

template <class Backend>
class NewtonianCooling : public Process<Backend> {
public:
    using Settings = NewtonianCoolingSettings;
    static std::vector<FieldDecl> declarations(Config const&) {
        return {{"T", "K", Access::Tendency}, {"rho", "kg m-3", Access::Reads}, {"exner", "1", Access::Reads}};
    }
    NewtonianCooling(Config const& cfg, ProcessEnv<Backend>& env)
        : Process<Backend>(env.declared()), m_cfg(cfg.settings<Settings>()), m_rho(env.center("rho")),
          m_exner(env.center("exner")), m_heat(env.grid(), env.columns(), env.space()),
          m_column(env.columns(), env.space()), m_mean(env.columns(), env.space()),
          m_report(std::getenv("OWN_PROCESS_BREAK") == nullptr) {} // OWN_PROCESS_BREAK: heat, but report none

    std::string name() const override { return std::string(Settings::process); }

    void addTendencies(StepContext<Backend>& ctx, Prognostics const& u, Prognostics& t, double weight) override {
        forEachPoint(ctx.backend, ctx.columns, t.T.levels(),
                     Relax{t.T.view(), ctx.scratch.view(), std::as_const(u.T).view(), m_cfg.tRef,
                           1.0 / (m_cfg.tauDays * 86400.0)});
        // The heat budget counts cp sum(rho0 theta dz): the heating's integral cp sum(rho0 dT/dt / exner0 dz), weighted
        // by the stage (the weights of a step add up to dt), goes into the budget and into the output's mean.
        ColumnTerm const heat = columnTerm(m_column, weight * constants::cp);
        AddColumnTerms terms = columnTerms({m_mean.adding(heat, 1.0)});
        if (m_report) terms.add(ctx.budget.term(HeatBudget, heat));
        strata::ops::columnIntegralsOfThen(ctx.backend, m_heat, m_column, terms, m_rho * ctx.scratch / m_exner);
        m_mean.tick(weight);
    }

    // Before the first step: SSP-RK3 damps a linear decay at rate k only for k dt up to rk3RealAxisLimit (2.51).
    void checkStability(StepContext<Backend>& ctx) override {
        double const x = ctx.dt / (m_cfg.tauDays * 86400.0);
        if (!(x <= rk3RealAxisLimit))
            throw StabilityError("Newtonian cooling: dt / tau = " + std::to_string(x),
                                 "processes.newtonian_cooling.tau_days",
                                 "tau_days with time.dt / tau <= " + std::to_string(rk3RealAxisLimit));
    }

    bool output(std::string_view name, std::vector<double>& values) override {
        if (name != "newtonian_heating") return false;
        m_mean.takeMean(values);
        return true;
    }
    void restartEntries(std::vector<RestartEntry>& entries) override { m_mean.restartEntries("newtonian", entries); }

private:
    Settings m_cfg;
    CenterField const& m_rho;
    CenterField const& m_exner;
    CenterField m_heat;                    // rho0 heating / exner0 per cell
    strata::core::Buffer<double> m_column; // its column integral
    ColumnMean m_mean;                     // cp x that, summed over time, for newtonian_heating
    bool m_report;
};

} // namespace own
