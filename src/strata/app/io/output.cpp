// OutputFile: each rank's columns streamed to rank 0 in turn, transposed to CF order, written with NetCDF-C++;
// see output.hpp for the contract.
#include <strata/app/io/output.hpp>

#include <strata/app/config.hpp>
#include <strata/app/io/detail/netcdf_support.hpp>
#include <strata/app/io/file_lock.hpp>
#include <strata/core/error.hpp>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <exception>
#include <filesystem>
#include <random>
#include <set>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <system_error>
#include <unistd.h>
#include <utility>

namespace strata::app {

namespace {

namespace fs = std::filesystem;
using netCDF::NcDim;
using netCDF::NcFile;
using netCDF::NcVar;

// "<path>.<pid>-<8 hex digits>.partial": unique per run, so two runs writing the same path never share a file.
std::string uniquePartialPath(std::string const& path) {
    std::random_device entropy;
    char nonce[16];
    std::snprintf(nonce, sizeof nonce, "%08x", static_cast<unsigned>(entropy()));
    return path + "." + std::to_string(static_cast<long long>(::getpid())) + "-" + nonce + ".partial";
}

// The longest suffix uniquePartialPath adds: ".<pid>-<8 hex digits>.partial", a pid of at most 7 digits (pid_max is at
// most 2^22 on Linux).
constexpr std::size_t partialSuffixLength = 1 + 7 + 1 + 8 + 8;

// A new history's run id: 128 random bits in hex.
std::string newRunId() {
    std::random_device entropy;
    char id[40];
    std::snprintf(id, sizeof id, "%08x%08x%08x%08x", static_cast<unsigned>(entropy()), static_cast<unsigned>(entropy()),
                  static_cast<unsigned>(entropy()), static_cast<unsigned>(entropy()));
    return id;
}

// ---- the history checksum (HistoryIdentity): a sum of one well-mixed term per value, so the order of the terms (how
// the ranks' blocks were written, how a reader reads the file back) does not change it.
uint64_t mix64(uint64_t x) { // SplitMix64's finaliser
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}
uint64_t nameKey(std::string const& name) { // FNV-1a
    uint64_t h = 14695981039346656037ull;
    for (unsigned char c : name)
        h = (h ^ c) * 1099511628211ull;
    return h;
}
// One stored value: its variable, record, index within the record (in the variable's storage order) and bits.
uint64_t checksumTerm(uint64_t key, uint64_t record, uint64_t index, uint64_t bits) {
    return mix64(mix64(mix64(key ^ mix64(record)) + index) ^ bits);
}
uint64_t valueBits(double x) { return std::bit_cast<uint64_t>(x); }
uint64_t valueBits(float x) { return std::bit_cast<uint32_t>(x); }

// The checksum of records [0, records) of every record variable of `source`, read a slab at a time (one level of a
// data variable, one record of the others: never a whole global field). With `copy`, each slab is also written to the
// variable of the same name and type in `copy`, which must have every record variable `source` has.
uint64_t checksumOfRecords(NcFile const& source, std::string const& path, uint64_t records, NcFile* copy) {
    NcDim const time = source.getDim("time");
    if (time.isNull() || !time.isUnlimited())
        throw Error("has no unlimited time dimension", path, "a history written by strata run");
    std::size_t destinationVariables = 0;
    if (copy)
        for (auto const& [name, var] : copy->getVars())
            if (var.getDimCount() > 0 && var.getDim(0).getName() == "time") ++destinationVariables;
    std::size_t sourceVariables = 0;
    uint64_t sum = 0;
    std::vector<double> doubles;
    std::vector<float> floats;
    for (auto const& [name, var] : source.getVars()) {
        if (var.getDimCount() == 0 || var.getDim(0).getId() != time.getId()) continue;
        ++sourceVariables;
        bool const single = var.getType() == netCDF::ncFloat;
        if (!single && var.getType() != netCDF::ncDouble)
            throw Error("'" + name + "' is neither float nor double", path, "a history written by strata");
        NcVar target;
        if (copy) {
            target = copy->getVar(name);
            if (target.isNull() || target.getType() != var.getType())
                throw Error("has '" + name + "', which this run does not write as " + var.getType().getName(), path,
                            "the history of a run with the same output.variables and precision");
        }
        std::vector<std::size_t> shape;
        for (int d = 1; d < var.getDimCount(); ++d)
            shape.push_back(var.getDim(d).getSize());
        std::size_t const outer = shape.size() >= 2 ? shape[0] : 1; // a slab: one index of the first dimension
        std::size_t slab = 1;
        for (std::size_t d = shape.size() >= 2 ? 1 : 0; d < shape.size(); ++d)
            slab *= shape[d];
        uint64_t const key = nameKey(name);
        for (uint64_t r = 0; r < records; ++r)
            for (std::size_t o = 0; o < outer; ++o) {
                std::vector<std::size_t> start{r}, count{1};
                for (std::size_t d = 0; d < shape.size(); ++d) {
                    bool const sliced = shape.size() >= 2 && d == 0;
                    start.push_back(sliced ? o : 0);
                    count.push_back(sliced ? 1 : shape[d]);
                }
                auto add = [&](auto const& values) {
                    for (std::size_t i = 0; i < slab; ++i)
                        sum += checksumTerm(key, r, o * slab + i, valueBits(values[i]));
                    if (copy) target.putVar(start, count, values.data());
                };
                if (single) {
                    floats.resize(slab);
                    var.getVar(start, count, floats.data());
                    add(floats);
                } else {
                    doubles.resize(slab);
                    var.getVar(start, count, doubles.data());
                    add(doubles);
                }
            }
    }
    if (copy && destinationVariables != sourceVariables)
        throw Error("has " + std::to_string(sourceVariables) + " record variables, this run writes " +
                        std::to_string(destinationVariables),
                    path, "the history of a run with the same output.variables");
    return sum;
}

// "2026-11-24T04:40:00Z": the time a history entry was made, in UTC (ISO 8601).
std::string isoTimestampNow() {
    std::time_t const now = std::time(nullptr);
    std::tm utc{};
    gmtime_r(&now, &utc);
    char text[32];
    std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
    return text;
}

// Bounds of equal cells around regularly spaced centers, clamped to [lo, hi]: (n, 2) values.
std::vector<double> cellBounds(std::vector<double> const& centers, double lo, double hi) {
    std::size_t const n = centers.size();
    double const half = n > 1 ? 0.5 * (centers[1] - centers[0]) : 0.5 * (hi - lo);
    std::vector<double> b;
    for (double c : centers)
        b.insert(b.end(), {std::max(lo, c - half), std::min(hi, c + half)});
    return b;
}

// What is at `path` now, if it is something close() must not replace; empty when it is absent or a regular file.
std::string notReplaceable(fs::path const& path) {
    std::error_code ec;
    fs::file_status const st = fs::status(path, ec); // follows symbolic links: a link to a regular file is fine
    // ENOTDIR: a parent is a file; checkOutputTarget names that parent.
    if (ec && ec != std::errc::no_such_file_or_directory && ec != std::errc::not_a_directory)
        return "cannot be examined: " + ec.message();
    switch (st.type()) {
    case fs::file_type::not_found:
    case fs::file_type::regular: return "";
    case fs::file_type::directory: return "is a directory";
    case fs::file_type::fifo: return "is a FIFO";
    case fs::file_type::character:
    case fs::file_type::block: return "is a device";
    case fs::file_type::socket: return "is a socket";
    default: return "is not a regular file";
    }
}

// Every rank calls this with its own problem (empty: none). If any rank has one, every rank throws the same Error:
// the lowest failing rank's message, so an error on one rank never leaves the others waiting in a collective.
void throwIfAnyRankFailed(MPI_Comm comm, std::string message, std::string const& where) {
    auto [first, problem] = core::firstProblem(comm, std::move(message));
    int size = 1;
    MPI_Comm_size(comm, &size);
    if (first == size) return;
    if (size > 1) problem += " (on rank " + std::to_string(first) + ")";
    throw Error(problem, where);
}

// The message of the exception being handled, for the status shared with the other ranks.
// HDF5 reports a full disk as "NetCDF: HDF error": a failed write says how much room the file system has left.
std::string spaceNote(std::string const& file) {
    if (file.empty()) return "";
    fs::path dir = fs::path(file).parent_path();
    if (dir.empty()) dir = ".";
    struct statvfs st {};
    if (::statvfs(dir.c_str(), &st) != 0) return "";
    uint64_t const free = static_cast<uint64_t>(st.f_bavail) * st.f_frsize;
    // A file system without blocks (/proc, /sys) is not full: its "0 free" says nothing about the failure.
    if (free >= (uint64_t{1} << 20) || st.f_blocks == 0) return "";
    return "; the file system holding " + dir.string() + " has " + std::to_string(free) +
           " bytes free: no space left on device";
}

std::string currentExceptionMessage(std::string const& doing, std::string const& file = "") {
    try {
        throw;
    } catch (netCDF::exceptions::NcException const& e) {
        return doing + ": " + detail::netcdfMessage(e) + spaceNote(file);
    } catch (fs::filesystem_error const& e) {
        return doing + ": " + e.code().message();
    } catch (std::exception const& e) {
        return doing + ": " + e.what();
    }
}

std::set<std::string> const& reservedNames() {
    static std::set<std::string> const names{"time", "lev",       "ilev",     "lat",      "lon",     "ncol",
                                             "nv",   "time_bnds", "lev_bnds", "lat_bnds", "lon_bnds"};
    return names;
}

// Deterministic (the same spec gives the same verdict on every rank), so every rank throws or none does.
void validate(OutputFileSpec const& spec) {
    auto fail = [&](std::string const& what, std::string const& expected) {
        throw Error(what, spec.path.empty() ? "output file" : spec.path, expected);
    };
    if (spec.path.empty()) fail("no output path", "a file name");
    if (spec.timeUnits.empty()) fail("no time units", "e.g. \"seconds since 2000-01-01 00:00:00\"");
    if (spec.lev.empty()) fail("no levels", "at least one lev height");
    HorizontalCoords const& h = spec.horizontal;
    if (h.latlon) {
        if (h.nlat == 0 || h.nlon == 0) fail("empty lat-lon grid", "nlat > 0 and nlon > 0");
        if (h.lat.size() != h.nlat || h.lon.size() != h.nlon)
            fail("lat/lon sizes " + std::to_string(h.lat.size()) + "/" + std::to_string(h.lon.size()) +
                     " do not match the grid " + std::to_string(h.nlat) + "x" + std::to_string(h.nlon),
                 "nlat latitudes and nlon longitudes");
    } else {
        if (h.ncol == 0) fail("no columns", "ncol > 0");
        if (h.lat.size() != h.ncol || h.lon.size() != h.ncol)
            fail("lat/lon sizes " + std::to_string(h.lat.size()) + "/" + std::to_string(h.lon.size()) +
                     " do not match ncol = " + std::to_string(h.ncol),
                 "one latitude and one longitude per column");
    }
    std::uint64_t const levels = std::max(spec.lev.size(), spec.ilev.size());
    if (h.columns() * levels > static_cast<std::uint64_t>(INT_MAX))
        fail("a variable has " + std::to_string(h.columns() * levels) + " values", "at most 2^31 - 1 (MPI counts)");
    std::set<std::string> names;
    auto claim = [&](std::string const& name) {
        if (name.empty()) fail("a variable without a name", "a name for every variable and time series");
        if (reservedNames().contains(name)) fail("variable name '" + name + "' is a coordinate's", "another name");
        if (!names.insert(name).second) fail("variable name '" + name + "' twice", "unique names");
    };
    for (OutputVariable const& v : spec.variables) {
        claim(v.name);
        if (v.onFaces && spec.ilev.empty()) fail("'" + v.name + "' is on faces but there are no ilev heights", "ilev");
    }
    for (TimeSeries const& s : spec.series)
        claim(s.name);
}

// While define() runs (rank 0): the dimensions the variables are defined on, and the coordinates' values, written
// once every variable is defined: the coordinates, then their cells' bounds, each in the order defined.
struct DefinedAxes {
    NcDim time, bnds, lev, ilev;
    std::vector<NcDim> horizontal; // (lat, lon) or (ncol)
    std::vector<std::pair<NcVar, double const*>> coordinates;
    std::vector<std::pair<NcVar, std::vector<double>>> bounds;
};

// A height coordinate (m, positive up) and its dimension.
NcVar defineHeight(NcFile& file, std::string const& name, std::vector<double> const& heights,
                   std::string const& longName, NcDim& dim) {
    dim = file.addDim(name, heights.size());
    NcVar const var = file.addVar(name, netCDF::ncDouble, dim);
    var.putAtt("standard_name", "height");
    var.putAtt("long_name", longName);
    var.putAtt("units", "m");
    var.putAtt("axis", "Z");
    var.putAtt("positive", "up");
    return var;
}

// lat and lon; `coordinateVariables`: they are the grid's axes (only coordinate variables may say axis in CF-1.8).
std::pair<NcVar, NcVar> defineLatLon(NcFile& file, NcDim const& latDim, NcDim const& lonDim, bool coordinateVariables) {
    NcVar const latVar = file.addVar("lat", netCDF::ncDouble, latDim);
    latVar.putAtt("standard_name", "latitude");
    latVar.putAtt("long_name", "latitude");
    latVar.putAtt("units", "degrees_north");
    NcVar const lonVar = file.addVar("lon", netCDF::ncDouble, lonDim);
    lonVar.putAtt("standard_name", "longitude");
    lonVar.putAtt("long_name", "longitude");
    lonVar.putAtt("units", "degrees_east");
    if (coordinateVariables) {
        latVar.putAtt("axis", "Y");
        lonVar.putAtt("axis", "X");
    }
    return {latVar, lonVar};
}

} // namespace

struct OutputFile::Impl {
    MPI_Comm comm = MPI_COMM_NULL;
    int rank = 0;
    OutputFileSpec spec;
    uint32_t localColumns = 0;
    std::vector<uint64_t> columnCounts, columnOffsets; // rank 0: per rank, in columns
    bool closed = false;

