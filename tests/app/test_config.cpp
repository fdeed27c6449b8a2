// The configuration loader: every shipped config loads, every class of bad input is a ConfigError naming the key
// path, the value and what was expected, overrides edit the tree before validation, and the resolved YAML reads back
// to the same configuration.
#include <strata/app/config.hpp>
#include <strata/app/detail/config_schema.hpp>
#include <strata/app/processes/builtin.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <regex>
#include <set>
#include <sstream>

#include <unistd.h>

using Catch::Matchers::Contains;
using strata::app::AdvectionScheme;
using strata::app::Config;
using strata::app::ConfigError;
using strata::app::configYaml;
using strata::app::DiffusionMode;
using strata::app::DiffusionProfile;
using strata::app::HorizontalGridType;
using strata::app::InitialTemperature;
using strata::app::loadConfig;
using strata::app::parseConfig;
using strata::app::Stretching;

namespace {

// A process's settings as the configuration holds them (its defaults when the process is not enabled).
template <class S>
S const& settingsOf(Config const& c) {
    return c.settings<S>();
}

std::filesystem::path const sourceDir = STRATA_SOURCE_DIR;
std::string configPath(std::string const& name) { return (sourceDir / "configs" / name).string(); }

// A YAML file in the temporary directory, removed when the test ends.
class TempYaml {
public:
    explicit TempYaml(std::string const& text) {
        static int counter = 0;
        m_path = std::filesystem::temp_directory_path() /
                 ("strata_test_config_" + std::to_string(::getpid()) + "_" + std::to_string(counter++) + ".yaml");
        std::ofstream(m_path) << text;
    }
    ~TempYaml() { std::filesystem::remove(m_path); }
    TempYaml(TempYaml const&) = delete;
    TempYaml& operator=(TempYaml const&) = delete;
    std::string path() const { return m_path.string(); }

private:
    std::filesystem::path m_path;
};

// The message of the ConfigError that `load` throws (fails the test if it throws none).
std::string errorOf(std::function<void()> const& load) {
    try {
        load();
    } catch (ConfigError const& e) {
        return e.what();
    }
    FAIL("no ConfigError was thrown");
    return {};
}

std::string fileError(std::string const& yaml, std::vector<std::string> const& overrides = {}) {
    TempYaml file(yaml);
    return errorOf([&] { loadConfig(file.path(), overrides); });
}

Config fromText(std::string const& yaml, std::vector<std::string> const& overrides = {}) {
    TempYaml file(yaml);
    return loadConfig(file.path(), overrides);
}

std::string const minimal = "time: {steps: 10}\n";

} // namespace

TEST_CASE("every config in configs/ loads and round-trips through its resolved YAML", "[config]") {
    int count = 0;
    for (auto const& entry : std::filesystem::directory_iterator(sourceDir / "configs")) {
        if (entry.path().extension() != ".yaml") continue;
        ++count;
        INFO(entry.path().string());
        Config const c = loadConfig(entry.path().string());
        Config again = parseConfig(c.resolvedYaml, "resolved");
        again.sourcePath = c.sourcePath;
        CHECK(again == c);
        CHECK(configYaml(again) == c.resolvedYaml);
        CHECK(c.totalSteps() % c.outputEvery() == 0);
    }
    CHECK(count >= 4);
}

TEST_CASE("configs/default.yaml: the default case", "[config]") {
    Config const c = loadConfig(configPath("default.yaml"));
    CHECK(c.title == "Strata default case");
    CHECK(c.horizontal.type == HorizontalGridType::LatLon);
    CHECK(c.horizontal.nlat == 4);
    CHECK(c.horizontal.nlon == 8);
    CHECK(c.vertical.levels == 30);
    CHECK(c.vertical.top == 30000.0);
    CHECK(c.time.dt == 600.0);
    CHECK(c.vertical.stretching == Stretching::Power);
    CHECK(c.totalSteps() == 288);
    CHECK(c.outputEvery() == 36);
    CHECK(c.processOrder == std::vector<std::string>{"held_suarez", "coriolis", "vertical_advection", "surface_fluxes",
                                                     "vertical_diffusion", "large_scale_condensation"});
    CHECK((c.enabled("vertical_diffusion") && c.enabled("vertical_advection") && c.enabled("held_suarez") &&
           c.enabled("coriolis") && c.enabled("surface_fluxes") && c.enabled("large_scale_condensation") &&
           !c.enabled("kessler")));
    CHECK(settingsOf<strata::app::HeldSuarezSettings>(c).tMax == 294.0);
    CHECK(settingsOf<strata::app::HeldSuarezSettings>(c).deltaTy == 65.0);
    CHECK(settingsOf<strata::app::DiffusionSettings>(c).mode == DiffusionMode::Implicit);
    CHECK(settingsOf<strata::app::DiffusionSettings>(c).profile == DiffusionProfile::ReedJablonowski);
    CHECK(settingsOf<strata::app::AdvectionSettings>(c).scheme == AdvectionScheme::Upwind3);
    CHECK(settingsOf<strata::app::AdvectionSettings>(c).positiveScheme == AdvectionScheme::Limited);
    CHECK(settingsOf<strata::app::AdvectionSettings>(c).wMax == -0.002);
    CHECK(c.output.path == "out/default.nc");
}

TEST_CASE("configs/held_suarez.yaml: Held-Suarez alone for 20 days, output every 2 days", "[config]") {
    Config const c = loadConfig(configPath("held_suarez.yaml"));
    CHECK(c.horizontal.nlat == 8);
    CHECK(c.horizontal.nlon == 16);
    CHECK(c.vertical.levels == 30);
    CHECK(c.processOrder == std::vector<std::string>{"held_suarez"});
    CHECK_FALSE(c.enabled("vertical_diffusion"));
    CHECK(c.totalSteps() * c.time.dt == 20 * 86400.0);
    CHECK(c.outputEvery() * c.time.dt == 2 * 86400.0);
}

