// A column of the user's own: face heights from a list, columns at given places, and a sounding read from a NetCDF
// file (app/io/sounding.hpp) and interpolated to the model's levels. Expected values come from the formulas the
// test's soundings are made of, not from the code under test; each refusal names the key, the file and the variable.
#define STRATA_TEST_NAME "test_user_column"
#include "tests/app/physics_test_support.hpp"

#include <strata/app/io/sounding.hpp>

#include <catch2/catch.hpp>
#include <netcdf>

#include <cmath>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

using namespace strata;
using Catch::Matchers::Contains;
using test::Case;

namespace {

namespace k = app::constants;

struct Column {
    std::string name, standardName, units;
    std::vector<double> values;
};

// A scratch folder for this process's files, removed at the end.
std::filesystem::path scratch() {
    static test::ScratchFolder const folder;
    std::filesystem::create_directories(folder.path);
    return folder.path;
}

// Writes a sounding: `coordinate` is the profile's coordinate variable (named as its dimension), `variables` lie on it.
std::string writeSounding(std::string const& name, Column const& coordinate, std::vector<Column> const& variables) {
    std::string const path = (scratch() / name).string();
    netCDF::NcFile f(path, netCDF::NcFile::replace, netCDF::NcFile::classic64);
    netCDF::NcDim const dim = f.addDim(coordinate.name, coordinate.values.size());
    for (Column const* c : [&] {
             std::vector<Column const*> all{&coordinate};
             for (auto const& v : variables)
                 all.push_back(&v);
             return all;
         }()) {
        netCDF::NcVar var = f.addVar(c->name, netCDF::ncDouble, dim);
        if (!c->standardName.empty()) var.putAtt("standard_name", c->standardName);
        if (!c->units.empty()) var.putAtt("units", c->units);
        var.putVar(c->values.data());
    }
    return path;
}

std::vector<double> of(std::vector<double> const& x, std::function<double(double)> const& f) {
    std::vector<double> out;
    for (double v : x)
        out.push_back(f(v));
    return out;
}

// A profile on irregular heights (0 to 12 km, 100 to 700 m apart): T = 290 - 0.006 z + 3 sin(z / 1500 m),
// q = 0.015 exp(-z / 2500 m), u = 0.002 z, v = 5 cos(z / 3000 m).
std::vector<double> soundingHeights() {
    std::vector<double> z{0.0};
    for (int i = 1; z.back() < 12000.0; ++i)
        z.push_back(z.back() + 100.0 + 600.0 * (0.5 + 0.5 * std::sin(1.7 * i)));
    return z;
}
double temperatureAt(double z) { return 290.0 - 0.006 * z + 3.0 * std::sin(z / 1500.0); }
double humidityAt(double z) { return 0.015 * std::exp(-z / 2500.0); }
double eastwardAt(double z) { return 0.002 * z; }
double northwardAt(double z) { return 5.0 * std::cos(z / 3000.0); }

std::vector<Column> heightVariables(std::vector<double> const& z) {
    return {{"T", "air_temperature", "K", of(z, temperatureAt)},
            {"q", "specific_humidity", "kg kg-1", of(z, humidityAt)},
            {"u", "eastward_wind", "m s-1", of(z, eastwardAt)},
            {"v", "northward_wind", "m s-1", of(z, northwardAt)}};
}

std::string heightSounding(std::string const& name, std::vector<Column> variables = {}) {
    auto const z = soundingHeights();
    if (variables.empty()) variables = heightVariables(z);
    return writeSounding(name, {"height", "height", "m", z}, variables);
}

// The configuration of a column of 24 power-stretched levels up to 10 km starting from `sounding`.
app::Config withSounding(std::string const& sounding, std::vector<std::string> more = {}) {
    std::vector<std::string> overrides{
        "time.steps=1", "grid.vertical={levels: 24, top: 10000.0, stretching: power, exponent: 1.4}",
        "grid.horizontal={type: columns, ncol: 2}", "initial_conditions.sounding=" + sounding, "processes=[]"};
    overrides.insert(overrides.end(), more.begin(), more.end());
    return app::parseConfig("title: sounding test\n", "test", overrides);
}

std::string errorOf(std::function<void()> const& f) {
    try {
        f();
    } catch (app::ConfigError const& e) {
        return e.what();
    }
    return "no ConfigError";
}

} // namespace

