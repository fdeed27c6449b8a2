// OutputFile and compareFiles on one rank: the CF layout read back with NetCDF-C++, the .partial protocol, errors,
// and the comparator's verdicts (including the ones that must fail).
#include "output_test_support.hpp"
#include <strata/app/io/output.hpp>
#include <strata/core/error.hpp>

#include <catch2/catch.hpp>
#include <netcdf>

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <sys/stat.h>

namespace fs = std::filesystem;
using netCDF::NcFile;
using strata::app::compareFiles;
using strata::app::CompareOptions;
using strata::app::OutputFile;
using strata::app::OutputFileSpec;
using namespace strata::test;

namespace {

// One Context (MPI initialised once) for the whole executable.
strata::core::Context& context() {
    static strata::core::Context ctx;
    return ctx;
}

// A fresh directory per test case (CTest may run the cases in parallel), under the working directory (CTest's is the
// build tree): the files stay there for a look after a failure and are replaced by the next run.
fs::path freshDirectory() {
    std::string name = Catch::getResultCapture().getCurrentTestName();
    for (char& ch : name)
        if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
    fs::path const dir = fs::current_path() / "test_output_files" / name;
    fs::remove_all(dir);
    fs::create_directories(dir);
    return dir;
}

void writeWhole(OutputFileSpec const& spec, Tweak const& tweak = {}) {
    writeFile(context(), spec, 0, static_cast<uint32_t>(spec.horizontal.columns()), tweak);
}

std::size_t recordCount(std::string const& path) {
    NcFile file(path, NcFile::read);
    return file.getDim("time").getSize();
}

struct Compared {
    int status;
    std::string report;
};
Compared compare(std::string const& a, std::string const& b, CompareOptions const& options) {
    std::ostringstream report;
    int const status = compareFiles(a, b, options, report);
    return {status, report.str()};
}

} // namespace

TEST_CASE("latlon file: CF dimensions, attributes and values in (time, lev, lat, lon) order") {
    fs::path const dir = freshDirectory();
    OutputFileSpec const spec = smallSpec((dir / "sub" / "latlon.nc").string(), true, true);
    writeWhole(spec);

    NcFile file(spec.path, NcFile::read);
    CHECK(file.getDim("time").isUnlimited());
    CHECK(file.getDim("time").getSize() == records);
    CHECK(file.getDim("lev").getSize() == nlev);
    CHECK(file.getDim("ilev").getSize() == nlev + 1);
    CHECK(file.getDim("lat").getSize() == nlat);
    CHECK(file.getDim("lon").getSize() == nlon);
    CHECK(file.getDim("ncol").isNull());

    CHECK(globalAttribute(file, "Conventions") == "CF-1.8");
    CHECK(globalAttribute(file, "title") == spec.title);
    CHECK(globalAttribute(file, "source") == spec.source);
    // "2026-11-24T05:14:42Z: <command>": the UTC time of the run, ISO 8601, then what was run
    std::string const history = globalAttribute(file, "history");
    CHECK(history.size() == 22 + spec.history.size());
    CHECK(history.substr(22) == spec.history);
    CHECK(history[4] == '-');
    CHECK(history[10] == 'T');
    CHECK(history.substr(19, 3) == "Z: ");
    CHECK(globalAttribute(file, "strata_run_status") == "completed");
    CHECK(globalAttribute(file, "strata_config") == spec.configYaml);

    netCDF::NcVar const time = file.getVar("time");
    CHECK(attribute(time, "units") == spec.timeUnits);
    CHECK(attribute(time, "standard_name") == "time");
    CHECK(attribute(time, "axis") == "T");
    CHECK(attribute(time, "calendar") == "standard");
    for (std::string const name : {"lev", "ilev"}) {
        netCDF::NcVar const z = file.getVar(name);
        CHECK(dimensionNames(z) == std::vector<std::string>{name});
        CHECK(attribute(z, "units") == "m");
        CHECK(attribute(z, "axis") == "Z");
        CHECK(attribute(z, "positive") == "up");
        CHECK(attribute(z, "standard_name") == "height");
        CHECK(attribute(z, "long_name") != "<missing>");
    }
    CHECK(readAll(file.getVar("lev")) == spec.lev);
    CHECK(readAll(file.getVar("ilev")) == spec.ilev);
    netCDF::NcVar const lat = file.getVar("lat"), lon = file.getVar("lon");
    CHECK(dimensionNames(lat) == std::vector<std::string>{"lat"});
    CHECK(attribute(lat, "units") == "degrees_north");
    CHECK(attribute(lat, "standard_name") == "latitude");
    CHECK(attribute(lat, "axis") == "Y");
    CHECK(attribute(lon, "units") == "degrees_east");
    CHECK(attribute(lon, "standard_name") == "longitude");
    CHECK(attribute(lon, "axis") == "X");
    CHECK(readAll(lat) == spec.horizontal.lat);
    CHECK(readAll(lon) == spec.horizontal.lon);

    netCDF::NcVar const t = file.getVar("T"), w = file.getVar("wflux");
    CHECK(dimensionNames(t) == std::vector<std::string>{"time", "lev", "lat", "lon"});
    CHECK(dimensionNames(w) == std::vector<std::string>{"time", "ilev", "lat", "lon"});
    CHECK(t.getType() == netCDF::ncDouble);
    CHECK(attribute(t, "units") == "K");
    CHECK(attribute(t, "long_name") == "air temperature");
    CHECK(attribute(t, "standard_name") == "air_temperature");
    CHECK(attribute(w, "standard_name") == "<missing>"); // none given: none written
    CHECK(attribute(t, "coordinates") == "<missing>");   // lat and lon are coordinate variables here
    netCDF::NcVar const energy = file.getVar("total_energy");
    CHECK(dimensionNames(energy) == std::vector<std::string>{"time"});
    CHECK(energy.getType() == netCDF::ncDouble);
    CHECK(attribute(energy, "units") == "J m-2");
    CHECK(attribute(energy, "long_name") == "column-integrated energy");

    CHECK(checkValues(file, spec).empty());
    // One value by hand: T at record 2, level 3, lat 1, lon 2 is global column 1 * nlon + 2 = 6.
    double one = 0.0;
    t.getVar({2, 3, 1, 2}, &one);
    CHECK(one == valueAt(0, 6, 3, 2));
}

