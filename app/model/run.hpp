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

RunSummary runCase(Config const& config, core::Context const& comm, RunOptions const& options, std::ostream& log);

} // namespace strata::app
