#include <strata/app/model/instantiate.hpp>
#include <strata/app/model/run_impl.hpp>

#include <strata/core/backend.hpp>
#include <strata/core/backends.hpp>
#include <strata/core/memory.hpp>

#include <algorithm>
#include <array>
#include <cctype>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <pthread.h>
#include <signal.h>
#include <string>
#include <string_view>
#include <sys/resource.h>
#include <type_traits>
#include <unistd.h>

namespace strata::app {

// Each backend's time loop is compiled in a file of its own (Cuda's by nvcc): the dispatch below calls them.
STRATA_FOR_EACH_BACKEND(STRATA_DECLARE_MODEL)

std::string bytesText(uint64_t bytes) {
    char text[32];
    double const b = static_cast<double>(bytes);
    if (b >= 0x1p30)
        std::snprintf(text, sizeof text, "%.2f GiB", b / 0x1p30);
    else if (b >= 0x1p20)
        std::snprintf(text, sizeof text, "%.1f MiB", b / 0x1p20);
    else
        std::snprintf(text, sizeof text, "%.1f KiB", b / 0x1p10);
    return text;
}

void checkMemory(MemoryEstimate const& m, core::Context const& comm) {
    uint64_t const need = comm.isRoot() ? m.rank0 : m.perRank;
    double const ratio = m.available > 0 ? static_cast<double>(need) / static_cast<double>(m.available) : 0.0;
    double const worst = comm.max(ratio); // every rank refuses, or none
    if (!(worst > 1.0)) return;
    char text[64];
    std::snprintf(text, sizeof text, "%.3g", worst);
    throw ConfigError("the run needs " + bytesText(m.rank0) + " on rank 0 and " + bytesText(m.perRank) +
                          " on each other rank (" + bytesText(m.modelPerColumn) + " per column x " +
                          std::to_string(m.localColumns) + " columns per rank, plus output), but rank 0 has " +
                          bytesText(m.available) + " (" + m.availableFrom + "): the busiest rank needs " + text +
                          " times what it has",
                      "grid", "fewer columns or levels per rank: more ranks, or a smaller grid");
}

std::string restartPath(Config const& cfg, RunOptions const& options) {
    std::filesystem::path p;
    if (!cfg.restart.path.empty()) {
        p = cfg.restart.path;
    } else {
        p = cfg.output.path;
        p = p.parent_path() / (p.stem().string() + ".restart.nc");
    }
    if (!options.outputDir.empty()) p = std::filesystem::path(options.outputDir) / p.filename();
    return p.string();
}

namespace {

namespace fs = std::filesystem;

// `decide` runs on rank 0 alone (it looks at files); every rank returns its result, or throws what it threw: an E
// as an E, anything else as a strata::Error, with rank 0's text.
template <class E, class F>
std::string decideOnRoot(core::Context const& comm, F&& decide) {
    int kind = 0; // 0: a result, 1: an E, 2: another Error
    std::string result, where, expected;
    if (comm.isRoot()) {
        try {
            result = decide();
        } catch (E const& e) {
            kind = 1;
            result = e.problem(), where = e.where(), expected = e.expected();
        } catch (Error const& e) {
            kind = 2;
            result = e.problem(), where = e.where(), expected = e.expected();
        } catch (std::exception const& e) { // a file-system error: the other ranks must not wait for rank 0
            kind = 2;
            result = e.what();
        }
    }
    MPI_Bcast(&kind, 1, MPI_INT, 0, comm.comm());
    core::broadcast(comm.comm(), result);
    if (kind == 0) return result;
    core::broadcast(comm.comm(), where);
    core::broadcast(comm.comm(), expected);
    if (kind == 1) throw E(result, where, expected);
    throw Error(result, where, expected);
}

// Two spellings of one file (".", "..", links), whether it exists yet or not.
bool sameFile(std::string const& a, std::string const& b) {
    std::error_code ea, eb;
    if (fs::exists(a, ea) && fs::exists(b, eb)) return fs::equivalent(a, b, ea);
    fs::path const ca = fs::weakly_canonical(fs::absolute(a), ea), cb = fs::weakly_canonical(fs::absolute(b), eb);
    if (ea || eb) return fs::absolute(a).lexically_normal() == fs::absolute(b).lexically_normal();
    return ca == cb;
}

} // namespace

void checkRunPaths(Config const& cfg, RunOptions const& options, core::Context const& comm) {
    decideOnRoot<ConfigError>(comm, [&] {
        std::string const history = detail::outputPath(cfg, options), restart = restartPath(cfg, options);
        checkWriteTarget(history, cfg.sourcePath, "output.path");
        checkWriteTarget(restart, cfg.sourcePath, "restart.path");
        if (sameFile(history, restart))
            throw ConfigError("'" + restart + "' is also output.path", "restart.path",
                              "another file than the history (by default <output path without .nc>.restart.nc)");
        if (std::string const holder = runLockHolder(restart); !holder.empty())
            throw ConfigError("'" + restart + "' is held by another run (" + holder + ")", "restart.path",
                              "a restart path no running job writes: each run its own");
        return std::string();
    });
}

RunLock lockRestartPath(std::string const& restartFile, core::Context const& comm) {
    RunLock lock;
    decideOnRoot<ConfigError>(comm, [&] {
        if (fs::path const folder = fs::path(restartFile).parent_path(); !folder.empty())
            fs::create_directories(folder); // checked by checkRunPaths: the run may create it
        std::string holder;
        if (!lock.tryLock(restartFile, holder))
            throw ConfigError("'" + restartFile + "' is held by another run (" + holder + ")", "restart.path",
                              "a restart path no running job writes: each run its own");
        return std::string();
    });
    return lock;
}

std::string historyToContinue(RestartMeta const& meta, std::string const& restartFile, std::string const& outputPath,
                              core::Context const& comm) {
    return decideOnRoot<RestartError>(comm, [&] {
        std::string const recorded = meta.historyFinalPath.empty() ? meta.historyPath : meta.historyFinalPath;
        if (meta.historyRunId.empty())
            throw RestartError("records no identity of its history (it was written by an earlier Strata version)",
                               restartFile, "a restart written by this version, or a fresh run");
        std::vector<std::string> candidates, problems;
        for (std::string const& c : {meta.historyPath, meta.historyFinalPath, outputPath})
            if (!c.empty() && std::none_of(candidates.begin(), candidates.end(),
                                           [&](std::string const& seen) { return sameFile(seen, c); }))
                candidates.push_back(c);
        for (std::string const& c : candidates) {
            std::error_code ec;
            fs::file_type const type = fs::status(c, ec).type();
            if (type == fs::file_type::not_found) continue;
            if (type != fs::file_type::regular) {
                problems.push_back(c + ": not a regular file");
                continue;
            }
            // A live run's file may hold half a record; it is not opened, let alone copied.
            if (writerHolds(c)) {
                problems.push_back(c + ": being written by a running strata (continue once it has ended)");
                continue;
            }
            HistoryIdentity found;
            try {
                found = readHistoryIdentity(c, meta.historyRecords);
            } catch (Error const& e) {
                problems.push_back(e.what());
                continue;
            }
            if (found.runId != meta.historyRunId) {
                problems.push_back(c + ": another run's history (run id " +
                                   (found.runId.empty() ? std::string("none") : found.runId) +
                                   "), left as it is; move it aside to continue here");
                continue;
            }
            if (found.checksum != meta.historyChecksum) {
                problems.push_back(c + ": its first " + std::to_string(meta.historyRecords) +
                                   " records are not those the restart was made after (another continuation of the "
                                   "same run replaced them)");
                continue;
            }
            return c;
        }
        if (problems.empty())
            throw RestartError("the history it continues, " + recorded + ", is not there", restartFile,
                               "the history of the run that wrote the restart, where that run left it");
        std::string all;
        for (auto const& p : problems)
            all += (all.empty() ? "" : "; ") + p;
        throw RestartError("no history to continue: " + all, restartFile,
                           "the history the restart was made with: run id " + meta.historyRunId + ", at least " +
                               std::to_string(meta.historyRecords) + " records, at " + recorded);
    });
}

namespace {
volatile std::sig_atomic_t stopSignal = 0;
volatile std::sig_atomic_t restartSignals = 0;
constexpr int stopSignals[] = {SIGTERM, SIGINT, SIGHUP, SIGUSR2};

extern "C" void onSignal(int signal) {
    if (signal == SIGUSR1)
        restartSignals = restartSignals + 1;
    else if (stopSignal == 0)
        stopSignal = signal;
}
} // namespace

namespace {
sigset_t runSignals() {
    sigset_t set;
    sigemptyset(&set);
    for (int const signal : stopSignals)
        sigaddset(&set, signal);
    sigaddset(&set, SIGUSR1);
    return set;
}
} // namespace

void deferStopSignals() {
    sigset_t const set = runSignals();
    ::pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

void releaseStopSignals() {
    sigset_t const set = runSignals();
    ::pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
}

void installSignalHandlers() {
    stopSignal = 0;
    restartSignals = 0;
    struct sigaction action {};
    action.sa_handler = onSignal;
    action.sa_flags = SA_RESTART; // a write or an MPI wait the signal lands in carries on
    sigemptyset(&action.sa_mask);
    for (int const signal : stopSignals)
        sigaddset(&action.sa_mask, signal);
    sigaddset(&action.sa_mask, SIGUSR1);
    for (int const signal : stopSignals)
        ::sigaction(signal, &action, nullptr);
    ::sigaction(SIGUSR1, &action, nullptr);
    releaseStopSignals(); // a held signal is delivered now, to the handler
}

SignalsReceived signalsReceived(core::Context const& comm) {
    std::array<double, 2> received{static_cast<double>(stopSignal), static_cast<double>(restartSignals)};
    comm.max(received);
    return {static_cast<int>(received[0]), static_cast<uint64_t>(received[1])};
}

void checkRestartCompatible(Config const& cfg, RestartMeta const& meta, std::string const& restartFile) {
    Config const old = parseConfig(meta.configYaml, restartFile + " (strata_config)");
    auto refuse = [&](std::string const& key) {
        throw ConfigError("differs from the run that wrote " + restartFile, key,
                          "the same " + key +
                              " as that run (what may change: run length, output interval and path, "
                              "backend, engine, rank count, restart settings, title)");
    };
    if (!(old.vertical == cfg.vertical)) refuse("grid.vertical");
    if (!(old.horizontal == cfg.horizontal)) refuse("grid.horizontal");
    if (old.time.dt != cfg.time.dt) refuse("time.dt");
    if (old.time.start != cfg.time.start) refuse("time.start");
    if (old.processOrder != cfg.processOrder) refuse("processes");
    for (auto const& name : cfg.processOrder) // the same order: each process's settings
        if (!(old.processSettings.at(name) == cfg.processSettings.at(name))) refuse("processes." + name);
    if (!(old.initial == cfg.initial)) refuse("initial_conditions");
    // The same file name may hold another sounding now: its content must be the one the run started from.
    if (!cfg.initial.sounding.empty() && fileDigest(cfg.initial.sounding) != meta.soundingDigest)
        throw ConfigError("'" + cfg.initial.sounding + "' is not the sounding the run that wrote " + restartFile +
                              " started from (the file's content differs)",
                          "initial_conditions.sounding", "the same sounding as that run");
    if (old.analytic != cfg.analytic) refuse("analytic_solution"); // the history's series
    if (old.output.variables != cfg.output.variables) refuse("output.variables");
    if (old.output.precision != cfg.output.precision) refuse("output.precision");
    if (meta.step > cfg.totalSteps())
        throw ConfigError("the restart is at step " + std::to_string(meta.step) + ", after the run's last step " +
                              std::to_string(cfg.totalSteps()),
                          "time.steps", "a run at least as long as the one that wrote " + restartFile);
}

// Every backend of core/backends.hpp is a choice of backend.type (app/config.hpp), under the tag's name.
static_assert(
    [] {
        bool all = true;
        core::forEachBackend([&]<class Backend>(std::type_identity<Backend>) {
            bool named = false;
            for (auto const& [name, value] : Choices<BackendType>::names)
                named = named || (name == Backend::name && value != BackendType::Auto);
            all = all && named;
        });
        return all;
    }(),
    "a backend of core/backends.hpp has no choice of its name in BackendType (app/config.hpp)");

namespace {

// The host backends other than `refused`, for a message ("serial, threads"): those a build without a device runs.
std::string hostBackendsBut(std::string_view refused) {
    std::string names;
    core::forEachBackend([&]<class Backend>(std::type_identity<Backend>) {
        if (Backend::memSpace != core::MemSpace::Host || Backend::name == refused) return;
        names += (names.empty() ? "" : ", ") + std::string(Backend::name);
    });
    return names;
}

std::string upper(std::string_view text) {
    std::string out(text);
    std::transform(out.begin(), out.end(), out.begin(),
                   [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
    return out;
}

// A run on one backend: the tag made from the configuration and the rank (a run-time worker count from
// backend.threads_workers, the GPU of the rank's node-local rank), the name the banner and the file's `source` give
// it, and what the build or the machine cannot run. The rest is the same template for every backend (run_impl.hpp).
template <class Backend>
RunSummary runOn(Config const& cfg, core::Context const& comm, RunOptions const& options, std::ostream& log) {
    Backend backend{};
    std::string name(Backend::name);
    if constexpr (Backend::hostParallel) {
        if (!core::openmpCompiled())
            throw ConfigError("'" + name + "' is not compiled into this build", "backend.type",
                              hostBackendsBut(Backend::name) + " or auto");
        // The thread count is part of the name: the banner and the file's `source` say how the run was made.
        name += " (" + std::to_string(core::openmpThreads()) + " threads)";
    }
    if constexpr (requires(Backend & b) { b.numWorkers; }) backend.numWorkers = cfg.backend.threadsWorkers;
    if constexpr (Backend::isGpu) {
        if (core::cudaDeviceCount() == 0)
            throw ConfigError("'" + name + "' was asked for but no CUDA device is visible", "backend.type",
                              "a rank with a GPU, or backend.type: auto");
        backend.device = comm.deviceFor(core::cudaDeviceCount());
        if (!core::selectDevice(backend)) // buffers are allocated on the current device
            throw Error("cannot select CUDA device " + std::to_string(backend.device), "backend.type: " + name);
    }
    return runWith(backend, name, cfg, comm, options, log);
}

} // namespace

// `auto` without a GPU: OpenMP only when a rank has enough cells to pay for a parallel region per kernel (a step
// launches about a hundred small kernels; on a few hundred cells OpenMP's fork and join cost many times the work).
// The choice changes no result: the backends agree bit for bit.
inline constexpr uint64_t openmpMinimumCellsPerRank = 32768;

// Whether every configured process can run on Cuda (a process a program registered from host code only cannot).
static bool onCuda([[maybe_unused]] Config const& cfg) {
#if defined(STRATA_HAVE_CUDA)
    auto const& registry = processRegistry<core::Cuda>();
    return std::all_of(cfg.processOrder.begin(), cfg.processOrder.end(),
                       [&](std::string const& name) { return registry.find(name) != registry.end(); });
#else
    return false;
#endif
}

RunSummary runCase(Config const& cfg, core::Context const& comm, RunOptions const& options, std::ostream& log) {
    installSignalHandlers(); // a signal while the run is set up is answered after its first step
    MemoryEstimate const memory = estimateMemory(cfg, comm);
    checkMemory(memory, comm); // before anything of the run's size is allocated
    if (options.progress && comm.isRoot())
        log << "strata: memory " << bytesText(memory.rank0) << " on rank 0, " << bytesText(memory.perRank)
            << " per other rank (" << bytesText(memory.modelPerColumn) << " per column); "
            << bytesText(memory.available) << " available per rank\n";
    BackendType type = cfg.backend.type;
    if (type == BackendType::Auto) {
        uint64_t const columns = makeHorizontal(cfg.horizontal).columns();
        uint64_t const perRank = (columns + comm.size() - 1) / comm.size() * cfg.vertical.cells();
        type = core::cudaDeviceCount() > 0 && onCuda(cfg)                       ? BackendType::Cuda
               : core::openmpCompiled() && perRank >= openmpMinimumCellsPerRank ? BackendType::OpenMP
                                                                                : BackendType::Serial;
    }
    std::optional<RunSummary> summary;
    if (!core::withBackendNamed(nameOf(type), [&]<class Backend>(std::type_identity<Backend>) {
            summary = runOn<Backend>(cfg, comm, options, log);
        }))
        throw ConfigError("'" + std::string(nameOf(type)) + "' is not compiled into this build", "backend.type",
                          hostBackendsBut(nameOf(type)) + " or auto (or a build with STRATA_ENABLE_" +
                              upper(nameOf(type)) + "=ON)");
    return *summary;
}

} // namespace strata::app
