// The run configuration: a YAML file, validated completely before anything runs.
//
// `loadConfig(path, overrides)` reads the file, applies `--set key.path=value` overrides, checks every key
// against the schema below and returns typed values, or throws ConfigError naming the key path, the value and what
// was expected (unknown key: with the nearest valid key; wrong type; out of range; YAML syntax: line and column;
// missing file). The CLI turns a ConfigError into one message and exit code 2. `Config::resolvedYaml` is the
// complete configuration after defaults and overrides, as YAML text (written into the output's global attributes).
// Every key, its type, default and range is documented in docs/config.md.
#pragma once

#include <strata/app/choices.hpp>
#include <strata/app/process_settings.hpp>
#include <strata/core/error.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace strata::app {

class ConfigError : public Error {
public:
    using Error::Error;
};

namespace detail {
[[noreturn]] inline void failConfig(std::string const& where, std::string what, std::string expected) {
    throw ConfigError(std::move(what), where, std::move(expected));
}
} // namespace detail

// ---- named choices (app/choices.hpp) ---------------------------------------------------------------------------

enum class Stretching { Uniform, Power };
STRATA_CHOICES(Stretching, Choice<Stretching>{"uniform", Stretching::Uniform},
               Choice<Stretching>{"power", Stretching::Power});

enum class HorizontalGridType { LatLon, Columns };
STRATA_CHOICES(HorizontalGridType, Choice<HorizontalGridType>{"latlon", HorizontalGridType::LatLon},
               Choice<HorizontalGridType>{"columns", HorizontalGridType::Columns});

enum class BackendType { Auto, Serial, OpenMP, Threads, Cuda };
STRATA_CHOICES(BackendType, Choice<BackendType>{"auto", BackendType::Auto},
               Choice<BackendType>{"serial", BackendType::Serial}, Choice<BackendType>{"openmp", BackendType::OpenMP},
               Choice<BackendType>{"threads", BackendType::Threads}, Choice<BackendType>{"cuda", BackendType::Cuda});

enum class EngineChoice { Auto, Direct, Shmem };
STRATA_CHOICES(EngineChoice, Choice<EngineChoice>{"auto", EngineChoice::Auto},
               Choice<EngineChoice>{"direct", EngineChoice::Direct},
               Choice<EngineChoice>{"shmem", EngineChoice::Shmem});

enum class InitialTemperature { Isothermal, LapseRate, Cosine };
STRATA_CHOICES(InitialTemperature, Choice<InitialTemperature>{"isothermal", InitialTemperature::Isothermal},
               Choice<InitialTemperature>{"lapse_rate", InitialTemperature::LapseRate},
               Choice<InitialTemperature>{"cosine", InitialTemperature::Cosine});

enum class InitialWind { Uniform, Ekman };
STRATA_CHOICES(InitialWind, Choice<InitialWind>{"uniform", InitialWind::Uniform},
               Choice<InitialWind>{"ekman", InitialWind::Ekman});

// A case with an exact solution whose error the run reports (app/model/analytic.hpp).
enum class AnalyticCase { None, HeatEquation, Ekman };
STRATA_CHOICES(AnalyticCase, Choice<AnalyticCase>{"none", AnalyticCase::None},
               Choice<AnalyticCase>{"heat_equation", AnalyticCase::HeatEquation},
               Choice<AnalyticCase>{"ekman", AnalyticCase::Ekman});

enum class OutputFormat { Netcdf4, Offset64 };
STRATA_CHOICES(OutputFormat, Choice<OutputFormat>{"netcdf4", OutputFormat::Netcdf4},
               Choice<OutputFormat>{"64bit_offset", OutputFormat::Offset64});

enum class Precision { Float, Double };
STRATA_CHOICES(Precision, Choice<Precision>{"float", Precision::Float}, Choice<Precision>{"double", Precision::Double});

// The face heights: `levels`, `top`, `stretching` and `exponent`, or the list `faces`, never both. loadConfig sets
// the first four (their defaults where absent) without `faces` and leaves them unset with `faces`; cells() and
// height() answer for either form.
struct VerticalGridConfig {
    static constexpr uint32_t defaultLevels = 30;
    static constexpr double defaultTop = 30000.0;
    std::optional<uint32_t> levels = defaultLevels; // cells (>= 1)
    std::optional<double> top = defaultTop;         // m (> 0)
    std::optional<Stretching> stretching = Stretching::Uniform;
    std::optional<double> exponent = 1.0; // power stretching: z_k = top * (k/n)^exponent (>= 1)
    std::vector<double> faces;            // m: z_0 = 0 < z_1 < ... < z_n (empty: levels and top give them)
    std::optional<std::string> facesFile; // a text file of faces: loadConfig reads it into faces and unsets it

    uint32_t cells() const {
        return faces.empty() ? levels.value_or(defaultLevels) : static_cast<uint32_t>(faces.size() - 1);
    }
    double height() const { return faces.empty() ? top.value_or(defaultTop) : faces.back(); }

    bool operator==(VerticalGridConfig const&) const = default;
};

struct HorizontalGridConfig {
    HorizontalGridType type = HorizontalGridType::LatLon;
    uint32_t nlat = 4;            // latlon: latitudes, equally spaced cell centers from -90 to 90
    uint32_t nlon = 8;            // latlon: longitudes, from 0
    uint32_t ncol = 0;            // columns: number of columns (without lat/lon: latitude spread evenly from -90 to 90)
    std::vector<double> lat, lon; // columns: each column's latitude and longitude, degrees (empty: spread evenly)

    bool operator==(HorizontalGridConfig const&) const = default;
};