TEST_CASE("configs/heat_equation.yaml: stable explicit diffusion with a visible decay", "[config]") {
    Config const c = loadConfig(configPath("heat_equation.yaml"));
    CHECK(c.horizontal.type == HorizontalGridType::Columns);
    CHECK(c.horizontal.ncol == 4);
    CHECK(c.vertical.levels == 64);
    CHECK(c.initial.temperature == InitialTemperature::Cosine);
    CHECK(c.processOrder == std::vector<std::string>{"vertical_diffusion"});
    CHECK(settingsOf<strata::app::DiffusionSettings>(c).mode == DiffusionMode::Explicit);
    CHECK(settingsOf<strata::app::DiffusionSettings>(c).profile == DiffusionProfile::Constant);
    CHECK(settingsOf<strata::app::DiffusionSettings>(c).surfaceHeatFlux == 0.0);
    double const dz = c.vertical.height() / c.vertical.cells();
    double const courant = c.time.dt * settingsOf<strata::app::DiffusionSettings>(c).kappa / (dz * dz);
    double const pi = std::acos(-1.0);
    double const decay = std::exp(-settingsOf<strata::app::DiffusionSettings>(c).kappa * (pi / c.vertical.height()) *
                                  (pi / c.vertical.height()) * double(c.totalSteps()) * c.time.dt);
    INFO("dt K / dz^2 = " << courant << ", amplitude decays to " << decay << " of its start");
    CHECK(courant < 0.5);
    CHECK(decay < 0.8);
    CHECK(decay > 0.2);
    CHECK(c.totalSteps() / c.outputEvery() == 10);
}

TEST_CASE("configs/subsidence_tracer.yaml: advection of a tracer blob", "[config]") {
    Config const c = loadConfig(configPath("subsidence_tracer.yaml"));
    CHECK(c.horizontal.ncol == 6);
    CHECK(c.vertical.levels == 60);
    CHECK(c.vertical.top == 12000.0);
    CHECK(c.processOrder == std::vector<std::string>{"vertical_advection"});
    CHECK(settingsOf<strata::app::AdvectionSettings>(c).wMax == -0.02);
    CHECK(c.initial.tracerHeight == 6000.0);
    CHECK(c.totalSteps() * c.time.dt == 2 * 86400.0);
    CHECK(std::abs(settingsOf<strata::app::AdvectionSettings>(c).wMax) * c.time.dt /
              (c.vertical.height() / c.vertical.cells()) <
          1.0);
}

TEST_CASE("absent keys take the defaults of the structs", "[config]") {
    Config const c = fromText(minimal);
    Config expected;
    expected.time.steps = 10;
    CHECK(c.vertical == expected.vertical);
    CHECK(c.horizontal == expected.horizontal);
    CHECK(c.time == expected.time);
    CHECK(c.backend == expected.backend);
    CHECK(settingsOf<strata::app::DiffusionSettings>(c) == settingsOf<strata::app::DiffusionSettings>(expected));
    CHECK(settingsOf<strata::app::AdvectionSettings>(c) == settingsOf<strata::app::AdvectionSettings>(expected));
    CHECK(settingsOf<strata::app::HeldSuarezSettings>(c) == settingsOf<strata::app::HeldSuarezSettings>(expected));
    CHECK(c.initial == expected.initial);
    CHECK(c.output == expected.output);
    CHECK(c.processOrder.empty());
    CHECK(c.title == expected.title);
}

TEST_CASE("every value is read into its field", "[config]") {
    Config const c = fromText(R"(
title: all keys
grid:
  vertical: {levels: 12, top: 5000, stretching: power, exponent: 1.5}
  horizontal: {type: columns, ncol: 3}
time: {dt: 30, steps: 20, start: "1999-12-31"}
backend: {type: threads, threads_workers: 8, engine: shmem}
processes:
  - held_suarez: {ka: 0.05, ks: 0.5, delta_T_y: 50, delta_theta_z: 5, sigma_b: 0.8, T_min: 190, T_max: 320, p0: 101325}
  - vertical_advection: {scheme: upwind1, w_max: 0.005}
  - vertical_diffusion: {mode: explicit, profile: boundary_layer, kappa: 2, boundary_layer_height: 800, kappa_free: 0.5,
                         surface_heat_flux: 0.1, surface_moisture_flux: 1e-5, surface_tracer_flux: -0.2}
initial_conditions: {temperature: isothermal, surface_temperature: 250, lapse_rate: 0.005, amplitude: 2,
                     surface_pressure: 95000, humidity: 0, tracer_height: 2500, tracer_width: 300}
output: {path: a/b.nc, variables: [w, K, p_face], interval: 90, precision: double}
)");
    CHECK(c.title == "all keys");
    CHECK(c.vertical == strata::app::VerticalGridConfig{12, 5000.0, Stretching::Power, 1.5, {}, {}});
    CHECK(c.horizontal == strata::app::HorizontalGridConfig{HorizontalGridType::Columns, 4, 8, 3, {}, {}});
    CHECK(c.time.dt == 30.0);
    CHECK(c.time.steps == 20u);
    CHECK_FALSE(c.time.days);
    CHECK(c.time.start == "1999-12-31 00:00:00");
    CHECK(c.backend ==
          strata::app::BackendConfig{strata::app::BackendType::Threads, 8, strata::app::EngineChoice::Shmem});
    CHECK(settingsOf<strata::app::HeldSuarezSettings>(c) ==
          strata::app::HeldSuarezSettings{0.05, 0.5, 50.0, 5.0, 0.8, 190.0, 320.0, 101325.0});
    CHECK(settingsOf<strata::app::AdvectionSettings>(c) ==
          strata::app::AdvectionSettings{AdvectionScheme::Upwind1, 0.005});
    CHECK(settingsOf<strata::app::DiffusionSettings>(c) ==
          strata::app::DiffusionSettings{DiffusionMode::Explicit, DiffusionProfile::BoundaryLayer, 2.0, 800.0, 0.5, 0.1,
                                         1e-5, -0.2});
    CHECK(c.initial == strata::app::InitialConfig{InitialTemperature::Isothermal, 250.0, 0.005, 200.0, 0.0, 2.0,
                                                  95000.0, 0.0, 2500.0, 300.0, strata::app::InitialWind::Uniform, 0.0,
                                                  0.0, ""});
    CHECK(c.output == strata::app::OutputConfig{"a/b.nc", {"w", "K", "p_face"}, 90.0, strata::app::Precision::Double});
    CHECK(c.processOrder == std::vector<std::string>{"held_suarez", "vertical_advection", "vertical_diffusion"});
    CHECK(c.outputEvery() == 3);
}

