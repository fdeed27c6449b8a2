// The column model: state, processes and the time step, for one backend.
//
// One step, as the numerical method reads:
//   1. diagnose pressure (hydrostatic, from T and the surface pressure), density and Exner function; freeze them
//   2. explicit processes with SSP-RK3 (Shu-Osher form):
//        u1 = u + dt F(u),  u2 = 3/4 u + 1/4 (u1 + dt F(u1)),  u(n+1) = 1/3 u + 2/3 (u2 + dt F(u2))
//      (stage weights in the step: 1/6, 1/6, 2/3)
//   3. implicit processes (backward-Euler vertical diffusion, tridiagonal per column)
//   4. budgets: the change of heat and tracer content of every column against what the processes say they added
#pragma once

#include "app/config.hpp"
#include "app/model/decomposition.hpp"
#include "app/model/kernels.hpp"
#include "app/model/processes.hpp"
#include "app/model/state.hpp"
#include "core/comms.hpp"
#include "operators/column/integrals.hpp"
#include "operators/operators.hpp"

#include <cmath>
#include <functional>
#include <limits>
#include <memory>
#include <numbers>
#include <string>
#include <vector>

namespace strata::app {

std::shared_ptr<ops::Grid const> makeVerticalGrid(VerticalGridConfig const& v);
ops::Engine engineFromName(std::string const& name);

// Initial profiles of the local columns (host arrays, written into the state by the model).
struct InitialProfiles {
    double T, q, tracer;
};
InitialProfiles initialProfile(InitialConfig const& init, double zTop, double z, double latitude);

struct GlobalDiagnostics {
    double meanT = 0;         // K, mass- and area-weighted
    double heatContent = 0;   // J m-2, area-weighted mean over columns
    double tracerContent = 0; // per m2, area-weighted mean
    double heatResidual = 0;  // largest relative budget residual of a column since the last call
    double tracerResidual = 0;
    double analyticError = 0; // heat-equation case: max |T - exact| (K); NaN for other cases
};

template <class Backend>
class Model {
public:
    Model(Config const& cfg, Backend backend, core::Context const& comm, HorizontalCoords const& horizontal,
          Decomposition const& decomposition)
        : m_cfg(cfg), m_backend(backend), m_comm(comm), m_decomp(decomposition),
          m_state(makeVerticalGrid(cfg.vertical), decomposition.local, Backend::memSpace),
          m_budget(decomposition.local), m_engine(engineFromName(cfg.backend.engine)),
          m_areaWeights(localAreaWeights(horizontal, decomposition)), m_before(decomposition.local, Backend::memSpace),
          m_after(decomposition.local, Backend::memSpace), m_tracerBefore(decomposition.local, Backend::memSpace),
          m_tracerAfter(decomposition.local, Backend::memSpace), m_mass(decomposition.local, Backend::memSpace),
          m_weighted(m_state.grid, decomposition.local, Backend::memSpace) {
        auto const lat = localLatitudes(horizontal, decomposition);
        std::copy(lat.begin(), lat.end(), m_state.latitude.host().begin());
        m_state.latitude.toDevice();
        for (auto const& name : cfg.processOrder) {
            if (name == "vertical_diffusion")
                m_processes.push_back(std::make_unique<VerticalDiffusion<Backend>>(cfg.diffusion, m_state));
            else if (name == "vertical_advection")
                m_processes.push_back(std::make_unique<VerticalAdvection<Backend>>(cfg.advection, m_state));
            else if (name == "held_suarez")
                m_processes.push_back(std::make_unique<HeldSuarez<Backend>>(cfg.heldSuarez, m_state));
        }
        initialise(lat);
    }

    State const& state() const { return m_state; }

