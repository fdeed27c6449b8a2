// Restart files: the whole state of a run, to continue it bit for bit, on any number of ranks.
//
// The model lists what it holds as RestartEntry values (prognostic fields, per-column budget ledgers and running
// means, scalars such as the time); writeRestart stores them in one NetCDF file (64-bit offset), every array in global
// column order, and readRestart gives each rank its own columns back, so a restart made on 2 ranks continues on 3.
//
// Writing: rank 0 defines the file under a temporary name unique to the call, then the ranks write their columns one
// after the other (each opens the file, writes its hyperslab and closes it: no rank ever holds another rank's columns,
// so rank 0's memory does not grow with the grid), rank 0 syncs the file to disk and renames it into place. A crash
// at any point leaves the previous restart at the path untouched. Before the sync rank 0 seals the finished file
// (app/io/seal.hpp: its length and SHA-256 appended). Collective; errors are thrown on every rank.
//
// Reading: the seal is checked with plain reads before libnetcdf parses any byte, then every rank opens the file
// read-only and reads its hyperslab. A file that is missing, cut short, changed in any byte (an edited attribute, a
// flipped bit), not a Strata restart, or holds a different number of columns or levels is a RestartError naming it.
#pragma once

#include <strata/core/comms.hpp>
#include <strata/core/error.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace strata::app {

class RestartError : public Error {
public:
    using Error::Error;
};

// One array of the state: `perColumn` values for each local column (1 for a per-column value, the levels for a
// field), or a scalar (perColumn = 0: the same value on every rank, stored once).
struct RestartEntry {
    std::string name;
    uint32_t perColumn = 1;
    std::function<std::vector<double>()> get;            // this rank's values, column after column
    std::function<void(std::vector<double> const&)> set; // the same layout back
};

// What a restart says about itself (global attributes).
struct RestartMeta {
    uint64_t step = 0;
    double time = 0;       // s since the start
    double lastOutput = 0; // s: time of the last history record
    uint64_t historyRecords = 0;
    std::string historyPath;      // where the history's records were: the run's temporary file, or the finished file
    std::string historyFinalPath; // where the history goes when the run finishes (its output path)
    // The history's identity (HistoryIdentity, app/io/output.hpp): its strata_run_id and the checksum of its first
    // historyRecords records. Empty and 0 in a restart written before Strata recorded them.
    std::string historyRunId;
    uint64_t historyChecksum = 0;
    std::string configYaml; // the resolved configuration of the run that wrote it
    // fileDigest (app/io/sounding.hpp) of its initial_conditions.sounding; empty: none (or a restart from before)
    std::string soundingDigest;
    std::string version, gitHash;
};

void writeRestart(core::Context const& comm, std::string const& path, RestartMeta const& meta,
                  std::vector<RestartEntry> const& entries, uint64_t firstColumn, uint32_t localColumns,
                  uint64_t globalColumns);

// Any rank, alone: the attributes, after checking the seal (the whole file is read) and that it is a Strata restart.
RestartMeta readRestartMeta(std::string const& path);
// Collective, the same: rank 0 alone reads the whole file to check the seal, where every rank calling the one above
// would read it once each.
RestartMeta readRestartMeta(core::Context const& comm, std::string const& path);

// Collective: every rank reads its own columns; a problem on any rank is a RestartError on every rank.
void readRestart(core::Context const& comm, std::string const& path, std::vector<RestartEntry> const& entries,
                 uint64_t firstColumn, uint32_t localColumns, uint64_t globalColumns);

} // namespace strata::app