TEST_CASE("columns file in single precision: (time, lev, ncol), lat and lon as auxiliary coordinates") {
    fs::path const dir = freshDirectory();
    OutputFileSpec const spec = smallSpec((dir / "ncol.nc").string(), false, false);
    writeWhole(spec);

    NcFile file(spec.path, NcFile::read);
    CHECK(file.getDim("ncol").getSize() == ncolumns);
    CHECK(file.getDim("lat").isNull());
    netCDF::NcVar const t = file.getVar("T"), w = file.getVar("wflux"), lat = file.getVar("lat");
    CHECK(dimensionNames(t) == std::vector<std::string>{"time", "lev", "ncol"});
    CHECK(dimensionNames(w) == std::vector<std::string>{"time", "ilev", "ncol"});
    CHECK(t.getType() == netCDF::ncFloat);
    CHECK(attribute(t, "coordinates") == "lat lon");
    CHECK(attribute(w, "coordinates") == "lat lon");
    CHECK(dimensionNames(lat) == std::vector<std::string>{"ncol"});
    CHECK(attribute(lat, "units") == "degrees_north");
    CHECK(attribute(lat, "axis") == "<missing>"); // CF-1.8: axis on coordinate variables only
    CHECK(readAll(lat) == spec.horizontal.lat);
    CHECK(readAll(file.getVar("lon")) == spec.horizontal.lon);
    CHECK(checkValues(file, spec).empty());
}

TEST_CASE("the file is written as .partial, synced after each record and renamed by close()") {
    fs::path const dir = freshDirectory();
    OutputFileSpec const spec = smallSpec((dir / "run.nc").string(), true, false);
    OutputFile out(context(), spec, 0, ncolumns);
    std::string const partial = out.partialPath();
    CHECK(partial.starts_with(spec.path + "."));
    CHECK(partial.ends_with(".partial"));
    CHECK(out.path() == spec.path);
    CHECK(fs::exists(partial));
    CHECK_FALSE(fs::exists(spec.path));
    writeRecord(out, spec, 0, ncolumns, 0);
    writeRecord(out, spec, 0, ncolumns, 1);
    CHECK(recordCount(partial) == 2); // readable while open: the sync put the record count in the header
    writeRecord(out, spec, 0, ncolumns, 2);
    out.close();
    CHECK_FALSE(fs::exists(partial));
    CHECK(fs::exists(spec.path));
    CHECK(recordCount(spec.path) == records);
    out.close(); // a second close does nothing
    CHECK_THROWS_AS(writeRecord(out, spec, 0, ncolumns, 3), strata::Error);
}

