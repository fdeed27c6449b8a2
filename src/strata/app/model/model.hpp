// The column model for one backend: its state, its processes and the step, what it measures of itself, and what it
// writes (output variables, restart entries). The parts are their own headers:
//   app/model/stepper.hpp       the step as the method reads (SSP-RK3 stages, implicit processes), with every process
//                               call timed and counted
//   app/model/diagnostics.hpp   the budget ledger, global means, the state check
//   app/model/analytic.hpp      the analytic solutions a configuration can name
//   app/model/tendencies.hpp    each process's tendencies, recorded when output.variables names them
// The reference state (pressure, density, Exner function: app/model/state.hpp) is computed once from the initial
// sounding.
#pragma once

#include <strata/app/config.hpp>
#include <strata/app/io/sounding.hpp>
#include <strata/app/model/analytic.hpp>
#include <strata/app/model/decomposition.hpp>
#include <strata/app/model/diagnostics.hpp>
#include <strata/app/model/process.hpp>
#include <strata/app/model/registry.hpp>
#include <strata/app/model/state.hpp>
#include <strata/app/model/stepper.hpp>
#include <strata/app/model/tendencies.hpp>
#include <strata/app/processes/builtin.hpp>
#include <strata/core/comms.hpp>

#include <algorithm>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace strata::app {

std::shared_ptr<ops::Grid const> makeVerticalGrid(VerticalGridConfig const& v);
ops::Engine engineFromChoice(EngineChoice choice);

// Initial profiles of the local columns (host arrays, written into the state by the model).
struct InitialProfiles {
    double T, u, v, q, tracer;
    double qc = 0, qr = 0;
};
// The analytic profiles of initial_conditions (docs/config.md has the formulas). `wind` is the configured initial
// wind; wind: ekman needs the Ekman depth and geostrophic wind (app/model/model.cpp).
InitialProfiles initialProfile(InitialConfig const& init, double zTop, double z, double latitude,
                               WindSetting const& wind = {});

// The initial state of the configuration at any height of the column: the analytic profiles, or the sounding
// (initial_conditions.sounding, read once here, app/io/sounding.hpp) interpolated linearly in height. The
// constructor throws ConfigError for a sounding that is unreadable, wrong or does not cover the grid.
class InitialState {
public:
    InitialState(Config const& cfg, ops::Grid const& grid);
    InitialProfiles at(double z, double latitude) const;
    double surfacePressure() const { return m_init.surfacePressure; }

private:
    InitialConfig m_init;
    WindSetting m_wind;
    double m_top;
    std::optional<Sounding> m_sounding;
};

// The reference state of the local columns from the initial sounding (host values written into the state).
void computeReferenceState(State& s, InitialState const& initial, std::vector<double> const& latitude, bool uniform);

template <class Backend>
class Model {
public:
    Model(Config const& cfg, Backend backend, core::Context const& comm, HorizontalCoords const& horizontal,
          Decomposition const& decomposition)
        : m_cfg(cfg), m_backend(backend), m_comm(comm), m_decomp(decomposition),
          m_state(makeVerticalGrid(cfg.vertical), decomposition.local, Backend::memSpace),
          m_engine(engineFromChoice(cfg.backend.engine)),
          m_diagnostics(backend, comm, decomposition, localAreaWeights(horizontal, decomposition), m_state.grid),
          m_stepper(backend), m_analytic(makeAnalyticSolution(cfg)) {
        auto const lat = localLatitudes(horizontal, decomposition);
        std::copy(lat.begin(), lat.end(), m_state.latitude.host().begin());
        m_state.latitude.toDevice();
        InitialState const initial(cfg, *m_state.grid);
        initialise(initial, lat);
        // diffusion form "plain": the textbook heat equation, rho0 = 1 and exner0 = 1 (only allowed alone, config.cpp)
        computeReferenceState(m_state, initial, lat,
                              cfg.enabled(DiffusionSettings::process) &&
                                  cfg.settings<DiffusionSettings>().form == DiffusionForm::Plain);
        auto const& registry = processRegistry<Backend>();
        for (auto const& name : cfg.processOrder) {
            auto const factory = registry.find(name);
            if (factory == registry.end()) // registered for the configuration, not compiled for this backend
                throw ConfigError("process '" + name + "' is not available on backend " + std::string(Backend::name),
                                  "processes." + name, "a backend the program registered the process for");
            m_stepper.processes().push_back(factory->second(cfg, m_state, m_backend));
        }
        // The tendencies output.variables names, checked against the processes (a ConfigError), and recorded.
        if (std::any_of(cfg.output.variables.begin(), cfg.output.variables.end(),
                        [](std::string const& name) { return findTendency(name).has_value(); })) {
            m_tendencies = std::make_unique<TendencyRecorder<Backend>>(backend, m_state, cfg.output.variables,
                                                                       m_stepper.processes());
            m_stepper.record(m_tendencies.get());
        }
    }

    // The processes hold references into the state: a Model stays where it was made.
    Model(Model const&) = delete;
    Model& operator=(Model const&) = delete;

