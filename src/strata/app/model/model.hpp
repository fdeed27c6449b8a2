// The column model: state, processes and the time step, for one backend.
//
// The reference state (pressure, density, Exner function: app/model/state.hpp) is computed once from the initial
// sounding. One step, as the numerical method reads:
//   1. explicit processes with SSP-RK3 (Shu-Osher form):
//        u1 = u + dt F(u),  u2 = 3/4 u + 1/4 (u1 + dt F(u1)),  u(n+1) = 1/3 u + 2/3 (u2 + dt F(u2))
//      (stage weights in the step: 1/6, 1/6, 2/3)
//   2. implicit processes (backward-Euler vertical diffusion, tridiagonal per column)
//   3. budgets: what the processes reported and what moved inside the columns go into the ledger
//      (app/model/budgets.hpp); at every output the measured contents are compared with it.
#pragma once

#include <strata/app/config.hpp>
#include <strata/app/model/budgets.hpp>
#include <strata/app/model/decomposition.hpp>
#include <strata/app/model/kernels.hpp>
#include <strata/app/model/process.hpp>
#include <strata/app/model/registry.hpp>
#include <strata/app/model/state.hpp>
#include <strata/app/processes/builtin.hpp>
#include <strata/core/comms.hpp>
#include <strata/operators/column/integrals.hpp>
#include <strata/operators/operators.hpp>

#include <chrono>
#include <cmath>
#include <functional>
#include <limits>
#include <memory>
#include <numbers>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace strata::app {

std::shared_ptr<ops::Grid const> makeVerticalGrid(VerticalGridConfig const& v);
ops::Engine engineFromChoice(EngineChoice choice);

// Initial profiles of the local columns (host arrays, written into the state by the model).
struct InitialProfiles {
    double T, u, v, q, tracer;
};
// `wind` is the configured initial wind; wind: ekman needs the Ekman depth and geostrophic wind (app/model/model.cpp).
struct WindSetting {
    double ug = 0, vg = 0, kappa = 0; // geostrophic wind (m/s) and eddy diffusivity (m2/s) of an Ekman spiral
};
InitialProfiles initialProfile(InitialConfig const& init, double zTop, double z, double latitude,
                               WindSetting const& wind = {});
// The steady Ekman spiral over a no-slip ground (u, v) at height z above it, at latitude (degrees).
std::array<double, 2> ekmanSpiral(WindSetting const& w, double z, double latitude);

// The reference state of the local columns from the initial sounding (host values written into the state).
void computeReferenceState(State& s, InitialConfig const& init, std::vector<double> const& latitude, bool uniform);

struct GlobalDiagnostics {
    double meanT = 0;                              // K, mass- and area-weighted
    std::array<double, budgetCount> content{};     // heat J m-2, water kg m-2, tracer kg m-2: area-weighted means
    std::array<double, budgetCount> residual{};    // largest column budget residual since the previous call
    std::array<double, budgetCount> runResidual{}; // largest column budget residual since t = 0
    double analyticError = 0;                      // heat-equation case: max |T - exact| (K); NaN for other cases
};

// |a - b|, for the budgets' "moved" term.
struct AbsDifference {
    STRATA_HD double operator()(double a, double b) const { return a > b ? a - b : b - a; }
};

