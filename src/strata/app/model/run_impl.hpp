// The time loop, for one backend (instantiated by its run_<backend> file: app/model/instantiate.hpp); its helpers are
// in app/model/detail/run_support.hpp.
#pragma once

#include <strata/app/io/output.hpp>
#include <strata/app/model/decomposition.hpp>
#include <strata/app/model/detail/run_support.hpp>
#include <strata/app/model/instantiate.hpp>
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

// One run of a configuration on one backend: what it sets up, its time loop and its end, in the order runWith calls
// them. Collective: every rank constructs it and calls each step of it.
template <class Backend>
class Run {
public:
    using Clock = std::chrono::steady_clock;

    // Everything a run checks and opens before its first step, in this order (the members are declared in it): the
    // files it writes can be written and are its own, the decomposition, the model (its stability limits and initial
    // state), the restart a continuation reads, the restart path's lock and the history. A refusal leaves no output.
    Run(Backend const& backend, std::string const& backendName, Config const& cfg, core::Context const& comm,
        RunOptions const& options, std::ostream& log)
        : m_cfg(cfg), m_comm(comm), m_options(options), m_log(log), m_talk(options.progress && comm.isRoot()),
          m_horizontal(makeHorizontal(cfg.horizontal)), m_path(outputPath(cfg, options)),
          m_restartFile(restartPath(cfg, options)), m_decomp(decompose()),
          m_model(cfg, backend, comm, m_horizontal, m_decomp), m_resumed(checkModelAndReadRestart()),
          m_out(openHistory(backendName)), m_timers([&backend] { core::synchronize(backend); }),
          m_total(cfg.totalSteps()), m_every(cfg.outputEvery()), m_restartEvery(cfg.restartEvery()),
          m_progressEvery(std::max<uint64_t>(1, m_total / 10)), m_runSurfaceMean(cfg.output.variables.size(), 0.0) {
        m_model.syncParts(profileRequested());
        m_model.checkWrites(processChecksRequested());
        m_summary.backend = backendName;
        m_summary.outputPath = m_path;
        m_summary.restartPath = m_restartFile;
    }

    // The run announced, then the initial state's record, or where a continuation takes up.
    void start() {
        if (m_talk) {
            m_log << "strata: " << m_cfg.title << ": " << m_horizontal.columns() << " columns x "
                  << m_cfg.vertical.cells() << " levels on " << m_comm.size() << " rank(s), backend "
                  << m_summary.backend << ", " << m_total << " steps of " << m_cfg.time.dt << " s\n";
        }
        if (!m_resumed) {
            writeRecord();
            return;
        }
        m_first = m_model.stepCount() + 1;
        m_lastOutput = m_resumed->lastOutput;
        if (m_talk)
            m_log << "strata: continuing from " << m_options.restartFrom << " at step " << m_model.stepCount()
                  << " (t = " << m_model.time() / constants::day << " d)\n";
    }

    // The time loop: each step, its state check, a record every output interval, a restart every restart interval
    // and when a signal asks for one, a stop when a signal asks for it, and the progress lines.
    void loop() {
        m_loopStart = Clock::now();
        for (uint64_t s = m_first; s <= m_total; ++s) {
            m_timers.time("physics", [&] { m_model.step(); });
            checkState();
            if (s % m_every == 0) writeRecord();
            bool const restartDue = m_restartEvery > 0 && s % m_restartEvery == 0 && s < m_total;
            if (restartDue) writeRestartFile(m_out.partialPath());
            answerSignals(s, restartDue);
            if (m_talk && (s % m_progressEvery == 0 || s == m_total)) logProgress(s);
        }
    }

