// Vertical diffusion: d(psi)/dt = (1/rho0) d/dz(rho0 K d(psi)/dz) on theta (heat), q, the tracer and the winds, with
// a prescribed surface flux (kinematic, positive upwards) and no flux through the top; explicit (SSP-RK3 stages) or
// implicit (backward Euler, app/model/implicit_diffusion.hpp). Implicit, with an implicit Coriolis force
// (coriolis.hpp), the winds and the force are solved together: VerticalDiffusion::solveWindsWithCoriolis.
#pragma once

#include <strata/app/model/implicit_diffusion.hpp>
#include <strata/app/model/process.hpp>
#include <strata/app/processes/detail/coriolis_settings.hpp>
#include <strata/app/processes/detail/stability.hpp>
#include <strata/core/math.hpp>
#include <strata/operators/column/band.hpp>
#include <strata/operators/matrix.hpp>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace strata::app {

enum class DiffusionMode { Explicit, Implicit };
STRATA_CHOICES(DiffusionMode, Choice<DiffusionMode>{"explicit", DiffusionMode::Explicit},
               Choice<DiffusionMode>{"implicit", DiffusionMode::Implicit});

enum class DiffusionProfile { Constant, BoundaryLayer, ReedJablonowski };
STRATA_CHOICES(DiffusionProfile, Choice<DiffusionProfile>{"constant", DiffusionProfile::Constant},
               Choice<DiffusionProfile>{"boundary_layer", DiffusionProfile::BoundaryLayer},
               Choice<DiffusionProfile>{"reed_jablonowski", DiffusionProfile::ReedJablonowski});

enum class DiffusionForm { Anelastic, Plain };
STRATA_CHOICES(DiffusionForm, Choice<DiffusionForm>{"anelastic", DiffusionForm::Anelastic},
               Choice<DiffusionForm>{"plain", DiffusionForm::Plain});

enum class SurfaceMomentum { NoSlip, FreeSlip };
STRATA_CHOICES(SurfaceMomentum, Choice<SurfaceMomentum>{"no_slip", SurfaceMomentum::NoSlip},
               Choice<SurfaceMomentum>{"free_slip", SurfaceMomentum::FreeSlip});

struct DiffusionSettings {
    static constexpr std::string_view process = "vertical_diffusion";
    DiffusionMode mode = DiffusionMode::Implicit;
    DiffusionProfile profile = DiffusionProfile::Constant;
    double kappa = 5.0;                  // m2/s; boundary_layer: the surface value
    double boundaryLayerHeight = 1500.0; // m; boundary_layer: K decays as exp(-z / h) ... to kappaFree
    double kappaFree = 0.1;              // m2/s above the boundary layer
    double surfaceHeatFlux = 0.0;        // K m/s (kinematic, positive upwards)
    double surfaceMoistureFlux = 0.0;    // kg/kg m/s
    double surfaceTracerFlux = 0.0;      // 1 m/s
    SurfaceMomentum surfaceMomentum = SurfaceMomentum::NoSlip; // no_slip: u = v = 0 at the ground; free_slip: no stress
    // The variables mixed (each switched off is left as it is, with no surface flux): TJ16 mixes heat and moisture
    // only and leaves the winds to Held-Suarez's friction.
    Switch heat = Switch::On; // T (through theta)
    Switch moisture = Switch::On;
    Switch tracer = Switch::On;
    Switch momentum = Switch::On; // u and v
    // reed_jablonowski: K = c_e |v_a| z_a with |v_a| = sqrt(u_a^2 + v_a^2 + gustiness^2) (RJ12 eq. 18)
    double ce = 0.0044;
    double gustiness = 1.0; // m/s

    // anelastic: (1/rho) d/dz(rho K d(theta)/dz); plain: d/dz(K dT/dz) (rho = 1, T)
    DiffusionForm form = DiffusionForm::Anelastic;