template <class Backend>
class Model {
public:
    Model(Config const& cfg, Backend backend, core::Context const& comm, HorizontalCoords const& horizontal,
          Decomposition const& decomposition)
        : m_cfg(cfg), m_backend(backend), m_comm(comm), m_decomp(decomposition),
          m_state(makeVerticalGrid(cfg.vertical), decomposition.local, Backend::memSpace),
          m_budget(decomposition.local, Backend::memSpace), m_ledger(decomposition.local, Backend::memSpace),
          m_engine(engineFromChoice(cfg.backend.engine)), m_areaWeights(localAreaWeights(horizontal, decomposition)),
          m_column(decomposition.local, Backend::memSpace), m_mass(decomposition.local, Backend::memSpace),
          m_weighted(m_state.grid, decomposition.local, Backend::memSpace),
          m_moved(budgetCount * std::size_t{decomposition.local}, Backend::memSpace) {
        auto const lat = localLatitudes(horizontal, decomposition);
        std::copy(lat.begin(), lat.end(), m_state.latitude.host().begin());
        m_state.latitude.toDevice();
        initialise(lat);
        // diffusion form "plain": the textbook heat equation, rho0 = 1 and exner0 = 1 (only allowed alone, config.cpp)
        computeReferenceState(m_state, cfg.initial, lat,
                              cfg.enabled(DiffusionSettings::process) &&
                                  cfg.settings<DiffusionSettings>().form == DiffusionForm::Plain);
        auto const& registry = processRegistry<Backend>();
        for (auto const& name : cfg.processOrder) {
            auto const factory = registry.find(name);
            if (factory == registry.end()) // registered for the configuration, not compiled for this backend
                throw ConfigError("process '" + name + "' is not available on backend " + std::string(Backend::name),
                                  "processes." + name, "a backend the program registered the process for");
            m_processes.push_back(factory->second(cfg, m_state, m_backend));
        }
    }

    // Tests add processes of their own (e.g. one that breaks a budget on purpose); it runs after the configured ones.
    void addProcess(std::unique_ptr<Process<Backend>> p) {
        checkDeclarations(p->name(), p->fields());
        m_hasTestProcess = true;
        m_processes.push_back(std::move(p));
    }

    State const& state() const { return m_state; }
    State& state() { return m_state; } // tests set up states of their own

    // Cases with an exact solution, whose error the run reports:
    //   heat equation   T = Ts + A cos(pi z / H) exp(-K (pi / H)^2 t)   (plain diffusion alone, cosine start)
    //   Ekman spiral    the steady (u, v) of Coriolis and constant-K diffusion over a no-slip ground (started from it)
    enum class Analytic { None, HeatEquation, Ekman };
    Analytic analyticCase() const {
        auto const& d = m_cfg.settings<DiffusionSettings>();
        if (m_hasTestProcess) return Analytic::None;
        if (m_cfg.processOrder == std::vector<std::string>{"vertical_diffusion"} && d.form == DiffusionForm::Plain &&
            d.profile == DiffusionProfile::Constant && d.surfaceHeatFlux == 0.0 &&
            m_cfg.initial.temperature == InitialTemperature::Cosine)
            return Analytic::HeatEquation;
        if (m_cfg.initial.wind == InitialWind::Ekman && m_cfg.processOrder.size() == 2)
            return Analytic::Ekman; // checked by config
        return Analytic::None;
    }
    bool hasAnalyticSolution() const { return analyticCase() != Analytic::None; }

    // The largest |value - exact| over the columns (K for the heat equation, m/s for the Ekman spiral).
    double analyticError() {
        double local = 0;
        double const top = m_state.grid->faces().back(), pi = std::numbers::pi;
        auto const& zc = m_state.grid->centers();
        if (analyticCase() == Analytic::HeatEquation) {
            auto& T = m_state.now.T;
            T.toHost();
            double const decay =
                std::exp(-m_cfg.settings<DiffusionSettings>().kappa * (pi / top) * (pi / top) * m_time);
            for (uint32_t c = 0; c < T.columns(); ++c)
                for (uint32_t k = 0; k < T.levels(); ++k) {
                    double const exact =
                        m_cfg.initial.surfaceTemperature + m_cfg.initial.amplitude * std::cos(pi * zc[k] / top) * decay;
                    local = std::max(local, std::fabs(T.at(c, k) - exact));
                }
        } else {
            auto& u = m_state.now.u;
            auto& v = m_state.now.v;
            u.toHost();
            v.toHost();
            m_state.latitude.toHost();
            for (uint32_t c = 0; c < u.columns(); ++c)
                for (uint32_t k = 0; k < u.levels(); ++k) {
                    auto const exact =
                        ekmanSpiral(windSetting(), zc[k] - m_state.grid->faces().front(), m_state.latitude.host()[c]);
                    local = std::max({local, std::fabs(u.at(c, k) - exact[0]), std::fabs(v.at(c, k) - exact[1])});
                }
        }
        return m_comm.max(local); // NaN stays NaN
    }

