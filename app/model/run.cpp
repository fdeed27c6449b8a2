#include "app/model/run_impl.hpp"

#include "core/backend.hpp"
#include "core/memory.hpp"

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sys/resource.h>
#include <unistd.h>

namespace strata::app {

#if defined(STRATA_HAVE_CUDA)
// Defined in run_cuda.cu, compiled by nvcc.
RunSummary runWithCuda(Config const& cfg, core::Context const& comm, RunOptions const& options, std::ostream& log);
#endif

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
volatile std::sig_atomic_t stopSignal = 0;
extern "C" void onStopSignal(int signal) { stopSignal = signal; }
} // namespace

void installStopHandlers() {
    std::signal(SIGTERM, onStopSignal);
    std::signal(SIGINT, onStopSignal);
}

int stopSignalReceived() { return stopSignal; }

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
    if (!(old.diffusion == cfg.diffusion)) refuse("processes.vertical_diffusion");
    if (!(old.advection == cfg.advection)) refuse("processes.vertical_advection");
    if (!(old.heldSuarez == cfg.heldSuarez)) refuse("processes.held_suarez");
    if (!(old.coriolis == cfg.coriolis)) refuse("processes.coriolis");
    if (!(old.surfaceFluxes == cfg.surfaceFluxes)) refuse("processes.surface_fluxes");
    if (!(old.initial == cfg.initial)) refuse("initial_conditions");
    if (old.output.variables != cfg.output.variables) refuse("output.variables");
    if (old.output.precision != cfg.output.precision) refuse("output.precision");
    if (meta.step > cfg.totalSteps())
        throw ConfigError("the restart is at step " + std::to_string(meta.step) + ", after the run's last step " +
                              std::to_string(cfg.totalSteps()),
                          "time.steps", "a run at least as long as the one that wrote " + restartFile);
}

// `auto` without a GPU: OpenMP only when a rank has enough cells to pay for a parallel region per kernel (a step
// launches about a hundred small kernels; on a few hundred cells OpenMP's fork and join cost many times the work).
// The choice changes no result: the backends agree bit for bit.
inline constexpr uint64_t openmpMinimumCellsPerRank = 32768;

RunSummary runCase(Config const& cfg, core::Context const& comm, RunOptions const& options, std::ostream& log) {
    MemoryEstimate const memory = estimateMemory(cfg, comm);
    checkMemory(memory, comm); // before anything of the run's size is allocated
    if (options.progress && comm.isRoot())
        log << "strata: memory " << bytesText(memory.rank0) << " on rank 0, " << bytesText(memory.perRank)
            << " per other rank (" << bytesText(memory.modelPerColumn) << " per column); "
            << bytesText(memory.available) << " available per rank\n";
    BackendType type = cfg.backend.type;
    if (type == BackendType::Auto) {
        uint64_t const columns = makeHorizontal(cfg.horizontal).columns();
        uint64_t const perRank = (columns + comm.size() - 1) / comm.size() * cfg.vertical.levels;
        type = core::cudaDeviceCount() > 0                                      ? BackendType::Cuda
               : core::openmpCompiled() && perRank >= openmpMinimumCellsPerRank ? BackendType::OpenMP
                                                                                : BackendType::Serial;
    }
    if (type == BackendType::Serial) return runWith(core::Serial{}, "serial", cfg, comm, options, log);
    if (type == BackendType::OpenMP) {
        if (!core::openmpCompiled())
            throw ConfigError("'openmp' is not compiled into this build", "backend.type", "serial, threads or auto");
        // The thread count is part of the name: the banner and the file's `source` say how the run was made.
        return runWith(core::OpenMP{}, "openmp (" + std::to_string(core::openmpThreads()) + " threads)", cfg, comm,
                       options, log);
    }
    if (type == BackendType::Threads)
        return runWith(core::Threads{cfg.backend.threadsWorkers, true}, "threads", cfg, comm, options, log);
    if (type == BackendType::Cuda) {
#if defined(STRATA_HAVE_CUDA)
        if (core::cudaDeviceCount() == 0)
            throw ConfigError("'cuda' was asked for but no CUDA device is visible", "backend.type",
                              "a rank with a GPU, or backend.type: auto");
        return runWithCuda(cfg, comm, options, log);
#else
        throw ConfigError("'cuda' is not compiled into this build", "backend.type",
                          "serial, openmp, threads or auto (or a build with STRATA_ENABLE_CUDA=ON)");
#endif
    }
    throw ConfigError("unknown backend '" + std::string(nameOf(type)) + "'", "backend.type",
                      "auto, serial, openmp, threads or cuda");
}

} // namespace strata::app
