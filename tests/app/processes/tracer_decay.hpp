// A process written the way a new one is: this file and one registration line (test_processes.cpp). First-order
// decay of the tracer above a height, d(tracer)/dt = -k tracer for z > above, with two settings and one output
// variable, reported to the tracer budget from its own formula.
#pragma once

#include <strata/app/model/process.hpp>

#include <string>
#include <utility>
#include <vector>

namespace strata::test {

// Off: the process leaves its loss out of the budget (a test shows the budget check then fails).
inline bool tracerDecayReports = true;

struct TracerDecaySettings {
    static constexpr std::string_view process = "tracer_decay";
    double rate = 1.0;  // 1/day
    double above = 0.0; // m: no decay at or below this height

    template <class V>
    void describe(V& v) {
        v.field("rate", rate, app::detail::atLeast(0.0));
        v.field("above", above, app::detail::atLeast(0.0));
    }
    static std::vector<app::VariableInfo> outputs() {
        return {{"tracer_decay_column", "kg m-2 s-1", "column-integrated tracer decay sum(rho0 k tracer dz)", "",
                 app::Staggering::Column, app::Source::Process}};
    }
    bool operator==(TracerDecaySettings const&) const = default;
};

struct TracerDecayTendency {
    app::CenterView tendency, loss;
    app::CenterConst tracer;
    double const* zc;
    double k, above;
    STRATA_HD void operator()(uint32_t c, uint32_t z) const {
        double const rate = zc[z] > above ? k : 0.0;
        loss(c, z) = rate * tracer(c, z);
        tendency(c, z) = tendency(c, z) - loss(c, z);
    }
};

template <class Backend>
class TracerDecay : public app::Process<Backend> {
public:
    using Settings = TracerDecaySettings;
    static std::vector<app::FieldDecl> declarations(app::Config const&) {
        return {{"tracer", "1", app::Access::Tendency}, {"rho", "kg m-3", app::Access::Reads}};
    }

    TracerDecay(app::Config const& cfg, app::ProcessEnv<Backend>& env)
        : app::Process<Backend>(env.declared()), m_cfg(cfg.settings<Settings>()), m_rho(env.center("rho")),
          m_tracer(env.center("tracer")), m_loss(env.grid(), env.columns(), env.space()),
          m_column(env.columns(), env.space()) {}

    std::string name() const override { return std::string(Settings::process); }

    void addTendencies(app::StepContext<Backend>& ctx, app::Prognostics const& u, app::Prognostics& t,
                       double weight) override {
        ops::forEachPoint(ctx.backend, ctx.columns, t.tracer.levels(),
                          TracerDecayTendency{t.tracer.view(), m_loss.view(), std::as_const(u.tracer).view(),
                                              ctx.grid->view(Backend::memSpace).zc, m_cfg.rate / 86400.0, m_cfg.above});
        // What left the column: -sum(rho0 k tracer dz), weighted by the stage.
        auto const terms = tracerDecayReports
                               ? app::columnTerms({ctx.budget.term(app::TracerBudget, m_column, -weight)})
                               : app::AddColumnTerms{};
        ops::columnIntegralsOfThen(ctx.backend, ctx.scratch, m_column, terms, m_rho * m_loss);
    }

    bool output(std::string_view name, std::vector<double>& values) override {
        if (name != "tracer_decay_column") return false;
        m_tracer.toHost();
        m_rho.toHost();
        auto const& zc = m_tracer.grid().centers();
        auto const& dz = m_tracer.grid().dzCenter();
        values.assign(m_tracer.columns(), 0.0);
        for (uint32_t c = 0; c < m_tracer.columns(); ++c)
            for (uint32_t z = 0; z < m_tracer.levels(); ++z)
                if (zc[z] > m_cfg.above)
                    values[c] += m_rho.at(c, z) * (m_cfg.rate / 86400.0) * m_tracer.at(c, z) * dz[z];
        return true;
    }

private:
    Settings m_cfg;
    app::CenterField& m_rho;
    app::CenterField& m_tracer;
    app::CenterField m_loss;
    core::Buffer<double> m_column;
};

} // namespace strata::test