TEST_CASE("formats: netcdf4 (chunked, deflated) and 64bit_offset hold the same values") {
    fs::path const dir = freshDirectory();
    struct Case {
        std::string name;
        bool netcdf4;
        int deflate;
        int kind; // nc_inq_format
    };
    for (Case const& c :
         {Case{"nc4.nc", true, 0, NC_FORMAT_NETCDF4}, Case{"nc4_deflate.nc", true, 4, NC_FORMAT_NETCDF4},
          Case{"offset64.nc", false, 0, NC_FORMAT_64BIT_OFFSET}}) {
        INFO(c.name);
        OutputFileSpec spec = smallSpec((dir / c.name).string(), true, true);
        spec.netcdf4 = c.netcdf4;
        spec.deflate = c.deflate;
        spec.expectedRecords = records;
        writeWhole(spec);
        NcFile file(spec.path, NcFile::read);
        int kind = -1;
        REQUIRE(nc_inq_format(file.getId(), &kind) == NC_NOERR);
        CHECK(kind == c.kind);
        CHECK(checkValues(file, spec).empty());
        if (!c.netcdf4) continue;
        for (std::size_t v = 0; v < spec.variables.size(); ++v) {
            netCDF::NcVar const var = file.getVar(spec.variables[v].name);
            netCDF::NcVar::ChunkMode mode{};
            std::vector<std::size_t> chunks;
            var.getChunkingParameters(mode, chunks);
            CHECK(mode == netCDF::NcVar::nc_CHUNKED);
            CHECK(chunks == strata::app::chunkShape(spec, levelsOf(spec, v), false));
            bool shuffle = false, deflate = false;
            int level = -1;
            var.getCompressionParameters(shuffle, deflate, level);
            CHECK(deflate == (c.deflate > 0));
            if (c.deflate > 0) CHECK(level == c.deflate);
            CHECK(shuffle == (c.deflate > 0));
        }
    }
}

TEST_CASE("chunks: one record, 64 KiB to 1 MiB, and a column's series and a record touch about as many chunks") {
    OutputFileSpec spec = smallSpec("unused.nc", true, false);
    std::size_t const levels = 31, target = std::size_t{1} << 20;
    struct Grid {
        uint32_t nlat, nlon;
        std::size_t records;
    };
    for (Grid const g :
         {Grid{90, 180, 200}, Grid{128, 256, 25}, Grid{4, 8, 100000}, Grid{180, 360, 2}, Grid{64, 128, 60}}) {
        spec.horizontal.nlat = g.nlat;
        spec.horizontal.nlon = g.nlon;
        spec.expectedRecords = g.records;
        for (bool const surface : {false, true}) {
            std::vector<std::size_t> const c = strata::app::chunkShape(spec, levels, surface, target);
            INFO(g.nlat << " x " << g.nlon << " columns, " << g.records << " records, surface " << surface);
            REQUIRE(c.size() == (surface ? 3u : 4u));
            std::size_t const rows = c[c.size() - 2], lons = c.back();
            CHECK(c[0] == 1);
            if (!surface) CHECK(c[1] == levels);
            CHECK((rows >= 1 && rows <= g.nlat));
            CHECK((lons >= 1 && lons <= g.nlon));
            CHECK((rows == 1 || lons == g.nlon)); // whole rows, or a part of one row
            std::size_t const columns = std::size_t{g.nlat} * g.nlon, perColumn = (surface ? 1 : levels) * 4;
            std::size_t const bytes = rows * lons * perColumn;
            CHECK(bytes <= target);
            CHECK((bytes >= strata::app::minChunkBytes || rows * lons == columns)); // not needlessly small
            // Chunks read for one column over all records (one per record), and for one record over all columns:
            // about equal unless a size bound decided.
            double const record = std::ceil(double(g.nlat) / double(rows)) * std::ceil(double(g.nlon) / double(lons));
            bool const bounded = bytes * 2 > target || bytes < 2 * strata::app::minChunkBytes || rows * lons == columns;
            if (!bounded) {
                CHECK(record / double(g.records) <= 2.0);
                CHECK(double(g.records) / record <= 2.0);
            }
        }
    }
}