TEST_CASE("a process may be named alone or with empty settings", "[config]") {
    Config const c = fromText(minimal + "processes: [held_suarez, {vertical_advection: }]\n");
    CHECK(c.processOrder == std::vector<std::string>{"held_suarez", "vertical_advection"});
    CHECK(settingsOf<strata::app::HeldSuarezSettings>(c) == strata::app::HeldSuarezSettings{});
}

TEST_CASE("unknown keys are reported with the nearest valid sibling", "[config][errors]") {
    CHECK(fileError(minimal + "grid: {vertical: {levles: 10}}\n") ==
          "grid.vertical.levles: unknown key; did you mean 'levels'? (expected one of: levels, top, stretching, "
          "exponent, faces, faces_file)");
    CHECK_THAT(fileError(minimal + "outptu: {path: x.nc}\n"), Contains("outptu: unknown key; did you mean 'output'?"));
    CHECK_THAT(fileError(minimal + "processes:\n  - vertical_diffusion: {kapa: 1}\n"),
               Contains("processes.vertical_diffusion.kapa: unknown key; did you mean 'kappa'?"));
    // No suggestion when nothing is close.
    CHECK(fileError(minimal + "grid: {vertical: {resolution: 10}}\n") ==
          "grid.vertical.resolution: unknown key (expected one of: levels, top, stretching, exponent, faces, "
          "faces_file)");
    CHECK_THAT(fileError(minimal + "grid: {vertical: {levels: 10, levels: 20}}\n"),
               Contains("grid.vertical.levels: duplicate key"));
}

TEST_CASE("values of the wrong type are reported with the expected type", "[config][errors]") {
    CHECK(fileError(minimal + "grid: {vertical: {levels: ten}}\n") ==
          "grid.vertical.levels: 'ten' is not an integer (expected an integer in [1, 100000])");
    CHECK(fileError(minimal + "grid: {vertical: {levels: 10.5}}\n") ==
          "grid.vertical.levels: '10.5' is not an integer (expected an integer in [1, 100000])");
    CHECK(fileError("time: {steps: 10, dt: fast}\n") ==
          "time.dt: 'fast' is not a finite number (expected a number > 0)");
    CHECK(fileError(minimal + "output: {variables: T}\n") ==
          "output.variables: 'T' is not a list (expected a list of distinct names from: T, theta, u, v, q, qc, "
          "qr, tracer, p, p_face, rho, rho_face, exner, K, w, surface_upward_sensible_heat_flux, "
          "surface_upward_latent_heat_flux, water_evaporation_flux, precipitation_flux, tendency_of_<var>, "
          "tendency_of_<var>_due_to_<process>)");
    CHECK(fileError(minimal + "grid: {vertical: [1, 2]}\n") ==
          "grid.vertical: '[1, 2]' is not a map (expected a map with keys: levels, top, stretching, exponent, "
          "faces, faces_file)");
    CHECK_THAT(fileError(minimal + "title: {a: 1}\n"), Contains("title: '{a: 1}' is not a string"));
    CHECK_THAT(fileError("[1, 2]\n"), Contains("configuration: '[1, 2]' is not a map"));
}

