// Kessler warm rain (Kessler 1969; Klemp & Wilhelmson 1978), in the form of the DCMIP 2016 reference code, on the
// anelastic reference state. Per step, after the explicit part:
//   1. sedimentation of rain: d(rho0 qr)/dt = d/dz(rho0 qr V_t), a flux divergence through the stencil layer: the
//      downward mass flux rho0 qr V_t of each cell is carried to the face below it (the upwind value for falling rain,
//      RightBiasedC2F, nothing entering through the top), DivergenceF2C with the bottom face open: what crosses it is
//      surface rain. `sedimentation: on`: forward Euler in sub-steps with V_t dt_sub / dz <= 0.8 everywhere (the
//      count is the same for every column of every rank, so results do not depend on the decomposition).
//      `sedimentation: implicit`: one backward-Euler step, qr_new - dt f(qr_new) = qr with f(x) = div(toFaces(rho0 V_t
//      x)) / rho0 and V_t taken from qr at the start of the step (linear in x): its matrix comes from the expression
//      (ops::matrixOf; upper bidiagonal, each cell receiving from the one above), solved by Thomas. The matrix
//      has a positive diagonal and a non-positive upper band, so qr_new >= 0 at any Courant number, and the column's
//      rain changes by exactly what the bottom face's flux (at qr_new) carries out, to rounding;
//      V_t = 36.34 (0.001 rho0 qr)^0.1364 sqrt(rho0_surface / rho0)                         (m/s, rho0 qr in kg m-3)
//   2. autoconversion 0.001 max(qc - 0.001, 0) and accretion 2.2 qc qr^0.875 (s-1), implicit in qr as in DCMIP;
//   3. saturation adjustment towards q_vs = (3.8 / p_mb) exp(17.27 (T - 273) / (T - 36)), linearised with
//      dq_vs/dT = q_vs 17.27 * 237 / (T - 36)^2: prod = (q - q_vs) / (1 + (L / cp) dq_vs/dT);
//   4. evaporation of rain (Klemp & Wilhelmson 1978):
//      dt (1/rhohat) (1 - q/q_vs) C (rhohat qr)^0.525 / (5.4e5 + 2.55e6 / (p_mb q_vs)),  C = 1.6 + 124.9 (rhohat
//      qr)^0.2046, rhohat = 0.001 rho0 (g cm-3), limited by the rain present and the saturation deficit;
//   5. T += (L / cp) (condensation - evaporation); q, qc, qr change by the same amounts, so q + qc + qr is unchanged.
// Budgets: water leaves only as surface rain, dt_sub times the flux through the bottom face of each sub-step; heat
// changes by L sum(rho0 (net condensation) / exner0 dz).
//
// Mixing ratios: DCMIP's Kessler works in mixing ratios r = m_x / m_dry and the dry air density (q_vs above is a
// mixing ratio, ~ eps e_s / p), while Strata's q, qc and qr are mass fractions (specific humidity: kg per kg of moist
// air). Steps 2-5 therefore convert, r_x = q_x / (1 - q_t) with q_t = q + qc + qr and rho_dry = rho0 (1 - q_t), apply
// the published formulas, and convert back, q_x = r_x (1 - q_t): condensation moves water between the species and
// leaves q_t unchanged, so the factor is the same both ways. Sedimentation needs no conversion: the rain's mass per
// volume rho0 qr is rho_dry r_r. The latent heating is (L / cp) times the net condensation in mixing ratio, as in
// DCMIP, and the heat budget counts that.
#pragma once

#include <strata/app/model/process.hpp>
#include <strata/app/model/thermodynamics.hpp>
#include <strata/app/processes/detail/precipitation.hpp>
#include <strata/core/math.hpp>
#include <strata/operators/column/tridiagonal.hpp>
#include <strata/operators/matrix.hpp>

#include <cmath>
#include <string>
#include <vector>

