#include <strata/app/model/analytic.hpp>
#include <strata/app/processes/coriolis.hpp>
#include <strata/app/processes/vertical_diffusion.hpp>

#include <algorithm>
#include <cmath>
#include <numbers>

namespace strata::app {

WindSetting windSetting(Config const& cfg) {
    auto const& coriolis = cfg.settings<CoriolisSettings>();
    return {coriolis.ug, coriolis.vg, cfg.settings<DiffusionSettings>().kappa};
}

namespace {

class HeatEquation final : public AnalyticSolution {
public:
    explicit HeatEquation(Config const& cfg)
        : m_kappa(cfg.settings<DiffusionSettings>().kappa), m_surface(cfg.initial.surfaceTemperature),
          m_amplitude(cfg.initial.amplitude) {}
    char const* seriesName() const override { return "T_error_vs_analytic"; }
    char const* units() const override { return "K"; }
    char const* longName() const override { return "max |T - exact solution of the heat equation|"; }
    char const* logFormat() const override { return "        max |T - analytic| = %.3e K\n"; }
    double localError(State& s, double t) const override {
        double const top = s.grid->faces().back(), pi = std::numbers::pi;
        auto const& zc = s.grid->centers();
        auto& T = s.now.T;
        T.toHost();
        double const decay = std::exp(-m_kappa * (pi / top) * (pi / top) * t);
        double worst = 0;
        for (uint32_t c = 0; c < T.columns(); ++c)
            for (uint32_t k = 0; k < T.levels(); ++k) {
                double const exact = m_surface + m_amplitude * std::cos(pi * zc[k] / top) * decay;
                worst = std::max(worst, std::fabs(T.at(c, k) - exact));
            }
        return worst;
    }

private:
    double m_kappa, m_surface, m_amplitude;
};

class EkmanSpiral final : public AnalyticSolution {
public:
    explicit EkmanSpiral(Config const& cfg) : m_wind(windSetting(cfg)) {}
    char const* seriesName() const override { return "wind_error_vs_analytic"; }
    char const* units() const override { return "m s-1"; }
    char const* longName() const override { return "max |u, v - the steady Ekman spiral|"; }
    char const* logFormat() const override { return "        max |u, v - Ekman spiral| = %.3e m/s\n"; }
    double localError(State& s, double) const override {
        auto const& zc = s.grid->centers();
        auto& u = s.now.u;
        auto& v = s.now.v;
        u.toHost();
        v.toHost();
        s.latitude.toHost();
        double worst = 0;
        for (uint32_t c = 0; c < u.columns(); ++c)
            for (uint32_t k = 0; k < u.levels(); ++k) {
                auto const exact = ekmanSpiral(m_wind, zc[k] - s.grid->faces().front(), s.latitude.host()[c]);
                worst = std::max({worst, std::fabs(u.at(c, k) - exact[0]), std::fabs(v.at(c, k) - exact[1])});
            }
        return worst;
    }

private:
    WindSetting m_wind;
};

} // namespace

std::unique_ptr<AnalyticSolution> makeAnalyticSolution(Config const& cfg) {
    switch (cfg.analytic) {
    case AnalyticCase::HeatEquation: return std::make_unique<HeatEquation>(cfg);
    case AnalyticCase::Ekman: return std::make_unique<EkmanSpiral>(cfg);
    case AnalyticCase::None: break;
    }
    return nullptr;
}

} // namespace strata::app