    template <class V>
    void describe(V& v) {
        v.field("mode", mode, detail::named<DiffusionMode>());
        v.field("profile", profile, detail::named<DiffusionProfile>());
        v.field("form", form, detail::named<DiffusionForm>());
        v.field("kappa", kappa, detail::atLeast(0.0));
        v.field("boundary_layer_height", boundaryLayerHeight, detail::above(0.0));
        v.field("kappa_free", kappaFree, detail::atLeast(0.0));
        v.field("surface_heat_flux", surfaceHeatFlux, detail::anyNumber());
        v.field("surface_moisture_flux", surfaceMoistureFlux, detail::anyNumber());
        v.field("surface_tracer_flux", surfaceTracerFlux, detail::anyNumber());
        v.field("surface_momentum", surfaceMomentum, detail::named<SurfaceMomentum>());
        v.field("heat", heat, detail::named<Switch>());
        v.field("moisture", moisture, detail::named<Switch>());
        v.field("tracer", tracer, detail::named<Switch>());
        v.field("momentum", momentum, detail::named<Switch>());
        v.field("c_e", ce, detail::atLeast(0.0));
        v.field("gustiness", gustiness, detail::atLeast(0.0));
    }
    static std::vector<VariableInfo> outputs() {
        // One K mixes heat, moisture, the tracer and momentum alike; CF names it by heat.
        return {{"K", "m2 s-1", "eddy diffusivity of heat, moisture, tracer and momentum",
                 "atmosphere_heat_diffusivity", Staggering::Face, Source::Process}};
    }
    void check(Config const& c) const;
    bool operator==(DiffusionSettings const&) const = default;
};

// "plain" replaces the reference state by rho0 = exner0 = 1 for the whole model: only meaningful for diffusion alone,
// or with the Coriolis force, which does not use the reference state (the classical Ekman problem). The
// Reed-Jablonowski profile follows the wind, so no explicit limit can be checked before the run. A surface flux of a
// variable that is not mixed would have nowhere to go.
inline void DiffusionSettings::check(Config const& c) const {
    if (form == DiffusionForm::Plain)
        for (auto const& name : c.processOrder)
            if (name != process && name != "coriolis")
                detail::failConfig("processes.vertical_diffusion.form", "'plain' with " + name + " enabled",
                                   "form: anelastic, or only vertical_diffusion and coriolis (plain sets rho0 = exner0 "
                                   "= 1 for the whole model)");
    if (profile == DiffusionProfile::ReedJablonowski && mode != DiffusionMode::Implicit)
        detail::failConfig("processes.vertical_diffusion.mode",
                           std::string("'").append(nameOf(mode)).append("' with profile reed_jablonowski"),
                           "mode: implicit (K follows the wind, so no explicit limit can be checked before the run)");
    auto unmixed = [](char const* flux, double value, char const* part) {
        if (value != 0.0)
            detail::failConfig(
                std::string("processes.vertical_diffusion.").append(flux),
                std::string("'").append(detail::formatNumber(value)).append("' with ").append(part).append(": off"),
                std::string("0 (the variable is not mixed), or ").append(part).append(": on"));
    };
    if (!isOn(heat)) unmixed("surface_heat_flux", surfaceHeatFlux, "heat");
    if (!isOn(moisture)) unmixed("surface_moisture_flux", surfaceMoistureFlux, "moisture");
    if (!isOn(tracer)) unmixed("surface_tracer_flux", surfaceTracerFlux, "tracer");
}

// Whether vertical diffusion solves the Coriolis force with the winds: an implicit Coriolis force (coriolis:
// {implicit: on}) and the winds mixed implicitly. The Coriolis process then leaves its step to this one.
inline bool mixingSolvesCoriolis(Config const& c) {
    auto const& d = c.settings<DiffusionSettings>();
    return c.enabled(CoriolisSettings::process) && isOn(c.settings<CoriolisSettings>().implicit) &&
           c.enabled(DiffusionSettings::process) && d.mode == DiffusionMode::Implicit && isOn(d.momentum);
}

