// A sounding: a column's initial profile read from a NetCDF file (initial_conditions.sounding).
//
// The file holds one profile on a vertical coordinate, a 1-D variable with the CF standard_name `height` (m above
// the surface) or `air_pressure` (Pa). The other variables are found by their standard_name, whatever their names,
// and each lies on the coordinate's dimension (other dimensions of length 1, e.g. time, lat, lon, are allowed):
//   air_temperature or air_potential_temperature   K          one of the two
//   specific_humidity                              kg kg-1 or 1
//   eastward_wind, northward_wind                  m s-1
//   mass_fraction_of_cloud_liquid_water_in_air,
//   mass_fraction_of_rain_in_air                   kg kg-1 or 1   optional: 0 where absent
//   the variable named `tracer`                    1              optional: the configured blob where absent
// readSounding returns the profile on heights above the model's surface, strictly increasing:
//   - a pressure coordinate becomes heights by the hypsometric equation on the sounding's own virtual temperature,
//     dz = (Rd / g) Tv d(-ln p), Tv linear in ln p between levels (the trapezoidal rule in ln p), with z = 0 at the
//     model's surface pressure, which must lie within the sounding's pressures;
//   - potential temperature becomes temperature through the Exner function: on pressures T = theta (p / p00)^kappa;
//     on heights from d(exner)/dz = -g / (cp theta_v) (trapezoidal in z) with exner = (p_s / p00)^kappa at z = 0.
// Values between two levels are linear in height (valuesAt). Everything a file lacks or gets wrong (a missing
// variable, units other than those above, a missing or non-finite value, a coordinate that is not strictly
// monotone, a negative humidity) is a ConfigError naming the file and the variable; coversColumn refuses a profile
// that does not reach from the ground to the model top (no extrapolation).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace strata::app {

struct SoundingValues {
    double T = 0, q = 0, u = 0, v = 0, qc = 0, qr = 0, tracer = 0;
};

struct Sounding {
    std::string path;
    std::string coordinate;             // the coordinate variable's name, for messages
    std::vector<double> z;              // m above the model's surface, strictly increasing
    std::vector<SoundingValues> values; // at each z
    bool hasTracer = false;             // the file has a `tracer` variable

    // Linear interpolation in height between the two levels around z (z within [z.front(), z.back()]).
    SoundingValues valuesAt(double z) const;
};

// Reads and converts the profile (above); `surfacePressure` (Pa) is where z = 0 lies. Throws ConfigError.
Sounding readSounding(std::string const& path, double surfacePressure);

// Throws ConfigError unless the sounding reaches from the ground (z <= 0) to `top` (m): what range is needed and
// what the file has.
void coversColumn(Sounding const& s, double top);

// A digest of the file's bytes (64-bit FNV-1a, as 16 hex digits), which a restart records: a continuation refuses a
// sounding whose content changed. Empty for an unreadable file.
std::string fileDigest(std::string const& path);

} // namespace strata::app