namespace strata::app {

namespace kessler {
STRATA_HD inline double saturationHumidity(double T, double p) {
    return 3.8 / (0.01 * p) * math::exp(17.27 * (T - 273.0) / (T - 36.0));
}
// Terminal velocity of rain (m/s) for rain mass density rho qr (kg m-3), at density rho below a surface density rhoS.
STRATA_HD inline double terminalVelocity(double rhoQr, double rho, double rhoS) {
    return 36.34 * math::pow(0.001 * (rhoQr > 0 ? rhoQr : 0.0), 0.1364) * sqrt(rhoS / rho);
}
} // namespace kessler

// rho0 qr V_t at centers (the downward mass flux of rain) and the largest Courant number V_t dt / dz of a column.
struct RainFallKernel {
    CenterView massFlux, courant;
    CenterConst qr, rho;
    double const* dz; // dzCenter, device
    double dt;
    STRATA_HD void operator()(uint32_t c, uint32_t k) const {
        double const vt = kessler::terminalVelocity(rho(c, k) * qr(c, k), rho(c, k), rho(c, 0));
        massFlux(c, k) = rho(c, k) * qr(c, k) * vt;
        courant(c, k) = vt * dt / dz[k];
    }
};

// rho0 V_t at centers: the downward mass flux per unit of qr, V_t from qr.
struct FallFactorKernel {
    CenterView factor;
    CenterConst qr, rho;
    STRATA_HD void operator()(uint32_t c, uint32_t k) const {
        factor(c, k) = rho(c, k) * kessler::terminalVelocity(rho(c, k) * qr(c, k), rho(c, k), rho(c, 0));
    }
};

struct KesslerKernel {
    CenterView T, q, qc, qr, netCondensation;
    CenterConst p, rho;
    double dt;
    STRATA_HD void operator()(uint32_t c, uint32_t k) const {
        // Mass fractions to mixing ratios (per kg of dry air) and the dry air density.
        double const dry = 1.0 - (q(c, k) + qc(c, k) + qr(c, k)), perDry = 1.0 / dry;
        double const rhat = 0.001 * rho(c, k) * dry, pmb = 0.01 * p(c, k);
        double qcv = qc(c, k) * perDry, qrv = qr(c, k) * perDry, qv = q(c, k) * perDry, t = T(c, k);
        // Autoconversion and accretion (implicit in qr: DCMIP 2016).
        double const auto0 = qcv - 0.001 > 0 ? 0.001 * (qcv - 0.001) : 0.0;
        double const qrprod = qcv - (qcv - dt * auto0) / (1.0 + dt * 2.2 * math::pow(qrv, 0.875));
        qcv = qcv - qrprod;
        qrv = qrv + qrprod;
        // Saturation adjustment.
        double const qvs = kessler::saturationHumidity(t, p(c, k));
        double const dqvsdT = qvs * 17.27 * 237.0 / ((t - 36.0) * (t - 36.0));
        double const prod = (qv - qvs) / (1.0 + (moist::latentHeat / constants::cp) * dqvsdT);
        // Evaporation of rain, limited by the rain present and by the deficit left after cloud water evaporates.
        double const rq = rhat * qrv > 0 ? rhat * qrv : 0.0;
        double const vent = 1.6 + 124.9 * math::pow(rq, 0.2046);
        double const deficit = qvs - qv > 0 ? (qvs - qv) / (rhat * qvs) : 0.0;
        double ern = dt * vent * math::pow(rq, 0.525) / (2.55e6 / (pmb * qvs) + 5.4e5) * deficit;
        double const room = -prod - qcv > 0 ? -prod - qcv : 0.0;
        ern = ern < room ? ern : room;
        ern = ern < qrv ? ern : qrv;
        double const condensed = prod > -qcv ? prod : -qcv; // cloud water evaporates at most all there is
        double const net = condensed - ern;
        T(c, k) = t + (moist::latentHeat / constants::cp) * net;
        // Back to mass fractions: q_t is unchanged, so 1 - q_t is too.
        q(c, k) = (qv - net) * dry;
        qc(c, k) = (qcv + condensed) * dry;
        qr(c, k) = (qrv - ern) * dry;
        netCondensation(c, k) = net;
    }
};

// How rain falls: explicit sub-steps (on), one implicit step (implicit), or not at all (off: the rain stays where it
// is, the microphysics alone, as a box model or a driver with its own fall scheme).
enum class Sedimentation { Substeps, Implicit, Off };
STRATA_CHOICES(Sedimentation, Choice<Sedimentation>{"on", Sedimentation::Substeps},
               Choice<Sedimentation>{"implicit", Sedimentation::Implicit},
               Choice<Sedimentation>{"off", Sedimentation::Off}, Choice<Sedimentation>{"true", Sedimentation::Substeps},
               Choice<Sedimentation>{"false", Sedimentation::Off});

struct KesslerSettings {
    static constexpr std::string_view process = "kessler";
    Sedimentation sedimentation = Sedimentation::Substeps;

