// Held & Suarez (1994): Newtonian relaxation of temperature to a prescribed equilibrium and Rayleigh friction of the
// winds near the ground.
#pragma once

#include <strata/app/model/process.hpp>
#include <strata/app/processes/detail/stability.hpp>
#include <strata/core/math.hpp>

#include <string>
#include <utility>
#include <vector>

namespace strata::app {

struct HeldSuarezSettings {
    static constexpr std::string_view process = "held_suarez";
    double ka = 1.0 / 40.0;    // 1/day
    double ks = 1.0 / 4.0;     // 1/day
    double deltaTy = 60.0;     // K
    double deltaThetaZ = 10.0; // K
    double sigmaB = 0.7;
    double tMin = 200.0;  // K
    double tMax = 315.0;  // K
    double p0 = 100000.0; // Pa
    double kf = 1.0;      // 1/day: Rayleigh friction of the winds below sigma_b

    template <class V>
    void describe(V& v) {
        v.field("ka", ka, detail::atLeast(0.0));
        v.field("ks", ks, detail::atLeast(0.0));
        v.field("delta_T_y", deltaTy, detail::atLeast(0.0));
        v.field("delta_theta_z", deltaThetaZ, detail::atLeast(0.0));
        v.field("sigma_b", sigmaB,
                detail::Rule<double>{"a number in [0, 1)", [](double s) { return s >= 0.0 && s < 1.0; }});
        v.field("T_min", tMin, detail::above(0.0));
        v.field("T_max", tMax, detail::above(0.0));
        v.field("p0", p0, detail::above(0.0));
        v.field("kf", kf, detail::atLeast(0.0));
    }
    void check(Config const&) const {
        if (tMin >= tMax)
            detail::failConfig("processes.held_suarez.T_min", "'" + detail::formatNumber(tMin) + "' is not below T_max",
                               "a number < T_max = " + detail::formatNumber(tMax));
    }
    bool operator==(HeldSuarezSettings const&) const = default;
};

// Held-Suarez (1994) radiative relaxation: dT/dt = -kT (T - Teq), with
//   Teq = max(Tmin, (Tmax - dTy sin^2 phi - dThz log(p/p0) cos^2 phi) (p/p0)^kappa)
//   kT  = ka + (ks - ka) max(0, (sigma - sigmaB) / (1 - sigmaB)) cos^4 phi,  sigma = p / ps.
// and Rayleigh friction of the winds, du/dt = -kv u, dv/dt = -kv v, kv = kf max(0, (sigma - sigmaB) / (1 - sigmaB)).
// p is the reference pressure, fixed in time: Teq, kT and kv are computed once, when the process is made.

struct HeldSuarezCoefficients {
    CenterView teq, kt, kv;
    CenterConst p;
    FaceConst pFace;
    double const* latitude; // degrees, per column
    HeldSuarezSettings cfg;
    STRATA_HD void operator()(uint32_t c, uint32_t k) const {
        double const phi = latitude[c] * 3.14159265358979323846 / 180.0;
        double const s = math::sin(phi), co = math::cos(phi);
        double const pr = p(c, k) / cfg.p0;
        double const t = (cfg.tMax - cfg.deltaTy * s * s - cfg.deltaThetaZ * math::log(pr) * co * co) *
                         math::pow(pr, constants::kappa);
        teq(c, k) = t > cfg.tMin ? t : cfg.tMin;
        double const sigma = p(c, k) / pFace(c, 0);
        double const above = (sigma - cfg.sigmaB) / (1.0 - cfg.sigmaB);
        kt(c, k) = (cfg.ka + (cfg.ks - cfg.ka) * (above > 0 ? above : 0.0) * co * co * co * co) / 86400.0;
        kv(c, k) = cfg.kf * (above > 0 ? above : 0.0) / 86400.0;
    }
};

// Held-Suarez's tendencies of a stage in one pass: linear damping of the winds, -kv u and -kv v added in place, and
// the relaxation of temperature, -kT (T - Teq), into `heating` (for the heat budget) and added to T's tendency. One
// kernel rather than three (winds, heating, the heating added to T's tendency): the bytes are nearly the same, and
// two launches a stage are saved, which is what these small kernels cost on a GPU.
struct HeldSuarezTendencies {
    CenterView tu, tv, tT, heating;
    CenterConst u, v, T, kv, teq, kt;
    STRATA_HD void operator()(uint32_t c, uint32_t k) const {
        tu(c, k) = tu(c, k) - kv(c, k) * u(c, k);
        tv(c, k) = tv(c, k) - kv(c, k) * v(c, k);
        double const h = -kt(c, k) * (T(c, k) - teq(c, k));
        heating(c, k) = h;
        tT(c, k) = tT(c, k) + h;
    }
};

template <class Backend>
class HeldSuarez : public Process<Backend> {
public:
    using Settings = HeldSuarezSettings;
    static std::vector<FieldDecl> declarations(Config const&) {
        return {{"T", "K", Access::Tendency},     {"u", "m s-1", Access::Tendency},
                {"v", "m s-1", Access::Tendency}, {"p", "Pa", Access::Reads},
                {"p_face", "Pa", Access::Reads},  {"rho", "kg m-3", Access::Reads},
                {"exner", "1", Access::Reads},    {"latitude", "degrees_north", Access::Reads}};
    }

