// CF-1.8 NetCDF output, gathered to rank 0 (the I/O rank) and written with NetCDF-C++.
//
// OutputFile is collective: every rank constructs it, calls write() at each output step and close() at the end;
// rank 0 alone touches the file. The file is written under a temporary name unique to the run,
// "<path>.<pid>-<nonce>.partial" (created exclusively: two runs writing one path never share a file), and renamed to
// <path> by close(), so a file at <path> is always a finished one: a run that dies leaves the previous finished
// output in place, plus its .partial file with every record written so far (synced to disk after each record). Only
// a regular file is ever replaced: a directory, FIFO or device at <path> is refused when the file is created and
// again before the rename.
//
// Layout: dimensions time (unlimited), lev (centers), ilev (faces) and lat, lon (lat-lon grids) or ncol (a list of
// columns); coordinate variables with units, axis, positive = "up" for heights, standard_name; data variables
// (time, lev|ilev, lat, lon) or (time, lev|ilev, ncol), or surface fields (time, lat, lon) or (time, ncol), in float or
// double; scalar time series (time); global
// attributes Conventions = "CF-1.8", title, source, history, and strata_config (the resolved YAML). For the columns
// layout lat(ncol) and lon(ncol) are auxiliary coordinates (no axis attribute: CF-1.8 allows it on coordinate
// variables only) and every data variable says coordinates = "lat lon".
//
// Format: netCDF-4 (HDF5) by default, each data variable chunked as chunkShape() says and optionally compressed
// (deflate + shuffle); or NetCDF 64-bit offset (classic data model). Either way each record ends with a sync, so a
// .partial left by a crash between records reads back with every record written so far (the classic format also
// after a kill in the middle of a record: its header holds the count of the records synced). HDF5's file locking is
// turned off for the process (HDF5_USE_FILE_LOCKING=FALSE unless set) so that ncdump or xarray can read the history
// while the run writes it; two writers of one file cannot happen (the temporary name is exclusive to the run).
//
// Distribution: the ranks hold contiguous ranges of global columns in rank order (rank 0 from column 0, every column
// once). For each variable rank 0 writes its own columns, then receives each other rank's (MPI_Send/MPI_Recv, in rank
// order) and writes them: rank 0 holds one rank's share of one variable at a time, never a global field. Each share
// is transposed on rank 0 from column-major, level-contiguous to CF order (lev, lat, lon) with lon fastest, or
// (lev, ncol), and written as hyperslabs (on a lat-lon grid: a partial row of longitudes, whole rows, a partial row).
// Every rank passes the same spec.
//
// Identity: a new history gets a random run id (global attribute strata_run_id), which continuations keep, and the
// file keeps a checksum of its records (HistoryIdentity). A restart records both, so that a continuation appends to
// the history it was made with and to no other (readHistoryIdentity). While the run writes it, the history is locked
// (WriterLock, app/io/file_lock.hpp): a continuation never copies a file a live run still writes.
//
// Errors are strata::Error naming the file, and they are thrown on every rank: a bad spec or column distribution, a
// NetCDF or file-system error on rank 0 (its status is shared after the constructor, each write() and close()), or
// a data size mismatch on any rank (agreed before gathering). Destroying the object without close() (an exception
// unwinding) closes the NetCDF handle on rank 0 without renaming and without any MPI call.
#pragma once

#include <strata/core/comms.hpp>

#include <cstdint>
#include <iosfwd>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace strata::app {

struct HorizontalCoords {
    bool latlon = true;
    uint32_t nlat = 0, nlon = 0; // latlon: global column index = ilat * nlon + ilon
    uint32_t ncol = 0;           // columns
    std::vector<double> lat;     // latlon: nlat values; columns: ncol values
    std::vector<double> lon;     // latlon: nlon values; columns: ncol values
    uint64_t columns() const { return latlon ? uint64_t{nlat} * nlon : ncol; }
};

struct OutputVariable {
    std::string name, units, longName, standardName; // standardName empty when CF has none
    bool onFaces = false;                            // ilev instead of lev
    bool surface = false;                            // one value per column: (time, lat, lon) or (time, ncol)
    std::string cellMethods;                         // CF cell_methods; empty: "time: point"
};

struct TimeSeries {
    std::string name, units, longName;
    std::string cellMethods; // CF cell_methods; empty: "time: point"
};

// Which history a restart belongs to. The checksum covers the first `records` records: every value of every record
// variable (time, time_bnds, the data variables, the time series) as stored, bits and position, summed in an order
// that does not matter, so it is the same however the ranks wrote the records and however a reader reads them back.
struct HistoryIdentity {
    std::string runId; // strata_run_id: made by the run that created the history, kept by its continuations
    uint64_t records = 0;
    uint64_t checksum = 0;
};

struct OutputFileSpec {
    std::string path;
    std::string title, source, history, configYaml;
    std::string timeUnits; // "seconds since 2000-01-01 00:00:00"
    bool doublePrecision = false;
    bool netcdf4 = true;             // netCDF-4 (HDF5, chunked data variables); false: 64-bit offset (classic model)
    int deflate = 0;                 // netcdf4: zlib level 1-9 with the shuffle filter on every data variable; 0: none
    std::size_t expectedRecords = 1; // records the run will write: shapes the chunks (see chunkShape)
    HorizontalCoords horizontal;
    std::vector<double> lev, ilev; // heights (m) of centers and faces
    std::vector<OutputVariable> variables;
    std::vector<TimeSeries> series;
    // A continued run (a restart): the history to continue, already checked against the restart (the caller found
    // it with readHistoryIdentity). A new file takes its run id, history attribute lines and its first
    // `continued.records` records, which must still have `continued.checksum`; later records are dropped.
    std::string appendFrom;
    HistoryIdentity continued;
};