TEST_CASE("grid.vertical.faces gives the grid asked for", "[user_column]") {
    std::vector<double> const faces{0.0, 20.0, 70.0, 150.0, 400.0, 1000.0, 2500.0, 6000.0};
    app::Config const c = app::parseConfig(
        "grid: {vertical: {faces: [0, 20, 70, 150, 400, 1000, 2500, 6000]}}\ntime: {steps: 1}\n", "faces");
    CHECK(c.vertical.faces == faces);
    CHECK(c.vertical.cells() == 7);
    CHECK(c.vertical.height() == 6000.0);
    CHECK_FALSE(c.vertical.levels);
    CHECK_FALSE(c.vertical.top);
    Case model(c);
    auto const& grid = *model.state().grid;
    CHECK(grid.cells() == 7);
    CHECK(std::vector<double>(grid.faces().begin(), grid.faces().end()) == faces);
    for (uint32_t k = 0; k < 7; ++k)
        CHECK(grid.centers()[k] == Approx(0.5 * (faces[k] + faces[k + 1])).epsilon(1e-15));
    app::Config again = app::parseConfig(c.resolvedYaml, "resolved");
    again.sourcePath = c.sourcePath;
    CHECK(again == c);
    CHECK_THAT(c.resolvedYaml, Contains("faces: [0.0, 20.0, 70.0, 150.0, 400.0, 1000.0, 2500.0, 6000.0]"));
    CHECK_THAT(c.resolvedYaml, !Contains("levels:"));
}

TEST_CASE("grid.vertical.faces: each mistake named with its key", "[user_column]") {
    auto bad = [](std::string const& vertical) {
        return errorOf([&] { app::parseConfig("time: {steps: 1}\ngrid: {vertical: " + vertical + "}\n", "bad"); });
    };
    CHECK_THAT(bad("{faces: [0, 100, 90, 300]}"), Contains("grid.vertical.faces[2]: '90' is not above faces[1] = 100"));
    CHECK_THAT(bad("{faces: [0, 100, 100]}"), Contains("grid.vertical.faces[2]: '100' is not above faces[1] = 100"));
    CHECK_THAT(bad("{faces: [5, 100]}"), Contains("grid.vertical.faces[0]: '5' is not the ground"));
    CHECK_THAT(bad("{faces: [0]}"), Contains("grid.vertical.faces: 1 value(s)"));
    CHECK_THAT(bad("{faces: []}"), Contains("grid.vertical.faces: the list is empty"));
    CHECK_THAT(bad("{faces: [0, -3]}"), Contains("grid.vertical.faces[1]: '-3' is out of range"));
    CHECK_THAT(bad("{faces: [0, 10], levels: 30}"), Contains("grid.vertical.levels: given with grid.vertical.faces"));
    CHECK_THAT(bad("{faces: [0, 10], exponent: 1.0}"),
               Contains("grid.vertical.exponent: given with grid.vertical.faces"));
}