TEST_CASE("values out of range are reported with the accepted range", "[config][errors]") {
    CHECK(fileError(minimal + "grid: {vertical: {levels: 0}}\n") ==
          "grid.vertical.levels: '0' is out of range (expected an integer in [1, 100000])");
    CHECK(fileError(minimal + "grid: {vertical: {levels: -3}}\n") ==
          "grid.vertical.levels: '-3' is out of range (expected an integer in [1, 100000])");
    CHECK(fileError(minimal + "grid: {vertical: {stretching: cubic}}\n") ==
          "grid.vertical.stretching: 'cubic' is not allowed (expected one of: uniform, power)");
    CHECK_THAT(fileError(minimal + "grid: {vertical: {top: -1}}\n"),
               Contains("grid.vertical.top: '-1' is out of range"));
    CHECK_THAT(fileError(minimal + "grid: {vertical: {exponent: 0.5}}\n"), Contains("(expected a number >= 1)"));
    CHECK_THAT(fileError(minimal + "initial_conditions: {humidity: -0.1}\n"),
               Contains("initial_conditions.humidity: '-0.1' is out of range (expected a number >= 0)"));
    CHECK_THAT(fileError(minimal + "initial_conditions: {tracer_width: 0}\n"),
               Contains("initial_conditions.tracer_width"));
    CHECK_THAT(fileError(minimal + "processes: [{vertical_diffusion: {kappa: -1}}]\n"),
               Contains("processes.vertical_diffusion.kappa: '-1' is out of range"));
    CHECK(fileError(minimal + "grid: {horizontal: {type: columns}}\n") ==
          "grid.horizontal.ncol: '0' is out of range (expected an integer >= 1 when grid.horizontal.type is columns)");
    CHECK(fileError(minimal + "output: {variables: [T, latitude]}\n") ==
          "output.variables[1]: 'latitude' is not allowed (expected one of: T, theta, u, v, q, qc, qr, tracer, p, "
          "p_face, rho, rho_face, exner, K, w, surface_upward_sensible_heat_flux, surface_upward_latent_heat_flux, "
          "water_evaporation_flux, precipitation_flux, tendency_of_<var>, tendency_of_<var>_due_to_<process>)");
    // The tendency patterns stand for names of prognostic variables and registered processes.
    CHECK(fromText(minimal, {"output.variables=[tendency_of_T, tendency_of_qc_due_to_kessler]"}).output.variables ==
          std::vector<std::string>{"tendency_of_T", "tendency_of_qc_due_to_kessler"});
    CHECK_THAT(fileError(minimal + "output: {variables: [tendency_of_w]}\n"),
               Contains("output.variables[0]: 'tendency_of_w' is not allowed"));
    CHECK_THAT(fileError(minimal + "output: {variables: [T, q, T]}\n"),
               Contains("output.variables[2]: 'T' is listed twice"));
    CHECK_THAT(fileError("time: {steps: 10, start: 2001-02-29}\n"),
               Contains("time.start: '2001-02-29' is not allowed"));
    CHECK_THAT(fileError(minimal + "initial_conditions: {minimum_temperature: 0}\n"),
               Contains("initial_conditions.minimum_temperature: '0' is out of range (expected a number > 0)"));
    CHECK_THAT(fileError(minimal + "initial_conditions: {lapse_rate: 0.01, minimum_temperature: 20, "
                                   "equator_pole_difference: 20}\n"),
               Contains("initial_conditions.equator_pole_difference: '20' gives T = 0 K at a pole"));
    CHECK_THAT(fileError(minimal + "processes: [{held_suarez: {T_min: 320}}]\n"),
               Contains("processes.held_suarez.T_min: '320' is not below T_max"));
}

TEST_CASE("a YAML syntax error names the file, line and column", "[config][errors]") {
    TempYaml file("time: {steps: 10}\ngrid:\n  vertical: {levels: 30\n  horizontal: {type: latlon}\n");
    std::string const message = errorOf([&] { loadConfig(file.path()); });
    CHECK(message == file.path() + ":4:13: YAML syntax error: end of map flow not found");
    TempYaml indent("time:\n  steps: 10\n dt: 5\n");
    CHECK_THAT(errorOf([&] { loadConfig(indent.path()); }), Contains(indent.path() + ":3:"));
}

TEST_CASE("a missing file is named", "[config][errors]") {
    CHECK(errorOf([] { loadConfig("no/such/strata.yaml"); }) ==
          "no/such/strata.yaml: no such file (expected a readable YAML configuration file)");
    CHECK_THAT(errorOf([] { loadConfig(sourceDir.string()); }), Contains("is a directory"));
}

TEST_CASE("the run length is exactly one of time.steps and time.days, a whole number of steps", "[config][errors]") {
    CHECK(fileError("time: {steps: 10, days: 1.5}\n") ==
          "time: both steps (10) and days (1.5) are set (expected exactly one of time.steps, time.days)");
    CHECK(fileError("title: no run length\n") ==
          "time: neither steps nor days is set (expected exactly one of time.steps, time.days)");
    CHECK(fileError("time: {days: 0.01, dt: 1000}\n") ==
          "time.days: '0.01' is 0.864 steps of time.dt = 1000 s (expected a run length of a whole number (>= 1) of "
          "time.dt steps, within 1e-9 relative)");
    CHECK(fromText("time: {days: 1.5}\n").totalSteps() == 216);
    CHECK(fromText("time: {days: 1, dt: 8}\n", {"time.days=0.7"}).totalSteps() == 7560);
}

TEST_CASE("the output interval is a positive multiple of time.dt", "[config][errors]") {
    CHECK(fileError(minimal + "output: {interval: 1000}\n") ==
          "output.interval: '1000' is 1.66666666667 steps of time.dt = 600 s (expected a positive multiple of "
          "time.dt, within 1e-9 relative)");
    CHECK_THAT(fileError(minimal + "output: {interval: 0}\n"),
               Contains("output.interval: '0' is out of range (expected a number > 0)"));
    CHECK(fromText("time: {dt: 0.1, steps: 100}\noutput: {interval: 0.3}\n").outputEvery() == 3);
}

TEST_CASE("processes: unknown, listed twice or malformed", "[config][errors]") {
    CHECK(fileError(minimal + "processes:\n  - held_suares: {}\n") ==
          "processes[0]: unknown process 'held_suares'; did you mean 'held_suarez'? (expected one of: "
          "vertical_diffusion, vertical_advection, held_suarez, coriolis, surface_fluxes, large_scale_condensation, "
          "kessler)");
    CHECK(fileError(minimal + "processes:\n  - held_suarez\n  - vertical_advection\n  - held_suarez: {ka: 1}\n") ==
          "processes[2]: 'held_suarez' is listed twice (also at processes[0]) (expected each process at most once)");
    // The settings not indented under the name: one item with two keys.
    CHECK_THAT(fileError(minimal + "processes:\n  - vertical_diffusion:\n    mode: implicit\n"),
               Contains("processes[0]: '{vertical_diffusion: ~, mode: implicit}' is not a process"));
    CHECK_THAT(fileError(minimal + "processes: {held_suarez: {}}\n"),
               Contains("processes: '{held_suarez: {}}' is not a list"));
    CHECK_THAT(fileError(minimal + "processes: [{held_suarez: 5}]\n"),
               Contains("processes.held_suarez: '5' is not a map (expected a map with keys: ka, ks,"));
}