TEST_CASE("netcdf4: another process reads the history while it is written (no HDF5 file lock held)") {
    fs::path const dir = freshDirectory();
    OutputFileSpec spec = smallSpec((dir / "live.nc").string(), true, false);
    spec.netcdf4 = true;
    OutputFile out(context(), spec, 0, ncolumns);
    writeRecord(out, spec, 0, ncolumns, 0);
    // The child runs with HDF5's default (locking on), as a user's ncdump would.
    std::string const command = "env -u HDF5_USE_FILE_LOCKING ncdump -h '" + out.partialPath() + "' > '" +
                                (dir / "ncdump.txt").string() + "' 2>&1";
    int const status = std::system(command.c_str());
    std::ifstream in(dir / "ncdump.txt");
    std::string const text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    INFO(text);
    CHECK(status == 0);
    CHECK(text.find("time = UNLIMITED ; // (1 currently)") != std::string::npos);
    out.close();
}

TEST_CASE("destroyed without close(): the .partial stays and the previous finished file is untouched") {
    fs::path const dir = freshDirectory();
    OutputFileSpec spec = smallSpec((dir / "run.nc").string(), true, true);
    writeWhole(spec);
    spec.title = "the run that dies";
    std::string partial;
    try {
        OutputFile out(context(), spec, 0, ncolumns);
        partial = out.partialPath();
        writeRecord(out, spec, 0, ncolumns, 0);
        throw std::runtime_error("the model blew up");
    } catch (std::runtime_error const&) {
    }
    CHECK(fs::exists(partial));
    CHECK(recordCount(partial) == 1);
    NcFile previous(spec.path, NcFile::read);
    CHECK(globalAttribute(previous, "title") == "output test");
    CHECK(checkValues(previous, smallSpec(spec.path, true, true)).empty());
}

TEST_CASE("two runs writing one path at the same time: separate temporary files, each finished file whole") {
    fs::path const dir = freshDirectory();
    OutputFileSpec a = smallSpec((dir / "run.nc").string(), true, true);
    OutputFileSpec b = a;
    a.title = "run a";
    b.title = "run b";
    OutputFile first(context(), a, 0, ncolumns);
    OutputFile second(context(), b, 0, ncolumns);
    REQUIRE(first.partialPath() != second.partialPath());
    for (std::size_t r = 0; r < records; ++r) {
        writeRecord(first, a, 0, ncolumns, r);
        writeRecord(second, b, 0, ncolumns, r);
    }
    first.close();
    {
        NcFile file(a.path, NcFile::read);
        CHECK(globalAttribute(file, "title") == "run a");
        CHECK(checkValues(file, a).empty());
    }
    second.close(); // the later close replaces the file with its own whole one
    NcFile file(b.path, NcFile::read);
    CHECK(globalAttribute(file, "title") == "run b");
    CHECK(recordCount(b.path) == records);
    CHECK(checkValues(file, b).empty());
}

TEST_CASE("only a regular file is replaced: a directory or FIFO at the path is refused, before and at the end") {
    fs::path const dir = freshDirectory();
    OutputFileSpec spec = smallSpec((dir / "taken").string(), true, true);
    fs::create_directory(spec.path);
    CHECK_THROWS_WITH(OutputFile(context(), spec, 0, ncolumns), Catch::Contains("is a directory"));
    CHECK_THROWS_WITH(strata::app::checkOutputTarget(spec.path, ""),
                      Catch::Contains("output.path") && Catch::Contains("is a directory"));
    std::string const fifo = (dir / "fifo").string();
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    CHECK_THROWS_WITH(strata::app::checkOutputTarget(fifo, ""), Catch::Contains("is a FIFO"));
    spec.path = fifo;
    CHECK_THROWS_WITH(OutputFile(context(), spec, 0, ncolumns), Catch::Contains("is a FIFO"));
    CHECK(fs::is_fifo(fifo));
    // A directory that appears at the path during the run: the finished file keeps its temporary name.
    spec.path = (dir / "late.nc").string();
    OutputFile out(context(), spec, 0, ncolumns);
    writeRecord(out, spec, 0, ncolumns, 0);
    fs::create_directory(spec.path);
    CHECK_THROWS_WITH(out.close(), Catch::Contains("is a directory now") && Catch::Contains(out.partialPath()));
    CHECK(fs::is_directory(spec.path));
    CHECK(recordCount(out.partialPath()) == 1);
    // The configuration file itself, also through another spelling of its path.
    std::ofstream(dir / "case.yaml") << "time: {steps: 1}\n";
    CHECK_THROWS_WITH(strata::app::checkOutputTarget((dir / "." / "case.yaml").string(), (dir / "case.yaml").string()),
                      Catch::Contains("is the configuration file itself"));
    CHECK_NOTHROW(strata::app::checkOutputTarget((dir / "new" / "out.nc").string(), (dir / "case.yaml").string()));
    CHECK_THROWS_WITH(strata::app::checkOutputTarget((dir / "case.yaml" / "out.nc").string(), ""),
                      Catch::Contains("is not a directory"));
}

