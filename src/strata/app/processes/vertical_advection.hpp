// Vertical advection by a prescribed large-scale vertical velocity, in the advective form consistent with anelastic
// continuity (the derivation is at the kernels below).
#pragma once

#include <strata/app/model/process.hpp>
#include <strata/app/processes/detail/stability.hpp>
#include <strata/core/math.hpp>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace strata::app {

enum class AdvectionScheme { Upwind3, Upwind1, Limited };
STRATA_CHOICES(AdvectionScheme, Choice<AdvectionScheme>{"upwind3", AdvectionScheme::Upwind3},
               Choice<AdvectionScheme>{"upwind1", AdvectionScheme::Upwind1},
               Choice<AdvectionScheme>{"limited", AdvectionScheme::Limited});

enum class AdvectionProfile { Sine, UniformMassFlux };
STRATA_CHOICES(AdvectionProfile, Choice<AdvectionProfile>{"sine", AdvectionProfile::Sine},
               Choice<AdvectionProfile>{"uniform_mass_flux", AdvectionProfile::UniformMassFlux});

struct AdvectionSettings {
    static constexpr std::string_view process = "vertical_advection";
    AdvectionScheme scheme = AdvectionScheme::Upwind3; // potential temperature
    double wMax = -0.01;                               // m/s: w(z) = wMax sin(pi z / top), zero at both boundaries
    AdvectionScheme positiveScheme = AdvectionScheme::Limited; // q, qc, qr and tracer, which must stay >= 0
    AdvectionProfile profile = AdvectionProfile::Sine; // uniform_mass_flux: rho0 w = rho0_surface wMax at every face
    double duration = 0.0; // s; 0: steady; > 0: wMax sin(pi t / duration) until duration, then 0

    template <class V>
    void describe(V& v) {
        v.field("scheme", scheme, detail::named<AdvectionScheme>());
        v.field("positive_scheme", positiveScheme, detail::named<AdvectionScheme>());
        v.field("profile", profile, detail::named<AdvectionProfile>());
        v.field("duration", duration, detail::atLeast(0.0));
        v.field("w_max", wMax, detail::anyNumber());
    }
    static std::vector<VariableInfo> outputs() {
        // The process says what w is in a case (outputLongName).
        return {
            {"w", "m s-1", "prescribed vertical velocity", "upward_air_velocity", Staggering::Face, Source::Process}};
    }
    bool operator==(AdvectionSettings const&) const = default;
};

// Vertical advection by a prescribed large-scale vertical velocity w(z) = wMax sin(pi z / top) on faces, in the
// advective form consistent with anelastic continuity:
//   d(psi)/dt = -w d(psi)/dz = -(1/rho0) [ d/dz(rho0 w psi) - psi d/dz(rho0 w) ]
// written with the flux operators: the face flux rho0 w psi from the configured upwind product, its divergence, and
// the divergence of the mass flux rho0 w. Where d/dz(rho0 w) != 0, continuity says air enters or leaves the column
// sideways (large-scale horizontal convergence); in this form that air carries the column's own psi, so a uniform psi
// stays uniform (the flux form alone, -(1/rho0) d/dz(rho0 w psi), would make a source -psi (1/rho0) d/dz(rho0 w)).
// The column content of rho0 psi then changes by the lateral inflow, integral of psi d/dz(rho0 w) dz: the process
// reports that term to the budgets. The bottom and top faces carry no flux (w = 0 there).

struct SubsidenceProfile {
    FaceView w;
    double const* zf;
    double wMax, top, zBottom;
    STRATA_HD void operator()(uint32_t c, uint32_t k) const {
        w(c, k) = wMax * math::sin(3.14159265358979323846 * (zf[k] - zBottom) / (top - zBottom));
    }
};

// rho0 w the same on every face (an updraft whose air neither converges nor diverges: KiD, Shipway & Hill 2012):
// w = wMax rho0(bottom face) / rho0(face).
struct UniformMassFluxProfile {
    FaceView w;
    FaceConst rhoFace;
    double wMax;
    STRATA_HD void operator()(uint32_t c, uint32_t k) const { w(c, k) = wMax * rhoFace(c, 0) / rhoFace(c, k); }
};