    // Rank 0 only.
    std::unique_ptr<NcFile> file;
    NcVar timeVar, timeBounds;
    double previousTime = 0;    // the start of the interval the next record closes
    bool emptyInterval = false; // the record being written closes no time (the first one): its means are missing
    std::vector<NcVar> dataVars, seriesVars;
    std::size_t records = 0;
    std::vector<double> received, cfOrder; // one rank's share of one variable, at most
    std::vector<float> singles;
    std::string runId;
    uint64_t checksum = 0;          // of the records written (HistoryIdentity)
    uint64_t recordChecksum = 0;    // of the record being written, added to `checksum` when it is complete
    std::vector<uint64_t> dataKeys; // nameKey of each data variable
    WriterLock writerLock;          // on the file, from its creation to its close

    ~Impl() {
        // Unwinding (or a failed constructor): release the handle, leave the .partial, no rename, no MPI.
        try {
            file.reset();
        } catch (...) {
        }
    }

    // A mean over the record's interval ("time: mean"): undefined for an empty interval, so written as _FillValue
    // there. A 0 would be averaged in by `cdo timmean` or xarray's mean("time") as if it were a measured mean.
    bool isIntervalMean(std::size_t v) const {
        return spec.variables[v].cellMethods.find("time: mean") != std::string::npos;
    }