    // The end of the run: a restart a longer run can continue from, written before the final state's record when that
    // falls off the output interval (the record takes the interval means, which the continued run must still have;
    // it keeps the records before it and writes that one again, on the interval). The records are still in the
    // temporary file: a kill before the rename leaves them there, and the restart says so.
    RunSummary finish() {
        writeRestartFile(m_out.partialPath());
        if (m_total % m_every != 0 && m_first <= m_total) writeRecord(); // the final state, also off the interval
        m_timers.time("output", [&] { m_out.close(); });
        m_summary.steps = m_model.stepCount();
        m_summary.wallSeconds = std::chrono::duration<double>(Clock::now() - m_wallStart).count();
        measurePeakMemory();
        m_summary.outputRecords = m_out.records();
        if (m_talk) logSummary();
        return m_summary;
    }

private:
    // Before anything runs: the files the run writes can be written, and are its own.
    Decomposition decompose() const {
        checkRunPaths(m_cfg, m_options, m_comm);
        return Decomposition::balanced(m_horizontal.columns(), m_comm.rank(), m_comm.size());
    }

    // The model's own checks, before any output exists; then, for a continuation, the restart it starts from.
    std::optional<RestartMeta> checkModelAndReadRestart() {
        m_model.checkStability();
        checkInitialState(m_model, m_horizontal);
        if (m_options.restartFrom.empty()) return std::nullopt;
        RestartMeta meta = readRestartMeta(m_comm, m_options.restartFrom); // rank 0 checks the seal, every rank agrees
        checkRestartCompatible(m_cfg, meta, m_options.restartFrom);
        auto const entries = m_model.restartEntries();
        readRestart(m_comm, m_options.restartFrom, entries, m_decomp.first, m_decomp.local, m_horizontal.columns());
        return meta;
    }

    // The restart path locked (the first file this run creates), then the history, new or continued.
    OutputFile openHistory(std::string const& backendName) {
        OutputFileSpec spec = historySpec(backendName);
        m_restartLock = lockRestartPath(m_restartFile, m_comm);
        if (m_talk && !m_restartLock.held())
            m_log << "strata: note: the file system of " << m_restartFile
                  << " has no file locks: nothing keeps another run from writing the same restart\n";
        return OutputFile(m_comm, std::move(spec), m_decomp.first, m_decomp.local);
    }

    OutputFileSpec historySpec(std::string const& backendName) const {
        OutputFileSpec spec;
        spec.path = m_path;
        spec.title = m_cfg.title;
        spec.source = std::string("Strata ") + version + " (git " + gitHash + "), backend " + backendName;
        spec.history = m_options.history;
        spec.configYaml = m_cfg.resolvedYaml;
        spec.timeUnits = "seconds since " + m_cfg.time.start;
        spec.doublePrecision = m_cfg.output.precision == Precision::Double;
        spec.netcdf4 = m_cfg.output.format == OutputFormat::Netcdf4;
        spec.deflate = static_cast<int>(m_cfg.output.deflate);
        spec.expectedRecords = m_cfg.totalSteps() / m_cfg.outputEvery() + 2; // the initial state, each interval, a last
        spec.horizontal = m_horizontal;
        spec.lev = m_model.state().grid->centers();
        spec.ilev = m_model.state().grid->faces();
        for (auto const& name : m_cfg.output.variables) {
            auto const& v = variableInfo(name);
            std::string const caseLongName = m_model.outputLongName(name);
            spec.variables.push_back({v.name, v.units, caseLongName.empty() ? v.longName : caseLongName, v.standardName,
                                      v.onFaces, v.surface, v.cellMethods});
        }
        spec.series = historySeries();
        if (m_resumed) { // the history the restart was made with, and no other
            spec.appendFrom = historyToContinue(*m_resumed, m_options.restartFrom, spec.path, m_comm);
            spec.continued = {m_resumed->historyRunId, m_resumed->historyRecords, m_resumed->historyChecksum};
        }
        return spec;
    }

