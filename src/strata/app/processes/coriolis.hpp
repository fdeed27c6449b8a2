// The Coriolis force, with the large-scale pressure gradient written as a geostrophic wind.
#pragma once

#include <strata/app/model/process.hpp>
#include <strata/app/processes/detail/stability.hpp>
#include <strata/core/math.hpp>

#include <cmath>
#include <numbers>
#include <string>
#include <vector>

namespace strata::app {

// Coriolis force and the large-scale pressure gradient as a geostrophic wind:
// du/dt = f (v - vg), dv/dt = -f (u - ug), f = 2 Omega sin(latitude).
struct CoriolisSettings {
    static constexpr std::string_view process = "coriolis";
    double ug = 0.0; // m/s
    double vg = 0.0; // m/s

    template <class V>
    void describe(V& v) {
        v.field("u_g", ug, detail::anyNumber());
        v.field("v_g", vg, detail::anyNumber());
    }
    bool operator==(CoriolisSettings const&) const = default;
};

// Coriolis force with the large-scale pressure gradient written as a geostrophic wind (ug, vg):
//   du/dt = f (v - vg),  dv/dt = -f (u - ug),  f = 2 Omega sin(latitude).
// Pointwise; with friction or mixing the winds turn towards low pressure (Ekman).

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
    static std::vector<FieldDecl> declarations(Config const&) {
        return {{"u", "m s-1", Access::Tendency},
                {"v", "m s-1", Access::Tendency},
                {"latitude", "degrees_north", Access::Reads}};
    }

    Coriolis(Config const& cfg, ProcessEnv<Backend>& env)
        : Process<Backend>(env.declared()), m_cfg(cfg.settings<Settings>()), m_f(env.columns(), env.space()),
          m_fHost(env.columns()) {
        auto& latitude = env.perColumn("latitude");
        latitude.toHost();
        for (uint32_t c = 0; c < env.columns(); ++c)
            m_f.host()[c] = m_fHost[c] = coriolisParameter(latitude.host()[c]);
        m_f.toDevice();
    }

    static double coriolisParameter(double latitudeDegrees) {
        return 2.0 * constants::omega * math::sin(latitudeDegrees * std::numbers::pi / 180.0);
    }

    std::string name() const override { return std::string(Settings::process); }

    // SSP-RK3 on the imaginary axis is stable for |f| dt <= sqrt(3).
    void checkStability(StepContext<Backend>& ctx) override {
        for (uint32_t c = 0; c < ctx.columns; ++c) {
            double const x = std::fabs(m_fHost[c]) * ctx.dt;
            if (!(x <= std::sqrt(3.0)))
                throw StabilityError(detail::formatLimit("Coriolis number |f| dt", x, std::sqrt(3.0), c, 0, "level"),
                                     "time.dt", "a time step below sqrt(3) / |f|");
        }
    }

    void addTendencies(StepContext<Backend>& ctx, Prognostics const& u, Prognostics& t, double) override {
        forEachPoint(ctx.backend, ctx.columns, t.u.levels(),
                     CoriolisTendency{t.u.view(), t.v.view(), std::as_const(u.u).view(), std::as_const(u.v).view(),
                                      m_f.device(), m_cfg.ug, m_cfg.vg});
    }

    StepCost stepCost() const override {
        // Per stage: u, v read, the tendencies of u, v read and written; f per column.
        return {3 * (16.0 + 32.0), 3 * 8.0, 0.0, 0.0, "3 stages x (u, v in; 2 tendencies in and out)"};
    }

private:
    Settings m_cfg;
    core::Buffer<double> m_f;
    std::vector<double> m_fHost; // the same on the host (the buffer's mirror is not read after toDevice)
};

} // namespace strata::app
