// Cases with an exact solution, named by the configuration (analytic_solution: heat_equation | ekman), whose error the
// run reports at every output (a history series and a log line) and in its summary:
//   heat_equation   T = Ts + A cos(pi z / H) exp(-K (pi / H)^2 t)      plain diffusion alone, from the cosine start
//   ekman           the steady (u, v) of Coriolis and constant-K diffusion over a no-slip ground, started from it
// config.cpp checks that the configuration is the case the solution belongs to.
#pragma once

#include <strata/app/config.hpp>
#include <strata/app/model/state.hpp>

#include <array>
#include <memory>
#include <string>

namespace strata::app {

// The geostrophic wind and the eddy diffusivity of an Ekman spiral (zero: the configured initial wind).
struct WindSetting {
    double ug = 0, vg = 0, kappa = 0; // m/s, m/s, m2/s
};
// The steady Ekman spiral over a no-slip ground (u, v) at height z above it, at latitude (degrees).
std::array<double, 2> ekmanSpiral(WindSetting const& w, double z, double latitude);
// The configuration's Ekman setting: coriolis's geostrophic wind and vertical_diffusion's kappa.
WindSetting windSetting(Config const& cfg);

class AnalyticSolution {
public:
    virtual ~AnalyticSolution() = default;
    // The history's series of the error: its name, units and long name; and the log line's text (a printf format
    // with one %e).
    virtual char const* seriesName() const = 0;
    virtual char const* units() const = 0;
    virtual char const* longName() const = 0;
    virtual char const* logFormat() const = 0;
    // The largest |value - exact| over this rank's columns at model time t.
    virtual double localError(State& state, double t) const = 0;
};

// The configuration's solution; nullptr for analytic_solution: none.
std::unique_ptr<AnalyticSolution> makeAnalyticSolution(Config const& cfg);

} // namespace strata::app