    template <class V>
    void describe(V& v) {
        v.field("sedimentation", sedimentation, detail::named<Sedimentation>());
    }
    static std::vector<VariableInfo> outputs() { return {precipitationFluxVariable}; }
    bool operator==(KesslerSettings const&) const = default;
};

template <class Backend>
class Kessler : public Process<Backend> {
public:
    using Settings = KesslerSettings;
    static std::vector<FieldDecl> declarations(Config const&) {
        return {{"T", "K", Access::Adjusts},        {"q", "kg kg-1", Access::Adjusts},
                {"qc", "kg kg-1", Access::Adjusts}, {"qr", "kg kg-1", Access::Adjusts},
                {"p", "Pa", Access::Reads},         {"rho", "kg m-3", Access::Reads},
                {"exner", "1", Access::Reads}};
    }

    Kessler(Config const& cfg, ProcessEnv<Backend>& env)
        : Process<Backend>(env.declared()), m_cfg(cfg.settings<Settings>()), m_p(env.center("p")),
          m_rho(env.center("rho")), m_exner(env.center("exner")), m_massFlux(env.grid(), env.columns(), env.space()),
          m_courant(env.grid(), env.columns(), env.space()), m_net(env.grid(), env.columns(), env.space()),
          m_weighted(env.grid(), env.columns(), env.space()), m_b(env.grid(), env.columns(), env.space()),
          m_c(env.grid(), env.columns(), env.space()), m_zero(env.grid(), env.columns(), env.space()),
          m_face(env.grid(), env.columns(), env.space()), m_column(env.columns(), env.space()),
          m_rain(env.columns(), env.space()), m_largest(env.columns(), env.space()) {}

    std::string name() const override { return std::string(Settings::process); }

    void implicitStep(StepContext<Backend>& ctx, Prognostics& u) override {
        if (m_cfg.sedimentation == Sedimentation::Substeps)
            sediment(ctx, u.qr);
        else if (m_cfg.sedimentation == Sedimentation::Implicit)
            sedimentImplicit(ctx, u.qr);
        else
            m_rain.tick(ctx.dt); // no rain reaches the ground: the mean is over zeros
        forEachPoint(ctx.backend, ctx.columns, u.T.levels(),
                     KesslerKernel{u.T.view(), u.q.view(), u.qc.view(), u.qr.view(), m_net.view(),
                                   std::as_const(m_p).view(), std::as_const(m_rho).view(), ctx.dt});
        ops::columnIntegralsOfThen(ctx.backend, m_weighted, m_column,
                                   columnTerms({ctx.budget.term(HeatBudget, m_column, moist::latentHeat)}),
                                   m_rho * m_net / m_exner);
    }

    StepCost stepCost() const override {
        // One sedimentation sub-step (more when the rain's Courant number exceeds 0.8): qr read and written, rho0
        // read, fall speed pow and sqrt per cell; then T, q, qc, qr read and written (64 B), p, rho0, exner0 read
        // (24 B), the saturation exp and the autoconversion pow per cell; surface rain and the heat integral per
        // column.
        return {24.0 + 64.0 + 24.0, 16.0, 4.0, 0.0, "one sedimentation sub-step + the microphysics kernel"};
    }

    std::string outputLongName(std::string const& name) const override {
        return name == "precipitation_flux" ? "rain reaching the ground (Kessler warm rain), mean since the previous "
                                              "output"
                                            : "";
    }

    bool output(std::string_view name, std::vector<double>& out) override {
        if (name != "precipitation_flux") return false;
        m_rain.takeMean(out);
        return true;
    }

private:
    // The bottom face's flux into the water budget (out) and the surface rain's mean, over dt.
    void countSurfaceRain(StepContext<Backend>& ctx, double dt) {
        ColumnTerm rain; // the bottom face's flux: out of the water budget, into the rain's mean
        rain.values = std::as_const(m_face).view().data;
        rain.stride = std::as_const(m_face).view().stride;
        ColumnTerm lost = rain;
        lost.scale = -dt;
        addColumnTerms(ctx.backend, ctx.columns, {ctx.budget.term(WaterBudget, lost), m_rain.adding(rain, dt)});
    }