template <class Backend>
class VerticalAdvection : public Process<Backend> {
public:
    using Settings = AdvectionSettings;
    static std::vector<FieldDecl> declarations(Config const&) {
        return {{"T", "K", Access::Tendency},        {"q", "kg kg-1", Access::Tendency},
                {"qc", "kg kg-1", Access::Tendency}, {"qr", "kg kg-1", Access::Tendency},
                {"tracer", "1", Access::Tendency},   {"rho", "kg m-3", Access::Reads},
                {"exner", "1", Access::Reads},       {"rho_face", "kg m-3", Access::Reads}};
    }

    VerticalAdvection(Config const& cfg, ProcessEnv<Backend>& env)
        : Process<Backend>(env.declared()), m_cfg(cfg.settings<Settings>()), m_rho(env.center("rho")),
          m_exner(env.center("exner")), m_rhoFace(env.face("rho_face")), m_w(env.grid(), env.columns(), env.space()),
          m_rhoW(env.grid(), env.columns(), env.space()), m_faceFlux(env.grid(), env.columns(), env.space()),
          m_divRhoW(env.grid(), env.columns(), env.space()), m_columns(5 * env.columns(), env.space()) {}

    std::string name() const override { return std::string(Settings::process); }

    // A third-order scheme for the positive variables (not the default, which is limited) makes small undershoots
    // (docs/reliability.md): the state check allows them.
    std::optional<ValidRange> widenedRange(std::string_view variable) const override {
        if (m_cfg.positiveScheme != AdvectionScheme::Upwind3 ||
            (variable != "q" && variable != "qc" && variable != "qr"))
            return std::nullopt;
        return ValidRange{-1e-3, 0.2, "a mixing ratio in [-1e-3, 0.2] kg/kg (positive_scheme: upwind3)"};
    }

    // Courant number of the upwind face velocity against the thinner neighbouring cell. SSP-RK3 keeps the forward
    // Euler limits: 1 for the upwind products, 0.5 for the flux-limited one (its limiter reaches 2).
    void checkStability(StepContext<Backend>& ctx) override {
        auto peak = ctx; // a time-dependent amplitude is checked at its peak
        if (m_cfg.duration > 0) peak.time = 0.5 * m_cfg.duration;
        setVelocity(peak);
        m_velocityReady = false; // w now holds the peak's: the step sets its own
        m_w.toHost();
        auto const& dzc = ctx.grid->dzCenter();
        std::size_t const cells = dzc.size();
        auto const w = detail::worstFace(m_w, [&](uint32_t c, uint32_t k) {
            double const dz = std::min(dzc[k > 0 ? k - 1 : 0], dzc[k < cells ? k : cells - 1]); // the thinner neighbour
            return std::fabs(m_w.at(c, k)) * ctx.dt / dz;
        });
        double const limit = courantLimit();
        if (!(w.value <= limit))
            throw StabilityError(
                detail::formatLimit("advective Courant number |w| dt / dz", w.value, limit, w.column, w.face),
                "processes.vertical_advection", "a smaller time.dt or a smaller |w_max|");
    }

    void prepareStep(StepContext<Backend>& ctx) override {
        // A steady w (and rho0 w: the reference state is fixed in time) is set once, not every step.
        if (m_cfg.duration > 0 || !m_velocityReady) {
            setVelocity(ctx);
            setMassFlux(ctx);
            m_velocityReady = true;
        }
    }