TEST_CASE("grid.vertical.faces_file: a text file of heights, relative to the configuration's folder", "[user_column]") {
    std::filesystem::path const dir = scratch() / "faces_file";
    std::filesystem::create_directories(dir);
    auto write = [&](std::string const& name, std::string const& text) {
        std::ofstream(dir / name) << text;
        return (dir / name).string();
    };
    write("levels.txt", "# face heights, m\n0, 20 70\n150\n\n400 # the top\n");
    std::string const yaml = write("case.yaml", "grid: {vertical: {faces_file: levels.txt}}\ntime: {steps: 1}\n");
    app::Config const c = app::loadConfig(yaml);
    CHECK(c.vertical.faces == std::vector<double>{0.0, 20.0, 70.0, 150.0, 400.0});
    CHECK_FALSE(c.vertical.facesFile);
    CHECK_THAT(c.resolvedYaml, Contains("faces: [0.0, 20.0, 70.0, 150.0, 400.0]") && !Contains("faces_file"));
    app::Config again = app::parseConfig(c.resolvedYaml, "resolved");
    again.sourcePath = c.sourcePath;
    CHECK(again == c);

    auto bad = [&](std::string const& levels, std::string const& vertical) {
        write("bad.txt", levels);
        std::string const file = write("bad.yaml", "grid: {vertical: " + vertical + "}\ntime: {steps: 1}\n");
        return errorOf([&] { app::loadConfig(file); });
    };
    std::string const badFile = (dir / "bad.txt").string();
    CHECK_THAT(bad("0 20\n40 x\n", "{faces_file: bad.txt}"),
               Contains("grid.vertical.faces_file (" + badFile + ", line 2): 'x' is not a finite number"));
    CHECK_THAT(bad("0 20 10", "{faces_file: bad.txt}"),
               Contains("grid.vertical.faces_file (" + badFile + ", value 2): '10' is not above value 1 = 20"));
    CHECK_THAT(bad("5 20", "{faces_file: bad.txt}"),
               Contains("grid.vertical.faces_file (" + badFile + ", value 0): '5' is not the ground"));
    CHECK_THAT(bad("0 20", "{faces_file: nothing.txt}"),
               Contains("grid.vertical.faces_file: '" + (dir / "nothing.txt").string() + "': no such file"));
    CHECK_THAT(bad("0 20", "{faces_file: bad.txt, faces: [0, 10]}"),
               Contains("grid.vertical.faces_file: given with grid.vertical.faces"));
    CHECK_THAT(bad("0 20", "{faces_file: bad.txt, levels: 3}"),
               Contains("grid.vertical.levels: given with grid.vertical.faces_file"));
}

TEST_CASE("columns at given latitudes and longitudes land there, in the model and in the output", "[user_column]") {
    app::Config const c =
        app::parseConfig("grid: {horizontal: {type: columns, lat: [13.15, -12.42, 89.5], lon: [300.6, 130.89, -20]}}\n"
                         "time: {steps: 1}\noutput: {interval: 600, variables: [T]}\nprocesses: [coriolis]\n",
                         "places");
    CHECK(c.horizontal.ncol == 3);
    Case model(c);
    auto& latitude = model.state().latitude;
    latitude.toHost();
    CHECK(std::vector<double>(latitude.host().begin(), latitude.host().end()) ==
          std::vector<double>{13.15, -12.42, 89.5});
    app::Config again = app::parseConfig(c.resolvedYaml, "resolved");
    again.sourcePath = c.sourcePath;
    CHECK(again == c);

    app::RunOptions options;
    options.outputDir = (scratch() / "places").string();
    options.progress = false;
    std::ostringstream log;
    auto const summary = app::runCase(c, test::comm(), options, log);
    netCDF::NcFile out(summary.outputPath, netCDF::NcFile::read);
    std::vector<double> lat(3), lon(3);
    out.getVar("lat").getVar(lat.data());
    out.getVar("lon").getVar(lon.data());
    CHECK(lat == std::vector<double>{13.15, -12.42, 89.5});
    CHECK(lon == std::vector<double>{300.6, 130.89, -20.0});
}

