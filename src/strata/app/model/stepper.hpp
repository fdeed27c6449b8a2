// The time step, as the numerical method reads:
//   1. each process's preparation (diffusivities, velocities: what the whole step shares);
//   2. explicit processes with SSP-RK3 in Shu-Osher form,
//        u1 = u + dt F(u),   u2 = 3/4 u + 1/4 (u1 + dt F(u1)),   u(n+1) = 1/3 u + 2/3 (u2 + dt F(u2)),
//      written u_s = u0 + b_s ((u_{s-1} - u0) + dt F(u_{s-1})) with b = 1, 1/4, 2/3, at the stage times t, t + dt,
//      t + dt/2 (stage weights in the step 1/6, 1/6, 2/3: what a process reports to the budgets per stage);
//   3. implicit processes and adjustments, in the configuration's order.
// Every call of a process goes through call(), which times it and counts its kernel launches and host <-> device
// copies: processes hold physics only. The stepper calls addTendencies only for a process that declares a tendency,
// implicitStep only for one that declares an adjustment (app/model/process.hpp). With checkWrites(true)
// (STRATA_CHECK_PROCESSES=1 for a run) it also compares, byte for byte, the tendencies a process does not declare
// around its addTendencies and the prognostic variables it does not declare it adjusts around its implicitStep, and
// throws an Error naming the process and the variable it changed: a test of the declarations, costing two host
// copies of those fields per call. (prepareStep and the reference fields are not compared.)
// With a TendencyRecorder (record(); the model makes one when output.variables names a tendency) each process's part
// of the step is recorded around its calls, and the whole step's change at its end (app/model/tendencies.hpp);
// without one the step does nothing for it.
#pragma once

#include <strata/app/model/kernels.hpp>
#include <strata/app/model/process.hpp>
#include <strata/app/model/tendencies.hpp>
#include <strata/core/backend.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace strata::app {

// A part of the step's time, launches and copies (sums over steps).
struct PartTotals {
    uint64_t launches = 0;
    double seconds = 0;
    uint64_t transfers = 0;

    static PartTotals now() {
        return {lockstep::launchCounter().load(std::memory_order_relaxed),
                std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(),
                core::transferCounter().load(std::memory_order_relaxed)};
    }
    PartTotals since(PartTotals const& start) const {
        return {launches - start.launches, seconds - start.seconds, transfers - start.transfers};
    }
    PartTotals& operator+=(PartTotals const& o) {
        launches += o.launches;
        seconds += o.seconds;
        transfers += o.transfers;
        return *this;
    }
    PartTotals& operator-=(PartTotals const& o) {
        launches -= o.launches;
        seconds -= o.seconds;
        transfers -= o.transfers;
        return *this;
    }
};

template <class Backend>
class Stepper {
public:
    using Processes = std::vector<std::unique_ptr<Process<Backend>>>;

    explicit Stepper(Backend backend) : m_backend(backend) {}

    Processes& processes() { return m_processes; }
    Processes const& processes() const { return m_processes; }

    bool hasExplicit() const {
        for (auto const& p : m_processes)
            if (p->declares(Access::Tendency)) return true;
        return false;
    }

    // One step of the state from ctx.time; `finish` is the step's own closing work (the budget ledger).
    template <class Finish>
    void step(StepContext<Backend>& ctx, State& s, Finish&& finish) {
        PartTotals const start = PartTotals::now();
        m_inProcesses = {};
        m_totals.resize(m_processes.size() + 1);
        double const t = ctx.time, dt = ctx.dt;
        for (std::size_t p = 0; p < m_processes.size(); ++p)
            call(p, [&] { m_processes[p]->prepareStep(ctx); });

        struct Stage {
            double b, weight, time; // u = u0 + b ((u - u0) + dt F(u)); weight in the step; time in units of dt
        };
        static constexpr Stage ssprk3[3] = {{1.0, 1.0 / 6.0, 0.0}, {0.25, 1.0 / 6.0, 1.0}, {2.0 / 3.0, 2.0 / 3.0, 0.5}};
        startStep(s.start, s.now); // u0 = u (the tendencies are zero: every stage update zeroes them)
        if (hasExplicit())
            for (Stage const& stage : ssprk3) {
                ctx.time = t + stage.time * dt;
                addTendencies(ctx, s.now, s.tendency, dt * stage.weight);
                rkStage(s.now, s.start, s.tendency, stage.b, dt); // and the tendencies zeroed for the next stage
            }
        ctx.time = t;
        for (std::size_t p = 0; p < m_processes.size(); ++p)
            if (m_processes[p]->declares(Access::Adjusts)) {
                if (m_recorder) m_recorder->beforeImplicit(p, s.now);
                checked(p, Access::Adjusts, s.now, [&] { m_processes[p]->implicitStep(ctx, s.now); });
                if (m_recorder) m_recorder->afterImplicit(p, s.now);
            }
        if (m_recorder) m_recorder->endStep(s.now, s.start, dt);
        finish();

        PartTotals own = PartTotals::now().since(start); // the step's own work: the whole step less its processes'
        own -= m_inProcesses;
        m_totals.back() += own;
    }

