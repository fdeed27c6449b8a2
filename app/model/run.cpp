#include "app/model/run_impl.hpp"

#include "core/backend.hpp"

namespace strata::app {

#if defined(STRATA_HAVE_CUDA)
// Defined in run_cuda.cu, compiled by nvcc.
RunSummary runWithCuda(Config const& cfg, core::Context const& comm, RunOptions const& options, std::ostream& log);
#endif

// `auto` without a GPU: OpenMP only when a rank has enough cells to pay for a parallel region per kernel (a step
// launches about a hundred small kernels; on 32 x 30 cells OpenMP's fork and join cost 20 times the work: 20 s
// against 1 s for moist_held_suarez on 3 ranks). The choice changes no result: the backends agree bit for bit.
inline constexpr uint64_t openmpMinimumCellsPerRank = 32768;

RunSummary runCase(Config const& cfg, core::Context const& comm, RunOptions const& options, std::ostream& log) {
    std::string type = cfg.backend.type;
    if (type == "auto") {
        uint64_t const columns = makeHorizontal(cfg.horizontal).columns();
        uint64_t const perRank = (columns + comm.size() - 1) / comm.size() * cfg.vertical.levels;
        type = core::cudaDeviceCount() > 0                                           ? "cuda"
               : core::openmpCompiled() && perRank >= openmpMinimumCellsPerRank ? "openmp"
                                                                                  : "serial";
    }
    if (type == "serial") return runWith(core::Serial{}, "serial", cfg, comm, options, log);
    if (type == "openmp") {
        if (!core::openmpCompiled())
            throw ConfigError("'openmp' is not compiled into this build", "backend.type", "serial, threads or auto");
        return runWith(core::OpenMP{}, "openmp", cfg, comm, options, log);
    }
    if (type == "threads")
        return runWith(core::Threads{cfg.backend.threadsWorkers, true}, "threads", cfg, comm, options, log);
    if (type == "cuda") {
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
    throw ConfigError("unknown backend '" + type + "'", "backend.type", "auto, serial, openmp, threads or cuda");
}

} // namespace strata::app