TEST_CASE("columns at given places: each mistake named with its key", "[user_column]") {
    auto bad = [](std::string const& horizontal) {
        return errorOf([&] { app::parseConfig("time: {steps: 1}\ngrid: {horizontal: " + horizontal + "}\n", "bad"); });
    };
    CHECK_THAT(bad("{type: columns, lat: [10, 90.5], lon: [0, 0]}"),
               Contains("grid.horizontal.lat[1]: '90.5' is out of range (expected a number in [-90, 90])"));
    CHECK_THAT(bad("{type: columns, lat: [10, 20], lon: [0]}"),
               Contains("grid.horizontal.lon: 1 longitude(s) for 2 latitude(s)"));
    CHECK_THAT(bad("{type: columns, lon: [0]}"), Contains("grid.horizontal.lat: 1 longitude(s) for 0 latitude(s)"));
    CHECK_THAT(bad("{type: columns, ncol: 4, lat: [10, 20], lon: [0, 0]}"),
               Contains("grid.horizontal.ncol: '4' with 2 columns"));
    CHECK_THAT(bad("{lat: [10], lon: [0]}"), Contains("grid.horizontal.lat: given with type latlon"));
    // Without lat and lon, ncol spreads the columns as before: ncol 1 sits on the equator.
    CHECK(app::makeHorizontal(
              app::parseConfig("time: {steps: 1}\ngrid: {horizontal: {type: columns, ncol: 1}}\n", "one").horizontal)
              .lat == std::vector<double>{0.0});
}

TEST_CASE("a sounding on heights is interpolated to the model's levels within the interpolation's error",
          "[user_column]") {
    Case model(withSounding(heightSounding("heights.nc")));
    auto& s = model.state();
    auto const& zc = s.grid->centers();
    // Linear interpolation of f errs by at most max|f''| h^2 / 8 with h the largest spacing of the sounding.
    auto const z = soundingHeights();
    double h = 0;
    for (std::size_t i = 1; i < z.size(); ++i)
        h = std::max(h, z[i] - z[i - 1]);
    double const boundT = 3.0 / (1500.0 * 1500.0) * h * h / 8;
    double const boundQ = 0.015 / (2500.0 * 2500.0) * h * h / 8;
    double const boundV = 5.0 / (3000.0 * 3000.0) * h * h / 8;
    double errT = 0, errQ = 0, errU = 0, errV = 0;
    for (uint32_t c = 0; c < s.columns; ++c)
        for (uint32_t k = 0; k < s.grid->cells(); ++k) {
            errT = std::max(errT, std::abs(s.now.T.at(c, k) - temperatureAt(zc[k])));
            errQ = std::max(errQ, std::abs(s.now.q.at(c, k) - humidityAt(zc[k])));
            errU = std::max(errU, std::abs(s.now.u.at(c, k) - eastwardAt(zc[k])));
            errV = std::max(errV, std::abs(s.now.v.at(c, k) - northwardAt(zc[k])));
            CHECK(s.now.qc.at(c, k) == 0.0);
        }
    INFO("largest spacing " << h << " m; errors T " << errT << " K (bound " << boundT << "), q " << errQ << " (bound "
                            << boundQ << "), u " << errU << ", v " << errV << " (bound " << boundV << ")");
    CHECK(errT <= boundT);
    CHECK(errQ <= boundQ);
    CHECK(errU <= 1e-12); // u is linear in z: exact to rounding
    CHECK(errV <= boundV);
    CHECK(errT > 0); // the sounding's levels are not the model's
    // The reference state is hydrostatic from the surface pressure with the sounding's virtual temperature.
    CHECK(s.pFace.at(0, 0) == 100000.0);
    double const tv = temperatureAt(zc[0]) * (1 + (1 / k::epsilon - 1) * humidityAt(zc[0]));
    CHECK(s.p.at(0, 0) == Approx(100000.0 * std::exp(-k::g * zc[0] / (k::rd * tv))).epsilon(1e-6));
}