    // Tests add processes of their own (e.g. one that breaks a budget on purpose); it runs after the configured ones.
    // The case's analytic solution is then no longer the model's.
    void addProcess(std::unique_ptr<Process<Backend>> p) {
        checkDeclarations(p->name(), p->fields());
        m_analytic.reset();
        m_stepper.processes().push_back(std::move(p));
    }

    State const& state() const { return m_state; }
    State& state() { return m_state; } // tests set up states of their own
    std::vector<std::unique_ptr<Process<Backend>>> const& processes() const { return m_stepper.processes(); }
    double time() const { return m_time; }
    uint64_t stepCount() const { return m_steps; }

    // The configuration's analytic solution (analytic_solution), or nullptr.
    AnalyticSolution const* analytic() const { return m_analytic.get(); }
    // The largest |value - exact| over every rank's columns; NaN without an analytic solution (and NaN stays NaN).
    double analyticError() {
        if (!m_analytic) return std::numeric_limits<double>::quiet_NaN();
        return m_comm.max(m_analytic->localError(m_state, m_time));
    }

    // Throws StabilityError (with the limit and where it is exceeded) before any step is taken.
    void checkStability() {
        auto ctx = context();
        m_stepper.checkStability(ctx);
    }

    void step() {
        // A step leaves the tendencies zero (its last stage update zeroes them) and its budget terms zero (the
        // ledger takes them in). One that threw (a process's exception, caught by a caller that then goes on, e.g.
        // from a restored state) left what it had added, which would enter this step: cleared here, in that case only.
        if (m_stepUnfinished) {
            m_stepper.zeroTendencies(m_state.tendency);
            m_diagnostics.dropStepTerms();
        }
        m_stepUnfinished = true;
        auto ctx = context();
        m_stepper.step(ctx, m_state, [&] { m_diagnostics.afterStep(m_state); });
        m_stepUnfinished = false;
        m_time += m_cfg.time.dt;
        ++m_steps;
    }

    GlobalDiagnostics diagnostics() {
        GlobalDiagnostics d = m_diagnostics.measure(m_state);
        d.analyticError = analyticError();
        return d;
    }
    std::optional<StateViolation> checkState() { return m_diagnostics.checkState(m_state, processes()); }
    double globalMean(std::vector<double> const& perColumn) const { return m_diagnostics.globalMean(perColumn); }

    // Where a step's time, kernel launches and host <-> device copies go: one entry per process (its prepareStep,
    // addTendencies and implicitStep together) and a last one, "model", for the step's own work (copies, zeroing,
    // Runge-Kutta stages, the budget ledger), each with its share of the cost model (StepCost). Sums over the steps
    // since the model was made or resetProfile() was called. Launches are synchronous on the CPU backends; on Cuda a
    // part's seconds count what the host waited for.
    struct PartProfile {
        std::string name;
        uint64_t launches = 0;
        double seconds = 0;
        StepCost cost;
        uint64_t transfers = 0; // host <-> device copies (core::transferCounter)
    };
    std::vector<PartProfile> profile() const {
        auto const& all = m_stepper.totals();
        auto const totals = [&](std::size_t part) { return part < all.size() ? all[part] : PartTotals{}; };
        std::vector<PartProfile> out;
        auto const& processes = m_stepper.processes();
        for (std::size_t i = 0; i < processes.size(); ++i)
            out.push_back({processes[i]->name(), totals(i).launches, totals(i).seconds, processes[i]->stepCost(),
                           totals(i).transfers});
        // The step's own passes: u0 = u (7 fields in, 7 out), per stage the update u = u0 + b ((u - u0) + dt f)
        // with the tendency zeroed after it (u, u0, f in, u and f out).
        double const count = Prognostics::count;
        double const bytes = 16 * count + (m_stepper.hasExplicit() ? 3 * 40 * count : 0.0);
        auto const own = totals(processes.size());
        out.push_back({"model", own.launches, own.seconds,
                       StepCost{bytes, 0, 0, 0, "u0 = u; per stage: the stage update, its tendencies zeroed"},
                       own.transfers});
        return out;
    }
    void resetProfile() { m_stepper.reset(); }
    // On: each part of a step waits for the backend's work before and after it (core::synchronize), so that on a GPU
    // profile() holds each part's device time, not the time of its launches.
    void syncParts(bool on) { m_stepper.syncParts(on); }
    // On: every process call is checked against its declarations (Stepper::checkWrites; STRATA_CHECK_PROCESSES=1).
    void checkWrites(bool on) { m_stepper.checkWrites(on); }

