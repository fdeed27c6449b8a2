// The Coriolis force, with the large-scale pressure gradient written as a geostrophic wind.
#pragma once

#include <strata/app/model/process.hpp>
#include <strata/app/processes/detail/coriolis_settings.hpp>
#include <strata/app/processes/detail/stability.hpp>
#include <strata/app/processes/vertical_diffusion.hpp>

#include <cmath>
#include <string>
#include <vector>

namespace strata::app {

// Coriolis force with the large-scale pressure gradient written as a geostrophic wind (ug, vg):
//   du/dt = f (v - vg),  dv/dt = -f (u - ug),  f = 2 Omega sin(latitude).
// Pointwise; with friction or mixing the winds turn towards low pressure (Ekman). Explicit, a tendency in every
// Runge-Kutta stage; implicit (`implicit: on`), one backward-Euler step after the explicit part,
//   u' - dt f (v' - vg) = u,  v' + dt f (u' - ug) = v,
// a rotation damped by 1 / sqrt(1 + (f dt)^2) a step, stable at any dt and with the explicit steady state (u, v) =
// (ug, vg). Where vertical_diffusion mixes the winds implicitly, that process solves the force with the mixing, as
// one 2x2 block tridiagonal system per column (vertical_diffusion.hpp), and this one does nothing.

// The pointwise backward-Euler step: with a = dt f, [[1, -a], [a, 1]] (u', v') = (u - a vg, v + a ug).
struct CoriolisImplicitStep {
    CenterView u, v;
    double const* f; // per column
    double ug, vg, dt;
    STRATA_HD void operator()(uint32_t c, uint32_t k) const {
        double const a = dt * f[c];
        double const du = u(c, k) - a * vg;
        double const dv = v(c, k) + a * ug;
        double const det = 1.0 + a * a;
        u(c, k) = (du + a * dv) / det;
        v(c, k) = (dv - a * du) / det;
    }
};

struct CoriolisTendency {
    CenterView tu, tv;
    CenterConst u, v;
    double const* f; // per column
    double ug, vg;
    STRATA_HD void operator()(uint32_t c, uint32_t k) const {
        tu(c, k) = tu(c, k) + f[c] * (v(c, k) - vg);
        tv(c, k) = tv(c, k) - f[c] * (u(c, k) - ug);
    }
};

template <class Backend>
class Coriolis : public Process<Backend> {
public:
    using Settings = CoriolisSettings;
    static std::vector<FieldDecl> declarations(Config const& cfg) {
        // Implicit, the winds are adjusted after the explicit part (by vertical_diffusion's solve, where it mixes them
        // implicitly: then this process changes nothing).
        Access const change = isOn(cfg.settings<Settings>().implicit) ? Access::Adjusts : Access::Tendency;
        return {{"u", "m s-1", change}, {"v", "m s-1", change}, {"latitude", "degrees_north", Access::Reads}};
    }

    Coriolis(Config const& cfg, ProcessEnv<Backend>& env)
        : Process<Backend>(env.declared()), m_cfg(cfg.settings<Settings>()),
          m_solvedWithMixing(mixingSolvesCoriolis(cfg)), m_f(env.columns(), env.space()), m_fHost(env.columns()) {
        auto& latitude = env.perColumn("latitude");
        latitude.toHost();
        for (uint32_t c = 0; c < env.columns(); ++c)
            m_f.host()[c] = m_fHost[c] = coriolisParameter(latitude.host()[c]);
        m_f.toDevice();
    }

    std::string name() const override { return std::string(Settings::process); }

    // SSP-RK3 on the imaginary axis is stable for |f| dt <= sqrt(3); backward Euler at any dt.
    void checkStability(StepContext<Backend>& ctx) override {
        if (isOn(m_cfg.implicit)) return;
        for (uint32_t c = 0; c < ctx.columns; ++c) {
            double const x = std::fabs(m_fHost[c]) * ctx.dt;
            if (!(x <= std::sqrt(3.0)))
                throw StabilityError(detail::formatLimit("Coriolis number |f| dt", x, std::sqrt(3.0), c, 0, "level"),
                                     "time.dt", "a time step below sqrt(3) / |f|");
        }
    }

    void addTendencies(StepContext<Backend>& ctx, Prognostics const& u, Prognostics& t, double) override {
        if (isOn(m_cfg.implicit)) return;
        forEachPoint(ctx.backend, ctx.columns, t.u.levels(),
                     CoriolisTendency{t.u.view(), t.v.view(), std::as_const(u.u).view(), std::as_const(u.v).view(),
                                      m_f.device(), m_cfg.ug, m_cfg.vg});
    }

    void implicitStep(StepContext<Backend>& ctx, Prognostics& u) override {
        if (!isOn(m_cfg.implicit) || m_solvedWithMixing) return;
        forEachPoint(ctx.backend, ctx.columns, u.u.levels(),
                     CoriolisImplicitStep{u.u.view(), u.v.view(), m_f.device(), m_cfg.ug, m_cfg.vg, ctx.dt});
    }

    StepCost stepCost() const override {
        if (m_solvedWithMixing) return {0, 0, 0, 0, "solved with vertical_diffusion's winds"};
        if (isOn(m_cfg.implicit)) return {32.0, 8.0, 0.0, 0.0, "u, v in and out once"};
        // Per stage: u, v read, the tendencies of u, v read and written; f per column.
        return {3 * (16.0 + 32.0), 3 * 8.0, 0.0, 0.0, "3 stages x (u, v in; 2 tendencies in and out)"};
    }

private:
    Settings m_cfg;
    bool m_solvedWithMixing;
    core::Buffer<double> m_f;
    std::vector<double> m_fHost; // the same on the host (the buffer's mirror is not read after toDevice)
};

} // namespace strata::app