TEST_CASE("a sounding on pressures (potential temperature, top first) becomes heights hydrostatically",
          "[user_column]") {
    // A dry atmosphere of constant lapse rate: T = T0 - G z, p = ps (T / T0)^(g / (Rd G)), on 41 irregular pressure
    // levels from 1020 hPa to 150 hPa, given from the top down as potential temperature.
    double const t0 = 295.0, lapse = 0.0065, ps = 100000.0;
    std::vector<double> p;
    for (int i = 0; i <= 40; ++i)
        p.push_back(15000.0 + (102000.0 - 15000.0) * std::pow(i / 40.0, 0.8 + 0.05 * std::sin(double(i))));
    auto heightOf = [&](double pressure) { return t0 / lapse * (1.0 - std::pow(pressure / ps, k::rd * lapse / k::g)); };
    std::vector<double> theta;
    for (double x : p)
        theta.push_back((t0 - lapse * heightOf(x)) * std::pow(k::p0 / x, k::kappa));
    std::vector<double> const zero(p.size(), 0.0);
    std::string const file =
        writeSounding("pressure.nc", {"plev", "air_pressure", "Pa", p},
                      {{"theta", "air_potential_temperature", "K", theta},
                       {"q", "specific_humidity", "1", zero},
                       {"u", "eastward_wind", "m s-1", of(p, [&](double x) { return 0.001 * heightOf(x); })},
                       {"v", "northward_wind", "m s-1", zero}});
    Case model(withSounding(file));
    auto& s = model.state();
    auto const& zc = s.grid->centers();
    double errT = 0, errU = 0, errP = 0;
    for (uint32_t k = 0; k < s.grid->cells(); ++k) {
        errT = std::max(errT, std::abs(s.now.T.at(0, k) - (t0 - lapse * zc[k])));
        errU = std::max(errU, std::abs(s.now.u.at(0, k) - 0.001 * zc[k]));
        double const exact = ps * std::pow((t0 - lapse * zc[k]) / t0, k::g / (k::rd * lapse));
        errP = std::max(errP, std::abs(s.p.at(0, k) / exact - 1));
    }
    // The heights come from the trapezoidal rule in ln p on a temperature that is not linear in ln p: a few tenths
    // of a metre at 10 km, a few thousandths of a kelvin (and of a m/s) at the levels. The reference pressure has
    // the model's own error besides (Tv constant within each cell, cells up to 700 m thick).
    INFO("errors: T " << errT << " K, u " << errU << " m/s, reference pressure " << errP << " relative");
    CHECK(errT < 0.005);
    CHECK(errU < 0.001);
    CHECK(errP < 5e-4);
    CHECK(errT > 0);
}

TEST_CASE("a sounding: each mistake named with the file and the variable", "[user_column]") {
    auto const z = soundingHeights();
    auto const good = heightVariables(z);
    auto without = [&](std::string const& standardName) {
        std::vector<Column> v;
        for (auto const& c : good)
            if (c.standardName != standardName) v.push_back(c);
        return v;
    };
    auto fails = [](std::string const& file, std::vector<std::string> more = {}) {
        return errorOf([&] { Case model(withSounding(file, std::move(more))); });
    };
    std::string const missing = heightSounding("missing.nc", without("specific_humidity"));
    CHECK_THAT(fails(missing), Contains("initial_conditions.sounding (" + missing + ", variable specific_humidity)") &&
                                   Contains("is missing (expected a variable with standard_name specific_humidity)"));
    auto wrongUnits = good;
    wrongUnits[2].units = "km/h";
    std::string const units = heightSounding("units.nc", wrongUnits);
    CHECK_THAT(fails(units), Contains(units + ", variable u): has units 'km/h' (expected units 'm s-1'"));
    auto noUnits = good;
    noUnits[0].units = "";
    CHECK_THAT(fails(heightSounding("no_units.nc", noUnits)), Contains("variable T): has no units attribute"));
    CHECK_THAT(fails(heightSounding("short.nc"), {"grid.vertical.top=15000"}),
               Contains("variable height): reaches from 0 to ") &&
                   Contains("(expected a sounding covering the model column, 0 to 15000 m"));
    std::vector<double> above(z.begin(), z.end());
    for (double& x : above)
        x += 50.0;
    CHECK_THAT(fails(writeSounding("above.nc", {"height", "height", "m", above}, good)),
               Contains("variable height): reaches from 50 to "));
    std::vector<double> zigzag = z;
    std::swap(zigzag[3], zigzag[4]);
    CHECK_THAT(fails(writeSounding("zigzag.nc", {"height", "height", "m", zigzag}, good)),
               Contains("variable height): is not strictly monotone"));
    auto negative = good;
    negative[1].values[2] = -1e-3;
    CHECK_THAT(fails(heightSounding("negative.nc", negative)), Contains("variable specific_humidity): is -0.001"));
    std::vector<double> const p{90000.0, 50000.0, 10000.0};
    std::vector<double> const three{280.0, 250.0, 210.0}, nothing(3, 0.0);
    CHECK_THAT(fails(writeSounding("low.nc", {"plev", "air_pressure", "Pa", p},
                                   {{"T", "air_temperature", "K", three},
                                    {"q", "specific_humidity", "1", nothing},
                                    {"u", "eastward_wind", "m s-1", nothing},
                                    {"v", "northward_wind", "m s-1", nothing}})),
               Contains("variable plev): spans 10000 to 90000 Pa, which does not include the surface pressure 100000 "
                        "Pa"));
    CHECK_THAT(fails(writeSounding("nocoord.nc", {"level", "", "m", z}, good)),
               Contains("): has no vertical coordinate (expected one 1-D variable with standard_name height"));
    CHECK_THAT(errorOf([] { withSounding("no/such/sounding.nc"); }),
               Contains("initial_conditions.sounding: 'no/such/sounding.nc': no such file"));
    CHECK_THAT(errorOf([&] { withSounding(missing, {"initial_conditions.equator_pole_difference=1"}); }),
               Contains("initial_conditions.equator_pole_difference: '1' with a sounding"));
}

