#include <strata/app/model/model.hpp>

#include <cmath>
#include <numbers>

namespace strata::app {

std::shared_ptr<ops::Grid const> makeVerticalGrid(VerticalGridConfig const& v) {
    if (!v.faces.empty()) return std::make_shared<ops::Grid const>(ops::Grid::fromFaces(v.faces));
    if (v.stretching == Stretching::Power) {
        double const e = v.exponent.value_or(1.0);
        return std::make_shared<ops::Grid const>(
            ops::Grid::stretched(v.cells(), v.height(), [e](double s) { return std::pow(s, e); }));
    }
    return std::make_shared<ops::Grid const>(ops::Grid::uniform(v.cells(), v.height()));
}

ops::Engine engineFromChoice(EngineChoice choice) {
    switch (choice) {
    case EngineChoice::Direct: return ops::Engine::Direct;
    case EngineChoice::Shmem: return ops::Engine::Shmem;
    case EngineChoice::Auto: break;
    }
    return ops::Engine::Auto;
}

std::array<double, 2> ekmanSpiral(WindSetting const& w, double z, double latitude) {
    // u + i v = G (1 - exp(-(1 + i s) z / delta)), s = sign(f), delta = sqrt(2 K / |f|), G = ug + i vg.
    double const f = 2.0 * constants::omega * std::sin(latitude * std::numbers::pi / 180.0);
    double const delta = std::sqrt(2.0 * w.kappa / std::fabs(f));
    double const s = f > 0 ? 1.0 : -1.0, decay = std::exp(-z / delta);
    double const re = 1.0 - decay * std::cos(z / delta), im = decay * s * std::sin(z / delta);
    return {w.ug * re - w.vg * im, w.ug * im + w.vg * re};
}

InitialProfiles initialProfile(InitialConfig const& init, double zTop, double z, double latitude,
                               WindSetting const& wind) {
    InitialProfiles p{};
    if (init.wind == InitialWind::Ekman) {
        auto const uv = ekmanSpiral(wind, z, latitude);
        p.u = uv[0];
        p.v = uv[1];
    } else {
        p.u = init.u;
        p.v = init.v;
    }
    double const pi = std::numbers::pi;
    if (init.temperature == InitialTemperature::Isothermal)
        p.T = init.surfaceTemperature;
    else if (init.temperature == InitialTemperature::Cosine)
        p.T = init.surfaceTemperature + init.amplitude * std::cos(pi * z / zTop);
    else
        p.T = std::max(init.surfaceTemperature - init.lapseRate * z, init.minimumTemperature) -
              init.equatorPoleDifference * std::pow(std::sin(latitude * pi / 180.0), 2);
    p.q = init.humidity * std::exp(-z / 2000.0);
    double const x = (z - init.tracerHeight) / init.tracerWidth;
    p.tracer = std::exp(-0.5 * x * x);
    return p;
}

InitialState::InitialState(Config const& cfg, ops::Grid const& grid)
    : m_init(cfg.initial), m_wind(windSetting(cfg)), m_top(grid.faces().back()) {
    if (m_init.sounding.empty()) return;
    m_sounding = readSounding(m_init.sounding, m_init.surfacePressure);
    coversColumn(*m_sounding, m_top);
}

InitialProfiles InitialState::at(double z, double latitude) const {
    if (!m_sounding) return initialProfile(m_init, m_top, z, latitude, m_wind);
    SoundingValues const s = m_sounding->valuesAt(z);
    InitialProfiles p{s.T, s.u, s.v, s.q, s.tracer, s.qc, s.qr};
    if (!m_sounding->hasTracer) p.tracer = initialProfile(m_init, m_top, z, latitude).tracer;
    return p;
}

void computeReferenceState(State& s, InitialState const& initial, std::vector<double> const& latitude, bool uniform) {
    auto const& zc = s.grid->centers();
    auto const& zf = s.grid->faces();
    uint32_t const n = s.grid->cells();
    // Virtual temperature of the initial sounding at a height: the density of moist air is p / (Rd Tv).
    auto virtualT = [&](double z, double lat) {
        auto const x = initial.at(z, lat);
        return x.T * (1.0 + (1.0 / constants::epsilon - 1.0) * x.q);
    };
    for (uint32_t c = 0; c < s.columns; ++c) {
        double const lat = latitude[c];
        // dp/dz = -g p / (Rd Tv), Tv constant within each cell (the cell's center value): exact for isothermal air.
        s.pFace.at(c, 0) = initial.surfacePressure();
        for (uint32_t k = 0; k < n; ++k) {
            double const tv = virtualT(zc[k], lat);
            s.p.at(c, k) = s.pFace.at(c, k) * std::exp(-constants::g * (zc[k] - zf[k]) / (constants::rd * tv));
            s.pFace.at(c, k + 1) =
                s.pFace.at(c, k) * std::exp(-constants::g * (zf[k + 1] - zf[k]) / (constants::rd * tv));
            s.rho.at(c, k) = uniform ? 1.0 : s.p.at(c, k) / (constants::rd * tv);
            s.exner.at(c, k) = uniform ? 1.0 : std::pow(s.p.at(c, k) / constants::p0, constants::kappa);
        }
        // Face densities from the face pressure and the sounding's own virtual temperature at the face height.
        for (uint32_t k = 0; k <= n; ++k)
            s.rhoFace.at(c, k) = uniform ? 1.0 : s.pFace.at(c, k) / (constants::rd * virtualT(zf[k], lat));
    }
    for (auto* f : {&s.p, &s.rho, &s.exner})
        f->toDevice();
    for (auto* f : {&s.pFace, &s.rhoFace})
        f->toDevice();
}

} // namespace strata::app