TEST_CASE("errors are strata::Error naming the file") {
    fs::path const dir = freshDirectory();
    std::ofstream(dir / "plain_file") << "not a directory";
    OutputFileSpec spec = smallSpec((dir / "plain_file" / "out.nc").string(), true, true);
    try {
        OutputFile out(context(), spec, 0, ncolumns);
        FAIL("created a file under a regular file");
    } catch (strata::Error const& e) {
        CHECK_THAT(e.what(), Catch::Contains("plain_file/out.nc"));
    }

    spec.path = (dir / "bad.nc").string();
    OutputFileSpec badGrid = spec;
    badGrid.horizontal.lat.pop_back();
    CHECK_THROWS_WITH(OutputFile(context(), badGrid, 0, ncolumns), Catch::Contains("bad.nc"));
    CHECK_THROWS_WITH(OutputFile(context(), spec, 0, ncolumns - 1), Catch::Contains("columns"));
    OutputFileSpec clash = spec;
    clash.variables[1].name = "lev";
    CHECK_THROWS_AS(OutputFile(context(), clash, 0, ncolumns), strata::Error);

    OutputFile out(context(), spec, 0, ncolumns);
    std::vector<double> const tooShort(3);
    std::vector<std::span<double const>> const data{tooShort, tooShort};
    CHECK_THROWS_WITH(out.write(0.0, data, {1.0, 2.0}), Catch::Contains("'T' has 3 values"));
}

TEST_CASE("compare: identical files") {
    fs::path const dir = freshDirectory();
    OutputFileSpec spec = smallSpec((dir / "a.nc").string(), true, true);
    writeWhole(spec);
    spec.path = (dir / "b.nc").string();
    writeWhole(spec);
    for (bool bfb : {true, false}) {
        Compared const c = compare((dir / "a.nc").string(), spec.path, {.bfb = bfb});
        INFO(c.report);
        CHECK(c.status == 0);
        CHECK_THAT(c.report, Catch::Contains("A: " + (dir / "a.nc").string()));
        CHECK_THAT(c.report, Catch::Contains("B: " + spec.path));
        CHECK_THAT(c.report, Catch::Contains("identical"));
        CHECK_THAT(c.report, !Catch::Contains("DIFFERENT") && !Catch::Contains("within tolerance"));
        CHECK_THAT(c.report, Catch::Contains("compare: 13 variables, 0 different"));
    }
}

TEST_CASE("compare: one value off by 1e-9 relative fails bfb, passes rtol 1e-6, and is located") {
    fs::path const dir = freshDirectory();
    OutputFileSpec spec = smallSpec((dir / "a.nc").string(), true, true);
    writeWhole(spec);
    spec.path = (dir / "b.nc").string();
    // T at record 1, level 2, global column 7 = lat 1 (0 degrees), lon 3 (270 degrees).
    writeWhole(spec, [](std::size_t v, uint64_t column, std::size_t level, std::size_t record, double& x) {
        if (v == 0 && column == 7 && level == 2 && record == 1) x *= 1.0 + 1e-9;
    });
    std::string const a = (dir / "a.nc").string();

    Compared const bfb = compare(a, spec.path, {.bfb = true});
    INFO(bfb.report);
    CHECK(bfb.status == 1);
    CHECK_THAT(bfb.report, Catch::Contains("DIFFERENT"));
    CHECK_THAT(bfb.report, Catch::Contains("time[1]=7200 lev[2]=250 lat[1]=0 lon[3]=270"));
    CHECK_THAT(bfb.report, Catch::Contains("compare: 13 variables, 1 different"));
    std::istringstream lines(bfb.report);
    bool namedRow = false;
    for (std::string line; std::getline(lines, line);)
        if (line.starts_with("T ")) namedRow = line.find("DIFFERENT") != std::string::npos;
    CHECK(namedRow);

    Compared const loose = compare(a, spec.path, {.rtol = 1e-6});
    INFO(loose.report);
    CHECK(loose.status == 0);
    CHECK_THAT(loose.report, Catch::Contains("within tolerance"));
    CHECK_THAT(loose.report, Catch::Contains("compare: 13 variables, 0 different"));

    CHECK(compare(a, spec.path, {.rtol = 1e-12}).status == 1);
    CHECK(compare(a, spec.path, {.atol = 1e-3}).status == 0);
    CHECK(compare(a, spec.path, {}).status == 1); // default: exact values
}