struct TimeConfig {
    double dt = 600.0;                         // s (> 0)
    std::optional<uint64_t> steps;             // run length in steps ...
    std::optional<double> days;                // ... or in days (exactly one of the two)
    std::string start = "2000-01-01 00:00:00"; // the time axis is "seconds since <start>"; "YYYY-MM-DD" in the
                                               // file is stored as "YYYY-MM-DD 00:00:00"

    bool operator==(TimeConfig const&) const = default;
};

struct BackendConfig {
    BackendType type = BackendType::Auto;
    uint32_t threadsWorkers = 4;              // workers per block on the threads backend
    EngineChoice engine = EngineChoice::Auto; // the stencil engine

    bool operator==(BackendConfig const&) const = default;
};

struct InitialConfig {
    InitialTemperature temperature = InitialTemperature::LapseRate;
    double surfaceTemperature = 288.0;       // K
    double lapseRate = 0.0065;               // K/m (lapse_rate)
    double minimumTemperature = 200.0;       // K: lapse_rate's floor, max(Ts - lapse_rate z, minimum)
    double equatorPoleDifference = 0.0;      // K: lapse_rate's T less this times sin^2(latitude)
    double amplitude = 5.0;                  // K (cosine: T = Ts + amplitude cos(pi z / top))
    double surfacePressure = 100000.0;       // Pa
    double humidity = 0.01;                  // kg/kg at the surface, decaying with height scale 2 km
    double tracerHeight = 5000.0;            // m: center of a Gaussian tracer blob
    double tracerWidth = 1000.0;             // m
    InitialWind wind = InitialWind::Uniform; // uniform: u, v below; ekman: the steady spiral
    double u = 0.0;                          // m/s
    double v = 0.0;                          // m/s
    // A NetCDF profile (app/io/sounding.hpp) giving T, q, u, v (and qc, qr, tracer where it has them) instead of the
    // analytic profiles; empty: none. loadConfig makes a relative path relative to the configuration file's folder.
    std::string sounding;

    bool operator==(InitialConfig const&) const = default;
};

struct OutputConfig {
    std::string path = "out/strata.nc";
    std::vector<std::string> variables = {"T", "q", "tracer", "p"}; // of: T theta u v q tracer p p_face K w
                                                                    // and the surface fields (output.variables)
    double interval = 3600.0; // s between outputs (a positive multiple of time.dt)
    Precision precision = Precision::Float;
    OutputFormat format = OutputFormat::Netcdf4; // netCDF-4 (HDF5, chunked) or the classic 64-bit offset format
    uint32_t deflate = 0;                        // zlib level 0-9 (netcdf4 only; 0: none)

    bool operator==(OutputConfig const&) const = default;
};

// Restart files: the whole model state, to continue a run bit for bit (docs/config.md, "Running long jobs" in README).
struct RestartConfig {
    double interval = 0.0; // s between restart files (a multiple of time.dt); 0: only at the end of the run
    std::string path;      // empty: next to the output, <output without .nc>.restart.nc

    bool operator==(RestartConfig const&) const = default;
};

struct Config {
    std::string title = "Strata run";
    VerticalGridConfig vertical;
    HorizontalGridConfig horizontal;
    TimeConfig time;
    BackendConfig backend;
    InitialConfig initial;
    AnalyticCase analytic = AnalyticCase::None; // analytic_solution: the exact solution the run's error is measured to
    OutputConfig output;
    RestartConfig restart;
    std::vector<std::string> processOrder; // names of enabled processes, in file order
    // The settings of each enabled process (app/process_settings.hpp), by name.
    std::map<std::string, ProcessSettings, std::less<>> processSettings;

    bool enabled(std::string_view process) const {
        return std::find(processOrder.begin(), processOrder.end(), process) != processOrder.end();
    }
    // A process's settings: the configured ones when it is enabled, its defaults otherwise.
    template <ProcessSettingsStruct S>
    S const& settings() const {
        if (auto it = processSettings.find(S::process); it != processSettings.end())
            if (S const* s = it->second.template get<S>()) return *s;
        static S const defaults{};
        return defaults;
    }
    // Enables the process (at the end of the order) when it is not, and returns its settings to change.
    template <ProcessSettingsStruct S>
    S& settings() {
        if (!enabled(S::process)) processOrder.emplace_back(S::process);
        auto it = processSettings.try_emplace(std::string(S::process), ProcessSettings(S{})).first;
        return *it->second.template get<S>();
    }

    // Both throw ConfigError when the time does not come to a whole number of steps; loadConfig has checked both.
    uint64_t totalSteps() const;   // from steps or days (days * 86400 / dt, within 1e-9 relative)
    uint64_t outputEvery() const;  // steps between outputs (interval / dt)
    uint64_t restartEvery() const; // steps between restart files (0: only at the end)
    std::string resolvedYaml;      // the full configuration after defaults and overrides
    std::string sourcePath;

    bool operator==(Config const&) const = default;
};

// Reads, overrides (each "a.b.c=value", the value a YAML scalar or flow collection) and validates. Throws ConfigError.
// An override path "processes.<name>.key" addresses the list item naming the process (appending it if absent, which
// enables the process); other paths are map paths, missing maps are created. An empty value (a YAML null) clears a
// key back to its default: --set time.steps= --set time.days=2.
Config loadConfig(std::string const& path, std::vector<std::string> const& overrides = {});

// The same from YAML text; `sourceName` stands for the file in messages (e.g. a NetCDF attribute's name).
Config parseConfig(std::string const& yamlText, std::string const& sourceName,
                   std::vector<std::string> const& overrides = {});

// The complete configuration as YAML, every key with its value (what loadConfig stores in resolvedYaml). Processes
// not enabled are left out: in the file, presence enables a process. parseConfig(configYaml(c)) gives c back.
std::string configYaml(Config const& config);

template <class S>
void checkSettings(Config const& c) {
    c.settings<S>().check(c);
}

} // namespace strata::app
