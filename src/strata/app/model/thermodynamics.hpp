// Moist thermodynamics of the simple-physics suite (Reed & Jablonowski 2012, Thatcher & Jablonowski 2016), as
// STRATA_HD functions shared by the processes and the tests. Constants: app/model/state.hpp.
//
//   saturation specific humidity   q_sat(T, p) = (eps e0 / p) exp(-(L / Rv) (1/T - 1/T0)),  e0 = 610.78 Pa,
//                                  T0 = 273.16 K, eps = Rd / Rv          (q_sat(300 K, 1000 hPa) = 0.0223974)
//   large-scale condensation       dq = (q - q_sat) / (1 + (L / cp) eps L q_sat / (Rd T^2))   where q > q_sat,
//                                  then T += (L / cp) dq, q -= dq         ((300 K, 0.030, 1000 hPa): dq = 1.745829e-3)
//   sea-surface temperature        T_s(phi) = 29 exp(-phi^2 / (2 (26 deg)^2)) + 271 K   (TJ16)
#pragma once

#include <strata/app/model/state.hpp>
#include <strata/core/config.hpp>
#include <strata/core/math.hpp>

#include <cmath>

namespace strata::app::moist {

inline constexpr double latentHeat = 2.5e6;    // J kg-1, vaporisation
inline constexpr double e0 = 610.78;           // Pa, saturation vapour pressure at T0
inline constexpr double t0 = 273.16;           // K
inline constexpr double waterDensity = 1000.0; // kg m-3

STRATA_HD inline double saturationHumidity(double T, double p) {
    return constants::epsilon * e0 / p * math::exp(-(latentHeat / constants::rv) * (1.0 / T - 1.0 / t0));
}

// The condensed amount dq >= 0 that brings (T, q) at pressure p to saturation, linearised around T (RJ12 eq. 8).
STRATA_HD inline double condensation(double T, double q, double p) {
    double const qs = saturationHumidity(T, p);
    if (!(q > qs)) return 0.0;
    double const lcp = latentHeat / constants::cp;
    return (q - qs) / (1.0 + lcp * constants::epsilon * latentHeat * qs / (constants::rd * T * T));
}

STRATA_HD inline double seaSurfaceTemperature(double latitudeDegrees) {
    double const x = latitudeDegrees / 26.0;
    return 29.0 * math::exp(-0.5 * x * x) + 271.0;
}

} // namespace strata::app::moist