    void addTendencies(StepContext<Backend>& ctx, Prognostics const& u, Prognostics& t, double weight) override {
        if (m_cfg.duration > 0) { // the velocity of this stage's time
            setVelocity(ctx);
            setMassFlux(ctx);
        }
        // Heat is advected as potential temperature: dT/dt = exner d(theta)/dt. The four positive variables share
        // their scheme: their tendencies come from one kernel (ops::evaluateFused), then their budget terms.
        withDivergence([&](auto const& div) {
            withScheme(m_cfg.scheme, [&](auto const& flux) {
                ops::evaluateAdd(ctx.backend, t.T, tendency(ctx, div, flux, u.T / m_exner, m_exner), ctx.engine);
            });
            withScheme(m_cfg.positiveScheme, [&](auto const& flux) {
                ops::evaluateFused(ctx.backend, ctx.engine, ops::EngineOptions{},
                                   ops::accumulate(t.q, tendency(ctx, div, flux, u.q, 1.0)),
                                   ops::accumulate(t.qc, tendency(ctx, div, flux, u.qc, 1.0)),
                                   ops::accumulate(t.qr, tendency(ctx, div, flux, u.qr, 1.0)),
                                   ops::accumulate(t.tracer, tendency(ctx, div, flux, u.tracer, 1.0)));
            });
            // The budget terms, weighted by the stage, per variable in this order: an open column's boundary
            // fluxes, then the lateral inflow integral(psi d/dz(rho0 w) dz) (the five integrals in one launch). A
            // closed column's terms are added in that launch; an open column's in a kernel per variable, after its
            // boundary fluxes are evaluated (into m_faceFlux, which the next variable overwrites).
            Budget const budgets[5] = {HeatBudget, WaterBudget, WaterBudget, WaterBudget, TracerBudget};
            double const scales[5] = {constants::cp, 1.0, 1.0, 1.0, 1.0};
            ColumnTerm lateral[5];
            AddColumnTerms closed;
            for (uint32_t i = 0; i < 5; ++i) {
                lateral[i] = ctx.budget.term(budgets[i], m_columns, weight * scales[i]);
                lateral[i].offset = i * ctx.columns;
                if (!open()) closed.add(lateral[i]);
            }
            ops::columnIntegralsOfThen(ctx.backend, m_divRhoW, m_columns, closed, (u.T / m_exner) * m_divRhoW,
                                       u.q * m_divRhoW, u.qc * m_divRhoW, u.qr * m_divRhoW, u.tracer * m_divRhoW);
            if (open()) {
                withScheme(m_cfg.scheme,
                           [&](auto const& flux) { addThroughEnds(ctx, flux, u.T / m_exner, lateral[0]); });
                withScheme(m_cfg.positiveScheme, [&](auto const& flux) {
                    addThroughEnds(ctx, flux, u.q, lateral[1]);
                    addThroughEnds(ctx, flux, u.qc, lateral[2]);
                    addThroughEnds(ctx, flux, u.qr, lateral[3]);
                    addThroughEnds(ctx, flux, u.tracer, lateral[4]);
                });
            }
        });
    }

    StepCost stepCost() const override {
        // Per stage, five advected variables (theta, q, qc, qr, tracer): psi read and its tendency read and written
        // (5 x 24 B), shared rho0, exner0, rho0 w and d/dz(rho0 w) (32 B); the budget's column integrals (5 values
        // per column). A time-dependent w (duration > 0) is set at the step's start and at every stage: rho_face in,
        // w and rho0 w out (24 B per face), rho0 w in and its divergence out (16 B) and a sin per face, 4 times; a
        // steady one once, before the first step.
        bool const unsteady = m_cfg.duration > 0;
        double const sets = unsteady ? 4.0 : 0.0;
        return {3 * (32.0 + 5 * 24.0) + sets * 40.0, 3 * 5 * 8.0 + sets * 24.0, sets, sets,
                unsteady
                    ? "3 stages x (5 variables x 24 B + rho0, exner0, rho0 w, its divergence) + w 4 times, a "
                      "sin per face"
                    : "3 stages x (5 variables x 24 B + rho0, exner0, rho0 w, its divergence); w steady, set once"};
    }

    std::string outputLongName(std::string const& name) const override {
        if (name != "w") return {};
        std::string const when = m_cfg.duration > 0 ? ", varying in time" : "";
        if (m_cfg.profile == AdvectionProfile::UniformMassFlux)
            return std::string(m_cfg.wMax > 0 ? "prescribed updraft" : "prescribed downdraft") +
                   " velocity (rho0 w uniform in height" + when + ")";
        return std::string(m_cfg.wMax < 0 ? "prescribed subsidence velocity" : "prescribed ascent velocity") +
               " (sine profile" + when + ")";
    }

    bool output(std::string_view name, std::vector<double>& values) override {
        if (name != "w") return false;
        values = hostValues(m_w);
        return true;
    }

private:
    // The flux-limited product keeps q >= 0 while the outflow Courant numbers of a cell add up to <= 1/2
    // (docs/operators.md): with outflow through at most both faces, |w| dt / dz <= 1/4 per face.
    double courantLimit() const {
        return m_cfg.scheme == AdvectionScheme::Limited || m_cfg.positiveScheme == AdvectionScheme::Limited ? 0.25
                                                                                                            : 1.0;
    }