    // The heat-equation case has an exact solution: T = Ts + A cos(pi z / H) exp(-K (pi / H)^2 t).
    bool hasAnalyticSolution() const {
        auto const& d = m_cfg.diffusion;
        return m_cfg.processOrder == std::vector<std::string>{"vertical_diffusion"} && d.form == "plain" &&
               d.profile == "constant" && d.surfaceHeatFlux == 0.0 && m_cfg.initial.temperature == "cosine";
    }

    double analyticError() {
        double local = 0;
        auto& T = m_state.now.T;
        T.toHost();
        double const top = m_state.grid->faces().back(), pi = std::numbers::pi;
        double const decay = std::exp(-m_cfg.diffusion.kappa * (pi / top) * (pi / top) * m_time);
        auto const& zc = m_state.grid->centers();
        for (uint32_t c = 0; c < T.columns(); ++c)
            for (uint32_t k = 0; k < T.levels(); ++k) {
                double const exact =
                    m_cfg.initial.surfaceTemperature + m_cfg.initial.amplitude * std::cos(pi * zc[k] / top) * decay;
                local = std::max(local, std::fabs(T.at(c, k) - exact));
            }
        double global = 0;
        MPI_Allreduce(&local, &global, 1, MPI_DOUBLE, MPI_MAX, m_comm.comm());
        return global;
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

    void step() {
        auto ctx = context();
        diagnoseThermodynamics();
        m_budget.reset();
        for (auto& p : m_processes)
            p->prepareStep(ctx);
        contents(m_before, m_tracerBefore);

        Prognostics& u = m_state.now;
        Prognostics& u0 = m_state.start;
        copy(u0, u);
        double const dt = m_cfg.time.dt;
        struct StageCoefficients {
            double a, b, weight;
        };
        StageCoefficients const stages[3] = {
            {0.0, 1.0, 1.0 / 6.0}, {0.75, 0.25, 1.0 / 6.0}, {1.0 / 3.0, 2.0 / 3.0, 2.0 / 3.0}};
        if (hasExplicit()) {
            for (auto const& st : stages) {
                zero(m_state.tendency);
                for (auto& p : m_processes)
                    p->addTendencies(ctx, u, m_state.tendency, dt * st.weight);
                rkStage(u, u0, m_state.tendency, st.a, st.b, dt);
            }
        }
        for (auto& p : m_processes)
            p->implicitStep(ctx, u);

        contents(m_after, m_tracerAfter);
        recordBudget();
        m_time += dt;
        ++m_steps;
    }

    GlobalDiagnostics diagnostics() {
        diagnoseThermodynamics();
        GlobalDiagnostics d;
        uint32_t const n = m_decomp.local;
        // Mass-weighted column means, then area-weighted: sums that do not depend on the decomposition.
        ops::evaluate(m_backend, m_weighted, m_state.rho * m_state.now.T, ops::Engine::Direct);
        ops::columnIntegral(m_backend, m_weighted, m_after);
        ops::evaluate(m_backend, m_weighted, m_state.rho * 1.0, ops::Engine::Direct);
        ops::columnIntegral(m_backend, m_weighted, m_mass);
        contents(m_before, m_tracerBefore);
        for (auto* b : {&m_after, &m_mass, &m_before, &m_tracerBefore})
            b->toHost();
        std::vector<double> rhoT(n), mass(n), heat(n), tracer(n), area(m_areaWeights);
        for (uint32_t c = 0; c < n; ++c) {
            rhoT[c] = m_after.host()[c] * m_areaWeights[c];
            mass[c] = m_mass.host()[c] * m_areaWeights[c];
            heat[c] = m_before.host()[c] * m_areaWeights[c];
            tracer[c] = m_tracerBefore.host()[c] * m_areaWeights[c];
        }
        double const totalArea = m_comm.sum(area);
        d.meanT = m_comm.sum(rhoT) / m_comm.sum(mass);
        d.heatContent = m_comm.sum(heat) / totalArea;
        d.tracerContent = m_comm.sum(tracer) / totalArea;
        double local[2] = {m_maxHeatResidual, m_maxTracerResidual}, global[2];
        MPI_Allreduce(local, global, 2, MPI_DOUBLE, MPI_MAX, m_comm.comm());
        d.heatResidual = global[0];
        d.tracerResidual = global[1];
        d.analyticError = hasAnalyticSolution() ? analyticError() : std::numeric_limits<double>::quiet_NaN();
        m_maxHeatResidual = m_maxTracerResidual = 0;
        return d;
    }

    // A variable of the local columns for output, level-contiguous per column without padding.
    std::vector<double> outputValues(std::string const& name) {
        if (name == "T" || name == "q" || name == "tracer" || name == "p" || name == "theta") return centerValues(name);
        return faceValues(name);
    }

private:
    StepContext<Backend> context() { return {m_backend, m_engine, m_cfg.time.dt, m_state, m_budget}; }

    bool hasExplicit() const {
        for (auto const& name : m_cfg.processOrder) {
            if (name == "vertical_advection" || name == "held_suarez") return true;
            if (name == "vertical_diffusion" && m_cfg.diffusion.mode == "explicit") return true;
        }
        return false;
    }

    void initialise(std::vector<double> const& lat) {
        auto const& zc = m_state.grid->centers();
        double const top = m_state.grid->faces().back();
        for (uint32_t c = 0; c < m_decomp.local; ++c) {
            for (uint32_t k = 0; k < zc.size(); ++k) {
                auto const init = initialProfile(m_cfg.initial, top, zc[k], lat[c]);
                m_state.now.T.at(c, k) = init.T;
                m_state.now.q.at(c, k) = init.q;
                m_state.now.tracer.at(c, k) = init.tracer;
            }
            m_state.surfacePressure.host()[c] = m_cfg.initial.surfacePressure;
        }
        m_state.now.T.toDevice();
        m_state.now.q.toDevice();
        m_state.now.tracer.toDevice();
        m_state.surfacePressure.toDevice();
    }

    void diagnoseThermodynamics() {
        State& s = m_state;
        ops::hydrostaticPressure(m_backend, s.now.T, ops::PerColumn<double>(s.surfacePressure), constants::g,
                                 constants::rd, s.pFace, s.p);
        forEachPoint(m_backend, s.columns, s.p.levels(),
                     Thermo{std::as_const(s.p).view(), std::as_const(s.now.T).view(), s.rho.view(), s.exner.view(),
                            constants::rd, constants::kappa, constants::p0});
        if (m_unitDensity) { // diffusion form "plain": the textbook heat equation, rho = 1, theta = T
            forEachPoint(m_backend, s.columns, s.rho.levels(), Fill{s.rho.view(), 1.0});
            forEachPoint(m_backend, s.columns, s.exner.levels(), Fill{s.exner.view(), 1.0});
        }
        ops::evaluate(m_backend, s.rhoFace, ops::InterpolateC2F{ops::Extrapolate{}, ops::Extrapolate{}}(s.rho),
                      ops::Engine::Direct);
    }

    // Heat cp sum(rho theta dz) and tracer sum(rho tracer dz) of every column, with this step's rho and exner.
    void contents(core::Buffer<double>& heat, core::Buffer<double>& tracer) {
        State& s = m_state;
        ops::evaluate(m_backend, m_weighted, s.rho * (s.now.T / s.exner) * constants::cp, ops::Engine::Direct);
        ops::columnIntegral(m_backend, m_weighted, heat);
        ops::evaluate(m_backend, m_weighted, s.rho * s.now.tracer, ops::Engine::Direct);
        ops::columnIntegral(m_backend, m_weighted, tracer);
    }

    void recordBudget() {
        for (auto* b : {&m_before, &m_after, &m_tracerBefore, &m_tracerAfter})
            b->toHost();
        for (uint32_t c = 0; c < m_decomp.local; ++c) {
            double const heatChange = m_after.host()[c] - m_before.host()[c];
            double const tracerChange = m_tracerAfter.host()[c] - m_tracerBefore.host()[c];
            double const heatScale = std::fabs(m_before.host()[c]);
            double const tracerScale = std::fabs(m_tracerBefore.host()[c]);
            if (heatScale > 0)
                m_maxHeatResidual = std::max(m_maxHeatResidual, std::fabs(heatChange - m_budget.heat[c]) / heatScale);
            if (tracerScale > 0)
                m_maxTracerResidual =
                    std::max(m_maxTracerResidual, std::fabs(tracerChange - m_budget.tracer[c]) / tracerScale);
        }
    }

    void copy(Prognostics& dst, Prognostics const& src) {
        for (auto [d, s] : {std::pair{&dst.T, &src.T}, std::pair{&dst.q, &src.q}, std::pair{&dst.tracer, &src.tracer}})
            forEachPoint(m_backend, d->columns(), d->levels(), Copy{d->view(), s->view()});
    }
    void zero(Prognostics& t) {
        for (auto* f : {&t.T, &t.q, &t.tracer})
            forEachPoint(m_backend, f->columns(), f->levels(), Fill{f->view(), 0.0});
    }
    void rkStage(Prognostics& u, Prognostics const& u0, Prognostics const& f, double a, double b, double dt) {
        auto stage = [&](CenterField& x, CenterField const& x0, CenterField const& fx) {
            forEachPoint(m_backend, x.columns(), x.levels(), RkStage{x.view(), x0.view(), fx.view(), a, b, dt});
        };
        stage(u.T, u0.T, f.T);
        stage(u.q, u0.q, f.q);
        stage(u.tracer, u0.tracer, f.tracer);
    }

    std::vector<double> centerValues(std::string const& name) {
        CenterField* f = name == "T"        ? &m_state.now.T
                         : name == "q"      ? &m_state.now.q
                         : name == "tracer" ? &m_state.now.tracer
                                            : &m_state.p;
        if (name == "theta") {
            ops::evaluate(m_backend, m_weighted, m_state.now.T / m_state.exner, ops::Engine::Direct);
            f = &m_weighted;
        }
        f->toHost();
        std::vector<double> out;
        out.reserve(std::size_t{f->columns()} * f->levels());
        for (uint32_t c = 0; c < f->columns(); ++c)
            out.insert(out.end(), f->column(c).begin(), f->column(c).end());
        return out;
    }

    std::vector<double> faceValues(std::string const& name) {
        FaceField face(m_state.grid, m_state.columns, Backend::memSpace);
        bool found = false;
        if (name == "p_face") {
            ops::evaluate(m_backend, face, m_state.pFace * 1.0, ops::Engine::Direct);
            found = true;
        }
        for (auto& p : m_processes)
            found = found || p->outputFace(m_backend, name, face);
        if (!found) ops::evaluate(m_backend, face, ops::asExpr(0.0), ops::Engine::Direct); // process not enabled
        face.toHost();
        std::vector<double> out;
        for (uint32_t c = 0; c < face.columns(); ++c)
            out.insert(out.end(), face.column(c).begin(), face.column(c).end());
        return out;
    }

    Config const& m_cfg;
    Backend m_backend;
    core::Context const& m_comm;
    Decomposition m_decomp;
    State m_state;
    BudgetTerms m_budget;
    ops::Engine m_engine;
    std::vector<double> m_areaWeights;
    core::Buffer<double> m_before, m_after, m_tracerBefore, m_tracerAfter, m_mass;
    CenterField m_weighted;
    std::vector<std::unique_ptr<Process<Backend>>> m_processes;
    double m_time = 0;
    uint64_t m_steps = 0;
    double m_maxHeatResidual = 0, m_maxTracerResidual = 0;
    bool m_unitDensity = m_cfg.diffusion.enabled && m_cfg.diffusion.form == "plain";
};

} // namespace strata::app