TEST_CASE("overrides (--set) edit the tree before validation", "[config][overrides]") {
    std::string const base = "time: {steps: 10}\nprocesses:\n  - vertical_diffusion: {kappa: 5}\n  - held_suarez\n";
    Config const c =
        fromText(base, {"grid.vertical.levels=60", "processes.vertical_diffusion.kappa=10",
                        "processes.held_suarez.ka=0.05", "processes.vertical_advection.w_max=-0.03",
                        "output.variables=[T, q]", "title=A title with = in it", "time.steps=", "time.days=2"});
    CHECK(c.vertical.levels == 60);
    CHECK(settingsOf<strata::app::DiffusionSettings>(c).kappa == 10.0);
    CHECK(settingsOf<strata::app::HeldSuarezSettings>(c).ka == 0.05);
    CHECK(c.enabled("vertical_advection"));
    CHECK(settingsOf<strata::app::AdvectionSettings>(c).wMax == -0.03);
    CHECK(c.processOrder == std::vector<std::string>{"vertical_diffusion", "held_suarez", "vertical_advection"});
    CHECK(c.output.variables == std::vector<std::string>{"T", "q"});
    CHECK(c.title == "A title with = in it");
    CHECK_FALSE(c.time.steps);
    CHECK(c.totalSteps() == 288);

    Config const settings =
        fromText(minimal, {"processes.held_suarez={ka: 0.1}", "grid.horizontal={type: columns, ncol: 2}"});
    CHECK(settings.processOrder == std::vector<std::string>{"held_suarez"});
    CHECK(settingsOf<strata::app::HeldSuarezSettings>(settings).ka == 0.1);
    CHECK(settings.horizontal.ncol == 2);

    Config const onEmpty = fromText("", {"time.steps=5"});
    CHECK(onEmpty.totalSteps() == 5);
}

TEST_CASE("bad overrides are reported with the override", "[config][overrides][errors]") {
    CHECK(fileError(minimal, {"grid.vertical.levels"}) ==
          "--set grid.vertical.levels: no '=' in the override (expected key.path=value, e.g. "
          "grid.vertical.levels=60)");
    CHECK_THAT(fileError(minimal, {"grid..levels=3"}),
               Contains("--set grid..levels=3: 'grid..levels' is not a key path"));
    CHECK_THAT(fileError(minimal, {"output.variables=[T, q"}),
               Contains("--set output.variables=[T, q: the value '[T, q' is not valid YAML"));
    CHECK_THAT(fileError(minimal + "title: t\n", {"title.x=1"}),
               Contains("--set title.x=1: 'title' is 't', not a map"));
    // Overridden keys are checked like the file's.
    CHECK(fileError(minimal, {"grid.vertical.levles=5"}) ==
          "grid.vertical.levles: unknown key; did you mean 'levels'? (expected one of: levels, top, stretching, "
          "exponent, faces, faces_file)");
    CHECK_THAT(fileError(minimal, {"processes.held_suares.ka=1"}),
               Contains("unknown process 'held_suares'; did you mean 'held_suarez'?"));
    CHECK_THAT(fileError(minimal, {"time.days=1"}), Contains("time: both steps (10) and days (1) are set"));
}

TEST_CASE("the resolved YAML holds every key and reads back to the same configuration", "[config]") {
    Config const c = fromText(minimal + "processes: [held_suarez]\n", {"grid.vertical.top=20000"});
    for (char const* key : {"title:", "levels: 30", "top: 20000.0", "exponent: 1.0", "nlat: 4", "ncol: 0", "dt: 600.0",
                            "steps: 10", "start: 2000-01-01 00:00:00", "threads_workers: 4", "- held_suarez:",
                            "ka: 0.025", "humidity: 0.01", "variables: [T, q, tracer, p]", "precision: float"})
        CHECK_THAT(c.resolvedYaml, Contains(key));
    CHECK_THAT(c.resolvedYaml, !Contains("vertical_diffusion"));
    CHECK_THAT(c.resolvedYaml, !Contains("days"));
    CHECK_THAT(fromText(minimal).resolvedYaml, Contains("processes: []"));
    Config again = parseConfig(c.resolvedYaml, "resolved");
    again.sourcePath = c.sourcePath;
    CHECK(again == c);
}

namespace {

// Lists every key path of the schema.
struct KeyLister {
    std::string prefix;
    std::vector<std::string>& keys;
    std::string path(std::string const& key) const { return prefix.empty() ? key : prefix + "." + key; }
    template <class T, class R>
    void field(std::string const& key, T&, R const&) {
        keys.push_back(path(key));
    }
    template <class F>
    void section(std::string const& key, F&& describeChild) {
        KeyLister child{path(key), keys};
        describeChild(child);
    }
    template <class F>
    void processList(std::string const& key, std::vector<std::string>&, F&& describeEach) {
        Processes each{path(key), keys};
        describeEach(each);
    }
    struct Processes {
        std::string prefix;
        std::vector<std::string>& keys;
        template <class F>
        void process(std::string const& name, F&& describeSettings) {
            KeyLister settings{prefix + "." + name, keys};
            describeSettings(settings);
        }
    };
};

} // namespace