TEST_CASE("compare: the columns layout names the auxiliary coordinates of the location") {
    fs::path const dir = freshDirectory();
    OutputFileSpec spec = smallSpec((dir / "a.nc").string(), false, true);
    writeWhole(spec);
    spec.path = (dir / "b.nc").string();
    writeWhole(spec, [](std::size_t v, uint64_t column, std::size_t level, std::size_t, double& x) {
        if (v == 1 && column == 5 && level == 0) x += 1.0;
    });
    Compared const c = compare((dir / "a.nc").string(), spec.path, {.rtol = 1e-6});
    INFO(c.report);
    CHECK(c.status == 1);
    CHECK_THAT(c.report, Catch::Contains("ilev[0]=0 ncol[5] (lat=-5 lon=150)"));
}

TEST_CASE("compare: NaN equals NaN with the same bits") {
    fs::path const dir = freshDirectory();
    auto const nan = [](std::size_t v, uint64_t column, std::size_t, std::size_t, double& x) {
        if (v == 0 && column == 3) x = std::numeric_limits<double>::quiet_NaN();
    };
    OutputFileSpec spec = smallSpec((dir / "a.nc").string(), true, true);
    writeWhole(spec, nan);
    spec.path = (dir / "b.nc").string();
    writeWhole(spec, nan);
    CHECK(compare((dir / "a.nc").string(), spec.path, {.bfb = true}).status == 0);
    CHECK(compare((dir / "a.nc").string(), spec.path, {}).status == 0);
    Compared const c = compare((dir / "a.nc").string(), smallSpec((dir / "c.nc").string(), true, true).path, {});
    CHECK(c.status == 2); // c.nc was never written
}

TEST_CASE("compare: missing file, different variable sets, different dimensions, strata_config note") {
    fs::path const dir = freshDirectory();
    OutputFileSpec spec = smallSpec((dir / "a.nc").string(), true, true);
    writeWhole(spec);
    std::string const a = spec.path;

    Compared const missing = compare(a, (dir / "nope.nc").string(), {});
    CHECK(missing.status == 2);
    CHECK_THAT(missing.report, Catch::Contains("cannot open " + (dir / "nope.nc").string()));
    CHECK(compare((dir / "nope.nc").string(), a, {}).status == 2);

    OutputFileSpec fewer = smallSpec((dir / "fewer.nc").string(), true, true);
    fewer.series.pop_back();
    fewer.configYaml = "model:\n  levels: 6\n";
    writeWhole(fewer);
    Compared const sets = compare(a, fewer.path, {.rtol = 1.0});
    INFO(sets.report);
    CHECK(sets.status == 1);
    CHECK_THAT(sets.report, Catch::Contains("mass_residual") && Catch::Contains("ONLY IN A"));
    CHECK_THAT(sets.report, Catch::Contains("strata_config differs"));

    OutputFileSpec columns = smallSpec((dir / "columns.nc").string(), false, true);
    writeWhole(columns);
    Compared const dims = compare(a, columns.path, {.rtol = 1.0});
    INFO(dims.report);
    CHECK(dims.status == 1);
    CHECK_THAT(dims.report, Catch::Contains("DIMS DIFFER"));
}