    // Teq, kT and kv from the reference state and the latitudes, once.
    HeldSuarez(Config const& cfg, ProcessEnv<Backend>& env)
        : Process<Backend>(env.declared()), m_cfg(cfg.settings<Settings>()), m_rho(env.center("rho")),
          m_exner(env.center("exner")), m_teq(env.grid(), env.columns(), env.space()),
          m_kt(env.grid(), env.columns(), env.space()), m_kv(env.grid(), env.columns(), env.space()),
          m_heat(env.grid(), env.columns(), env.space()), m_column(env.columns(), env.space()) {
        forEachPoint(env.backend(), env.columns(), m_teq.levels(),
                     HeldSuarezCoefficients{
                         m_teq.view(), m_kt.view(), m_kv.view(), std::as_const(env.center("p")).view(),
                         std::as_const(env.face("p_face")).view(), env.perColumn("latitude").device(), m_cfg});
    }

    std::string name() const override { return std::string(Settings::process); }

    void addTendencies(StepContext<Backend>& ctx, Prognostics const& u, Prognostics& t, double weight) override {
        forEachPoint(ctx.backend, ctx.columns, t.u.levels(),
                     HeldSuarezTendencies{t.u.view(), t.v.view(), t.T.view(), ctx.scratch.view(),
                                          std::as_const(u.u).view(), std::as_const(u.v).view(),
                                          std::as_const(u.T).view(), std::as_const(m_kv).view(),
                                          std::as_const(m_teq).view(), std::as_const(m_kt).view()});
        // A heat source: its integral cp sum(rho0 dT/dt / exner0 dz), weighted by the stage, goes into the budget.
        ops::columnIntegralsOfThen(ctx.backend, m_heat, m_column,
                                   columnTerms({ctx.budget.term(HeatBudget, m_column, weight * constants::cp)}),
                                   m_rho * ctx.scratch / m_exner);
    }

    // Relaxation and friction are linear decays at rates kT and kv (1/s): SSP-RK3 is stable for k dt within its
    // real-axis interval, the same limit as explicit diffusion's.
    void checkStability(StepContext<Backend>& ctx) override {
        auto& kt = m_kt;
        auto& kv = m_kv;
        kt.toHost();
        kv.toHost();
        double const limit = detail::rk3RealAxisLimit;
        for (uint32_t c = 0; c < ctx.columns; ++c)
            for (uint32_t k = 0; k < kt.levels(); ++k) {
                if (!(kt.at(c, k) * ctx.dt <= limit))
                    throw StabilityError(
                        detail::formatLimit("Held-Suarez relaxation kT dt", kt.at(c, k) * ctx.dt, limit, c, k, "level"),
                        "processes.held_suarez.ks",
                        "ka, ks (1/day) and time.dt with kT dt <= " + detail::limitText(limit));
                if (!(kv.at(c, k) * ctx.dt <= limit))
                    throw StabilityError(
                        detail::formatLimit("Held-Suarez friction kv dt", kv.at(c, k) * ctx.dt, limit, c, k, "level"),
                        "processes.held_suarez.kf", "kf (1/day) and time.dt with kv dt <= " + detail::limitText(limit));
            }
    }

    StepCost stepCost() const override {
        // Per stage: T, u, v, Teq, kT, kv, rho0 and exner0 read (64 B), the tendencies of T, u, v read and written
        // (48 B), the heating's column integral (8 B per column). Teq, kT and kv are computed once, at start.
        return {3 * (64.0 + 48.0), 3 * 8.0, 0.0, 0.0,
                "3 stages x (T, u, v, Teq, kT, kv, rho0, exner0 in; 3 tendencies in and out)"};
    }

    CenterField const& equilibriumTemperature() const { return m_teq; }
    CenterField const& relaxationRate() const { return m_kt; }
    CenterField const& frictionRate() const { return m_kv; }

private:
    Settings m_cfg;
    CenterField const& m_rho;
    CenterField const& m_exner;
    CenterField m_teq, m_kt, m_kv;
    CenterField m_heat;
    core::Buffer<double> m_column;
};

} // namespace strata::app
