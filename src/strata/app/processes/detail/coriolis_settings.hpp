// The Coriolis process's settings and its parameter f, apart from the process (coriolis.hpp): vertical diffusion
// reads them too, when it solves the Coriolis force with the winds' implicit mixing (vertical_diffusion.hpp).
#pragma once

#include <strata/app/choices.hpp>
#include <strata/app/model/state.hpp>
#include <strata/app/process_settings.hpp>
#include <strata/core/math.hpp>

#include <numbers>
#include <string_view>

namespace strata::app {

// Coriolis force and the large-scale pressure gradient as a geostrophic wind:
// du/dt = f (v - vg), dv/dt = -f (u - ug), f = 2 Omega sin(latitude).
struct CoriolisSettings {
    static constexpr std::string_view process = "coriolis";
    double ug = 0.0; // m/s
    double vg = 0.0; // m/s
    // off: a tendency in every Runge-Kutta stage (stable for |f| dt <= sqrt(3)); on: backward Euler after the explicit
    // part, stable at any dt -- solved with the winds' mixing as one 2x2 block tridiagonal system per column where
    // vertical_diffusion mixes momentum implicitly, else pointwise.
    Switch implicit = Switch::Off;

    template <class V>
    void describe(V& v) {
        v.field("u_g", ug, detail::anyNumber());
        v.field("v_g", vg, detail::anyNumber());
        v.field("implicit", implicit, detail::named<Switch>());
    }
    bool operator==(CoriolisSettings const&) const = default;
};

inline double coriolisParameter(double latitudeDegrees) {
    return 2.0 * constants::omega * math::sin(latitudeDegrees * std::numbers::pi / 180.0);
}

} // namespace strata::app