// The winds' backward-Euler step with the Coriolis force, from the mixing operator L x = M x + b of either wind (its
// band matrix by ops::matrixOf: M(k, k - 1), M(k, k), M(k, k + 1) and b per column and level). With a = dt f,
//   (1 - dt L) u' - a v' = u + dt b - a vg,   a u' + (1 - dt L) v' = v + dt b + a ug,
// one 2x2 block tridiagonal system per column: A = -dt M(k, k-1) I, B = (1 - dt M(k, k)) I + a [[0, -1], [1, 0]],
// C = -dt M(k, k+1) I. Its fixed point has L u + f (v - vg) = 0 and L v - f (u - ug) = 0 whatever dt is: the steady
// state of the explicit operator.
struct WindBlockSystem {
    CenterView lower, diagonal, upper, minusA, plusA, du, dv;
    CenterConst mLower, mDiagonal, mUpper, affine, u, v;
    double const* f; // per column
    double dt, ug, vg;
    STRATA_HD void operator()(uint32_t c, uint32_t k) const {
        double const a = dt * f[c];
        lower(c, k) = -dt * mLower(c, k);
        diagonal(c, k) = 1.0 - dt * mDiagonal(c, k);
        upper(c, k) = -dt * mUpper(c, k);
        minusA(c, k) = -a;
        plusA(c, k) = a;
        du(c, k) = u(c, k) + dt * affine(c, k) - a * vg;
        dv(c, k) = v(c, k) + dt * affine(c, k) + a * ug;
    }
};

// rho F at the surface for heat, moisture and tracer, and its negative (the boundary value of rho K dpsi/dz).
struct SurfaceFluxes {
    FaceConst rhoFace;
    double* flux[3];
    double* negated[3];
    double kinematic[3];
    STRATA_HD void operator()(uint32_t c, uint32_t) const {
        for (int i = 0; i < 3; ++i) {
            flux[i][c] = rhoFace(c, 0) * kinematic[i];
            negated[i][c] = -flux[i][c];
        }
    }
};

struct DiffusivityProfile {
    FaceView K;
    double const* zf;
    double surface, free, height;
    bool boundaryLayer;
    STRATA_HD void operator()(uint32_t c, uint32_t k) const {
        K(c, k) = boundaryLayer ? free + (surface - free) * math::exp(-zf[k] / height) : surface;
    }
};

// The boundary-layer diffusivity of RJ12 (eq. 18): K = C_E |v_a| z_a where p >= 850 hPa, decaying above as
// exp(-((850 hPa - p) / 100 hPa)^2); |v_a| the lowest level's wind speed with gustiness, z_a its height. The decay
// depends on the reference pressure only, which is fixed in time: ReedJablonowskiDecay computes it once (1 at and
// below 850 hPa), and each step multiplies (the same bits as evaluating the exp every step).
struct ReedJablonowskiDecay {
    FaceView decay;
    FaceConst pFace;
    STRATA_HD void operator()(uint32_t c, uint32_t k) const {
        double const above = (85000.0 - pFace(c, k)) / 10000.0;
        decay(c, k) = pFace(c, k) >= 85000.0 ? 1.0 : math::exp(-above * above);
    }
};
struct ReedJablonowskiDiffusivity {
    FaceView K;
    FaceConst pFace, decay;
    CenterConst u, v;
    double za, ce, gust;
    STRATA_HD void operator()(uint32_t c, uint32_t k) const {
        double const ua = u(c, 0), va = v(c, 0);
        double const k0 = ce * sqrt(ua * ua + va * va + gust * gust) * za;
        K(c, k) = pFace(c, k) >= 85000.0 ? k0 : k0 * decay(c, k);
    }
};

template <class Backend>
class VerticalDiffusion : public Process<Backend> {
public:
    using Settings = DiffusionSettings;
    static std::vector<FieldDecl> declarations(Config const& cfg) {
        auto const& d = cfg.settings<Settings>();
        Access const change = d.mode == DiffusionMode::Explicit ? Access::Tendency : Access::Adjusts;
        // A variable not mixed is not changed; the winds are read in any case (the Reed-Jablonowski K follows them).
        auto mixed = [&](Switch on) { return isOn(on) ? change : Access::Reads; };
        std::vector<FieldDecl> f = {{"u", "m s-1", mixed(d.momentum)},
                                    {"v", "m s-1", mixed(d.momentum)},
                                    {"rho", "kg m-3", Access::Reads},
                                    {"exner", "1", Access::Reads},
                                    {"rho_face", "kg m-3", Access::Reads}};
        if (isOn(d.heat)) f.push_back({"T", "K", change});
        if (isOn(d.moisture)) f.push_back({"q", "kg kg-1", change});
        if (isOn(d.tracer)) f.push_back({"tracer", "1", change});
        if (d.profile == DiffusionProfile::ReedJablonowski) f.push_back({"p_face", "Pa", Access::Reads});
        if (mixingSolvesCoriolis(cfg)) f.push_back({"latitude", "degrees_north", Access::Reads});
        return f;
    }

