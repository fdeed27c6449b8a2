// Each process's tendencies of the prognostic variables, recorded for output (the output variables
// tendency_of_<var>_due_to_<process> and tendency_of_<var>: app/model/variables.hpp, findTendency).
//
// What a process did to a variable in a step, divided by dt:
//   - explicit part: the sum over the SSP-RK3 stages of (stage weight in the step: 1/6, 1/6, 2/3) x what the process
//     added to the variable's tendency in that stage: the process's share of the Runge-Kutta update
//     u(n+1) - u(n) = dt (F1/6 + F2/6 + 2 F3/3) (app/model/stepper.hpp);
//   - implicit part (implicitStep, in configuration order): (the variable after it - before it) / dt;
//   - tendency_of_<var>: (the variable after the step - before it) / dt, every process together.
// The processes' tendencies of a variable add up to its whole tendency, to rounding: each stage update and each
// implicit step rounds the stored state once (a few units in the last place of the value per step).
//
// Each output variable has a field of sums of those changes (dt x tendency) in the backend's memory and the seconds
// they cover; an output record takes their mean (cell_methods "time: mean") and starts again, as ColumnMean does for
// the surface fluxes (app/model/column_sums.hpp), and restart files carry both, so a continued run writes the same
// means. A process's share of the tendency field is the difference of the field around its addTendencies (nothing
// to subtract for the first process that adds to that variable in a stage); of the state, the difference around its
// implicitStep. Only what output.variables names is recorded: with none named the model makes no recorder and the
// step does no work for it.
#pragma once

#include <strata/app/config.hpp>
#include <strata/app/io/restart.hpp>
#include <strata/app/model/kernels.hpp>
#include <strata/app/model/process.hpp>
#include <strata/app/model/state.hpp>
#include <strata/app/model/variables.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace strata::app {

// before[i] = x[i] for i < count.
struct TendencySnapshot {
    static constexpr uint32_t capacity = Prognostics::count;
    CenterView before[capacity];
    CenterConst x[capacity];
    uint32_t count = 0;
    STRATA_HD void operator()(uint32_t c, uint32_t k) const {
        for (uint32_t i = 0; i < count; ++i)
            before[i](c, k) = x[i](c, k);
    }
};

// sum[i] += weight * (x[i] - before[i]) for i < count; x[i] alone where fromZero[i].
struct TendencyAccumulate {
    static constexpr uint32_t capacity = Prognostics::count;
    CenterView sum[capacity];
    CenterConst x[capacity], before[capacity];
    bool fromZero[capacity] = {};
    uint32_t count = 0;
    double weight = 1;
    STRATA_HD void operator()(uint32_t c, uint32_t k) const {
        for (uint32_t i = 0; i < count; ++i)
            sum[i](c, k) += weight * (fromZero[i] ? x[i](c, k) : x[i](c, k) - before[i](c, k));
    }
};

template <class Backend>
class TendencyRecorder {
public:
    // The output variables of `names` that are tendencies, checked against the processes (in the stepper's order):
    // a ConfigError naming output.variables[i] for a process that is not enabled, or one that neither adds a tendency
    // to the variable nor adjusts it.
    TendencyRecorder(Backend backend, State const& state, std::vector<std::string> const& names,
                     std::vector<std::unique_ptr<Process<Backend>>> const& processes)
        : m_backend(backend), m_explicit(processes.size()), m_implicit(processes.size()) {
        for (std::size_t n = 0; n < names.size(); ++n) {
            auto const tendency = findTendency(names[n]);
            if (!tendency) continue;
            std::size_t const o = m_outputs.size();
            m_outputs.push_back(std::make_unique<Output>(*tendency, state));
            if (tendency->process.empty()) {
                m_totals.push_back(o);
                continue;
            }
            std::string const where = "output.variables[" + std::to_string(n) + "]";
            auto const p = std::find_if(processes.begin(), processes.end(),
                                        [&](auto const& q) { return q->name() == tendency->process; });
            if (p == processes.end()) {
                std::string enabled;
                for (auto const& q : processes)
                    enabled.append(enabled.empty() ? "" : ", ").append(q->name());
                throw ConfigError(std::string("'")
                                      .append(names[n])
                                      .append("' is a tendency due to '")
                                      .append(tendency->process)
                                      .append("', which is not enabled"),
                                  where,
                                  std::string("a tendency due to an enabled process (").append(enabled).append(")"));
            }
            std::size_t const index = static_cast<std::size_t>(p - processes.begin());
            std::string const variable(prognostic(tendency->variable).name);
            bool found = false;
            for (FieldDecl const& d : (*p)->fields()) {
                if (d.name != variable || d.access == Access::Reads) continue;
                found = true;
                if (d.access == Access::Adjusts) {
                    m_implicit[index].push_back({o, tendency->variable, false});
                    continue;
                }
                bool const first = std::none_of(processes.begin(), p, [&](auto const& q) {
                    return std::any_of(q->fields().begin(), q->fields().end(), [&](FieldDecl const& e) {
                        return e.name == variable && e.access == Access::Tendency;
                    });
                });
                m_explicit[index].push_back({o, tendency->variable, first});
            }
            if (!found) {
                std::string changes;
                for (FieldDecl const& d : (*p)->fields())
                    if (d.access != Access::Reads) changes.append(changes.empty() ? "" : ", ").append(d.name);
                throw ConfigError(std::string("'")
                                      .append(names[n])
                                      .append("': process '")
                                      .append(tendency->process)
                                      .append("' neither adds a tendency to '")
                                      .append(variable)
                                      .append("' nor adjusts it"),
                                  where,
                                  std::string("a variable the process changes (")
                                      .append(changes.empty() ? "none" : changes)
                                      .append(")"));
            }
        }
        for (auto const* watches : {&m_explicit, &m_implicit})
            for (auto const& w : *watches)
                for (Watch const& one : w)
                    if (!m_before[one.variable])
                        m_before[one.variable] = std::make_unique<CenterField>(state.grid, state.columns, state.space);
    }

