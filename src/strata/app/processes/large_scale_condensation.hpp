// Large-scale condensation of the simple-physics suite (Reed & Jablonowski 2012, "RJ12", section 2c). It acts after
// the explicit part of a step, in process order, and reports to the budgets what left each column (the rain) and the
// heat it released, computed from its own formulas.
#pragma once

#include <strata/app/model/process.hpp>
#include <strata/app/model/thermodynamics.hpp>
#include <strata/app/processes/detail/precipitation.hpp>

#include <string>
#include <utility>
#include <vector>

namespace strata::app {

struct CondensationSettings : NoSettings<CondensationSettings> {
    static constexpr std::string_view process = "large_scale_condensation";
    static std::vector<VariableInfo> outputs() { return {precipitationFluxVariable}; }
    // Kessler and large-scale condensation each bring the air back to saturation on their own.
    void check(Config const& c) const {
        if (c.enabled("kessler"))
            detail::failConfig("processes", "both kessler and large_scale_condensation",
                               "one of the two: each brings the air back to saturation on its own");
    }
};

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
    using Settings = CondensationSettings;
    static std::vector<FieldDecl> declarations(Config const&) {
        return {{"T", "K", Access::Adjusts},
                {"q", "kg kg-1", Access::Adjusts},
                {"p", "Pa", Access::Reads},
                {"rho", "kg m-3", Access::Reads},
                {"exner", "1", Access::Reads}};
    }

    LargeScaleCondensation(Config const&, ProcessEnv<Backend>& env)
        : Process<Backend>(env.declared()), m_p(env.center("p")), m_rho(env.center("rho")),
          m_exner(env.center("exner")), m_condensed(env.grid(), env.columns(), env.space()),
          m_weighted(env.grid(), env.columns(), env.space()), m_columns(2 * env.columns(), env.space()),
          m_precipitation(env.columns(), env.space()) {}

    std::string name() const override { return std::string(Settings::process); }

    void implicitStep(StepContext<Backend>& ctx, Prognostics& u) override {
        forEachPoint(ctx.backend, ctx.columns, u.T.levels(),
                     CondensationKernel{u.T.view(), u.q.view(), m_condensed.view(), std::as_const(m_p).view()});
        // What fell out: the rain sum(rho0 dq dz) leaves the water budget (-rain) and enters the precipitation mean
        // as the rate rain / dt over dt; the heat L sum(rho0 dq / exner0 dz) is released. Both integrals and their
        // terms in one launch.
        ColumnTerm heat = ctx.budget.term(HeatBudget, m_columns, moist::latentHeat);
        heat.offset = ctx.columns; // the second integral
        ops::columnIntegralsOfThen(ctx.backend, m_weighted, m_columns,
                                   columnTerms({ctx.budget.term(WaterBudget, m_columns, -1.0),
                                                m_precipitation.adding(m_columns, 1.0, ctx.dt, ctx.dt), heat}),
                                   m_rho * m_condensed, m_rho * m_condensed / m_exner);
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

    bool output(std::string_view name, std::vector<double>& out) override {
        if (name != "precipitation_flux") return false;
        m_precipitation.takeMean(out);
        return true;
    }

    void restartEntries(std::vector<RestartEntry>& entries) override {
        m_precipitation.restartEntries("condensation_precipitation", entries);
    }

private:
    CenterField const& m_p;
    CenterField const& m_rho;
    CenterField const& m_exner;
    CenterField m_condensed, m_weighted;
    core::Buffer<double> m_columns; // the rain and the heat integrals
    ColumnMean m_precipitation;     // kg m-2 s-1
};

} // namespace strata::app