    VerticalDiffusion(Config const& cfg, ProcessEnv<Backend>& env)
        : Process<Backend>(env.declared()), m_cfg(cfg.settings<Settings>()), m_rho(env.center("rho")),
          m_exner(env.center("exner")), m_rhoFace(env.face("rho_face")), m_u(env.center("u")), m_v(env.center("v")),
          m_pFace(m_cfg.profile == DiffusionProfile::ReedJablonowski ? &env.face("p_face") : nullptr),
          m_K(env.grid(), env.columns(), env.space()), m_decay(env.grid(), env.columns(), env.space()),
          m_rhoK(env.grid(), env.columns(), env.space()), m_heat(env.columns(), env.space()),
          m_moisture(env.columns(), env.space()), m_tracer(env.columns(), env.space()),
          m_negHeat(env.columns(), env.space()), m_negMoisture(env.columns(), env.space()),
          m_negTracer(env.columns(), env.space()), m_noFlux(env.columns(), env.space()) {
        std::fill(m_noFlux.host().begin(), m_noFlux.host().end(), 0.0);
        m_noFlux.toDevice();
        if (mixingSolvesCoriolis(cfg)) m_winds = std::make_unique<WindsWithCoriolis>(cfg, env);
    }

    std::string name() const override { return std::string(Settings::process); }

    // Explicit SSP-RK3 is stable while dt times every eigenvalue of the discrete operator lies in its stability
    // interval [-2.5127, 0] on the real axis. The operator is M^-1 A (M = rho0 dzCenter, A symmetric with the face
    // conductances D = rho0_face K / dzFace, D = 0 on the boundary faces: the surface flux is prescribed, the top is
    // closed), similar to the symmetric tridiagonal M^-1/2 A M^-1/2, so its eigenvalues are real. The check computes
    // the most negative one per column (detail::lowestEigenvalue, Sturm bisection): on a stretched grid that is the
    // thin bottom cell next to a thin face, which K dt / dzFace^2 does not see.
    void checkStability(StepContext<Backend>& ctx) override {
        if (m_cfg.mode != DiffusionMode::Explicit) return;
        auto const w = worstColumn(ctx);
        if (!(w.value <= rk3RealAxisLimit))
            throw StabilityError(
                detail::formatLimit("explicit diffusion: dt |lowest eigenvalue of the diffusion operator|", w.value,
                                    rk3RealAxisLimit, w.column, w.face, "stiffest cell"),
                "processes.vertical_diffusion", "a smaller time.dt, mode: implicit, or a smaller kappa");
    }

    // dt |lowest eigenvalue| over the columns, where it is largest (and the cell of that column's largest row sum).
    detail::Worst worstColumn(StepContext<Backend>& ctx) {
        setDiffusivity(ctx);
        m_K.toHost();
        m_rho.toHost();
        m_rhoFace.toHost();
        auto const& dzf = ctx.grid->dzFace();
        auto const& dzc = ctx.grid->dzCenter();
        uint32_t const n = ctx.grid->cells();
        std::vector<double> diagonal(n), offDiagonal(n > 0 ? n - 1 : 0);
        detail::Worst w;
        for (uint32_t c = 0; c < ctx.columns; ++c) {
            // The top face is closed; the bottom face conducts only for mixed winds over a no-slip ground (the
            // stricter operator of the two, so the check holds for every diffused variable).
            bool const groundConducts = noSlip() && isOn(m_cfg.momentum);
            auto conductance = [&](uint32_t f) {
                return f == n || (f == 0 && !groundConducts) ? 0.0 : m_rhoFace.at(c, f) * m_K.at(c, f) / dzf[f];
            };
            uint32_t rowOfMax = 0;
            for (uint32_t k = 0; k < n; ++k) {
                double const m = m_rho.at(c, k) * dzc[k];
                diagonal[k] = -(conductance(k) + conductance(k + 1)) / m;
                if (k + 1 < n) offDiagonal[k] = conductance(k + 1) / std::sqrt(m * m_rho.at(c, k + 1) * dzc[k + 1]);
                if (diagonal[k] < diagonal[rowOfMax]) rowOfMax = k;
            }
            double const x = ctx.dt * -detail::lowestEigenvalue(diagonal, offDiagonal);
            if (!(x <= w.value)) w = {x, c, rowOfMax};
        }
        return w;
    }