    // One backward-Euler step of the fall with V_t from the rain at the start of the step (see the top of the file).
    void sedimentImplicit(StepContext<Backend>& ctx, CenterField& qr) {
        // rho0 V_t into m_massFlux (the mass flux per unit of qr), from qr now
        forEachPoint(ctx.backend, ctx.columns, qr.levels(),
                     FallFactorKernel{m_massFlux.view(), std::as_const(qr).view(), std::as_const(m_rho).view()});
        auto const toFaces = ops::RightBiasedC2F{ops::NoBC{}, ops::SetValue{0.0}};
        auto const divergence = ops::DivergenceF2C{};
        auto const fall = [&](auto const& x) { return divergence(toFaces(m_massFlux * x)) / m_rho; };
        // Untrimmed: the read band -1 .. 2 of the expression, its diagonals -1 and 2 zero (the fall is upper
        // bidiagonal), and no host access (a copy on a GPU) in the step.
        auto const& m = m_fallMatrix(ctx.backend, qr, fall, ctx.engine);
        double const dt = ctx.dt;
        // (1 - dt M) x = qr + dt b, nothing below the diagonal (m_zero)
        ops::evaluate(ctx.backend, m_b, 1.0 - dt * m.diagonal(0), ops::Engine::Direct);
        ops::evaluate(ctx.backend, m_c, -dt * m.diagonal(1), ops::Engine::Direct);
        ops::evaluate(ctx.backend, m_weighted, qr + dt * m.affine, ops::Engine::Direct);
        ops::solveTridiagonal(ctx.backend, m_zero, m_b, m_c, m_weighted, qr, ops::Tridiag::Bfb);
        // Surface rain: the flux through the bottom face at the new rain.
        ops::evaluate(ctx.backend, m_face, toFaces(m_massFlux * qr), ops::Engine::Direct);
        countSurfaceRain(ctx, dt);
        m_rain.tick(ctx.dt);
    }

    void sediment(StepContext<Backend>& ctx, CenterField& qr) {
        auto const dz = ctx.grid->view(Backend::memSpace).dzCenter;
        forEachPoint(ctx.backend, ctx.columns, qr.levels(),
                     RainFallKernel{m_massFlux.view(), m_courant.view(), std::as_const(qr).view(),
                                    std::as_const(m_rho).view(), dz, ctx.dt});
        ops::columnMax(ctx.backend, m_courant, m_largest);
        m_largest.toHost();
        double local = 0;
        for (uint32_t c = 0; c < ctx.columns; ++c)
            local = std::max(local, m_largest.host()[c]);
        double const courant = ctx.globalMax(local);
        auto const substeps = static_cast<uint32_t>(std::max(1.0, std::ceil(courant / 0.8)));
        double const dtSub = ctx.dt / substeps;
        // The flux on faces: face k carries the cell above it (falling rain), nothing comes through the top.
        auto const toFaces = ops::RightBiasedC2F{ops::NoBC{}, ops::SetValue{0.0}};
        auto const divergence = ops::DivergenceF2C{};
        for (uint32_t i = 0; i < substeps; ++i) {
            if (i > 0)
                forEachPoint(ctx.backend, ctx.columns, qr.levels(),
                             RainFallKernel{m_massFlux.view(), m_courant.view(), std::as_const(qr).view(),
                                            std::as_const(m_rho).view(), dz, dtSub});
            // Surface rain of this sub-step: the flux through the bottom face, rho0 qr V_t of the lowest cell.
            ops::evaluate(ctx.backend, m_face, toFaces(m_massFlux), ops::Engine::Direct);
            countSurfaceRain(ctx, dtSub);
            ops::evaluate(ctx.backend, m_weighted, qr + dtSub * (divergence(toFaces(m_massFlux)) / m_rho), ctx.engine);
            forEachPoint(ctx.backend, ctx.columns, qr.levels(), Copy{qr.view(), std::as_const(m_weighted).view()});
        }
        m_rain.tick(ctx.dt);
    }

    Settings m_cfg;
    CenterField const& m_p;
    CenterField const& m_rho;
    CenterField const& m_exner;
    CenterField m_massFlux, m_courant, m_net, m_weighted, m_b, m_c, m_zero;
    ops::MatrixAssembly<double, ops::Center, ops::Center> m_fallMatrix; // implicit sedimentation's, every step
    FaceField m_face;
    core::Buffer<double> m_column;
    ColumnMean m_rain;
    core::Buffer<double> m_largest;

public:
    void restartEntries(std::vector<RestartEntry>& entries) override { m_rain.restartEntries("kessler_rain", entries); }
};

} // namespace strata::app