class OutputFile {
public:
    // This rank holds global columns [firstColumn, firstColumn + localColumns).
    OutputFile(core::Context const& ctx, OutputFileSpec spec, uint64_t firstColumn, uint32_t localColumns);
    ~OutputFile();
    OutputFile(OutputFile const&) = delete;
    OutputFile& operator=(OutputFile const&) = delete;

    // One record. data[v] holds this rank's columns of variable v, column after column, each lev.size() (or
    // ilev.size()) values from the bottom up. series: one value per TimeSeries (taken from rank 0). Single-precision
    // files round each value to float (out-of-range values become +-inf, NaN stays NaN).
    void write(double time, std::vector<std::span<double const>> const& data, std::vector<double> const& series);
    // Finishes the file and renames it into place; a second call does nothing, write() after it throws. `status` goes
    // into the global attribute strata_run_status ("running" until then).
    void close(std::string const& status = "completed");
    std::size_t records() const;      // records written (kept ones included)
    HistoryIdentity identity() const; // the run id, records() and their checksum; collective (from rank 0)
    std::string const& path() const;
    // The temporary file the records go to until close(): "<path>.<pid>-<nonce>.partial", created exclusively.
    std::string const& partialPath() const;

private:
    struct Impl;
    std::unique_ptr<Impl> m_impl;
};

// The chunk of a data variable (time, level, lat, lon), (time, level, ncol), or without the level for surface fields:
// one record, every level, and a share of the columns such that reading one column's time series (one chunk per
// record) and reading one record of the whole grid touch about as many chunks (columns / chunk columns = records,
// `expectedRecords`), kept between minChunkBytes and `targetBytes` of data (or the whole record when it is smaller).
// On a lat-lon grid the columns of a chunk are whole rows of longitudes, or a part of one row. One record per chunk:
// a record is written once and whole, so nothing waits in HDF5's chunk cache for later records, and the cache (4
// chunks per variable) does not grow with the grid or the ranks.
inline constexpr std::size_t minChunkBytes = std::size_t{64} << 10;
std::vector<std::size_t> chunkShape(OutputFileSpec const& spec, std::size_t levels, bool surface,
                                    std::size_t targetBytes = std::size_t{1} << 20);

// Before a run, for each file it will write (`key` names it in messages: output.path, restart.path): the path names a
// file (not "out/"), absent or a regular file (a directory, FIFO, socket or device is refused), not the configuration
// file; its nearest existing folder is a folder (not a file) the run may write in (not read-only); and its name with
// the temporary suffix ".<pid>-<nonce>.partial" fits the file system. Throws ConfigError naming the key.
void checkWriteTarget(std::string const& path, std::string const& configPath, std::string const& key);
inline void checkOutputTarget(std::string const& path, std::string const& configPath) {
    checkWriteTarget(path, configPath, "output.path");
}

// The identity of the history at `path`, its checksum over the first `records` records. Throws strata::Error when the
// file cannot be read as a history or holds fewer records.
HistoryIdentity readHistoryIdentity(std::string const& path, uint64_t records);

// `strata compare`: per variable (coordinates in their own section) the largest absolute difference |a - b|, the
// largest relative difference |a - b| / max(|a|, |b|) (0 when both are 0), where each is (indices, with the
// coordinate values of file a), and how many values are not bit-identical.
//
// A value passes when |a - b| <= atol + rtol * |b|, b from the second file (numpy.isclose); NaN passes against NaN
// only, +-inf against the same infinity only. rtol and atol hold for every variable unless `perVariable` names it
// (a budget residual of 1e-13 need not fail a comparison whose temperatures must agree to 1e-12). With bfb every
// value must have the same bits (a NaN equals a NaN with the same bits), whatever the tolerances say. Variables in
// one file only, different dimensions (names, sizes, or record counts) or, with bfb, different types fail.
// With commonTimes, histories of different lengths are compared on the records whose time both hold (a run and its
// longer continuation): the record dimension's sizes may differ, record variables are compared record by record at
// those times, and no common time at all fails. Global attributes are not compared; a differing strata_config is
// noted.
struct Tolerance {
    std::optional<double> rtol, atol; // unset: the comparison's default
};
struct CompareOptions {
    double rtol = 0.0;
    double atol = 0.0;
    bool bfb = false;                               // identical bits required (NaNs compare equal to themselves)
    std::map<std::string, Tolerance> perVariable{}; // by variable name; overrides rtol and atol
    bool commonTimes = false;
};
// One --rtol or --atol argument of `strata compare` (`which` is "rtol" or "atol"): "1e-12" for every variable, or
// "T=1e-12" for one. Throws strata::Error naming the argument, the value and what was expected.
void addToleranceArgument(CompareOptions& options, std::string const& which, std::string const& value);
// A tolerance file (--tolerances FILE): YAML with optional `rtol` and `atol` for every variable and a map
// `variables: {T: {rtol: 1e-10}, q: {atol: 1e-15}}`. Throws strata::Error naming the file, the key and the value.
void readToleranceFile(CompareOptions& options, std::string const& path);
// 0 within tolerance, 1 not (or variables/dimensions differ), 2 when a file cannot be read or a tolerance names a
// variable that neither file has. Writes a report whose lines fit 100 columns: a line per file, the criterion, a
// table (variable, status, max abs diff, max rel diff, n differing, n failing) with where each largest difference
// is on an indented line below its variable, and a last line "compare: N variables, M different".
int compareFiles(std::string const& a, std::string const& b, CompareOptions const& options, std::ostream& report);

} // namespace strata::app