    std::vector<std::unique_ptr<Process<Backend>>> const& processes() const { return m_processes; }
    double time() const { return m_time; }
    uint64_t stepCount() const { return m_steps; }

    // Throws StabilityError (with the limit and where it is exceeded) before any step is taken.
    void checkStability() {
        auto ctx = context();
        for (auto& p : m_processes)
            p->checkStability(ctx);
    }

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
        std::vector<PartProfile> out;
        auto const totals = [&](std::size_t part) { return part < m_profile.size() ? m_profile[part] : PartTotals{}; };
        for (std::size_t i = 0; i < m_processes.size(); ++i)
            out.push_back({m_processes[i]->name(), totals(i).launches, totals(i).seconds, m_processes[i]->stepCost(),
                           totals(i).transfers});
        // The step's own passes: u0 = u (7 fields in, 7 out), per stage the update u = u0 + b ((u - u0) + dt f)
        // with the tendency zeroed after it (u, u0, f in, u and f out).
        double const count = Prognostics::count;
        double const bytes = 16 * count + (hasExplicit() ? 3 * 40 * count : 0.0);
        out.push_back({"model", totals(m_processes.size()).launches, totals(m_processes.size()).seconds,
                       StepCost{bytes, 0, 0, 0, "u0 = u; per stage: the stage update, its tendencies zeroed"},
                       totals(m_processes.size()).transfers});
        return out;
    }
    void resetProfile() { std::fill(m_profile.begin(), m_profile.end(), PartTotals{}); }
    // On: each part of a step waits for the backend's work before and after it (core::synchronize), so that on a GPU
    // profile() holds each part's device time, not the time of its launches.
    void syncParts(bool on) { m_syncParts = on; }

    void step() {
        // A step leaves the tendencies zero (its last stage update zeroes them) and its budget terms zero (the
        // ledger takes them in). One that threw (a process's exception, caught by a caller that then goes on, e.g.
        // from a restored state) left what it had added, which would enter this step: cleared here, in that case only.
        if (m_stepUnfinished) {
            zeroTendencies();
            m_budget = BudgetTerms(m_decomp.local, Backend::memSpace);
        }
        m_stepUnfinished = true;
        auto ctx = context();
        m_profile.resize(m_processes.size() + 1);
        std::size_t const own = m_processes.size();
        PartTotals inProcesses; // this step's share of the processes, subtracted from the whole below
        auto const stepStart = std::chrono::steady_clock::now();
        uint64_t const stepLaunches = lockstep::launchCounter().load(std::memory_order_relaxed);
        uint64_t const stepTransfers = core::transferCounter().load(std::memory_order_relaxed);
        auto timed = [&](std::size_t part, auto&& work) {
            if (m_syncParts) core::synchronize(m_backend);
            auto const t0 = std::chrono::steady_clock::now();
            uint64_t const l0 = lockstep::launchCounter().load(std::memory_order_relaxed);
            uint64_t const x0 = core::transferCounter().load(std::memory_order_relaxed);
            work();
            if (m_syncParts) core::synchronize(m_backend);
            uint64_t const launches = lockstep::launchCounter().load(std::memory_order_relaxed) - l0;
            uint64_t const transfers = core::transferCounter().load(std::memory_order_relaxed) - x0;
            double const seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            m_profile[part].launches += launches;
            m_profile[part].transfers += transfers;
            m_profile[part].seconds += seconds;
            inProcesses.launches += launches;
            inProcesses.transfers += transfers;
            inProcesses.seconds += seconds;
        };
        for (std::size_t i = 0; i < m_processes.size(); ++i)
            timed(i, [&] { m_processes[i]->prepareStep(ctx); });

        Prognostics& u = m_state.now;
        Prognostics& u0 = m_state.start;
        startStep(u0, u); // u0 = u (the tendencies are zero: StartStep in kernels.hpp, and the top of step())
        double const dt = m_cfg.time.dt;
        struct StageCoefficients {
            double b, weight; // u = (1 - b) u0 + b (u + dt F(u)); the stage's weight in the step
        };
        StageCoefficients const stages[3] = {{1.0, 1.0 / 6.0}, {0.25, 1.0 / 6.0}, {2.0 / 3.0, 2.0 / 3.0}};
        double const stageTime[3] = {m_time, m_time + dt, m_time + 0.5 * dt}; // SSP-RK3's abscissae 0, 1, 1/2
        if (hasExplicit()) {
            for (int i = 0; i < 3; ++i) {
                auto const& st = stages[i];
                ctx.time = stageTime[i];
                for (std::size_t p = 0; p < m_processes.size(); ++p)
                    if (m_processes[p]->declares(Access::Tendency))
                        timed(p, [&] { m_processes[p]->addTendencies(ctx, u, m_state.tendency, dt * st.weight); });
                rkStage(u, u0, m_state.tendency, st.b, dt); // and the tendencies zeroed for the next stage
            }
        }
        ctx.time = m_time;
        for (std::size_t p = 0; p < m_processes.size(); ++p)
            if (m_processes[p]->declares(Access::Adjusts)) timed(p, [&] { m_processes[p]->implicitStep(ctx, u); });

        addToLedger();
        m_stepUnfinished = false;
        m_time += dt;
        ++m_steps;
        // The step's own work: the whole step less what its processes took.
        m_profile[own].launches +=
            lockstep::launchCounter().load(std::memory_order_relaxed) - stepLaunches - inProcesses.launches;
        m_profile[own].transfers +=
            core::transferCounter().load(std::memory_order_relaxed) - stepTransfers - inProcesses.transfers;
        m_profile[own].seconds +=
            std::chrono::duration<double>(std::chrono::steady_clock::now() - stepStart).count() - inProcesses.seconds;
    }

    GlobalDiagnostics diagnostics() {
        GlobalDiagnostics d;
        State& s = m_state;
        uint32_t const n = m_decomp.local;
        // Mass-weighted column means, then area-weighted: sums that do not depend on the decomposition.
        std::vector<double> area(m_areaWeights);
        double const totalArea = m_comm.sum(area);
        auto areaMean = [&](core::Buffer<double>& perColumn) {
            perColumn.toHost();
            std::vector<double> x(n);
            for (uint32_t c = 0; c < n; ++c)
                x[c] = perColumn.host()[c] * m_areaWeights[c];
            return m_comm.sum(x);
        };
        integrate(s.rho * s.now.T, m_column);
        integrate(s.rho * 1.0, m_mass);
        d.meanT = areaMean(m_column) / areaMean(m_mass);
        integrate(s.rho * (s.now.T / s.exner) * constants::cp, m_column);
        d.content[HeatBudget] = areaMean(m_column) / totalArea;
        integrate(s.rho * ((s.now.q + s.now.qc) + s.now.qr), m_column);
        d.content[WaterBudget] = areaMean(m_column) / totalArea;
        integrate(s.rho * s.now.tracer, m_column);
        d.content[TracerBudget] = areaMean(m_column) / totalArea;

        // The budgets: the content change since t = 0, from the differences to the initial state.
        auto const& i = s.initial;
        integrate(s.rho * ((s.now.T - i.T) / s.exner) * constants::cp, m_column);
        toLedger(HeatBudget);
        integrate(s.rho * (((s.now.q - i.q) + (s.now.qc - i.qc)) + (s.now.qr - i.qr)), m_column);
        toLedger(WaterBudget);
        integrate(s.rho * (s.now.tracer - i.tracer), m_column);
        toLedger(TracerBudget);
        double global[2 * budgetCount];
        m_ledger.toHost();
        for (int b = 0; b < budgetCount; ++b) {
            global[b] = m_ledger.intervalResidual(Budget(b));
            global[budgetCount + b] = m_ledger.runResidual(Budget(b));
        }
        m_comm.max(global); // a NaN residual on any rank stays NaN: a failure no comparison can hide
        for (int b = 0; b < budgetCount; ++b) {
            d.residual[b] = global[b];
            d.runResidual[b] = global[budgetCount + b];
        }
        d.analyticError = hasAnalyticSolution() ? analyticError() : std::numeric_limits<double>::quiet_NaN();
        return d;
    }

    // A value outside its physical range, NaN or Inf: which variable, where (global column, level) and the value.
    struct StateViolation {
        std::string variable, expected;
        uint64_t column = 0;
        uint32_t level = 0;
        double value = 0;
    };

    // The state check run after every step: one kernel finds, per column, the first variable (in the order below)
    // with a value out of its range, NaN or Inf (RangeCheck); one value per column to the host, and one reduction
    // over the ranks. Every rank gets the same answer: the first variable in the order below that is out of range,
    // in its lowest global column, at the lowest level.
    std::optional<StateViolation> checkState() {
        auto const checks = stateChecks();
        constexpr double none = std::numeric_limits<double>::infinity();
        auto body = [&](std::size_t i) {
            return RangeCheck{std::as_const(*checks[i].field).view(), checks[i].lo, checks[i].hi,
                              static_cast<double>(i), m_column.device()};
        };
        [&]<std::size_t... I>(std::index_sequence<I...>) {
            ops::columnKernel<double>(m_backend, m_decomp.local, m_state.grid->cells(), body(I)...);
        }
        (std::make_index_sequence<checkedCount()>{});
        m_column.toHost();
        double mine = none; // variable index * 2^40 + global column of this rank's first violation
        for (uint32_t c = 0; c < m_decomp.local; ++c)
            if (m_column.host()[c] < none)
                mine = std::min(mine, m_column.host()[c] * 0x1p40 + static_cast<double>(m_decomp.first + c));
        double const first = m_comm.min(mine);
        if (first == none) return std::nullopt;
        auto const index = static_cast<std::size_t>(first / 0x1p40);
        auto const& b = checks[index];
        StateViolation v{b.name, b.expected, static_cast<uint64_t>(first - static_cast<double>(index) * 0x1p40), 0, 0};
        // The rank holding that column finds the level; the others contribute -inf (a NaN value survives the max).
        double where[2] = {-none, -none};
        if (mine == first) {
            CenterField& f = *b.field;
            f.toHost();
            auto const c = static_cast<uint32_t>(v.column - m_decomp.first);
            for (uint32_t k = 0; k < f.levels(); ++k)
                if (!(f.at(c, k) >= b.lo && f.at(c, k) <= b.hi)) {
                    where[0] = k;
                    where[1] = f.at(c, k);
                    break;
                }
        }
        m_comm.max(where);
        v.level = static_cast<uint32_t>(where[0]);
        v.value = where[1];
        return v;
    }

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
        m_ledger.restartEntries(entries);
        for (auto& p : m_processes)
            p->restartEntries(entries);
        entries.push_back({"model_time", 0, [this] { return std::vector<double>{m_time}; },
                           [this](std::vector<double> const& v) { m_time = v.at(0); }});
        entries.push_back({"model_step", 0, [this] { return std::vector<double>{static_cast<double>(m_steps)}; },
                           [this](std::vector<double> const& v) { m_steps = static_cast<uint64_t>(v.at(0)); }});
        return entries;
    }

    // The area-weighted global mean of a per-column value of the local columns (the same bits on any rank count).
    double globalMean(std::vector<double> const& perColumn) const {
        std::vector<double> weighted(perColumn.size()), area(m_areaWeights);
        for (std::size_t c = 0; c < perColumn.size(); ++c)
            weighted[c] = perColumn[c] * m_areaWeights[c];
        return m_comm.sum(weighted) / m_comm.sum(area);
    }

    // The long_name of an output variable in this case, from the process that makes it (empty: none says).
    std::string outputLongName(std::string const& name) const {
        for (auto const& p : m_processes)
            if (std::string text = p->outputLongName(name); !text.empty()) return text;
        return {};
    }

    // A variable of the local columns for output, level-contiguous per column without padding (one value per column
    // for a surface variable). A process's variable is zero where the process is not enabled.
    std::vector<double> outputValues(std::string const& name) {
        VariableInfo v{};
        if (!findVariable(name, v)) throw Error("unknown output variable '" + name + "'", "output.variables");
        if (v.source == Source::Process) {
            std::vector<double> out;
            for (auto& p : m_processes)
                if (p->output(name, out)) return out;
            std::size_t const levels = v.where == Staggering::Column ? 1
                                       : v.where == Staggering::Face ? m_state.grid->cells() + 1
                                                                     : m_state.grid->cells();
            return std::vector<double>(levels * m_state.columns, 0.0);
        }
        if (v.source == Source::Diagnostic) { // theta, the only diagnostic
            ops::evaluate(m_backend, m_weighted, m_state.now.T / m_state.exner, ops::Engine::Direct);
            return hostValues(m_weighted);
        }
        if (v.where == Staggering::Face) return hostValues(*m_state.face(name));
        return hostValues(*m_state.center(name));
    }

