// Running a configured case: the time loop with output, diagnostics, progress and timers.
//
// runCase picks the backend named by the configuration (auto: cuda when compiled and a device is seen, else openmp,
// else serial), builds the model on this rank's columns, checks stability, and steps to the end, writing the output
// file every output interval (and at the start). Collective over the Context's ranks.
#pragma once

#include <strata/app/config.hpp>
#include <strata/app/io/file_lock.hpp>
#include <strata/app/io/restart.hpp>
#include <strata/core/comms.hpp>

#include <array>
#include <cstdint>
#include <iosfwd>
#include <string>

namespace strata::app {

struct RunOptions {
    std::string outputDir;   // replaces the directory of output.path when not empty
    std::string history;     // the command line, for the output's history attribute
    bool progress = true;    // print progress lines and the timer table (rank 0)
    std::string restartFrom; // continue from this restart file (strata run --restart FILE)
};

// The restart file of a configuration: restart.path, or <output path without .nc>.restart.nc (in --output's folder
// when given).
std::string restartPath(Config const& cfg, RunOptions const& options);

// Before the first step, and in `strata validate`: each file the run writes, the history and the restart, passes
// checkWriteTarget (app/io/output.hpp); the restart is not the history; no live run holds the restart path (its
// RunLock). Throws ConfigError (exit 2) on every rank. Collective (rank 0 looks).
void checkRunPaths(Config const& cfg, RunOptions const& options, core::Context const& comm);

// The restart path's RunLock, held by rank 0 for as long as the returned object lives: a second run naming the same
// restart path is refused (ConfigError naming the holder, on every rank). Collective.
RunLock lockRestartPath(std::string const& restartFile, core::Context const& comm);

// The history a continuation appends to. Where the restart's history may be: where its records were when the restart
// was written (the run's temporary file, left there by a kill), where they went when that run finished, and this run's
// output path (a run folder moved as a whole). The first that no live run writes and whose run id and checksum of its
// first records are the restart's (HistoryIdentity); none: RestartError (exit 2) saying what each file there is.
// Collective (rank 0 reads the files).
std::string historyToContinue(RestartMeta const& meta, std::string const& restartFile, std::string const& outputPath,
                              core::Context const& comm);

// A run stopped by a signal after finishing its step, writing a restart and closing the history; the CLI exits with
// 128 + signal.
class StopSignal : public Error {
public:
    StopSignal(int signal, std::string what) : Error(std::move(what)), m_signal(signal) {}
    int signal() const { return m_signal; }

private:
    int m_signal;
};

// The signals a run answers, each after the step it is in. SIGTERM, SIGINT, SIGHUP and SIGUSR2 stop it: a restart,
// then the history marked "stopped by signal N", then StopSignal. SIGUSR2 is how scripts/mpirun passes a stop on:
// Open MPI's mpirun forwards SIGUSR1 and SIGUSR2 to every rank, but answers a SIGTERM, SIGINT or SIGHUP of its own by
// killing the ranks. SIGUSR1 (a batch system's warning ahead of its time limit) asks for a restart, and the run goes
// on. The handlers only count: nothing a step does (a NetCDF write, an MPI call) is interrupted.
struct SignalsReceived {
    int stop = 0;          // the first stop signal; 0: none
    uint64_t restarts = 0; // SIGUSR1s
};
// Installs the handlers and forgets the signals of an earlier run in this process, then lets through the signals
// deferStopSignals held: a stop that came while the process started is answered after the run's first step.
void installSignalHandlers();
// Holds the run's signals (blocked: pending, not lost) from the start of the program until installSignalHandlers,
// so that a stop arriving while MPI starts or the configuration is read does not kill a rank by the signal's default
// action, leaving no restart. releaseStopSignals gives them their default action back (the other subcommands).
void deferStopSignals();
void releaseStopSignals();
// What any rank has received so far: every rank answers a signal after the same step. Collective.
SignalsReceived signalsReceived(core::Context const& comm);

struct RunSummary {
    uint64_t steps = 0;
    double wallSeconds = 0;
    std::string outputPath;  // the history file the run wrote
    std::string restartPath; // the restart file written at the end of the run
    std::string backend;
    // Budgets (app/model/budgets.hpp), indexed heat, water, tracer: the largest column residual of any output interval,
    // and over the whole run (from t = 0 to the end).
    std::array<double, 3> maxResidual{};
    std::array<double, 3> runResidual{};
    double finalMeanT = 0;
    double analyticError = 0;                        // heat equation (K) and Ekman (m/s) cases only (NaN otherwise)
    uint64_t rank0PeakBytes = 0, otherPeakBytes = 0; // peak resident memory (ru_maxrss) of rank 0 / the largest other
    uint64_t outputRecords = 0;
};

// The memory a run needs, per rank, before anything of its size is allocated. The model's arrays are measured on
// two small probe models of the same configuration (every array is per column, so bytes = fixed + columns x
// perColumn exactly); the output adds the staging of one record on every rank and, on rank 0, the receive buffer and
// transpose of one rank's share of a variable (never a global field), and with netCDF-4 HDF5's chunk cache (at most
// 4 MiB per output variable).
struct MemoryEstimate {
    uint64_t modelPerColumn = 0, modelFixed = 0; // bytes
    uint64_t localColumns = 0;                   // the most columns any rank holds
    uint64_t perRank = 0;                        // bytes on the busiest rank other than rank 0 (model + output staging)
    uint64_t rank0 = 0;                          // bytes on rank 0 (perRank + one rank's share of a record variable)
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

// A restart that cannot continue this configuration (a key that must not change differs, or it is past the run's end):
// ConfigError naming the key (exit 2). What may change: run length, output interval and path, backend, engine, rank
// count, restart settings, title.
void checkRestartCompatible(Config const& cfg, RestartMeta const& meta, std::string const& restartFile);

RunSummary runCase(Config const& config, core::Context const& comm, RunOptions const& options, std::ostream& log);

} // namespace strata::app