TEST_CASE("compare: per-variable tolerances, from arguments and from a file, and a misspelt name is an error") {
    fs::path const dir = freshDirectory();
    OutputFileSpec spec = smallSpec((dir / "a.nc").string(), true, true);
    writeWhole(spec);
    spec.path = (dir / "b.nc").string();
    writeWhole(spec, [](std::size_t v, uint64_t column, std::size_t level, std::size_t record, double& x) {
        if (v == 0 && column == 7 && level == 2 && record == 1) x *= 1.0 + 1e-9; // T
        if (v == 1 && column == 2 && level == 0 && record == 2) x += 1e-6;       // wflux
    });
    std::string const a = (dir / "a.nc").string();
    auto with = [](std::vector<std::pair<std::string, std::string>> const& args) {
        CompareOptions options;
        for (auto const& [which, value] : args)
            strata::app::addToleranceArgument(options, which, value);
        return options;
    };
    CHECK(compare(a, spec.path, with({{"rtol", "T=1e-6"}})).status == 1); // wflux still exact
    Compared const both = compare(a, spec.path, with({{"rtol", "T=1e-6"}, {"atol", "wflux=1e-5"}}));
    INFO(both.report);
    CHECK(both.status == 0);
    CHECK_THAT(both.report, Catch::Contains("T: rtol = 1e-06, atol = 0") && Catch::Contains("wflux: rtol = 0"));
    // A tolerance for one variable does not loosen another.
    CHECK(compare(a, spec.path, with({{"rtol", "wflux=1"}, {"atol", "T=0"}})).status == 1);
    // The default and an override together: the override wins for its variable.
    CHECK(compare(a, spec.path, with({{"rtol", "1e-6"}, {"rtol", "T=0"}, {"atol", "wflux=1e-5"}})).status == 1);

    std::ofstream(dir / "tolerances.yaml") << "rtol: 0\nvariables:\n  T: {rtol: 1e-6}\n  wflux: {atol: 1e-5}\n";
    CompareOptions fromFile;
    strata::app::readToleranceFile(fromFile, (dir / "tolerances.yaml").string());
    CHECK(compare(a, spec.path, fromFile).status == 0);

    Compared const misspelt = compare(a, spec.path, with({{"rtol", "Tt=1e-6"}}));
    CHECK(misspelt.status == 2);
    CHECK_THAT(misspelt.report, Catch::Contains("'Tt', which neither file has"));

    CompareOptions bad;
    CHECK_THROWS_WITH(strata::app::addToleranceArgument(bad, "rtol", "T=abc"),
                      Catch::Contains("--rtol T") && Catch::Contains("'abc' is not a tolerance"));
    CHECK_THROWS_WITH(strata::app::addToleranceArgument(bad, "atol", "-1"), Catch::Contains("not a tolerance"));
    CHECK_THROWS_WITH(strata::app::addToleranceArgument(bad, "atol", "=1"), Catch::Contains("names no variable"));
    std::ofstream(dir / "typo.yaml") << "variables:\n  T: {rtoll: 1e-6}\n";
    CHECK_THROWS_WITH(strata::app::readToleranceFile(bad, (dir / "typo.yaml").string()),
                      Catch::Contains("variables.T.rtoll") && Catch::Contains("unknown key"));
}

TEST_CASE("compare: --common-times compares histories of different lengths on the times both hold") {
    fs::path const dir = freshDirectory();
    OutputFileSpec spec = smallSpec((dir / "long.nc").string(), true, true);
    writeWhole(spec); // records 0, 1, 2
    std::string const full = spec.path;
    auto partOf = [&](std::string const& name, std::vector<std::size_t> const& records, Tweak const& tweak = {}) {
        OutputFileSpec part = spec;
        part.path = (dir / name).string();
        OutputFile out(context(), part, 0, ncolumns);
        for (std::size_t r : records)
            writeRecord(out, part, 0, ncolumns, r, tweak);
        out.close();
        return part.path;
    };
    std::string const head = partOf("head.nc", {0, 1});
    std::string const tail = partOf("tail.nc", {1, 2});

    Compared const plain = compare(full, head, {});
    INFO(plain.report);
    CHECK(plain.status == 1);
    CHECK_THAT(plain.report, Catch::Contains("DIMS DIFFER") && Catch::Contains("--common-times"));

    Compared const prefix = compare(full, head, {.commonTimes = true});
    INFO(prefix.report);
    CHECK(prefix.status == 0);
    CHECK_THAT(prefix.report, Catch::Contains("records: 2 common times"));
    // Records matched by their times, not their indices: the tail's records 0 and 1 are A's 1 and 2, equal but for
    // the bounds of the tail's first record (its file starts there, so its interval is empty).
    Compared const shifted = compare(full, tail, {.commonTimes = true});
    INFO(shifted.report);
    CHECK(shifted.status == 1);
    CHECK_THAT(shifted.report, Catch::Contains("records: 2 common times"));
    CHECK_THAT(shifted.report, Catch::Contains("compare: 13 variables, 1 different"));
    CHECK_THAT(shifted.report, Catch::Contains("time_bnds") && Catch::Contains("time[1]=7200 nv[0]"));
    // A difference in a common record is found, and located in A's records.
    std::string const changed =
        partOf("changed.nc", {1, 2}, [](std::size_t v, uint64_t c, std::size_t k, std::size_t r, double& x) {
            if (v == 0 && c == 0 && k == 0 && r == 2) x += 1.0;
        });
    Compared const found = compare(full, changed, {.commonTimes = true});
    INFO(found.report);
    CHECK(found.status == 1);
    CHECK_THAT(found.report, Catch::Contains("time[2]=10800"));
    // No common time at all.
    std::string const other = partOf("other.nc", {}, {});
    CHECK(compare(head, other, {.commonTimes = true}).status == 1);
}