private:
    StepContext<Backend> context() {
        StepContext<Backend> ctx{m_backend,       m_engine,        m_cfg.time.dt, m_state.grid,
                                 m_state.columns, m_state.scratch, m_budget,      m_time};
        ctx.globalMax = [this](double x) { return m_comm.max(x); };
        return ctx;
    }

    bool hasExplicit() const {
        for (auto const& p : m_processes)
            if (p->declares(Access::Tendency)) return true;
        return false;
    }

    WindSetting windSetting() const {
        auto const& coriolis = m_cfg.settings<CoriolisSettings>();
        return {coriolis.ug, coriolis.vg, m_cfg.settings<DiffusionSettings>().kappa};
    }

    void initialise(std::vector<double> const& lat) {
        auto const& zc = m_state.grid->centers();
        double const top = m_state.grid->faces().back();
        for (uint32_t c = 0; c < m_decomp.local; ++c) {
            for (uint32_t k = 0; k < zc.size(); ++k) {
                auto const init = initialProfile(m_cfg.initial, top, zc[k], lat[c], windSetting());
                m_state.now.T.at(c, k) = init.T;
                m_state.now.u.at(c, k) = init.u;
                m_state.now.v.at(c, k) = init.v;
                m_state.now.q.at(c, k) = init.q;
                m_state.now.tracer.at(c, k) = init.tracer;
            }
            m_state.surfacePressure.host()[c] = m_cfg.initial.surfacePressure;
        }
        for (auto* f : m_state.now.all())
            f->toDevice();
        m_state.surfacePressure.toDevice();
        copy(m_state.initial, m_state.now);
    }

    template <class E>
    void integrate(E const& expr, core::Buffer<double>& out) {
        ops::evaluate(m_backend, m_weighted, expr, ops::Engine::Direct);
        ops::columnIntegral(m_backend, m_weighted, out);
    }

    void toLedger(Budget b) {
        m_column.toHost();
        auto& content = m_ledger.content(b);
        std::copy(m_column.host().begin(), m_column.host().end(), content.begin());
    }

    // What changed place inside each column during the step, sum(rho0 |psi(n+1) - psi(n)| dz) per budget, into
    // m_moved (budgetCount x columns, in the backend's memory), and in the same launch the ledger's sums of the step
    // (and the step's budget terms zeroed for the next step).
    void addToLedger() {
        State& s = m_state;
        auto const& u = s.now;
        auto const& u0 = s.start;
        static_assert(HeatBudget == 0 && WaterBudget == 1 && TracerBudget == 2, "m_moved's order is the budgets'");
        ops::columnIntegralsOfThen(m_backend, m_weighted, m_moved, m_ledger.afterStep(m_budget, m_moved),
                                   s.rho * (map(AbsDifference{}, u.T, u0.T) / s.exner) * constants::cp,
                                   s.rho * ((map(AbsDifference{}, u.q, u0.q) + map(AbsDifference{}, u.qc, u0.qc)) +
                                            map(AbsDifference{}, u.qr, u0.qr)),
                                   s.rho * map(AbsDifference{}, u.tracer, u0.tracer));
    }

    void copy(Prognostics& dst, Prognostics const& src) {
        auto const to = dst.all();
        auto const from = src.all();
        for (std::size_t i = 0; i < Prognostics::count; ++i)
            forEachPoint(m_backend, to[i]->columns(), to[i]->levels(), Copy{to[i]->view(), from[i]->view()});
    }
    // One kernel each over all seven prognostic fields (kernels.hpp).
    void startStep(Prognostics& u0, Prognostics const& u) {
        constexpr uint32_t n = Prognostics::count;
        StartStep<n> k{};
        for (std::size_t i = 0; i < n; ++i) {
            k.u0[i] = u0.all()[i]->view();
            k.u[i] = u.all()[i]->view();
        }
        ops::forEachPointOfFields<n>(m_backend, u.T.columns(), u.T.levels(), k);
    }
    void zeroTendencies() { // only after a step that threw: a launch per field is no matter
        for (auto* f : m_state.tendency.all())
            ops::forEachPoint(m_backend, f->columns(), f->levels(), Fill{f->view(), 0.0});
    }
    void rkStage(Prognostics& u, Prognostics const& u0, Prognostics& f, double b, double dt) {
        constexpr uint32_t n = Prognostics::count;
        StageAll<n> k{};
        for (std::size_t i = 0; i < n; ++i) {
            k.u[i] = u.all()[i]->view();
            k.f[i] = f.all()[i]->view();
            k.u0[i] = u0.all()[i]->view();
        }
        k.b = b;
        k.dt = dt;
        ops::forEachPointOfFields<n>(m_backend, u.T.columns(), u.T.levels(), k);
    }

    struct StateCheck {
        std::string name;
        CenterField* field;
        double lo, hi;
        std::string expected;
    };
    // The catalogue's ranges (app/model/variables.hpp), or a process's wider one (Process::widenedRange).
    std::array<StateCheck, checkedCount()> stateChecks() {
        std::array<StateCheck, checkedCount()> checks;
        for (std::size_t i = 0; i < checkedCount(); ++i) {
            VariableInfo const& v = checkedVariable(i);
            checks[i] = {std::string(v.name), m_state.center(v.name), v.lo, v.hi, std::string(v.expected)};
            for (auto const& p : m_processes)
                if (auto const wider = p->widenedRange(v.name))
                    checks[i] = {checks[i].name, checks[i].field, wider->lo, wider->hi, wider->expected};
        }
        return checks;
    }

    Config const& m_cfg;
    Backend m_backend;
    core::Context const& m_comm;
    Decomposition m_decomp;
    State m_state;
    BudgetTerms m_budget;
    BudgetLedger m_ledger;
    ops::Engine m_engine;
    std::vector<double> m_areaWeights;
    core::Buffer<double> m_column, m_mass;
    CenterField m_weighted;
    core::Buffer<double> m_moved; // budgetCount x columns: what moved inside each column in the step
    std::vector<std::unique_ptr<Process<Backend>>> m_processes;
    struct PartTotals {
        uint64_t launches = 0;
        double seconds = 0;
        uint64_t transfers = 0;
    };
    std::vector<PartTotals> m_profile; // per process, then the model's own (profile())
    bool m_syncParts = false;          // syncParts()
    double m_time = 0;
    uint64_t m_steps = 0;
    bool m_hasTestProcess = false;
    bool m_stepUnfinished = false; // from the start of a step to its end: still true after a step that threw
};

} // namespace strata::app