    // Everything a continued run needs (app/io/restart.hpp): the prognostic fields, the budget ledger, the processes'
    // running means, the time and the step count. The reference state and the initial fields are recomputed from the
    // configuration, which a restart must share.
    std::vector<RestartEntry> restartEntries() {
        std::vector<RestartEntry> entries;
        auto const fields = m_state.now.all();
        for (std::size_t i = 0; i < Prognostics::count; ++i) {
            CenterField* f = fields[i];
            uint32_t const n = f->levels();
            entries.push_back({std::string(prognostic(i).name), n, [f] { return hostValues(*f); },
                               [f, n](std::vector<double> const& v) {
                                   for (uint32_t c = 0; c < f->columns(); ++c)
                                       std::copy(v.begin() + std::size_t{c} * n, v.begin() + std::size_t{c + 1} * n,
                                                 f->column(c).begin());
                                   f->toDevice();
                               }});
        }
        m_diagnostics.restartEntries(entries);
        for (auto& p : m_stepper.processes())
            p->restartEntries(entries);
        if (m_tendencies) m_tendencies->restartEntries(entries);
        entries.push_back({"model_time", 0, [this] { return std::vector<double>{m_time}; },
                           [this](std::vector<double> const& v) { m_time = v.at(0); }});
        entries.push_back({"model_step", 0, [this] { return std::vector<double>{static_cast<double>(m_steps)}; },
                           [this](std::vector<double> const& v) { m_steps = static_cast<uint64_t>(v.at(0)); }});
        return entries;
    }

    // The long_name of an output variable in this case, from the process that makes it (empty: none says).
    std::string outputLongName(std::string const& name) const {
        for (auto const& p : m_stepper.processes())
            if (std::string text = p->outputLongName(name); !text.empty()) return text;
        return {};
    }

    // A variable of the local columns for output, level-contiguous per column without padding (one value per column
    // for a surface variable), from where the catalogue says it comes from. A process's variable is zero where the
    // process is not enabled.
    std::vector<double> outputValues(std::string const& name) {
        if (std::vector<double> out; m_tendencies && m_tendencies->takeMean(name, out)) return out;
        VariableInfo v{};
        if (!findVariable(name, v)) throw Error("unknown output variable '" + name + "'", "output.variables");
        if (v.source == Source::Process) {
            std::vector<double> out;
            for (auto& p : m_stepper.processes())
                if (p->output(name, out)) return out;
            std::size_t const levels = v.where == Staggering::Column ? 1
                                       : v.where == Staggering::Face ? m_state.grid->cells() + 1
                                                                     : m_state.grid->cells();
            return std::vector<double>(levels * m_state.columns, 0.0);
        }
        if (v.source == Source::Diagnostic) { // theta, the only diagnostic; the scratch field is free between steps
            ops::evaluate(m_backend, m_state.scratch, m_state.now.T / m_state.exner, ops::Engine::Direct);
            return hostValues(m_state.scratch);
        }
        if (v.where == Staggering::Face) return hostValues(*m_state.face(name));
        return hostValues(*m_state.center(name));
    }

private:
    StepContext<Backend> context() {
        StepContext<Backend> ctx{m_backend,
                                 m_engine,
                                 m_cfg.time.dt,
                                 m_state.grid,
                                 m_state.columns,
                                 m_state.scratch,
                                 m_diagnostics.budgetTerms(),
                                 m_time};
        ctx.globalMax = [this](double x) { return m_comm.max(x); };
        return ctx;
    }

    void initialise(InitialState const& initial, std::vector<double> const& lat) {
        auto const& zc = m_state.grid->centers();
        for (uint32_t c = 0; c < m_decomp.local; ++c) {
            for (uint32_t k = 0; k < zc.size(); ++k) {
                auto const init = initial.at(zc[k], lat[c]);
                m_state.now.T.at(c, k) = init.T;
                m_state.now.u.at(c, k) = init.u;
                m_state.now.v.at(c, k) = init.v;
                m_state.now.q.at(c, k) = init.q;
                m_state.now.qc.at(c, k) = init.qc;
                m_state.now.qr.at(c, k) = init.qr;
                m_state.now.tracer.at(c, k) = init.tracer;
            }
            m_state.surfacePressure.host()[c] = m_cfg.initial.surfacePressure;
        }
        for (auto* f : m_state.now.all())
            f->toDevice();
        m_state.surfacePressure.toDevice();
        copy(m_state.initial, m_state.now);
    }

    void copy(Prognostics& dst, Prognostics const& src) {
        auto const to = dst.all();
        auto const from = src.all();
        for (std::size_t i = 0; i < Prognostics::count; ++i)
            forEachPoint(m_backend, to[i]->columns(), to[i]->levels(), Copy{to[i]->view(), from[i]->view()});
    }

    Config const& m_cfg;
    Backend m_backend;
    core::Context const& m_comm;
    Decomposition m_decomp;
    State m_state;
    ops::Engine m_engine;
    Diagnostics<Backend> m_diagnostics;
    Stepper<Backend> m_stepper;
    std::unique_ptr<AnalyticSolution> m_analytic;
    std::unique_ptr<TendencyRecorder<Backend>> m_tendencies; // only when output.variables names a tendency
    double m_time = 0;
    uint64_t m_steps = 0;
    bool m_stepUnfinished = false; // from the start of a step to its end: still true after a step that threw
};

} // namespace strata::app