    // cell_methods say what each series is: global means at an instant, or maxima over the columns and the interval.
    std::vector<TimeSeries> historySeries() const {
        std::vector<TimeSeries> series{
            {"T_global_mean", "K", "global mean air temperature (mass and area weighted)", "area: mean time: point"},
            {"heat_content", "J m-2", "column heat content cp * sum(rho0 theta dz), global mean",
             "area: mean time: point"},
            {"water_content", "kg m-2", "column water content sum(rho0 q dz), global mean", "area: mean time: point"},
            {"tracer_content", "kg m-2", "column tracer content sum(rho0 tracer dz), global mean",
             "area: mean time: point"}};
        for (char const* b : budgetNames)
            series.push_back({std::string(b) + "_budget_residual", "1",
                              std::string("largest column ") + b +
                                  " budget residual since the previous output, relative to what crossed, was added "
                                  "or moved (docs/model.md)",
                              "area: maximum time: maximum"});
        if (auto const* a = m_model.analytic())
            series.push_back({a->seriesName(), a->units(), a->longName(), "area: maximum time: point"});
        return series;
    }

    // A record of the state now: the diagnostics, the history's fields and series, and (rank 0) its log lines.
    void writeRecord() {
        GlobalDiagnostics d;
        m_timers.time("diagnostics", [&] { d = m_model.diagnostics(); });
        for (int b = 0; b < budgetCount; ++b) {
            m_summary.maxResidual[b] = worse(m_summary.maxResidual[b], d.residual[b]);
            m_summary.runResidual[b] = d.runResidual[b];
        }
        m_summary.finalMeanT = d.meanT;
        m_summary.analyticError = d.analyticError;
        std::string surfaceLine;
        m_timers.time("output", [&] { surfaceLine = writeFields(d); });
        if (m_talk) logRecord(d, surfaceLine);
    }

    // The output variables and the series, written; returns the surface fields' means for the record's log line.
    std::string writeFields(GlobalDiagnostics const& d) {
        std::vector<std::vector<double>> values;
        for (auto const& name : m_cfg.output.variables)
            values.push_back(m_model.outputValues(name));
        std::string const surfaceLine = addSurfaceMeans(values);
        m_lastOutput = m_model.time();
        std::vector<std::span<double const>> spans(values.begin(), values.end());
        std::vector<double> series{d.meanT};
        series.insert(series.end(), d.content.begin(), d.content.end());
        series.insert(series.end(), d.residual.begin(), d.residual.end());
        if (m_model.analytic()) series.push_back(d.analyticError);
        m_out.write(m_model.time(), spans, series);
        return surfaceLine;
    }

    // Surface fields (means over each output interval): their global means since the previous output, added to the
    // run's, and as text ("  precipitation_flux 1.2e-05 kg m-2 s-1...").
    std::string addSurfaceMeans(std::vector<std::vector<double>> const& values) {
        std::string text;
        double const interval = m_model.time() - m_lastOutput;
        for (std::size_t i = 0; i < values.size(); ++i) {
            auto const& info = variableInfo(m_cfg.output.variables[i]);
            if (!info.surface || interval <= 0) continue;
            double const mean = m_model.globalMean(values[i]);
            m_runSurfaceMean[i] += mean * interval;
            char part[160];
            std::snprintf(part, sizeof part, "  %s %.4g %s", m_cfg.output.variables[i].c_str(), mean,
                          info.units.c_str());
            text += part;
        }
        return text;
    }

    void logRecord(GlobalDiagnostics const& d, std::string const& surfaceLine) {
        char line[256];
        std::snprintf(line, sizeof line,
                      "output  t = %9.4f d  mean T = %.6f K  budget residuals: heat %.2e  water %.2e  tracer %.2e\n",
                      m_model.time() / constants::day, d.meanT, d.residual[HeatBudget], d.residual[WaterBudget],
                      d.residual[TracerBudget]);
        m_log << line;
        if (!surfaceLine.empty()) m_log << "        global means since the previous output:" << surfaceLine << "\n";
        if (auto const* a = m_model.analytic()) {
            std::snprintf(line, sizeof line, a->logFormat(), d.analyticError);
            m_log << line;
        }
        m_log << std::flush;
    }

