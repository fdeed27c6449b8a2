// The variable catalogue: every variable the model knows, written once. Each entry says what the variable is (name,
// CF standard name, long name, units), where it lives (cell centers, faces or one value per column), where its value
// comes from (a prognostic variable, the fixed reference state, a diagnostic computed from them, or a process) and
// the range a sane state keeps it in. From this one table come
//   - the choices of `output.variables` (app/detail/config_schema.hpp) and each output variable's NetCDF metadata,
//   - the restart file's fields (every prognostic variable),
//   - the state check after every step (every variable with a range),
//   - the fields a process may declare and ask for (app/model/process.hpp).
// A process's own output variables (K, w, the surface fluxes) are catalogue entries declared in its file
// (ProcessSchema::outputs); `catalogue()` is this table followed by those. The tendencies of the prognostic
// variables, whole or due to one process, are output variables named by pattern (prognosticTendencies, findTendency).
#pragma once

#include <cstdint>
#include <iterator>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace strata::app {

enum class Staggering { Center, Face, Column };
enum class Source { Prognostic, Reference, Diagnostic, Process };

// The strings are views of string literals (the output's metadata passes them on as C strings).
struct VariableInfo {
    std::string_view name, units, longName, standardName;
    Staggering where;
    Source source;
    bool output = true;                // may be named in output.variables
    std::string_view cellMethods = ""; // empty: "time: point"
    // The state check: a value outside [lo, hi] (or NaN) stops the run; `expected` says the range in words. A
    // variable without a range (lo > hi) is not checked.
    double lo = 1, hi = 0;
    std::string_view expected = "";
    constexpr bool checked() const { return lo <= hi; }
};

namespace catalogue_detail {
inline constexpr double huge = 1e30;
using S = Staggering;
using F = Source;
} // namespace catalogue_detail

// The model's own variables, in the order of output.variables' choices (then the processes' outputs, in the
// registry's order). The prognostic ones are in the order of
// Prognostics (app/model/state.hpp), which a static_assert there holds to; the checked ones in the order the state
// check reports the first violation in.
inline constexpr VariableInfo stateVariables[] = {
    {"T", "K", "air temperature", "air_temperature", catalogue_detail::S::Center, catalogue_detail::F::Prognostic, true,
     "", 100.0, 400.0, "an air temperature in [100, 400] K"},
    {"theta", "K", "potential temperature", "air_potential_temperature", catalogue_detail::S::Center,
     catalogue_detail::F::Diagnostic},
    {"u", "m s-1", "eastward wind", "eastward_wind", catalogue_detail::S::Center, catalogue_detail::F::Prognostic, true,
     "", -400.0, 400.0, "a wind speed in [-400, 400] m/s"},
    {"v", "m s-1", "northward wind", "northward_wind", catalogue_detail::S::Center, catalogue_detail::F::Prognostic,
     true, "", -400.0, 400.0, "a wind speed in [-400, 400] m/s"},
    // q, qc and qr are mass fractions (kg per kg of moist air): the water budget sums rho0 (q + qc + qr). Moisture is
    // >= 0 to rounding (a process may allow more, Process::widenedRange).
    {"q", "kg kg-1", "specific humidity", "specific_humidity", catalogue_detail::S::Center,
     catalogue_detail::F::Prognostic, true, "", -1e-12, 0.2,
     "a mass fraction in [0, 0.2] kg/kg (>= -1e-12 for rounding)"},
    {"qc", "kg kg-1", "cloud liquid water mass fraction", "mass_fraction_of_cloud_liquid_water_in_air",
     catalogue_detail::S::Center, catalogue_detail::F::Prognostic, true, "", -1e-12, 0.2,
     "a mass fraction in [0, 0.2] kg/kg (>= -1e-12 for rounding)"},
    {"qr", "kg kg-1", "rain water mass fraction", "mass_fraction_of_rain_in_air", catalogue_detail::S::Center,
     catalogue_detail::F::Prognostic, true, "", -1e-12, 0.2,
     "a mass fraction in [0, 0.2] kg/kg (>= -1e-12 for rounding)"},
    {"tracer", "1", "passive tracer mixing ratio", "", catalogue_detail::S::Center, catalogue_detail::F::Prognostic,
     true, "", -catalogue_detail::huge, catalogue_detail::huge, "a finite tracer mixing ratio (|x| <= 1e30)"},
    {"p", "Pa", "air pressure at cell centers", "air_pressure", catalogue_detail::S::Center,
     catalogue_detail::F::Reference, true, "", 1e-3, 2e5, "a pressure in [0.001, 200000] Pa"},
    {"p_face", "Pa", "air pressure at cell faces", "air_pressure", catalogue_detail::S::Face,
     catalogue_detail::F::Reference},
    // The reference state's other fields, fixed in time like p: the mass weights of every process and budget.
    {"rho", "kg m-3", "reference density at cell centers", "air_density", catalogue_detail::S::Center,
     catalogue_detail::F::Reference},
    {"rho_face", "kg m-3", "reference density at cell faces", "air_density", catalogue_detail::S::Face,
     catalogue_detail::F::Reference},
    {"exner", "1", "reference Exner function (p0 / 1000 hPa)^(Rd/cp) at cell centers", "dimensionless_exner_function",
     catalogue_detail::S::Center, catalogue_detail::F::Reference},
    // The column coordinates: processes read them, the output has them as coordinates.
    {"latitude", "degrees_north", "latitude of the column", "latitude", catalogue_detail::S::Column,
     catalogue_detail::F::Reference, false},
    {"surface_pressure", "Pa", "surface pressure", "surface_air_pressure", catalogue_detail::S::Column,
     catalogue_detail::F::Reference, false},
};