    // f(div): the divergence of the column's faces. An open column (uniform mass flux) takes its boundary fluxes from
    // the upwind products' own boundary values (inflow: the value of the cell next to the boundary) and reports them
    // to the budget; a closed one has w = 0 on the bottom and top faces, so no flux crosses them.
    template <class F>
    void withDivergence(F const& f) const {
        if (open())
            f(ops::DivergenceF2C{});
        else
            f(ops::DivergenceF2C{ops::SetValue{0.0}, ops::SetValue{0.0}});
    }

    // f(flux): the upwind product of the scheme.
    template <class F>
    static void withScheme(AdvectionScheme scheme, F const& f) {
        if (scheme == AdvectionScheme::Upwind1)
            f(ops::UpwindBiasedProductC2F{ops::Extrapolate{}, ops::Extrapolate{}});
        else if (scheme == AdvectionScheme::Limited)
            f(ops::UpwindLimitedProductC2F{ops::FirstOrderOneSided{}, ops::FirstOrderOneSided{}});
        else
            f(ops::Upwind3rdOrderBiasedProductC2F{ops::ThirdOrderOneSided{}, ops::ThirdOrderOneSided{}});
    }

    bool open() const { return m_cfg.profile == AdvectionProfile::UniformMassFlux; }

    // The tendency -factor (1/rho0) [d/dz(rho0 w psi) - psi d/dz(rho0 w)].
    template <class Div, class Flux, class Psi, class Factor>
    auto tendency(StepContext<Backend>& /*ctx*/, Div const& div, Flux const& flux, Psi const& psi,
                  Factor const& factor) const {
        return -(factor * ((div(flux(m_rhoW, psi)) - psi * m_divRhoW) / m_rho));
    }

    // An open column's budget terms of one variable, in one kernel: the flux through its ends (bottom less top),
    // then its lateral inflow (`lateral`, whose budget and weight it shares).
    template <class Flux, class Psi>
    void addThroughEnds(StepContext<Backend>& ctx, Flux const& flux, Psi const& psi, ColumnTerm const& lateral) {
        ops::evaluate(ctx.backend, m_faceFlux, flux(m_rhoW, psi), ctx.engine);
        auto const faces = std::as_const(m_faceFlux).view();
        ColumnTerm ends = lateral;
        ends.values = faces.data;
        ends.stride = faces.stride;
        ends.offset = 0;
        ends.difference = true;
        ends.minusOffset = faces.levels - 1;
        addColumnTerms(ctx.backend, ctx.columns, {ends, lateral});
    }

    // The amplitude at time t: steady, or wMax sin(pi t / duration) until `duration`, then 0.
    double amplitude(double t) const {
        if (m_cfg.duration <= 0) return m_cfg.wMax;
        return t < m_cfg.duration ? m_cfg.wMax * math::sin(std::numbers::pi * t / m_cfg.duration) : 0.0;
    }

    // rho0 w on faces and its divergence d/dz(rho0 w) on centers, from the velocity just set. The divergence is the
    // same for every advected variable, so it is evaluated once here rather than inside each tendency and integral
    // (the same operator on the same values: the same bits).
    void setMassFlux(StepContext<Backend>& ctx) {
        ops::evaluate(ctx.backend, m_rhoW, m_rhoFace * m_w, ctx.engine);
        withDivergence([&](auto const& div) { ops::evaluate(ctx.backend, m_divRhoW, div(m_rhoW), ctx.engine); });
    }

    void setVelocity(StepContext<Backend>& ctx) {
        auto const g = ctx.grid->view(Backend::memSpace);
        auto const& zf = ctx.grid->faces();
        double const a = amplitude(ctx.time);
        if (open())
            forEachPoint(ctx.backend, ctx.columns, m_w.levels(),
                         UniformMassFluxProfile{m_w.view(), std::as_const(m_rhoFace).view(), a});
        else
            forEachPoint(ctx.backend, ctx.columns, m_w.levels(),
                         SubsidenceProfile{m_w.view(), g.zf, a, zf.back(), zf.front()});
    }

    Settings m_cfg;
    CenterField const& m_rho;
    CenterField const& m_exner;
    FaceField const& m_rhoFace;
    FaceField m_w;
    bool m_velocityReady = false; // w and rho0 w hold the steady profile
    FaceField m_rhoW, m_faceFlux;
    CenterField m_divRhoW;          // d/dz(rho0 w), set with rho0 w: read by every variable's tendency and budget
    core::Buffer<double> m_columns; // the five budget integrals of a stage: theta, q, qc, qr, tracer
};

} // namespace strata::app