    // Every process's stability check, before the first step (throws StabilityError).
    void checkStability(StepContext<Backend>& ctx) {
        for (auto& p : m_processes)
            p->checkStability(ctx);
    }

    // The tendencies zeroed: only after a step that threw (a launch per field is no matter then).
    void zeroTendencies(Prognostics& tendency) {
        for (auto* f : tendency.all())
            ops::forEachPoint(m_backend, f->columns(), f->levels(), Fill{f->view(), 0.0});
    }

    // Totals per process, then the step's own ("model"), since the start or reset().
    std::vector<PartTotals> const& totals() const { return m_totals; }
    void reset() { std::fill(m_totals.begin(), m_totals.end(), PartTotals{}); }
    // On: each call waits for the backend's work before and after it, so that on a GPU the totals hold each part's
    // device time, not the time of its launches.
    void syncParts(bool on) { m_syncParts = on; }
    void checkWrites(bool on) { m_checkWrites = on; }
    // Each process's tendencies recorded into `recorder` from the next step on (nullptr: none).
    void record(TendencyRecorder<Backend>* recorder) { m_recorder = recorder; }

private:
    template <class Work>
    void call(std::size_t part, Work&& work) {
        if (m_syncParts) core::synchronize(m_backend);
        PartTotals const start = PartTotals::now();
        work();
        if (m_syncParts) core::synchronize(m_backend);
        PartTotals const spent = PartTotals::now().since(start);
        m_totals[part] += spent;
        m_inProcesses += spent;
    }

    void addTendencies(StepContext<Backend>& ctx, Prognostics const& u, Prognostics& tendency, double weight) {
        for (std::size_t p = 0; p < m_processes.size(); ++p)
            if (m_processes[p]->declares(Access::Tendency)) {
                if (m_recorder) m_recorder->beforeTendencies(p, tendency);
                checked(p, Access::Tendency, tendency,
                        [&] { m_processes[p]->addTendencies(ctx, u, tendency, weight); });
                if (m_recorder) m_recorder->afterTendencies(p, tendency, weight);
            }
    }

    // call(), and with checkWrites on, the fields of `fields` the process does not declare with `access` compared
    // bit for bit before and after.
    template <class Work>
    void checked(std::size_t p, Access access, Prognostics& fields, Work&& work) {
        if (!m_checkWrites) return call(p, work);
        auto const& declared = m_processes[p]->fields();
        std::vector<std::pair<std::size_t, std::vector<double>>> before;
        for (std::size_t i = 0; i < Prognostics::count; ++i)
            if (std::none_of(declared.begin(), declared.end(),
                             [&](FieldDecl const& d) { return d.access == access && d.name == prognostic(i).name; }))
                before.emplace_back(i, hostValues(*fields.all()[i]));
        call(p, work);
        for (auto const& [i, values] : before)
            if (std::vector<double> const after = hostValues(*fields.all()[i]);
                std::memcmp(after.data(), values.data(), values.size() * sizeof(double)) != 0) // bits: NaN, -0
                throw Error("process '" + m_processes[p]->name() + "' changed " +
                                (access == Access::Tendency ? "the tendency of '" : "'") +
                                std::string(prognostic(i).name) + "', which its fields() does not declare",
                            "processes." + m_processes[p]->name(),
                            std::string("every variable a process changes declared (") + accessText(access) + ")");
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

    Backend m_backend;
    Processes m_processes;
    std::vector<PartTotals> m_totals; // per process, then the step's own
    PartTotals m_inProcesses;         // the current step's share of the processes
    bool m_syncParts = false;
    bool m_checkWrites = false;
    TendencyRecorder<Backend>* m_recorder = nullptr;
};

} // namespace strata::app