TEST_CASE("compare: every line of the report fits 100 columns, also for Strata's longest variable name") {
    fs::path const dir = freshDirectory();
    OutputFileSpec spec = smallSpec((dir / "a.nc").string(), true, true);
    spec.variables[1].name = "surface_upward_sensible_heat_flux";
    writeWhole(spec);
    std::string const a = spec.path;
    spec.path = (dir / "b.nc").string();
    writeWhole(spec, [](std::size_t, uint64_t column, std::size_t level, std::size_t record, double& x) {
        if (column == 11 && level == 4 && record == 2) x *= 1.0 + 1e-3;
    });
    Compared const c = compare(a, spec.path, {.rtol = 1e-6});
    INFO(c.report);
    CHECK(c.status == 1);
    std::istringstream lines(c.report);
    for (std::string line; std::getline(lines, line);)
        if (!line.starts_with("A: ") && !line.starts_with("B: ")) // the paths are the user's
            CHECK(line.size() <= 100);
}

TEST_CASE("a 'time: mean' field's first record, whose interval is empty, is _FillValue and later records hold values") {
    fs::path const dir = freshDirectory();
    for (bool doublePrecision : {true, false}) {
        OutputFileSpec spec = smallSpec((dir / (doublePrecision ? "d.nc" : "f.nc")).string(), true, doublePrecision);
        spec.variables.push_back({"rain", "kg m-2 s-1", "rain, mean since the previous output", "precipitation_flux",
                                  false, true, "time: mean"});
        writeWhole(spec);
        NcFile file(spec.path, NcFile::read);
        std::vector<double> rain(records * ncolumns), temperature(records * nlev * ncolumns);
        file.getVar("rain").getVar(rain.data());
        file.getVar("T").getVar(temperature.data());
        double const fill = doublePrecision ? NC_FILL_DOUBLE : static_cast<double>(NC_FILL_FLOAT);
        for (uint32_t c = 0; c < ncolumns; ++c) {
            CHECK(rain[c] == fill);                       // record 0
            CHECK(rain[ncolumns + c] != fill);            // record 1
            CHECK(temperature[c] == valueAt(0, c, 0, 0)); // a "time: point" field keeps its first record
        }
    }
}

TEST_CASE("compare: a cut classic file is unreadable (exit 2), not different, and a NaN tolerance is refused") {
    fs::path const dir = freshDirectory();
    OutputFileSpec spec = smallSpec((dir / "whole.nc").string(), true, true);
    spec.netcdf4 = false; // 64-bit offset: libnetcdf reads a cut file's missing bytes as zeros
    writeWhole(spec);
    auto const size = fs::file_size(spec.path);
    for (std::uintmax_t cut : {std::uintmax_t{1}, std::uintmax_t{8}, size / 3}) {
        fs::path const cutFile = dir / ("cut" + std::to_string(cut) + ".nc");
        fs::copy_file(spec.path, cutFile, fs::copy_options::overwrite_existing);
        fs::resize_file(cutFile, size - cut);
        Compared const c = compare(cutFile.string(), spec.path, {});
        INFO(c.report);
        CHECK(c.status == 2);
        CHECK_THAT(c.report, Catch::Contains("truncated"));
    }
    CHECK(compare(spec.path, spec.path, {}).status == 0);
    CompareOptions options;
    CHECK_THROWS_WITH(strata::app::addToleranceArgument(options, "rtol", "nan"), Catch::Contains("not a tolerance"));
    CHECK_THROWS_WITH(strata::app::addToleranceArgument(options, "atol", "T=inf"), Catch::Contains("not a tolerance"));
}
