// The run driver's helpers (app/model/run_impl.hpp): output metadata from the catalogue, the wall-clock timers, the
// environment switches, paths and texts of messages, and the initial state's check.
#pragma once

#include <strata/app/config.hpp>
#include <strata/app/model/decomposition.hpp>
#include <strata/app/model/run.hpp>
#include <strata/app/model/variables.hpp>
#include <strata/core/error.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <ostream>
#include <string>

namespace strata::app::detail {

// An output variable's NetCDF metadata: from the variable catalogue (app/model/variables.hpp), or for a tendency
// (tendency_of_<var>[_due_to_<process>]) from findTendency.
struct OutputVariableInfo {
    std::string name, units, longName, standardName;
    bool onFaces;
    bool surface;            // one value per column
    std::string cellMethods; // empty: "time: point"
};

inline OutputVariableInfo variableInfo(std::string const& name) {
    if (auto const t = findTendency(name))
        return {t->name, t->units, t->longName, t->standardName, false, false, "time: mean"};
    VariableInfo v{};
    if (!findVariable(name, v) || !v.output)
        throw Error("unknown output variable '" + name + "'", "output.variables", "a name from docs/config.md");
    return {std::string(v.name),         std::string(v.units),        std::string(v.longName),
            std::string(v.standardName), v.where == Staggering::Face, v.where == Staggering::Column,
            std::string(v.cellMethods)};
}

// The run's wall-clock timers. `sync` waits for the backend's work (on a GPU kernels run after their launch returns):
// called before a part stops its clock, so each part counts its own device time, not the one that next waits.
class Timers {
public:
    using Clock = std::chrono::steady_clock;
    explicit Timers(std::function<void()> sync) : m_sync(std::move(sync)) {}
    template <class F>
    void time(std::string const& name, F&& f) {
        auto const t0 = Clock::now();
        f();
        m_sync();
        m_seconds[name] += std::chrono::duration<double>(Clock::now() - t0).count();
    }
    void print(std::ostream& log, double total) const {
        log << "timers:\n";
        for (auto const& [name, s] : m_seconds) {
            char line[160];
            std::snprintf(line, sizeof line, "  %-14s %10.3f s  %5.1f %%\n", name.c_str(), s,
                          total > 0 ? 100.0 * s / total : 0.0);
            log << line;
        }
        char line[160];
        std::snprintf(line, sizeof line, "  %-14s %10.3f s\n", "total", total);
        log << line;
    }

private:
    std::function<void()> m_sync;
    std::map<std::string, double> m_seconds;
};

// STRATA_PROFILE=1: the model's step timed per process, with the device synchronised before and after each part on a
// GPU (a few microseconds a part), printed at the end of the run.
inline bool profileRequested() {
    char const* v = std::getenv("STRATA_PROFILE");
    return v != nullptr && v[0] == '1';
}

// STRATA_CHECK_PROCESSES=1: every process call compared against the process's declarations (Stepper::checkWrites).
inline bool processChecksRequested() {
    char const* v = std::getenv("STRATA_CHECK_PROCESSES");
    return v != nullptr && v[0] == '1';
}

template <class Parts>
void printProfile(std::ostream& log, Parts const& parts, uint64_t steps) {
    log << "per process (STRATA_PROFILE=1), per step: ms, kernel launches, host <-> device copies\n";
    double const n = steps > 0 ? static_cast<double>(steps) : 1.0;
    double ms = 0, launches = 0, copies = 0;
    char line[200];
    for (auto const& part : parts) {
        std::snprintf(line, sizeof line, "  %-26s %9.3f ms %7.1f %7.1f\n", part.name.c_str(), 1e3 * part.seconds / n,
                      static_cast<double>(part.launches) / n, static_cast<double>(part.transfers) / n);
        log << line;
        ms += 1e3 * part.seconds / n;
        launches += static_cast<double>(part.launches) / n;
        copies += static_cast<double>(part.transfers) / n;
    }
    std::snprintf(line, sizeof line, "  %-26s %9.3f ms %7.1f %7.1f\n", "step", ms, launches, copies);
    log << line;
}

inline std::string outputPath(Config const& cfg, RunOptions const& options) {
    std::filesystem::path p(cfg.output.path);
    if (!options.outputDir.empty()) p = std::filesystem::path(options.outputDir) / p.filename();
    return p.string();
}

// "column 5 (lat 22.5, lon 45)" for a global column index.
inline std::string columnText(HorizontalCoords const& h, uint64_t column) {
    char text[128];
    if (h.latlon)
        std::snprintf(text, sizeof text, "column %llu (lat %.4g, lon %.4g)", static_cast<unsigned long long>(column),
                      h.lat[column / h.nlon], h.lon[column % h.nlon]);
    else
        std::snprintf(text, sizeof text, "column %llu (lat %.4g, lon %.4g)", static_cast<unsigned long long>(column),
                      h.lat[column], h.lon[column]);
    return text;
}

// The state the configuration starts from must pass the state check: otherwise the configuration is at fault (e.g.
// a model top so high that the pressure underflows), and the run is refused with exit 2 before any output exists.
template <class M>
void checkInitialState(M& model, HorizontalCoords const& horizontal) {
    auto const bad = model.checkState();
    if (!bad) return;
    auto const& zc = model.state().grid->centers();
    char text[400];
    std::snprintf(text, sizeof text, "the initial state has %s = %.6g in %s, level %u (z = %.6g m)",
                  bad->variable.c_str(), bad->value, columnText(horizontal, bad->column).c_str(), bad->level,
                  zc[bad->level]);
    throw ConfigError(text, "initial_conditions and grid.vertical", bad->expected);
}

// The larger of two budget residuals; a NaN in either is never hidden.
inline double worse(double a, double b) { return std::isnan(a) || std::isnan(b) ? std::nan("") : std::max(a, b); }

} // namespace strata::app::detail