    // SSP-RK3's stability interval on the negative real axis, [-2.5127, 0] (R(z) = 1 + z + z^2/2 + z^3/6, |R| = 1).
    static constexpr double rk3RealAxisLimit = detail::rk3RealAxisLimit;

    void prepareStep(StepContext<Backend>& ctx) override {
        setDiffusivity(ctx);
        ops::evaluate(ctx.backend, m_rhoK, m_rhoFace * m_K, ctx.engine);
        // The surface fluxes, and in the same launch their budget terms: whatever the mode, dt times the surface flux
        // enters through the bottom face.
        addColumnTerms(ctx.backend, ctx.columns,
                       SurfaceFluxes{std::as_const(m_rhoFace).view(),
                                     {m_heat.device(), m_moisture.device(), m_tracer.device()},
                                     {m_negHeat.device(), m_negMoisture.device(), m_negTracer.device()},
                                     {m_cfg.surfaceHeatFlux, m_cfg.surfaceMoistureFlux, m_cfg.surfaceTracerFlux}},
                       // (each 0 for a variable not mixed: DiffusionSettings::check)
                       {ctx.budget.term(HeatBudget, m_heat, ctx.dt * constants::cp),
                        ctx.budget.term(WaterBudget, m_moisture, ctx.dt),
                        ctx.budget.term(TracerBudget, m_tracer, ctx.dt)});
    }

    void addTendencies(StepContext<Backend>& ctx, Prognostics const& u, Prognostics& t, double) override {
        if (m_cfg.mode != DiffusionMode::Explicit) return;
        // The bottom face carries rho K dpsi/dz = -rho F (F the upward surface flux), the top face none: the operator
        // the implicit mode solves (app/model/implicit_diffusion.hpp), divided by rho0.
        auto flux = [](core::Buffer<double> const& negated) { return ops::ColumnValues<double>{negated.device()}; };
        if (isOn(m_cfg.heat))
            ops::evaluateAdd(ctx.backend, t.T, m_exner * (fluxMixing(m_rhoK, u.T / m_exner, flux(m_negHeat)) / m_rho),
                             ctx.engine);
        if (isOn(m_cfg.moisture))
            ops::evaluateAdd(ctx.backend, t.q, fluxMixing(m_rhoK, u.q, flux(m_negMoisture)) / m_rho, ctx.engine);
        if (isOn(m_cfg.tracer))
            ops::evaluateAdd(ctx.backend, t.tracer, fluxMixing(m_rhoK, u.tracer, flux(m_negTracer)) / m_rho,
                             ctx.engine);
        auto momentum = [&](CenterField const& x, CenterField& tx) {
            if (noSlip())
                ops::evaluateAdd(ctx.backend, tx, windMixingNoSlip(x), ctx.engine);
            else
                ops::evaluateAdd(ctx.backend, tx, windMixingFreeSlip(x), ctx.engine);
        };
        if (!isOn(m_cfg.momentum)) return;
        momentum(u.u, t.u);
        momentum(u.v, t.v);
    }

    // Backward Euler for T (through theta = T / exner0), q, tracer, u and v, in one kernel
    // (app/model/implicit_diffusion.hpp: the matrix rows and right-hand sides from the operator's expression, a matrix
    // factored once per column and ground condition).
    void implicitStep(StepContext<Backend>& ctx, Prognostics& u) override {
        if (m_cfg.mode != DiffusionMode::Implicit) return;
        // The winds go to their own solve where the Coriolis force is solved with them.
        bool const windsHere = isOn(m_cfg.momentum) && !m_winds;
        uint32_t const diffused = (isOn(m_cfg.heat) ? 1u : 0u) | (isOn(m_cfg.moisture) ? 2u : 0u) |
                                  (isOn(m_cfg.tracer) ? 4u : 0u) | (windsHere ? 24u : 0u);
        diffuseImplicitly(ctx.backend, ctx.columns,
                          ImplicitDiffusionFields{u.T.view(), u.q.view(), u.tracer.view(), u.u.view(), u.v.view(),
                                                  std::as_const(m_rho).view(), std::as_const(m_exner).view(),
                                                  std::as_const(m_rhoK).view(), m_negHeat.device(),
                                                  m_negMoisture.device(), m_negTracer.device(), m_noFlux.device(),
                                                  ctx.grid->view(Backend::memSpace), ctx.dt, noSlip(), diffused});
        if (m_winds) solveWindsWithCoriolis(ctx, u);
    }

