// The time loop, for one backend (instantiated by run_serial.cpp, run_openmp.cpp and run_threads.cpp for the CPU
// backends and by run_cuda.cu for Cuda).
#pragma once

#include <strata/app/io/output.hpp>
#include <strata/app/model/decomposition.hpp>
#include <strata/app/model/model.hpp>
#include <strata/app/model/run.hpp>
#include <strata/app/version.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <sys/resource.h>
#include <vector>

namespace strata::app {

namespace detail {

struct VariableInfo {
    char const* name;
    char const* units;
    char const* longName;
    char const* standardName;
    bool onFaces;
    bool surface = false;         // one value per column
    char const* cellMethods = ""; // empty: "time: point"
};

inline constexpr VariableInfo variableTable[] = {
    {"T", "K", "air temperature", "air_temperature", false},
    {"theta", "K", "potential temperature", "air_potential_temperature", false},
    {"u", "m s-1", "eastward wind", "eastward_wind", false},
    {"v", "m s-1", "northward wind", "northward_wind", false},
    {"q", "kg kg-1", "specific humidity", "specific_humidity", false},
    // q, qc and qr are mass fractions (kg per kg of moist air): the water budget sums rho0 (q + qc + qr).
    {"qc", "kg kg-1", "cloud liquid water mass fraction", "mass_fraction_of_cloud_liquid_water_in_air", false},
    {"qr", "kg kg-1", "rain water mass fraction", "mass_fraction_of_rain_in_air", false},
    {"tracer", "1", "passive tracer mixing ratio", "", false},
    {"p", "Pa", "air pressure at cell centers", "air_pressure", false},
    {"p_face", "Pa", "air pressure at cell faces", "air_pressure", true},
    // One K mixes heat, moisture, the tracer and momentum alike; CF names it by heat.
    {"K", "m2 s-1", "eddy diffusivity of heat, moisture, tracer and momentum", "atmosphere_heat_diffusivity", true},
    // The processes that make w and the precipitation say what they are in a case (Process::outputLongName).
    {"w", "m s-1", "prescribed vertical velocity", "upward_air_velocity", true},
    {"precipitation_flux", "kg m-2 s-1", "precipitation, mean since the previous output", "precipitation_flux", false,
     true, "time: mean"},
    {"surface_upward_sensible_heat_flux", "W m-2", "sensible heat flux from the sea, mean since the previous output",
     "surface_upward_sensible_heat_flux", false, true, "time: mean"},
    {"surface_upward_latent_heat_flux", "W m-2", "latent heat flux from the sea, mean since the previous output",
     "surface_upward_latent_heat_flux", false, true, "time: mean"},
    {"water_evaporation_flux", "kg m-2 s-1", "evaporation from the sea, mean since the previous output",
     "water_evaporation_flux", false, true, "time: mean"},
};

inline VariableInfo const& variableInfo(std::string const& name) {
    for (auto const& v : variableTable)
        if (name == v.name) return v;
    throw Error("unknown output variable '" + name + "'", "output.variables", "a name from docs/config.md");
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

} // namespace detail

template <class Backend>
RunSummary runWith(Backend const& backend, std::string const& backendName, Config const& cfg, core::Context const& comm,
                   RunOptions const& options, std::ostream& log) {
    using Clock = std::chrono::steady_clock;
    auto const wallStart = Clock::now();
    bool const talk = options.progress && comm.isRoot();
    HorizontalCoords const horizontal = makeHorizontal(cfg.horizontal);
    std::string const path = detail::outputPath(cfg, options);
    std::string const restartFile = restartPath(cfg, options);
    checkRunPaths(cfg, options, comm); // before anything runs: the files it writes can be written, and are its own
    Decomposition const decomp = Decomposition::balanced(horizontal.columns(), comm.rank(), comm.size());
    Model<Backend> model(cfg, backend, comm, horizontal, decomp);
    model.checkStability(); // before any output exists
    detail::checkInitialState(model, horizontal);
    std::optional<RestartMeta> resumed;
    if (!options.restartFrom.empty()) {
        resumed = readRestartMeta(comm, options.restartFrom); // rank 0 checks the seal, every rank agrees
        checkRestartCompatible(cfg, *resumed, options.restartFrom);
        auto const entries = model.restartEntries();
        readRestart(comm, options.restartFrom, entries, decomp.first, decomp.local, horizontal.columns());
    }

    OutputFileSpec spec;
    spec.path = path;
    spec.title = cfg.title;
    spec.source = std::string("Strata ") + version + " (git " + gitHash + "), backend " + backendName;
    spec.history = options.history;
    spec.configYaml = cfg.resolvedYaml;
    spec.timeUnits = "seconds since " + cfg.time.start;
    spec.doublePrecision = cfg.output.precision == Precision::Double;
    spec.netcdf4 = cfg.output.format == OutputFormat::Netcdf4;
    spec.deflate = static_cast<int>(cfg.output.deflate);
    spec.expectedRecords = cfg.totalSteps() / cfg.outputEvery() + 2; // the initial state, each interval, a last one
    spec.horizontal = horizontal;
    spec.lev = model.state().grid->centers();
    spec.ilev = model.state().grid->faces();
    for (auto const& name : cfg.output.variables) {
        auto const& v = detail::variableInfo(name);
        std::string const caseLongName = model.outputLongName(name);
        spec.variables.push_back({v.name, v.units, caseLongName.empty() ? v.longName : caseLongName, v.standardName,
                                  v.onFaces, v.surface, v.cellMethods});
    }
    // cell_methods say what each series is: global means at an instant, or maxima over the columns and the interval.
    spec.series = {
        {"T_global_mean", "K", "global mean air temperature (mass and area weighted)", "area: mean time: point"},
        {"heat_content", "J m-2", "column heat content cp * sum(rho0 theta dz), global mean", "area: mean time: point"},
        {"water_content", "kg m-2", "column water content sum(rho0 q dz), global mean", "area: mean time: point"},
        {"tracer_content", "kg m-2", "column tracer content sum(rho0 tracer dz), global mean",
         "area: mean time: point"}};
    for (char const* b : budgetNames)
        spec.series.push_back({std::string(b) + "_budget_residual", "1",
                               std::string("largest column ") + b +
                                   " budget residual since the previous output, relative to what crossed, was added "
                                   "or moved (docs/model.md)",
                               "area: maximum time: maximum"});
    bool const analytic = model.hasAnalyticSolution();
    bool const ekman = model.analyticCase() == Model<Backend>::Analytic::Ekman;
    if (analytic && !ekman)
        spec.series.push_back(
            {"T_error_vs_analytic", "K", "max |T - exact solution of the heat equation|", "area: maximum time: point"});
    if (ekman)
        spec.series.push_back(
            {"wind_error_vs_analytic", "m s-1", "max |u, v - the steady Ekman spiral|", "area: maximum time: point"});
    if (resumed) { // the history the restart was made with, and no other
        spec.appendFrom = historyToContinue(*resumed, options.restartFrom, spec.path, comm);
        spec.continued = {resumed->historyRunId, resumed->historyRecords, resumed->historyChecksum};
    }
    RunLock const restartLock = lockRestartPath(restartFile, comm); // the first file this run creates
    if (talk && !restartLock.held())
        log << "strata: note: the file system of " << restartFile
            << " has no file locks: nothing keeps another run from writing the same restart\n";
    OutputFile out(comm, spec, decomp.first, decomp.local);

    detail::Timers timers([&backend] { core::synchronize(backend); });
    model.syncParts(detail::profileRequested());
    RunSummary summary;
    summary.backend = backendName;
    summary.outputPath = spec.path;
    summary.restartPath = restartFile;
    uint64_t const total = cfg.totalSteps();
    uint64_t const every = cfg.outputEvery();
    uint64_t const progressEvery = std::max<uint64_t>(1, total / 10);

    // Surface fields (means over each output interval): their global means, printed, and over the whole run.
    std::vector<double> runSurfaceMean(cfg.output.variables.size(), 0.0);
    double lastOutput = 0;
    auto worse = [](double a, double b) { return std::isnan(a) || std::isnan(b) ? std::nan("") : std::max(a, b); };

    auto writeRecord = [&] {
        GlobalDiagnostics d;
        timers.time("diagnostics", [&] { d = model.diagnostics(); });
        for (int b = 0; b < budgetCount; ++b) {
            summary.maxResidual[b] = worse(summary.maxResidual[b], d.residual[b]); // a NaN is never hidden
            summary.runResidual[b] = d.runResidual[b];
        }
        std::string surfaceLine;
        summary.finalMeanT = d.meanT;
        summary.analyticError = d.analyticError;
        timers.time("output", [&] {
            std::vector<std::vector<double>> values;
            for (auto const& name : cfg.output.variables)
                values.push_back(model.outputValues(name));
            double const interval = model.time() - lastOutput;
            for (std::size_t i = 0; i < values.size(); ++i) {
                if (!detail::variableInfo(cfg.output.variables[i]).surface || interval <= 0) continue;
                double const mean = model.globalMean(values[i]);
                runSurfaceMean[i] += mean * interval;
                char part[160];
                std::snprintf(part, sizeof part, "  %s %.4g %s", cfg.output.variables[i].c_str(), mean,
                              detail::variableInfo(cfg.output.variables[i]).units);
                surfaceLine += part;
            }
            lastOutput = model.time();
            std::vector<std::span<double const>> spans(values.begin(), values.end());
            std::vector<double> series{d.meanT};
            series.insert(series.end(), d.content.begin(), d.content.end());
            series.insert(series.end(), d.residual.begin(), d.residual.end());
            if (analytic) series.push_back(d.analyticError);
            out.write(model.time(), spans, series);
        });
        if (talk) {
            char line[256];
            std::snprintf(
                line, sizeof line,
                "output  t = %9.4f d  mean T = %.6f K  budget residuals: heat %.2e  water %.2e  tracer %.2e\n",
                model.time() / constants::day, d.meanT, d.residual[HeatBudget], d.residual[WaterBudget],
                d.residual[TracerBudget]);
            log << line;
            if (!surfaceLine.empty()) log << "        global means since the previous output:" << surfaceLine << "\n";
            if (analytic) {
                std::snprintf(line, sizeof line,
                              ekman ? "        max |u, v - Ekman spiral| = %.3e m/s\n"
                                    : "        max |T - analytic| = %.3e K\n",
                              d.analyticError);
                log << line;
            }
            log << std::flush;
        }
    };

    if (talk) {
        log << "strata: " << cfg.title << ": " << horizontal.columns() << " columns x " << cfg.vertical.levels
            << " levels on " << comm.size() << " rank(s), backend " << backendName << ", " << total << " steps of "
            << cfg.time.dt << " s\n";
    }
    // After every step (and before the first): a NaN, an Inf or a value out of its physical range stops the run. The
    // state that failed is written as the last record, the file is finished saying why, and the run ends with exit 1.
    auto checkState = [&] {
        std::optional<typename Model<Backend>::StateViolation> bad;
        timers.time("state check", [&] { bad = model.checkState(); });
        if (!bad) return;
        auto const& zc = model.state().grid->centers();
        char text[512];
        std::snprintf(text, sizeof text, "after step %llu (t = %.6g d): %s = %.6g in %s, level %u (z = %.6g m)",
                      static_cast<unsigned long long>(model.stepCount()), model.time() / constants::day,
                      bad->variable.c_str(), bad->value, detail::columnText(horizontal, bad->column).c_str(),
                      bad->level, zc[bad->level]);
        writeRecord();
        timers.time("output", [&] {
            out.close("stopped by the state check " + std::string(text) + "; expected " + bad->expected);
        });
        throw StateError("state check failed " + std::string(text) + "; that state is the last record of " + spec.path,
                         "the model state", bad->expected);
    };

    // A restart file: the model state, and where the history is and how many records it holds.
    auto writeRestartFile = [&](std::string const& historyPath) {
        RestartMeta meta;
        meta.step = model.stepCount();
        meta.time = model.time();
        meta.lastOutput = lastOutput;
        HistoryIdentity const history = out.identity();
        meta.historyRecords = history.records;
        meta.historyRunId = history.runId;
        meta.historyChecksum = history.checksum;
        meta.historyPath = historyPath;
        meta.historyFinalPath = spec.path;
        meta.configYaml = cfg.resolvedYaml;
        meta.version = version;
        meta.gitHash = gitHash;
        timers.time("restart", [&] {
            writeRestart(comm, restartFile, meta, model.restartEntries(), decomp.first, decomp.local,
                         horizontal.columns());
        });
        if (talk)
            log << "restart " << restartFile << " at step " << meta.step << " (t = " << meta.time / constants::day
                << " d), history " << historyPath << " (" << meta.historyRecords << " records)\n"
                << std::flush;
    };
    uint64_t const restartEvery = cfg.restartEvery();
    uint64_t restartsAnswered = 0; // SIGUSR1s a restart was written for

    uint64_t first = 1;
    if (resumed) {
        first = model.stepCount() + 1;
        lastOutput = resumed->lastOutput;
        if (talk)
            log << "strata: continuing from " << options.restartFrom << " at step " << model.stepCount()
                << " (t = " << model.time() / constants::day << " d)\n";
    } else {
        writeRecord();
    }
    auto const loopStart = Clock::now();
    for (uint64_t s = first; s <= total; ++s) {
        timers.time("physics", [&] { model.step(); });
        checkState();
        if (s % every == 0) writeRecord();
        bool const restartDue = restartEvery > 0 && s % restartEvery == 0 && s < total;
        if (restartDue) writeRestartFile(out.partialPath());
        // Signals (installSignalHandlers) after the last step: the run's own end follows, with its restart.
        SignalsReceived const signals = s < total ? signalsReceived(comm) : SignalsReceived{};
        if (signals.stop != 0 || signals.restarts > restartsAnswered) {
            restartsAnswered = signals.restarts;
            if (!restartDue) writeRestartFile(out.partialPath());
        }
        if (signals.stop != 0) {
            // The restart is written before the history says "stopped": a SIGKILL in between (a grace that ran out)
            // leaves a restart whose history is the temporary file, never a stopped history without its restart.
            std::string const why = "stopped by signal " + std::to_string(signals.stop) + " after step " +
                                    std::to_string(s) + " of " + std::to_string(total);
            timers.time("output", [&] { out.close(why); });
            throw StopSignal(signals.stop, why + "; history " + spec.path + ", restart " + restartFile +
                                               " (continue with: strata run " +
                                               (cfg.sourcePath.empty() ? "CONFIG" : cfg.sourcePath) + " --restart " +
                                               restartFile + ")");
        }
        if (talk && (s % progressEvery == 0 || s == total)) {
            double const wall = std::chrono::duration<double>(Clock::now() - loopStart).count();
            double const rate = wall > 0 ? model.time() / wall : 0.0; // simulated days per wall-clock day
            double const eta = wall / static_cast<double>(s - first + 1) * static_cast<double>(total - s);
            char line[256];
            std::snprintf(line, sizeof line,
                          "step %6llu/%llu  t = %9.4f d  %.3g simulated days per wall-clock day  ETA %.1f s\n",
                          static_cast<unsigned long long>(s), static_cast<unsigned long long>(total),
                          model.time() / constants::day, rate, eta);
            log << line << std::flush;
        }
    }
    // The end of the run: a restart a longer run can continue from, written before the final state's record when that
    // falls off the output interval (the record takes the interval means, which the continued run must still have;
    // it keeps the records before it and writes that one again, on the interval). The records are still in the
    // temporary file: a kill before the rename leaves them there, and the restart says so.
    writeRestartFile(out.partialPath());
    if (total % every != 0 && first <= total) writeRecord(); // the final state, also off the output interval
    timers.time("output", [&] { out.close(); });
    summary.steps = model.stepCount();
    summary.wallSeconds = std::chrono::duration<double>(Clock::now() - wallStart).count();
    // Peak resident memory (ru_maxrss) of rank 0 and of the largest other rank: what a run really took.
    rusage usage{};
    ::getrusage(RUSAGE_SELF, &usage);
    summary.rank0PeakBytes = static_cast<uint64_t>(usage.ru_maxrss) * 1024;
    double const others = comm.max(comm.isRoot() ? 0.0 : static_cast<double>(usage.ru_maxrss) * 1024.0);
    summary.otherPeakBytes = static_cast<uint64_t>(others);
    summary.outputRecords = out.records();
    if (talk) {
        char line[256];
        std::snprintf(line, sizeof line,
                      "budgets over the whole run (largest column residual): heat %.2e  water %.2e  "
                      "tracer %.2e\n",
                      summary.runResidual[HeatBudget], summary.runResidual[WaterBudget],
                      summary.runResidual[TracerBudget]);
        log << line;
        for (std::size_t i = 0; i < runSurfaceMean.size(); ++i) {
            auto const& info = detail::variableInfo(cfg.output.variables[i]);
            if (!info.surface || model.time() <= 0) continue;
            std::snprintf(line, sizeof line, "over the whole run, global mean %s = %.7g %s%s\n", info.name,
                          runSurfaceMean[i] / model.time(), info.units,
                          std::string(info.units) == "kg m-2 s-1"
                              ? (" (" + std::to_string(runSurfaceMean[i] / model.time() * 86400.0) + " mm/day)").c_str()
                              : "");
            log << line;
        }
        log << "peak memory (max RSS): rank 0 " << bytesText(summary.rank0PeakBytes);
        if (comm.size() > 1) log << ", largest other rank " << bytesText(summary.otherPeakBytes);
        log << "; " << summary.outputRecords << " output records\n";
        timers.print(log, summary.wallSeconds);
        if (detail::profileRequested()) detail::printProfile(log, model.profile(), summary.steps - (first - 1));
        log << "strata: wrote " << summary.outputPath << " and the restart " << restartFile << "\n";
    }
    return summary;
}

// The CPU backends' loops are compiled once each, in run_serial.cpp, run_openmp.cpp and run_threads.cpp (three
// translation units a parallel build compiles side by side), not in every file that includes this header.
extern template RunSummary runWith<core::Serial>(core::Serial const&, std::string const&, Config const&,
                                                 core::Context const&, RunOptions const&, std::ostream&);
extern template RunSummary runWith<core::OpenMP>(core::OpenMP const&, std::string const&, Config const&,
                                                 core::Context const&, RunOptions const&, std::ostream&);
extern template RunSummary runWith<core::Threads>(core::Threads const&, std::string const&, Config const&,
                                                  core::Context const&, RunOptions const&, std::ostream&);

} // namespace strata::app
