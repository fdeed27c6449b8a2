#include "app/model/model.hpp"

#include <cmath>
#include <numbers>

namespace strata::app {

std::shared_ptr<ops::Grid const> makeVerticalGrid(VerticalGridConfig const& v) {
    if (v.stretching == "power") {
        double const e = v.exponent;
        return std::make_shared<ops::Grid const>(ops::Grid::stretched(v.levels, v.top, [e](double s) { return std::pow(s, e); }));
    }
    return std::make_shared<ops::Grid const>(ops::Grid::uniform(v.levels, v.top));
}

ops::Engine engineFromName(std::string const& name) {
    if (name == "direct") return ops::Engine::Direct;
    if (name == "shmem") return ops::Engine::Shmem;
    return ops::Engine::Auto;
}

InitialProfiles initialProfile(InitialConfig const& init, double zTop, double z, double latitude) {
    InitialProfiles p{};
    double const pi = std::numbers::pi;
    if (init.temperature == "isothermal") p.T = init.surfaceTemperature;
    else if (init.temperature == "cosine") p.T = init.surfaceTemperature + init.amplitude * std::cos(pi * z / zTop);
    else p.T = std::max(init.surfaceTemperature - init.lapseRate * z, 200.0);
    // A little meridional structure so that columns differ (and the decomposition is exercised).
    if (init.temperature == "lapse_rate") p.T -= 20.0 * std::pow(std::sin(latitude * pi / 180.0), 2);
    p.q = init.humidity * std::exp(-z / 2000.0);
    double const x = (z - init.tracerHeight) / init.tracerWidth;
    p.tracer = std::exp(-0.5 * x * x);
    return p;
}

} // namespace strata::app