    // The winds and the Coriolis force in one backward-Euler step (WindBlockSystem): the mixing operator's matrix by
    // ops::MatrixAssembly (matrixOf's untrimmed matrix, no host access in the step, its fields kept from step to
    // step), the block bands assembled in one pass, and
    // ops::solveBlockTridiagonal's Bfb variant (block Thomas: the same bits on every backend).
    void solveWindsWithCoriolis(StepContext<Backend>& ctx, Prognostics& u) {
        auto& w = *m_winds;
        // The untrimmed band is the expression's read band, -2 .. 2 with the boundary stencils' footprints; the
        // operator itself is tridiagonal, its diagonals -2 and 2 zero (test_physics' Ekman test of the implicit force
        // would miss the explicit run's steady state otherwise).
        auto assemble = [&](auto const& m) {
            forEachPoint(ctx.backend, ctx.columns, u.u.levels(),
                         WindBlockSystem{w.lower.view(), w.diagonal.view(), w.upper.view(), w.minusA.view(),
                                         w.plusA.view(), w.du.view(), w.dv.view(), m.diagonal(-1).view(),
                                         m.diagonal(0).view(), m.diagonal(1).view(), m.affine.view(),
                                         std::as_const(u.u).view(), std::as_const(u.v).view(), w.f.device(), ctx.dt,
                                         w.ug, w.vg});
        };
        if (noSlip())
            assemble(w.matrix(
                ctx.backend, u.u, [&](auto const& x) { return windMixingNoSlip(x); }, ctx.engine));
        else
            assemble(w.matrix(
                ctx.backend, u.u, [&](auto const& x) { return windMixingFreeSlip(x); }, ctx.engine));
        ops::Block2x2<double> const lower{w.lower, w.zero, w.zero, w.lower};
        ops::Block2x2<double> const diagonal{w.diagonal, w.minusA, w.plusA, w.diagonal};
        ops::Block2x2<double> const upper{w.upper, w.zero, w.zero, w.upper};
        ops::solveBlockTridiagonal(ctx.backend, lower, diagonal, upper, w.du, w.dv, u.u, u.v, ops::Tridiag::Bfb);
    }

    StepCost stepCost() const override {
        // (With the Coriolis force solved with the winds, the winds' solve costs more than counted here: the matrix's
        // six evaluations of the operator (at 0 and at the five probes of its read band) and the block system's
        // fields.) Set-up once per step: K on faces (reads p_face, writes rho0 K: 24 B per face with rho_face; the
        // Reed-Jablonowski profile reads u, v at the lowest level and takes a sqrt per face, its decay above
        // 850 hPa computed once; the other profiles an exp per face) and the surface fluxes per column (rho_face in,
        // 6 values out: 56 B).
        double const perFace = m_cfg.profile == DiffusionProfile::Constant ? 0.0 : 1.0;
        StepCost c{24.0, 56.0 + (m_cfg.profile == DiffusionProfile::ReedJablonowski ? 16.0 : 0.0), perFace, perFace,
                   ""};
        // Five variables (T, q, tracer, u, v) share rho0, exner0 and rho0 K (24 B); each is read and written (16 B).
        if (m_cfg.mode == DiffusionMode::Explicit) {
            c.bytesPerCell += 3 * (24.0 + 5 * 24.0); // per stage: psi read, tendency read and written
            c.basis = "3 stages x (5 variables x 24 B + rho0, exner0, rho0 K) + K set-up";
        } else {
            c.bytesPerCell += 24.0 + 5 * 16.0; // one implicit solve per variable, Thomas sweeps in fast memory
            c.basis = "5 tridiagonal solves (psi in and out, rho0, exner0, rho0 K) + K set-up";
        }
        return c;
    }