// The number of prognostic variables, and the i-th of them.
constexpr std::size_t prognosticCount() {
    std::size_t n = 0;
    for (auto const& v : stateVariables)
        n += v.source == Source::Prognostic;
    return n;
}
constexpr VariableInfo const& prognostic(std::size_t i) {
    for (auto const& v : stateVariables)
        if (v.source == Source::Prognostic && i-- == 0) return v;
    return stateVariables[0];
}
// The number of variables the state check looks at, and the i-th of them.
constexpr std::size_t checkedCount() {
    std::size_t n = 0;
    for (auto const& v : stateVariables)
        n += v.checked();
    return n;
}
constexpr VariableInfo const& checkedVariable(std::size_t i) {
    for (auto const& v : stateVariables)
        if (v.checked() && i-- == 0) return v;
    return stateVariables[0];
}

// The model reads every checked variable as a center field (the state check) and computes theta as its only
// diagnostic (Model::outputValues).
static_assert([] {
    std::size_t diagnostics = 0;
    for (auto const& v : stateVariables) {
        if (v.checked() && v.where != Staggering::Center) return false;
        diagnostics += v.source == Source::Diagnostic;
    }
    return diagnostics == 1;
}());

// The tendency of each prognostic variable, in Prognostics' order: its CF standard name (empty where CF has none),
// units and long name. The output variables tendency_of_<var> (the whole step's change / dt) and
// tendency_of_<var>_due_to_<process> (one process's part of it: app/model/tendencies.hpp) take these.
struct TendencyOf {
    std::string_view variable, standardName, units, longName;
};
inline constexpr TendencyOf prognosticTendencies[] = {
    {"T", "tendency_of_air_temperature", "K s-1", "tendency of air temperature"},
    {"u", "tendency_of_eastward_wind", "m s-2", "tendency of eastward wind"},
    {"v", "tendency_of_northward_wind", "m s-2", "tendency of northward wind"},
    {"q", "tendency_of_specific_humidity", "kg kg-1 s-1", "tendency of specific humidity"},
    {"qc", "tendency_of_mass_fraction_of_cloud_liquid_water_in_air", "kg kg-1 s-1",
     "tendency of cloud liquid water mass fraction"},
    {"qr", "", "kg kg-1 s-1", "tendency of rain water mass fraction"},
    {"tracer", "", "s-1", "tendency of passive tracer mixing ratio"},
};
static_assert([] {
    if (std::size(prognosticTendencies) != prognosticCount()) return false;
    for (std::size_t i = 0; i < prognosticCount(); ++i)
        if (prognosticTendencies[i].variable != prognostic(i).name) return false;
    return true;
}());

// The output choices that stand for a family of names, as output.variables' choices and docs/config.md list them.
inline constexpr std::string_view tendencyPatterns[] = {"tendency_of_<var>", "tendency_of_<var>_due_to_<process>"};

// An output variable named tendency_of_<var> or tendency_of_<var>_due_to_<process>, with its metadata. Its strings
// are its own (the name holds a process's name, made at run time), unlike VariableInfo's literals. Every such
// variable is a center field, a mean since the previous output (cell_methods "time: mean").
struct TendencyVariable {
    std::size_t variable = 0; // index of the prognostic variable (Prognostics' order)
    std::string process;      // empty: every process (the whole step)
    std::string name, units, longName, standardName;
};
// The tendency variable of a name: <var> a prognostic variable and <process> a registered process (whether the case
// enables it and it changes <var> is the model's check); nullopt for any other name.
std::optional<TendencyVariable> findTendency(std::string_view name);

// The whole catalogue: stateVariables, then the output variables of every registered process (each name once, the
// first declaration's entry: two processes that make precipitation_flux declare the same variable).
// Made on each call: a program may register processes of its own before it reads its configuration.
std::vector<VariableInfo> catalogue();
// The entry of a name; false when the catalogue has none.
bool findVariable(std::string_view name, VariableInfo& out);
// The names output.variables may take, in catalogue order, then tendencyPatterns (which stand for the names
// findTendency knows).
std::vector<std::string> outputChoices();

} // namespace strata::app