    // After every step (and before the first): a NaN, an Inf or a value out of its physical range stops the run. The
    // state that failed is written as the last record, the file is finished saying why, and the run ends with exit 1.
    void checkState() {
        std::optional<StateViolation> bad;
        m_timers.time("state check", [&] { bad = m_model.checkState(); });
        if (!bad) return;
        auto const& zc = m_model.state().grid->centers();
        char text[512];
        std::snprintf(text, sizeof text, "after step %llu (t = %.6g d): %s = %.6g in %s, level %u (z = %.6g m)",
                      static_cast<unsigned long long>(m_model.stepCount()), m_model.time() / constants::day,
                      bad->variable.c_str(), bad->value, columnText(m_horizontal, bad->column).c_str(), bad->level,
                      zc[bad->level]);
        writeRecord();
        m_timers.time("output", [&] {
            m_out.close("stopped by the state check " + std::string(text) + "; expected " + bad->expected);
        });
        throw StateError("state check failed " + std::string(text) + "; that state is the last record of " + m_path,
                         "the model state", bad->expected);
    }

    // A restart file: the model state, and where the history is and how many records it holds.
    void writeRestartFile(std::string const& historyPath) {
        RestartMeta meta;
        meta.step = m_model.stepCount();
        meta.time = m_model.time();
        meta.lastOutput = m_lastOutput;
        HistoryIdentity const history = m_out.identity();
        meta.historyRecords = history.records;
        meta.historyRunId = history.runId;
        meta.historyChecksum = history.checksum;
        meta.historyPath = historyPath;
        meta.historyFinalPath = m_path;
        meta.configYaml = m_cfg.resolvedYaml;
        if (!m_cfg.initial.sounding.empty()) meta.soundingDigest = fileDigest(m_cfg.initial.sounding);
        meta.version = version;
        meta.gitHash = gitHash;
        m_timers.time("restart", [&] {
            writeRestart(m_comm, m_restartFile, meta, m_model.restartEntries(), m_decomp.first, m_decomp.local,
                         m_horizontal.columns());
        });
        if (m_talk)
            m_log << "restart " << m_restartFile << " at step " << meta.step << " (t = " << meta.time / constants::day
                  << " d), history " << historyPath << " (" << meta.historyRecords << " records)\n"
                  << std::flush;
    }

    // The signals every rank has received (installSignalHandlers), after step s: a restart for a SIGUSR1 or a stop (one
    // restart a step at most), then the stop. After the last step none are asked: the run's own end follows, with its
    // restart.
    void answerSignals(uint64_t s, bool restartWritten) {
        SignalsReceived const signals = s < m_total ? signalsReceived(m_comm) : SignalsReceived{};
        if (signals.stop != 0 || signals.restarts > m_restartsAnswered) {
            m_restartsAnswered = signals.restarts;
            if (!restartWritten) writeRestartFile(m_out.partialPath());
        }
        if (signals.stop != 0) stop(signals.stop, s);
    }

    // The restart is written before the history says "stopped": a SIGKILL in between (a grace that ran out) leaves a
    // restart whose history is the temporary file, never a stopped history without its restart.
    [[noreturn]] void stop(int signal, uint64_t s) {
        std::string const why = "stopped by signal " + std::to_string(signal) + " after step " + std::to_string(s) +
                                " of " + std::to_string(m_total);
        m_timers.time("output", [&] { m_out.close(why); });
        throw StopSignal(
            signal, why + "; history " + m_path + ", restart " + m_restartFile + " (continue with: strata run " +
                        (m_cfg.sourcePath.empty() ? "CONFIG" : m_cfg.sourcePath) + " --restart " + m_restartFile + ")");
    }

    void logProgress(uint64_t s) {
        double const wall = std::chrono::duration<double>(Clock::now() - m_loopStart).count();
        double const rate = wall > 0 ? m_model.time() / wall : 0.0; // simulated days per wall-clock day
        double const eta = wall / static_cast<double>(s - m_first + 1) * static_cast<double>(m_total - s);
        char line[256];
        std::snprintf(line, sizeof line,
                      "step %6llu/%llu  t = %9.4f d  %.3g simulated days per wall-clock day  ETA %.1f s\n",
                      static_cast<unsigned long long>(s), static_cast<unsigned long long>(m_total),
                      m_model.time() / constants::day, rate, eta);
        m_log << line << std::flush;
    }

