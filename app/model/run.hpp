// Running a configured case: the time loop with output, diagnostics, progress and timers.
//
// runCase picks the backend named by the configuration (auto: cuda when compiled and a device is seen, else openmp,
// else serial), builds the model on this rank's columns, checks stability, and steps to the end, writing the output
// file every output interval (and at the start). Collective over the Context's ranks.
#pragma once

#include "app/config.hpp"
#include "core/comms.hpp"

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
    double maxHeatResidual = 0; // largest relative column budget residual over the run
    double maxTracerResidual = 0;
    double finalMeanT = 0;
    double analyticError = 0; // heat-equation case only (NaN otherwise)
};

RunSummary runCase(Config const& config, core::Context const& comm, RunOptions const& options, std::ostream& log);

} // namespace strata::app