TEST_CASE("docs/config.md documents every key", "[config][docs]") {
    std::ifstream in(sourceDir / "docs" / "config.md");
    REQUIRE(in);
    std::stringstream text;
    text << in.rdbuf();
    std::vector<std::string> keys;
    Config c;
    KeyLister lister{"", keys};
    strata::app::detail::describe(lister, c);
    CHECK(keys.size() > 40); // the walk reached every section
    for (auto const& key : keys) {
        INFO(key);
        CHECK_THAT(text.str(), Contains("`" + key + "`"));
    }
}

TEST_CASE("docs/config.md documents every output variable choice", "[config][docs]") {
    std::ifstream in(sourceDir / "docs" / "config.md");
    REQUIRE(in);
    std::stringstream read;
    read << in.rdbuf();
    std::string const text = read.str();
    auto const choices = strata::app::outputChoices();
    CHECK(choices.size() > 20);
    for (auto const& name : choices) {
        INFO(name);
        CHECK_THAT(text, Contains("`" + name + "`"));
    }
}

namespace {

// Every path a document may name: the keys, the sections (`grid.vertical`) and the processes (`processes.kessler`,
// which has no settings).
struct PathLister {
    std::string prefix;
    std::set<std::string>& paths;
    std::string path(std::string const& key) const { return prefix.empty() ? key : prefix + "." + key; }
    template <class T, class R>
    void field(std::string const& key, T&, R const&) {
        paths.insert(path(key));
    }
    template <class F>
    void section(std::string const& key, F&& describeChild) {
        paths.insert(path(key));
        PathLister child{path(key), paths};
        describeChild(child);
    }
    template <class F>
    void processList(std::string const& key, std::vector<std::string>&, F&& describeEach) {
        paths.insert(path(key));
        Processes each{path(key), paths};
        describeEach(each);
    }
    struct Processes {
        std::string prefix;
        std::set<std::string>& paths;
        template <class F>
        void process(std::string const& name, F&& describeSettings) {
            PathLister settings{prefix + "." + name, paths};
            paths.insert(settings.prefix);
            describeSettings(settings);
        }
    };
};

std::set<std::string> schemaPaths() {
    std::set<std::string> paths;
    Config c;
    PathLister lister{"", paths};
    strata::app::detail::describe(lister, c);
    return paths;
}

std::string readFile(std::filesystem::path const& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

// The configuration keys a Markdown text names that are not in `paths`, as "NAME:LINE: `key` ...". A text names a
// key with a code span that is the dotted key itself (`output.path`, `time.days=4`, `output.variables[1]`), and
// with the argument of `--set` (in prose, spans or code blocks). A span that only contains a dotted name is a
// message or C++ (`grid.vertical.levles: unknown key`, `backend.memSpace`), and `grid.cpp` is a file: not keys.
// Only names starting with a section of the schema are keys (`--set key.path=value` is a placeholder). C++ blocks
// are C++.
std::vector<std::string> unknownKeys(std::string const& name, std::string const& text,
                                     std::set<std::string> const& paths) {
    std::set<std::string> sections;
    for (auto const& path : paths)
        if (path.find('.') != std::string::npos) sections.insert(path.substr(0, path.find('.')));
    std::vector<std::pair<std::size_t, std::string>> unknown; // by line
    auto const check = [&](std::string const& key, std::size_t line) {
        if (sections.count(key.substr(0, key.find('.'))) && !paths.count(key))
            unknown.emplace_back(line,
                                 name + ":" + std::to_string(line) + ": `" + key + "` is not a configuration key");
    };
    std::regex const spanKey(R"(^([A-Za-z_]\w*(\.[A-Za-z_]\w*)+)(\[\d+\])?(=\S*)?$)");
    std::regex const file(R"(\.(cpp|hpp|cu|h|md|nc|yaml|py|sh|txt|png|json|cmake)$)");
    std::regex const set(R"(--set[ \t\n]+([A-Za-z_][\w.]*))");
    std::regex const span("`([^`]+)`");
    std::istringstream lines(text);
    std::string line, chunk; // a paragraph or a code block: spans and --set may run over its lines
    std::size_t number = 0, chunkStart = 1;
    bool inBlock = false, cppBlock = false;
    auto const endChunk = [&] {
        auto const lineAt = [&](std::ptrdiff_t at) {
            return chunkStart + std::count(chunk.begin(), chunk.begin() + at, '\n');
        };
        for (std::sregex_iterator m(chunk.begin(), chunk.end(), set), end; m != end && !cppBlock; ++m)
            check((*m)[1], lineAt(m->position(1)));
        for (std::sregex_iterator m(chunk.begin(), chunk.end(), span), end; m != end && !inBlock; ++m) {
            std::string const content = (*m)[1];
            std::smatch key;
            if (std::regex_match(content, key, spanKey) && !std::regex_search(key[1].str(), file))
                check(key[1], lineAt(m->position()));
        }
        chunk.clear();
    };
    while (std::getline(lines, line)) {
        ++number;
        if (line.find("```") != std::string::npos && line.find_first_not_of(' ') == line.find("```")) {
            endChunk();
            cppBlock = !inBlock && line.find("```cpp") != std::string::npos;
            inBlock = !inBlock;
        } else if (!inBlock && line.find_first_not_of(" \t") == std::string::npos) {
            endChunk();
        } else {
            if (chunk.empty()) chunkStart = number;
            chunk += line + "\n";
        }
    }
    endChunk();
    std::stable_sort(unknown.begin(), unknown.end(), [](auto const& a, auto const& b) { return a.first < b.first; });
    std::vector<std::string> messages;
    for (auto const& entry : unknown)
        messages.push_back(entry.second);
    return messages;
}

} // namespace

TEST_CASE("README.md and docs/*.md name only keys of the schema", "[config][docs]") {
    auto const paths = schemaPaths();
    CHECK(paths.count("processes.kessler"));
    std::vector<std::filesystem::path> docs{sourceDir / "README.md"};
    for (auto const& entry : std::filesystem::directory_iterator(sourceDir / "docs"))
        if (entry.path().extension() == ".md") docs.push_back(entry.path());
    CHECK(docs.size() > 5);
    for (auto const& doc : docs) {
        std::string const name = std::filesystem::relative(doc, sourceDir).string();
        for (auto const& problem : unknownKeys(name, readFile(doc), paths))
            FAIL_CHECK(problem);
    }
}

TEST_CASE("the docs key check reports keys broken on purpose, and only those", "[config][docs]") {
    auto const paths = schemaPaths();
    std::string const text = "Set `time.days` or `time.dayz`, `output.variables[1]`, `grid.vertical`.\n"
                             "`grid.vertical.levles: unknown key` is a message, `grid.cpp` a file,\n"
                             "`core::Buffer<T>(n, backend.memSpace)` C++, `--set key.path=value` a placeholder.\n"
                             "A span may run over lines: `strata run x.yaml --set time.days=2 --set\n"
                             "processes.held_suarez.kz=1`.\n"
                             "```cpp\n"
                             "c.output.pathz = 1; // --set time.x=1\n"
                             "```\n"
                             "```\n"
                             "strata run x.yaml --set restart.intervall=5 --set processes.kessler.a=1\n"
                             "```\n";
    CHECK(unknownKeys("x.md", text, paths) ==
          std::vector<std::string>{"x.md:1: `time.dayz` is not a configuration key",
                                   "x.md:5: `processes.held_suarez.kz` is not a configuration key",
                                   "x.md:10: `restart.intervall` is not a configuration key",
                                   "x.md:10: `processes.kessler.a` is not a configuration key"});
    // The real docs/config.md with one key renamed.
    std::string config = readFile(sourceDir / "docs" / "config.md");
    REQUIRE(unknownKeys("docs/config.md", config, paths).empty());
    std::size_t const at = config.find("`time.days`");
    REQUIRE(at != std::string::npos);
    config.replace(at, 11, "`time.dayz`");
    std::string const line = std::to_string(1 + std::count(config.begin(), config.begin() + at, '\n'));
    CHECK(unknownKeys("docs/config.md", config, paths) ==
          std::vector<std::string>{"docs/config.md:" + line + ": `time.dayz` is not a configuration key"});
}

// ---- strict parsing ----------------------------------------------------------------------------------------------

TEST_CASE("a configuration file holds exactly one YAML document", "[config][errors][strict]") {
    TempYaml two(minimal + "---\ntime: {steps: 20}\n");
    std::string const message = errorOf([&] { loadConfig(two.path()); });
    CHECK_THAT(message, Contains(two.path() + ":"));
    CHECK_THAT(message, Contains("a second YAML document (document 2 of 2); only one document is allowed"));
    // A leading "---", a final "..." or an empty document after the first are one document.
    CHECK(fromText("---\n" + minimal).totalSteps() == 10);
    CHECK(fromText("---\n" + minimal + "...\n").totalSteps() == 10);
    CHECK(fromText(minimal + "---\n# nothing more\n").totalSteps() == 10);
    // The first document empty, the second holding the configuration: refused, not read as all defaults.
    CHECK_THAT(fileError("---\n---\n" + minimal), Contains("only one document is allowed"));
    CHECK_THAT(fileError(minimal, {"title=a\n---\nb"}), Contains("is several YAML documents"));
}

TEST_CASE("numbers are written plainly: quoted or tagged numbers are refused", "[config][errors][strict]") {
    std::string const plainly = "(expected a number written plainly, without quotes or tags: ";
    CHECK(fileError("time: {steps: 10, dt: \"600\"}\n") ==
          "time.dt: '600' is quoted (or a block scalar): a string, not a number " + plainly + "a number > 0)");
    CHECK_THAT(fileError("time: {steps: 10, dt: '600'}\n"), Contains("time.dt: '600' is quoted"));
    CHECK_THAT(fileError("time: {steps: \"10\"}\n"),
               Contains("time.steps: '10' is quoted (or a block scalar): a string, not a number " + plainly +
                        "an integer >= 1)"));
    CHECK(fileError(minimal + "grid: {vertical: {levels: !foo 10}}\n") ==
          "grid.vertical.levels: '10' has the tag !foo " + plainly + "an integer in [1, 100000])");
    CHECK_THAT(fileError(minimal + "grid: {vertical: {top: !!str 10}}\n"),
               Contains("grid.vertical.top: '10' has the tag !!str " + plainly));
    CHECK_THAT(fileError(minimal + "initial_conditions:\n  u: |\n    5\n"),
               Contains("initial_conditions.u: '5\\x0a' is quoted (or a block scalar)"));
    CHECK_THAT(fileError(minimal, {"processes.held_suarez.ka=\"0.5\""}),
               Contains("processes.held_suarez.ka: '0.5' is quoted"));
    // Names and strings may be quoted.
    Config const c = fromText(minimal + "title: \"10\"\ngrid: {vertical: {stretching: 'power'}}\noutput: {path: "
                                        "'5.nc', variables: [\"T\"]}\n");
    CHECK(c.title == "10");
    CHECK(c.vertical.stretching == Stretching::Power);
    CHECK(c.output.path == "5.nc");
}

TEST_CASE("text values hold no control characters", "[config][errors][strict]") {
    std::string const expected = " (expected text without control characters (bytes 0x00 to 0x1f and 0x7f, tab and "
                                 "newline included))";
    CHECK(fileError(minimal + "title: \"a\\x01b\"\n") ==
          "title: 'a\\x01b' contains a control character (byte 0x01 at position 1)" + expected);
    CHECK_THAT(fileError(minimal + "output: {path: \"out/a\\0.nc\"}\n"),
               Contains("output.path: 'out/a\\x00.nc' contains a control character (byte 0x00 at position 5)"));
    CHECK_THAT(fileError(minimal + "title: \"tab\\there\"\n"), Contains("title: 'tab\\x09here' contains"));
    CHECK_THAT(fileError(minimal + "title: \"del\\x7f\"\n"), Contains("(byte 0x7f at position 3)"));
    CHECK_THAT(fileError("time: {steps: 10, start: \"2000-01-01\\n\"}\n"), Contains("time.start: '2000-01-01\\x0a'"));
    CHECK_THAT(fileError(minimal + "grid: {vertical: {stretching: \"power\\e\"}}\n"),
               Contains("grid.vertical.stretching: 'power\\x1b' contains a control character"));
    CHECK_THAT(fileError(minimal + "output: {variables: [T, \"q\\r\"]}\n"),
               Contains("output.variables[1]: 'q\\x0d' contains a control character"));
    CHECK_THAT(fileError(minimal + "processes: [\"kessler\\x02\"]\n"),
               Contains("processes[0]: 'kessler\\x02' contains a control character"));
    // Keys and values are printed escaped, and long text is cut.
    CHECK_THAT(fileError(minimal + "\"ti\\x1btle\": x\n"), Contains("ti\\x1btle: unknown key"));
    std::string const longName(5000, 'z');
    std::string const message = fileError(minimal + "grid: {vertical: {stretching: " + longName + "}}\n");
    CHECK_THAT(message, Contains("... (5000 bytes)' is not allowed"));
    CHECK(message.size() < 400);
}

TEST_CASE("time.start is a date of the CF standard calendar, years 1 to 9999", "[config][errors][strict]") {
    CHECK_THAT(fileError("time: {steps: 10, start: 0000-06-01}\n"),
               Contains("time.start: '0000-06-01' is not allowed (expected a date 'YYYY-MM-DD hh:mm:ss' or "
                        "'YYYY-MM-DD' of the CF standard calendar: year 1 to 9999"));
    CHECK_THAT(fileError("time: {steps: 10, start: '1582-10-10'}\n"), Contains("time.start: '1582-10-10'"));
    CHECK_THAT(fileError("time: {steps: 10, start: '2000-01-0a'}\n"), Contains("time.start"));
    CHECK_THAT(fileError("time: {steps: 10, start: '+200-01-01'}\n"), Contains("time.start"));
    CHECK_THAT(fileError("time: {steps: 10, start: '1900-02-29'}\n"), Contains("time.start"));
    CHECK(fromText("time: {steps: 10, start: '0001-01-01'}\n").time.start == "0001-01-01 00:00:00");
    CHECK(fromText("time: {steps: 10, start: '9999-12-31 23:59:59'}\n").time.start == "9999-12-31 23:59:59");
    CHECK(fromText("time: {steps: 10, start: '1582-10-15'}\n").time.start == "1582-10-15 00:00:00");
    CHECK(fromText("time: {steps: 10, start: '1582-10-04'}\n").time.start == "1582-10-04 00:00:00");
    CHECK(fromText("time: {steps: 10, start: '1500-02-29'}\n").time.start == "1500-02-29 00:00:00"); // Julian
    CHECK(fromText("time: {steps: 10, start: '2000-02-29'}\n").time.start == "2000-02-29 00:00:00");
}

TEST_CASE("derived quantities are checked when the configuration is read", "[config][errors][strict]") {
    // A huge exponent: (k / levels)^exponent underflows and the lowest faces coincide at the ground.
    CHECK_THAT(fileError(minimal + "grid: {vertical: {stretching: power, exponent: 1e6}}\n"),
               Contains("grid.vertical.exponent: '1000000' makes cell 0 of 30 0 m thick (z_k = top (k / "
                        "levels)^exponent, top = 30000 m) (expected every cell at least 1e-06 m thick"));
    CHECK_THAT(fileError(minimal + "grid: {vertical: {stretching: power, exponent: 4, levels: 100000}}\n"),
               Contains("grid.vertical.exponent: '4' makes cell 0 of 100000 3e-16 m thick"));
    CHECK_THAT(fileError(minimal + "grid: {vertical: {top: 1e-9}}\n"),
               Contains("grid.vertical.top: '1e-09' makes cell 0 of 30 3.33333333333e-11 m thick"));
    // The exponent is not used by the uniform grid.
    CHECK(fromText(minimal + "grid: {vertical: {exponent: 1e6}}\n").vertical.exponent == 1e6);
    CHECK(fromText(minimal + "grid: {vertical: {stretching: power, exponent: 3, levels: 100}}\n").vertical.levels ==
          100);
    // The run length: at most 1e15 steps, and a finite number of seconds.
    CHECK(fileError("time: {steps: 1000000000000001}\n") ==
          "time.steps: '1000000000000001' is out of range (expected an integer in [1, 10^15])");
    CHECK_THAT(fileError("time: {steps: 1000, dt: 1e306}\noutput: {interval: 1e306}\n"),
               Contains("time.steps: '1000' steps of time.dt = 1e+306 s is more seconds than a double holds"));
    CHECK_THAT(fileError("time: {days: 1e305}\n"), Contains("time.days: '1e+305' is inf steps"));
}