TEST_CASE("a sounding's path is relative to the configuration file's folder", "[user_column]") {
    app::Config const c = app::loadConfig(std::string(STRATA_SOURCE_DIR) + "/configs/user_column.yaml");
    CHECK(c.initial.sounding == std::string(STRATA_SOURCE_DIR) + "/configs/sounding_example.nc");
    CHECK(c.vertical.cells() == 30);
    CHECK(c.horizontal.lat == std::vector<double>{13.15, -12.42});
}

TEST_CASE("a continuation refuses a sounding whose content changed", "[user_column]") {
    std::string const file = heightSounding("restart.nc");
    app::Config const c = withSounding(file);
    app::RestartMeta meta;
    meta.configYaml = c.resolvedYaml;
    meta.soundingDigest = app::fileDigest(file);
    CHECK_NOTHROW(app::checkRestartCompatible(c, meta, "r.nc"));
    auto variables = heightVariables(soundingHeights());
    variables[0].values[5] += 0.5;
    heightSounding("restart.nc", variables); // the same name, another profile
    CHECK_THAT(errorOf([&] { app::checkRestartCompatible(c, meta, "r.nc"); }),
               Contains("initial_conditions.sounding: '" + file + "' is not the sounding the run that wrote r.nc"));
}

TEST_CASE("the lapse_rate start: its floor and its equator-pole difference are the configured ones", "[user_column]") {
    app::Config const c = app::parseConfig(
        "grid: {vertical: {levels: 20, top: 20000.0}, horizontal: {type: columns, lat: [0, 60], lon: [0, 0]}}\n"
        "time: {steps: 1}\ninitial_conditions: {temperature: lapse_rate, surface_temperature: 300.0, lapse_rate: "
        "0.01, minimum_temperature: 180.0, equator_pole_difference: 12.0}\n",
        "lapse");
    Case model(c);
    auto& s = model.state();
    auto const& zc = s.grid->centers();
    double const s2 = std::pow(std::sin(60.0 * std::acos(-1.0) / 180.0), 2);
    for (uint32_t k = 0; k < 20; ++k) {
        double const t = std::max(300.0 - 0.01 * zc[k], 180.0);
        CHECK(s.now.T.at(0, k) == Approx(t).epsilon(1e-14));
        CHECK(s.now.T.at(1, k) == Approx(t - 12.0 * s2).epsilon(1e-14));
    }
    CHECK(s.now.T.at(0, 19) == 180.0); // 300 - 0.01 * 19500 = 105 K without the floor
}