    bool output(std::string_view name, std::vector<double>& values) override {
        if (name != "K") return false;
        values = hostValues(m_K);
        return true;
    }

private:
    bool noSlip() const { return m_cfg.surfaceMomentum == SurfaceMomentum::NoSlip; }

    // The winds' mixing, (1/rho0) d/dz(rho0 K dx/dz) with no stress through the top; at the ground either x = 0 on the
    // face (no-slip: the bottom face's flux comes from the gradient over the half cell) or no stress (free-slip). The
    // explicit tendency and the implicit solve with the Coriolis force take the same expression.
    template <class X>
    auto windMixingNoSlip(X const& x) const {
        return noSlipMixing(m_rhoK, x) / m_rho;
    }
    template <class X>
    auto windMixingFreeSlip(X const& x) const {
        return fluxMixing(m_rhoK, x, ops::ColumnValues<double>{m_noFlux.device()}) / m_rho;
    }

    void setDiffusivity(StepContext<Backend>& ctx) {
        if (m_cfg.profile == DiffusionProfile::ReedJablonowski) {
            if (!m_decayReady) {
                forEachPoint(ctx.backend, ctx.columns, m_decay.levels(),
                             ReedJablonowskiDecay{m_decay.view(), m_pFace->view()});
                m_decayReady = true;
            }
            forEachPoint(ctx.backend, ctx.columns, m_K.levels(),
                         ReedJablonowskiDiffusivity{
                             m_K.view(), m_pFace->view(), std::as_const(m_decay).view(), m_u.view(), m_v.view(),
                             ctx.grid->centers()[0] - ctx.grid->faces()[0], m_cfg.ce, m_cfg.gustiness});
            return;
        }
        auto const g = ctx.grid->view(Backend::memSpace);
        forEachPoint(ctx.backend, ctx.columns, m_K.levels(),
                     DiffusivityProfile{m_K.view(), g.zf, m_cfg.kappa, m_cfg.kappaFree, m_cfg.boundaryLayerHeight,
                                        m_cfg.profile == DiffusionProfile::BoundaryLayer});
    }

    Settings m_cfg;
    CenterField& m_rho;
    CenterField const& m_exner;
    FaceField& m_rhoFace;
    CenterField const& m_u; // the current winds: the Reed-Jablonowski profile follows the lowest level's speed
    CenterField const& m_v;
    FaceField const* m_pFace; // reed_jablonowski only
    FaceField m_K;
    FaceField m_decay;         // Reed-Jablonowski's decay above 850 hPa, fixed in time
    bool m_decayReady = false; // (computed on first use, with the step's backend)
    FaceField m_rhoK;
    core::Buffer<double> m_heat, m_moisture, m_tracer; // rho_face F at the surface (kinematic flux times density)
    core::Buffer<double> m_negHeat, m_negMoisture, m_negTracer;
    core::Buffer<double> m_noFlux; // zeros: no flux through the bottom face (winds over a free-slip ground)

    // The winds' block system with the Coriolis force (mixingSolvesCoriolis): f per column, the geostrophic wind, and
    // the fields of the block bands (A and C are multiples of the identity: their off-diagonal entries `zero`) and the
    // right-hand sides.
    struct WindsWithCoriolis {
        double ug, vg;
        core::Buffer<double> f;
        CenterField lower, diagonal, upper, minusA, plusA, zero, du, dv;
        ops::MatrixAssembly<double, ops::Center, ops::Center> matrix; // the winds' mixing operator's
        WindsWithCoriolis(Config const& cfg, ProcessEnv<Backend>& env)
            : ug(cfg.settings<CoriolisSettings>().ug), vg(cfg.settings<CoriolisSettings>().vg),
              f(env.columns(), env.space()), lower(field(env)), diagonal(field(env)), upper(field(env)),
              minusA(field(env)), plusA(field(env)), zero(field(env)), du(field(env)), dv(field(env)) {
            auto& latitude = env.perColumn("latitude");
            latitude.toHost();
            for (uint32_t c = 0; c < env.columns(); ++c)
                f.host()[c] = coriolisParameter(latitude.host()[c]);
            f.toDevice();
        }
        static CenterField field(ProcessEnv<Backend>& env) { return {env.grid(), env.columns(), env.space()}; }
    };
    std::unique_ptr<WindsWithCoriolis> m_winds;
};

} // namespace strata::app