    std::size_t levelsOf(std::size_t v) const {
        if (spec.variables[v].surface) return 1;
        return spec.variables[v].onFaces ? spec.ilev.size() : spec.lev.size();
    }
    std::string partial; // the unique temporary name rank 0 chose (shared with every rank after create())
    std::string const& partialPath() const { return partial; }

    void checkDistribution(uint64_t firstColumn);
    void create();
    void define(std::string const& earlierHistory);
    void defineGlobalAttributes(std::string const& earlierHistory);
    void defineTime(DefinedAxes& axes);
    void defineHeights(DefinedAxes& axes);
    void defineHorizontal(DefinedAxes& axes);
    void defineBounds(DefinedAxes& axes, NcVar const& coordinate, NcDim const& dim, std::vector<double> values);
    NcVar defineDataVariable(OutputVariable const& v, DefinedAxes const& axes);
    void setChunking(NcVar& var, OutputVariable const& v) const;
    NcVar defineSeries(TimeSeries const& s, NcDim const& time);
    void copyContinued(NcFile const& source);
    void streamAndWrite(std::size_t v, std::span<double const> local, std::string& problem);
    void writeColumns(std::size_t v, uint64_t first, std::span<double const> values);
};

void OutputFile::Impl::checkDistribution(uint64_t firstColumn) {
    int size = 1;
    MPI_Comm_size(comm, &size);
    uint64_t const mine[2] = {firstColumn, localColumns};
    std::vector<uint64_t> all(2 * static_cast<std::size_t>(size));
    MPI_Allgather(mine, 2, MPI_UINT64_T, all.data(), 2, MPI_UINT64_T, comm);
    uint64_t next = 0;
    for (int r = 0; r < size; ++r) {
        uint64_t const first = all[2 * r], count = all[2 * r + 1];
        if (first != next)
            throw Error("rank " + std::to_string(r) + " starts at column " + std::to_string(first), spec.path,
                        "contiguous column ranges in rank order, this one starting at " + std::to_string(next));
        next += count;
    }
    if (next != spec.horizontal.columns())
        throw Error("the ranks hold " + std::to_string(next) + " columns", spec.path,
                    "the grid's " + std::to_string(spec.horizontal.columns()));
    if (rank != 0) return;
    for (int r = 0; r < size; ++r) {
        columnOffsets.push_back(all[2 * r]);
        columnCounts.push_back(all[2 * r + 1]);
    }
}

// Rank 0: the file under its temporary name, new or continuing a history.
void OutputFile::Impl::create() {
    fs::path const target(spec.path);
    if (target.has_parent_path()) fs::create_directories(target.parent_path());
    if (std::string const what = notReplaceable(target); !what.empty())
        throw Error("'" + spec.path + "' " + what, "output.path", "a regular file (replaced) or no file");
    // newFile: NC_NOCLOBBER, an exclusive create; a name that exists (however unlikely) is never overwritten.
    partial = uniquePartialPath(spec.path);
    // Readers may open the history while the run writes it (HDF5 would otherwise lock the file against them).
    ::setenv("HDF5_USE_FILE_LOCKING", "FALSE", 0);
    for (OutputVariable const& v : spec.variables)
        dataKeys.push_back(nameKey(v.name));
    if (spec.appendFrom.empty()) {
        runId = newRunId();
        define("");
        return;
    }
    // A continuation: a new file with this run's attributes, the earlier history's run id, history lines and records.
    NcFile const source(spec.appendFrom, NcFile::read);
    runId = detail::globalText(source, "strata_run_id");
    define(detail::globalText(source, "history"));
    copyContinued(source);
}

// Rank 0: the first `continued.records` records of the history being continued, checked against the restart again (the
// file at the path may have been replaced since it was chosen).
void OutputFile::Impl::copyContinued(NcFile const& source) {
    uint64_t const sum = checksumOfRecords(source, spec.appendFrom, spec.continued.records, file.get());
    if (sum != spec.continued.checksum)
        throw Error("changed while it was continued: its first " + std::to_string(spec.continued.records) +
                        " records are not those the restart was made after",
                    spec.appendFrom, "a history no other run replaces during the continuation");
    records = spec.continued.records;
    checksum = sum;
    if (records > 0) timeVar.getVar({records - 1}, &previousTime);
    file->sync();
}

// Rank 0: defines the whole file and writes the coordinates; `earlierHistory`: the history attribute of the file a
// continuation continues, kept below this run's line. The definitions, and the values written after them, keep one
// order: the attributes, time, the heights, the horizontal coordinates, the data variables, the series.
void OutputFile::Impl::define(std::string const& earlierHistory) {
    file = std::make_unique<NcFile>(partial, NcFile::newFile, spec.netcdf4 ? NcFile::nc4 : NcFile::classic64);
    writerLock.lock(partial);
    defineGlobalAttributes(earlierHistory);
    DefinedAxes axes;
    defineTime(axes);
    defineHeights(axes);
    defineHorizontal(axes);
    for (OutputVariable const& v : spec.variables)
        dataVars.push_back(defineDataVariable(v, axes));
    for (TimeSeries const& s : spec.series)
        seriesVars.push_back(defineSeries(s, axes.time));
    for (auto const& [var, values] : axes.coordinates)
        var.putVar(values);
    for (auto const& [var, values] : axes.bounds)
        var.putVar(values.data());
    file->sync();
}

void OutputFile::Impl::defineGlobalAttributes(std::string const& earlierHistory) {
    file->putAtt("strata_run_status", "running");
    file->putAtt("Conventions", "CF-1.8");
    file->putAtt("title", spec.title);
    file->putAtt("source", spec.source);
    file->putAtt("history",
                 isoTimestampNow() + ": " + spec.history + (earlierHistory.empty() ? "" : "\n" + earlierHistory));
    file->putAtt("strata_config", spec.configYaml);
    file->putAtt("strata_run_id", runId);
}

void OutputFile::Impl::defineTime(DefinedAxes& axes) {
    axes.time = file->addDim("time");
    timeVar = file->addVar("time", netCDF::ncDouble, axes.time);
    timeVar.putAtt("standard_name", "time");
    timeVar.putAtt("long_name", "time");
    timeVar.putAtt("units", spec.timeUnits);
    timeVar.putAtt("calendar", "standard");
    timeVar.putAtt("axis", "T");
    // Each record closes the interval since the previous one (the first: a point): what "time: mean" fields average.
    timeVar.putAtt("bounds", "time_bnds");
    axes.bnds = file->addDim("nv", 2);
    timeBounds = file->addVar("time_bnds", netCDF::ncDouble, {axes.time, axes.bnds});
}

// lev (cell centers) and ilev (faces, when given), with the cells' bounds when there is a face on either side of
// each center (CF 7.1: each center's cell is between the faces below and above it).
void OutputFile::Impl::defineHeights(DefinedAxes& axes) {
    NcVar levVar = defineHeight(*file, "lev", spec.lev, "height of level centers", axes.lev);
    axes.coordinates.emplace_back(levVar, spec.lev.data());
    if (!spec.ilev.empty()) {
        NcVar const ilevVar = defineHeight(*file, "ilev", spec.ilev, "height of level faces (interfaces)", axes.ilev);
        axes.coordinates.emplace_back(ilevVar, spec.ilev.data());
    }
    if (spec.ilev.size() != spec.lev.size() + 1) return;
    std::vector<double> b;
    for (std::size_t k = 0; k < spec.lev.size(); ++k)
        b.insert(b.end(), {spec.ilev[k], spec.ilev[k + 1]});
    defineBounds(axes, levVar, axes.lev, std::move(b));
}

// lat and lon: coordinate variables of a lat-lon grid (with their cells' bounds), or auxiliary coordinates over ncol.
void OutputFile::Impl::defineHorizontal(DefinedAxes& axes) {
    HorizontalCoords const& h = spec.horizontal;
    if (h.latlon) {
        axes.horizontal = {file->addDim("lat", h.nlat), file->addDim("lon", h.nlon)};
        auto [latVar, lonVar] = defineLatLon(*file, axes.horizontal[0], axes.horizontal[1], true);
        axes.coordinates.emplace_back(latVar, h.lat.data());
        axes.coordinates.emplace_back(lonVar, h.lon.data());
        // Equal cells around the centers: latitudes from -90 to 90, longitudes from 0 to 360.
        defineBounds(axes, latVar, axes.horizontal[0], cellBounds(h.lat, -90.0, 90.0));
        defineBounds(axes, lonVar, axes.horizontal[1], cellBounds(h.lon, 0.0, 360.0));
    } else {
        axes.horizontal = {file->addDim("ncol", h.ncol)};
        auto const [latVar, lonVar] = defineLatLon(*file, axes.horizontal[0], axes.horizontal[0], false);
        axes.coordinates.emplace_back(latVar, h.lat.data());
        axes.coordinates.emplace_back(lonVar, h.lon.data());
    }
}

// Cell bounds (CF 7.1): "<coordinate>_bnds" over (dim, nv), its values written after the definitions.
void OutputFile::Impl::defineBounds(DefinedAxes& axes, NcVar const& coordinate, NcDim const& dim,
                                    std::vector<double> values) {
    std::string const name = coordinate.getName() + "_bnds";
    coordinate.putAtt("bounds", name);
    axes.bounds.emplace_back(file->addVar(name, netCDF::ncDouble, {dim, axes.bnds}), std::move(values));
}

NcVar OutputFile::Impl::defineDataVariable(OutputVariable const& v, DefinedAxes const& axes) {
    HorizontalCoords const& h = spec.horizontal;
    netCDF::NcType const& valueType =
        spec.doublePrecision ? static_cast<netCDF::NcType const&>(netCDF::ncDouble) : netCDF::ncFloat;
    std::vector<NcDim> dims{axes.time};
    if (!v.surface) dims.push_back(v.onFaces ? axes.ilev : axes.lev);
    dims.insert(dims.end(), axes.horizontal.begin(), axes.horizontal.end());
    NcVar var = file->addVar(v.name, valueType, dims);
    if (spec.netcdf4) setChunking(var, v);
    if (!v.standardName.empty()) var.putAtt("standard_name", v.standardName);
    var.putAtt("long_name", v.longName);
    var.putAtt("units", v.units);
    var.putAtt("cell_methods", v.cellMethods.empty() ? std::string("time: point") : v.cellMethods);
    if (!h.latlon) var.putAtt("coordinates", "lat lon");
    // The default fill value, declared: a value never written reads as missing, not as a number.
    if (spec.doublePrecision)
        var.putAtt("_FillValue", netCDF::ncDouble, NC_FILL_DOUBLE);
    else
        var.putAtt("_FillValue", netCDF::ncFloat, NC_FILL_FLOAT);
    return var;
}

// netCDF-4: the data variable's chunks (chunkShape), its chunk cache and its compression.
void OutputFile::Impl::setChunking(NcVar& var, OutputVariable const& v) const {
    std::vector<std::size_t> chunks = chunkShape(spec, v.onFaces ? spec.ilev.size() : spec.lev.size(), v.surface);
    var.setChunking(NcVar::nc_CHUNKED, chunks);
    // HDF5's chunk cache, bounded per variable: a record's chunks are written whole (at most one, across two ranks'
    // columns, waits for the next rank), so a few chunks suffice, and rank 0's memory does not grow with the grid.
    // Fully written chunks are evicted first (preemption 1).
    std::size_t chunkBytes = spec.doublePrecision ? sizeof(double) : sizeof(float);
    for (std::size_t n : chunks)
        chunkBytes *= n;
    var.setChunkCache(4 * chunkBytes, 31, 1.0f);
    if (spec.deflate > 0) var.setCompression(true, true, spec.deflate);
}

NcVar OutputFile::Impl::defineSeries(TimeSeries const& s, NcDim const& time) {
    NcVar const var = file->addVar(s.name, netCDF::ncDouble, time);
    var.putAtt("long_name", s.longName);
    var.putAtt("units", s.units);
    var.putAtt("cell_methods", s.cellMethods.empty() ? std::string("time: point") : s.cellMethods);
    var.putAtt("_FillValue", netCDF::ncDouble, NC_FILL_DOUBLE);
    return var;
}

OutputFile::OutputFile(core::Context const& ctx, OutputFileSpec spec, uint64_t firstColumn, uint32_t localColumns)
    : m_impl(std::make_unique<Impl>()) {
    Impl& m = *m_impl;
    m.comm = ctx.comm();
    m.rank = ctx.rank();
    m.spec = std::move(spec);
    m.localColumns = localColumns;
    validate(m.spec);
    m.checkDistribution(firstColumn);

    std::string problem;
    if (m.rank == 0) {
        try {
            m.create();
        } catch (...) {
            problem =
                currentExceptionMessage("cannot create " + (m.partial.empty() ? m.spec.path : m.partial), m.spec.path);
        }
    }
    throwIfAnyRankFailed(m.comm, problem, m.spec.path);
    // Every rank learns the temporary name (for partialPath() and messages).
    auto length = static_cast<int>(m.partial.size());
    MPI_Bcast(&length, 1, MPI_INT, 0, m.comm);
    m.partial.resize(static_cast<std::size_t>(length));
    MPI_Bcast(m.partial.data(), length, MPI_CHAR, 0, m.comm);
}

OutputFile::~OutputFile() = default;

std::string const& OutputFile::path() const { return m_impl->spec.path; }

std::string const& OutputFile::partialPath() const { return m_impl->partial; }

std::size_t OutputFile::records() const {
    std::size_t n = m_impl->records;
    MPI_Bcast(&n, 1, MPI_UNSIGNED_LONG, 0, m_impl->comm); // rank 0 counts
    return n;
}

HistoryIdentity OutputFile::identity() const {
    Impl const& m = *m_impl;
    uint64_t numbers[2] = {m.records, m.checksum}; // rank 0 writes, so rank 0 knows
    MPI_Bcast(numbers, 2, MPI_UINT64_T, 0, m.comm);
    std::string id = m.runId;
    auto length = static_cast<int>(id.size());
    MPI_Bcast(&length, 1, MPI_INT, 0, m.comm);
    id.resize(static_cast<std::size_t>(length));
    MPI_Bcast(id.data(), length, MPI_CHAR, 0, m.comm);
    return {id, numbers[0], numbers[1]};
}

HistoryIdentity readHistoryIdentity(std::string const& path, uint64_t records) {
    try {
        NcFile const file(path, NcFile::read);
        NcDim const time = file.getDim("time");
        uint64_t const have = time.isNull() ? 0 : time.getSize();
        if (have < records)
            throw Error("holds " + std::to_string(have) + " records", path,
                        "at least the " + std::to_string(records) + " the restart was made after");
        return {detail::globalText(file, "strata_run_id"), records, checksumOfRecords(file, path, records, nullptr)};
    } catch (netCDF::exceptions::NcException const& e) {
        throw Error("cannot be read: " + detail::netcdfMessage(e), path, "a history written by strata run");
    }
}

std::vector<std::size_t> chunkShape(OutputFileSpec const& spec, std::size_t levels, bool surface,
                                    std::size_t targetBytes) {
    HorizontalCoords const& h = spec.horizontal;
    std::size_t const valueBytes = spec.doublePrecision ? sizeof(double) : sizeof(float);
    std::size_t const perColumn = (surface ? 1 : levels) * valueBytes;
    uint64_t const columns = std::max<uint64_t>(1, h.columns());
    uint64_t const records = std::max<std::size_t>(1, spec.expectedRecords);
    // One record per chunk (a record is written once, whole: no chunk waits in memory for later records). Columns:
    // records / 1 = columns / chunkColumns, within [minChunkBytes, targetBytes] of data.
    uint64_t const most = std::max<uint64_t>(1, targetBytes / perColumn);
    uint64_t const least = std::min(most, (minChunkBytes + perColumn - 1) / perColumn);
    uint64_t const chunkColumns = std::min(columns, std::clamp((columns + records - 1) / records, least, most));
    std::vector<std::size_t> shape{1};
    if (!surface) shape.push_back(levels);
    if (h.latlon) {
        uint64_t const nlon = std::max<uint32_t>(1, h.nlon);
        if (chunkColumns >= nlon) {
            uint64_t rows = chunkColumns / nlon;
            if (rows * nlon < least) rows = (least + nlon - 1) / nlon; // whole rows, not below the least size
            shape.insert(shape.end(),
                         {static_cast<std::size_t>(std::min<uint64_t>(h.nlat, rows)), static_cast<std::size_t>(nlon)});
        } else {
            shape.insert(shape.end(), {1, static_cast<std::size_t>(chunkColumns)});
        }
    } else {
        shape.push_back(static_cast<std::size_t>(chunkColumns));
    }
    return shape;
}

void checkWriteTarget(std::string const& path, std::string const& configPath, std::string const& key) {
    fs::path const target(path);
    auto refuse = [&](std::string const& what, std::string const& expected) {
        throw ConfigError("'" + path + "' " + what, key, expected);
    };
    if (!target.has_filename() || target.filename() == "." || target.filename() == "..")
        refuse("names a folder, not a file", "a file name, e.g. out/strata.nc");
    if (std::string const what = notReplaceable(target); !what.empty())
        refuse(what, "a regular file (replaced) or no file");
    std::error_code ec;
    if (!configPath.empty() && fs::exists(target, ec) && fs::equivalent(target, fs::path(configPath), ec))
        refuse("is the configuration file itself", "another file: the run would overwrite its own configuration");
    // The nearest folder that exists: the run creates the ones below it, then its files in the last.
    std::vector<std::string> created{target.filename().string()};
    fs::path folder = target.parent_path();
    for (;; folder = folder.parent_path()) {
        fs::path const p = folder.empty() ? fs::path(".") : folder;
        fs::file_status const st = fs::status(p, ec);
        if (st.type() == fs::file_type::not_found && !folder.empty() && folder != folder.parent_path()) {
            created.push_back(folder.filename().string());
            continue;
        }
        if (st.type() == fs::file_type::none)
            throw ConfigError("'" + p.string() + "' cannot be examined: " + ec.message(), key,
                              "a path whose parent folders can be read");
        if (st.type() != fs::file_type::directory)
            throw ConfigError("'" + p.string() + "' is not a directory", key,
                              "a path whose parent folders are folders (or do not exist yet)");
        folder = p;
        break;
    }
    if (::access(folder.c_str(), W_OK | X_OK) != 0) {
        int const error = errno;
        throw ConfigError("'" + folder.string() + "' " +
                              (error == EROFS ? std::string("is on a read-only file system")
                                              : "cannot be written in: " + std::string(std::strerror(error))),
                          key, "a path in a folder this run may create files in (for " + path + ")");
    }
    // The kernel's own file systems pass access() for root, then refuse to create any file in them.
    struct statfs kind {};
    if (::statfs(folder.c_str(), &kind) == 0) {
        static constexpr std::pair<long, char const*> pseudo[] = {
            {0x9fa0, "proc"},        {0x62656572, "sysfs"},      {0x63677270, "cgroup2"}, {0x27e0eb, "cgroup"},
            {0x64626720, "debugfs"}, {0x73636673, "securityfs"}, {0x74726163, "tracefs"}};
        for (auto const& [magic, name] : pseudo)
            if (static_cast<long>(kind.f_type) == magic)
                throw ConfigError("'" + folder.string() + "' is on the kernel's " + name +
                                      " file system, where no file can be created",
                                  key, "a path on a file system that stores files (for " + path + ")");
    }
    long const nameMax = ::pathconf(folder.c_str(), _PC_NAME_MAX);
    std::size_t const longest = nameMax > 0 ? static_cast<std::size_t>(nameMax) : NAME_MAX;
    for (std::size_t i = 0; i < created.size(); ++i) {
        // The file itself is first written as "<name>.<pid>-<nonce>.partial".
        std::size_t const length = created[i].size() + (i == 0 ? partialSuffixLength : 0);
        if (length > longest)
            refuse("has a name of " + std::to_string(created[i].size()) + " characters (" + created[i].substr(0, 16) +
                       "...): " + (i == 0 ? "with the temporary suffix .PID-NONCE.partial the " : "the ") +
                       "name is too long for the file system, which allows " + std::to_string(longest),
                   "shorter names");
    }
}

// Rank 0: writes `values` (global columns [first, first + values.size() / levels), column after column, each `levels`
// values) into record `records` of variable v, in CF order. On a lat-lon grid a range of columns is a partial row of
// longitudes, whole rows, and a partial row: one hyperslab each.
void OutputFile::Impl::writeColumns(std::size_t v, uint64_t first, std::span<double const> values) {
    std::size_t const levels = levelsOf(v);
    uint64_t const end = first + values.size() / levels;
    HorizontalCoords const& h = spec.horizontal;
    uint64_t const rowLength = h.latlon ? h.nlon : h.ncol;
    for (uint64_t c = first; c < end;) {
        uint64_t const row = c / rowLength, offset = c % rowLength;
        uint64_t rows = 1, length = std::min(rowLength - offset, end - c);
        if (offset == 0 && end - c >= rowLength) { // whole rows
            rows = (end - c) / rowLength;
            length = rowLength;
        }
        std::size_t const n = rows * length;
        std::span<double const> const block = values.subspan((c - first) * levels, n * levels);
        // Column after column (level-contiguous) to level after level (column-contiguous).
        cfOrder.resize(levels * n);
        if (emptyInterval && isIntervalMean(v))
            std::fill(cfOrder.begin(), cfOrder.end(), spec.doublePrecision ? NC_FILL_DOUBLE : NC_FILL_FLOAT);
        else
            for (std::size_t j = 0; j < n; ++j)
                for (std::size_t k = 0; k < levels; ++k)
                    cfOrder[k * n + j] = block[j * levels + k];
        std::vector<std::size_t> start{records, 0}, count{1, levels};
        if (h.latlon) {
            start.insert(start.end(), {row, offset});
            count.insert(count.end(), {rows, length});
        } else {
            start.push_back(offset);
            count.push_back(length);
        }
        if (spec.variables[v].surface) { // no vertical dimension
            start.erase(start.begin() + 1);
            count.erase(count.begin() + 1);
        }
        // The checksum takes the values as stored, at their index in the record: level k, global column c + j.
        auto addToChecksum = [&](auto const& stored) {
            for (std::size_t k = 0; k < levels; ++k)
                for (std::size_t j = 0; j < n; ++j)
                    recordChecksum +=
                        checksumTerm(dataKeys[v], records, k * h.columns() + c + j, valueBits(stored[k * n + j]));
        };
        if (spec.doublePrecision) {
            dataVars[v].putVar(start, count, cfOrder.data());
            addToChecksum(cfOrder);
        } else {
            // Our own rounding, not NetCDF's conversion: NetCDF refuses values beyond the float range (NC_ERANGE),
            // and a blown-up run's output is exactly what one wants to look at.
            singles.resize(cfOrder.size());
            std::transform(cfOrder.begin(), cfOrder.end(), singles.begin(),
                           [](double x) { return static_cast<float>(x); });
            dataVars[v].putVar(start, count, singles.data());
            addToChecksum(singles);
        }
        c += n;
    }
}

// Rank 0 writes its own columns, then each other rank's in rank order as they arrive: rank 0 never holds more than
// one rank's share of a variable, however many ranks there are (no gather of global fields). After a failure on
// rank 0 the other ranks' blocks are still received (every rank takes part in the same messages) but not written.
void OutputFile::Impl::streamAndWrite(std::size_t v, std::span<double const> local, std::string& problem) {
    constexpr int tag = 7401;
    if (rank != 0) {
        MPI_Send(local.data(), static_cast<int>(local.size()), MPI_DOUBLE, 0, tag, comm);
        return;
    }
    auto write = [&](std::size_t r, std::span<double const> values) {
        if (!problem.empty()) return;
        try {
            writeColumns(v, static_cast<uint64_t>(columnOffsets[r]), values);
        } catch (...) {
            problem = currentExceptionMessage("cannot write '" + spec.variables[v].name + "' to " + partialPath(),
                                              partialPath());
        }
    };
    write(0, local);
    std::size_t const levels = levelsOf(v);
    for (std::size_t r = 1; r < columnCounts.size(); ++r) {
        received.resize(static_cast<std::size_t>(columnCounts[r]) * levels);
        MPI_Recv(received.data(), static_cast<int>(received.size()), MPI_DOUBLE, static_cast<int>(r), tag, comm,
                 MPI_STATUS_IGNORE);
        write(r, received);
    }
}

void OutputFile::write(double time, std::vector<std::span<double const>> const& data,
                       std::vector<double> const& series) {
    Impl& m = *m_impl;
    std::string problem;
    if (m.closed) {
        problem = "write() after close()";
    } else if (data.size() != m.spec.variables.size()) {
        problem =
            std::to_string(data.size()) + " variables given, the file has " + std::to_string(m.spec.variables.size());
    } else if (m.rank == 0 && series.size() != m.spec.series.size()) {
        problem = std::to_string(series.size()) + " time-series values given, the file has " +
                  std::to_string(m.spec.series.size());
    } else {
        for (std::size_t v = 0; v < data.size() && problem.empty(); ++v)
            if (data[v].size() != m.localColumns * m.levelsOf(v))
                problem = "'" + m.spec.variables[v].name + "' has " + std::to_string(data[v].size()) +
                          " values on this rank, expected " + std::to_string(m.localColumns) + " columns x " +
                          std::to_string(m.levelsOf(v)) + " levels";
    }
    throwIfAnyRankFailed(m.comm, problem, m.spec.path);

    m.emptyInterval = m.records == 0 || time <= m.previousTime;
    m.recordChecksum = 0;
    for (std::size_t v = 0; v < data.size(); ++v)
        m.streamAndWrite(v, data[v], problem);
    if (m.rank == 0 && problem.empty()) {
        try {
            m.timeVar.putVar({m.records}, time);
            double const interval[2] = {m.records == 0 ? time : m.previousTime, time};
            m.timeBounds.putVar({m.records, 0}, {1, 2}, interval);
            m.previousTime = time;
            for (std::size_t s = 0; s < series.size(); ++s)
                m.seriesVars[s].putVar({m.records}, series[s]);
            m.file->sync();
            uint64_t sum = m.recordChecksum + checksumTerm(nameKey("time"), m.records, 0, valueBits(time));
            for (std::size_t i = 0; i < 2; ++i)
                sum += checksumTerm(nameKey("time_bnds"), m.records, i, valueBits(interval[i]));
            for (std::size_t s = 0; s < series.size(); ++s)
                sum += checksumTerm(nameKey(m.spec.series[s].name), m.records, 0, valueBits(series[s]));
            m.checksum += sum;
            ++m.records;
        } catch (...) {
            problem = currentExceptionMessage(
                "cannot write record " + std::to_string(m.records) + " to " + m.partialPath(), m.partialPath());
        }
    }
    throwIfAnyRankFailed(m.comm, problem, m.spec.path);
}

void OutputFile::close(std::string const& status) {
    Impl& m = *m_impl;
    if (m.closed) return;
    m.closed = true;
    std::string problem;
    if (m.rank == 0) {
        try {
            detail::ncCheck(nc_redef(m.file->getId()), "cannot update the attributes of " + m.partial);
            m.file->putAtt("strata_run_status", status);
            detail::ncCheck(nc_enddef(m.file->getId()), "cannot update the attributes of " + m.partial);
            m.file->close();
            m.file.reset();
            // Something that appeared at the path during the run (a directory, a FIFO) is not replaced: the
            // finished file stays under its temporary name, which the message gives.
            if (std::string const what = notReplaceable(m.spec.path); !what.empty())
                throw Error("'" + m.spec.path + "' " + what + " now; the finished output is " + m.partial);
            fs::rename(m.partialPath(), m.spec.path);
            m.writerLock.release();
        } catch (...) {
            problem = currentExceptionMessage("cannot finish " + m.partialPath(), m.partialPath());
        }
    }
    throwIfAnyRankFailed(m.comm, problem, m.spec.path);
}

} // namespace strata::app