    // Peak resident memory (ru_maxrss) of rank 0 and of the largest other rank: what a run really took. Collective.
    void measurePeakMemory() {
        rusage usage{};
        ::getrusage(RUSAGE_SELF, &usage);
        m_summary.rank0PeakBytes = static_cast<uint64_t>(usage.ru_maxrss) * 1024;
        double const others = m_comm.max(m_comm.isRoot() ? 0.0 : static_cast<double>(usage.ru_maxrss) * 1024.0);
        m_summary.otherPeakBytes = static_cast<uint64_t>(others);
    }

    void logSummary() {
        char line[256];
        std::snprintf(line, sizeof line,
                      "budgets over the whole run (largest column residual): heat %.2e  water %.2e  "
                      "tracer %.2e\n",
                      m_summary.runResidual[HeatBudget], m_summary.runResidual[WaterBudget],
                      m_summary.runResidual[TracerBudget]);
        m_log << line;
        logRunSurfaceMeans();
        m_log << "peak memory (max RSS): rank 0 " << bytesText(m_summary.rank0PeakBytes);
        if (m_comm.size() > 1) m_log << ", largest other rank " << bytesText(m_summary.otherPeakBytes);
        m_log << "; " << m_summary.outputRecords << " output records\n";
        m_timers.print(m_log, m_summary.wallSeconds);
        if (profileRequested()) printProfile(m_log, m_model.profile(), m_summary.steps - (m_first - 1));
        m_log << "strata: wrote " << m_summary.outputPath << " and the restart " << m_restartFile << "\n";
    }

    void logRunSurfaceMeans() {
        char line[256];
        for (std::size_t i = 0; i < m_runSurfaceMean.size(); ++i) {
            auto const& info = variableInfo(m_cfg.output.variables[i]);
            if (!info.surface || m_model.time() <= 0) continue;
            double const mean = m_runSurfaceMean[i] / m_model.time();
            std::snprintf(line, sizeof line, "over the whole run, global mean %s = %.7g %s%s\n", info.name.c_str(),
                          mean, info.units.c_str(),
                          info.units == "kg m-2 s-1" ? (" (" + std::to_string(mean * 86400.0) + " mm/day)").c_str()
                                                     : "");
            m_log << line;
        }
    }

    Clock::time_point const m_wallStart = Clock::now();
    Config const& m_cfg;
    core::Context const& m_comm;
    RunOptions const& m_options;
    std::ostream& m_log;
    bool const m_talk; // progress lines and the summary: rank 0, when asked for
    HorizontalCoords const m_horizontal;
    std::string const m_path; // the history
    std::string const m_restartFile;
    Decomposition const m_decomp;
    Model<Backend> m_model;
    std::optional<RestartMeta> const m_resumed; // the restart a continuation starts from
    RunLock m_restartLock;                      // released after the history is closed or left
    OutputFile m_out;
    Timers m_timers;
    uint64_t const m_total, m_every, m_restartEvery, m_progressEvery; // in steps
    RunSummary m_summary;
    std::vector<double> m_runSurfaceMean; // each surface field's global mean times its interval, summed over the run
    double m_lastOutput = 0;              // the time of the latest record
    uint64_t m_first = 1;                 // the first step this run takes (later for a continuation)
    uint64_t m_restartsAnswered = 0;      // SIGUSR1s a restart was written for
    Clock::time_point m_loopStart;
};

} // namespace detail

template <class Backend>
RunSummary runWith(Backend const& backend, std::string const& backendName, Config const& cfg, core::Context const& comm,
                   RunOptions const& options, std::ostream& log) {
    detail::Run<Backend> run(backend, backendName, cfg, comm, options, log); // checks, model, restart read, history
    run.start();
    run.loop();
    return run.finish();
}

// Each backend's loop is compiled once, in its run_<backend> file (app/model/instantiate.hpp), not in every file that
// includes this header.
STRATA_FOR_EACH_BACKEND(STRATA_DECLARE_MODEL_RUN)

} // namespace strata::app