    // Around process p's addTendencies in a stage; `weight` = dt x the stage's weight in the step.
    void beforeTendencies(std::size_t p, Prognostics const& tendency) {
        if (p < m_explicit.size()) snapshot(m_explicit[p], tendency);
    }
    void afterTendencies(std::size_t p, Prognostics const& tendency, double weight) {
        if (p < m_explicit.size()) accumulate(m_explicit[p], tendency, weight);
    }
    // Around process p's implicitStep.
    void beforeImplicit(std::size_t p, Prognostics const& u) {
        if (p < m_implicit.size()) snapshot(m_implicit[p], u);
    }
    void afterImplicit(std::size_t p, Prognostics const& u) {
        if (p < m_implicit.size()) accumulate(m_implicit[p], u, 1.0);
    }
    // After the step's last change of the state: the whole step's changes, and the seconds every sum covers.
    void endStep(Prognostics const& now, Prognostics const& start, double dt) {
        TendencyAccumulate k{};
        for (std::size_t o : m_totals) {
            Output& out = *m_outputs[o];
            k.sum[k.count] = out.sum.view();
            k.x[k.count] = now.all()[out.variable]->view();
            k.before[k.count] = start.all()[out.variable]->view();
            ++k.count;
        }
        if (k.count > 0) ops::forEachPoint(m_backend, now.T.columns(), now.T.levels(), k);
        for (auto& out : m_outputs)
            out->seconds += dt;
    }

    // The mean tendency of an output variable since the previous call (0 before any time has passed),
    // level-contiguous per column, and a fresh start. False: not one of the recorded names.
    bool takeMean(std::string const& name, std::vector<double>& values) {
        for (auto& out : m_outputs) {
            if (out->name != name) continue;
            values = hostValues(out->sum);
            for (double& v : values)
                v = out->seconds > 0 ? v / out->seconds : 0.0;
            ops::forEachPoint(m_backend, out->sum.columns(), out->sum.levels(), Fill{out->sum.view(), 0.0});
            out->seconds = 0;
            return true;
        }
        return false;
    }

    // For restart files: each output's sums (<name>_sum, per level of each column) and the seconds they cover.
    void restartEntries(std::vector<RestartEntry>& entries) {
        for (auto& held : m_outputs) {
            Output* out = held.get();
            CenterField* f = &out->sum;
            uint32_t const n = f->levels();
            entries.push_back({out->name + "_sum", n, [f] { return hostValues(*f); },
                               [f, n](std::vector<double> const& v) {
                                   for (uint32_t c = 0; c < f->columns(); ++c)
                                       std::copy(v.begin() + std::size_t{c} * n, v.begin() + std::size_t{c + 1} * n,
                                                 f->column(c).begin());
                                   f->toDevice();
                               }});
            entries.push_back({out->name + "_seconds", 0, [out] { return std::vector<double>{out->seconds}; },
                               [out](std::vector<double> const& v) { out->seconds = v.at(0); }});
        }
    }

private:
    struct Output {
        std::string name;
        std::size_t variable;
        CenterField sum; // dt x tendency, summed over the steps since the last record
        double seconds = 0;
        Output(TendencyVariable const& v, State const& s)
            : name(v.name), variable(v.variable), sum(s.grid, s.columns, s.space) {}
    };
    struct Watch {
        std::size_t output, variable;
        bool fromZero; // the process is the first to add to the variable's tendency in a stage: nothing to subtract
    };

    void snapshot(std::vector<Watch> const& watches, Prognostics const& x) {
        TendencySnapshot k{};
        for (Watch const& w : watches)
            if (!w.fromZero) {
                k.before[k.count] = m_before[w.variable]->view();
                k.x[k.count] = x.all()[w.variable]->view();
                ++k.count;
            }
        if (k.count > 0) ops::forEachPoint(m_backend, x.T.columns(), x.T.levels(), k);
    }
    void accumulate(std::vector<Watch> const& watches, Prognostics const& x, double weight) {
        TendencyAccumulate k{};
        k.weight = weight;
        for (Watch const& w : watches) {
            k.sum[k.count] = m_outputs[w.output]->sum.view();
            k.x[k.count] = x.all()[w.variable]->view();
            if (!w.fromZero) k.before[k.count] = std::as_const(*m_before[w.variable]).view();
            k.fromZero[k.count] = w.fromZero;
            ++k.count;
        }
        if (k.count > 0) ops::forEachPoint(m_backend, x.T.columns(), x.T.levels(), k);
    }

    Backend m_backend;
    std::vector<std::unique_ptr<Output>> m_outputs;
    std::vector<std::size_t> m_totals;                                     // outputs of the whole step
    std::vector<std::vector<Watch>> m_explicit;                            // per process: outputs of its addTendencies
    std::vector<std::vector<Watch>> m_implicit;                            // per process: outputs of its implicitStep
    std::array<std::unique_ptr<CenterField>, Prognostics::count> m_before; // a variable before a process's call
};

} // namespace strata::app
