// Running a configured case: the time loop with output, diagnostics, progress and timers.
//
// runCase picks the backend named by the configuration (auto: cuda when compiled and a device is seen, else openmp,
// else serial), builds the model on this rank's columns, checks stability, and steps to the end, writing the output
// file every output interval (and at the start). Collective over the Context's ranks.
#pragma once

#include "app/config.hpp"
#include "core/comms.hpp"

#include <array>
#include <cstdint>
#include <iosfwd>
#include <string>

namespace strata::app {

struct RunOptions {
    std::string outputDir; // replaces the directory of output.path when not empty
    std::string history;   // the command line, for the output's history attribute
    bool progress = true;  // print progress lines and the timer table (rank 0)
};

struct RunSummary {
    uint64_t steps = 0;
    double wallSeconds = 0;
    std::string outputPath;
    std::string backend;
    // Budgets (app/model/budgets.hpp), indexed heat, water, tracer: the largest column residual of any output interval,
    // and over the whole run (from t = 0 to the end).
    std::array<double, 3> maxResidual{};
    std::array<double, 3> runResidual{};
    double finalMeanT = 0;
    double analyticError = 0; // heat equation (K) and Ekman (m/s) cases only (NaN otherwise)
};

// The memory a run needs, per rank, before anything of its size is allocated. The model's arrays are measured on
// two small probe models of the same configuration (every array is per column, so bytes = fixed + columns x
// perColumn exactly); the output adds the staging of one record on every rank and, on rank 0, the gather and
// transpose of the largest variable over the global grid.
struct MemoryEstimate {
    uint64_t modelPerColumn = 0, modelFixed = 0; // bytes
    uint64_t localColumns = 0;                   // the most columns any rank holds
    uint64_t perRank = 0;                        // bytes on the busiest rank other than rank 0 (model + output staging)
    uint64_t rank0 = 0;                          // bytes on rank 0 (perRank + the gathered record)
    uint64_t available = 0;    // bytes this rank may use: MemAvailable / ranks on the node, or the address-space limit
    std::string availableFrom; // where `available` comes from
};
MemoryEstimate estimateMemory(Config const& config, core::Context const& comm);
// "1.23 GiB"
std::string bytesText(uint64_t bytes);
// Throws ConfigError (on every rank) with the figures when any rank needs more than it has. Collective.
void checkMemory(MemoryEstimate const& m, core::Context const& comm);

// What `strata validate` checks beyond the configuration itself, as a run would before its first step: the memory,
// the output path, the stability limits of every process and the initial state. Throws ConfigError or StabilityError
// (exit 2). Collective.
void checkRunnable(Config const& config, core::Context const& comm);

// A run stopped by the state check (a NaN, an Inf or a value out of its physical range); the CLI exits with 1.
class StateError : public Error {
public:
    using Error::Error;
};

RunSummary runCase(Config const& config, core::Context const& comm, RunOptions const& options, std::ostream& log);

} // namespace strata::app
