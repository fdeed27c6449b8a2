// model/: one full time step of the configs/default.yaml physics (moist Held-Suarez relaxation and friction, Coriolis,
// upwind3/limited subsidence advection, bulk surface fluxes, implicit Reed-Jablonowski diffusion, large-scale
// condensation; SSP-RK3 and the budget ledger), Model<Backend>::step() as `strata run` calls it, without output and
// diagnostics.
//   model/<backend>/<engine>/<nlat>x<nlon>    engine: auto (the configuration's), direct, shmem
// The configuration is configs/default.yaml loaded with app::loadConfig (found next to this source file, or
// $STRATA_BENCH_CONFIG) with the grid enlarged by overrides: 32 x 64 (2048 columns x 30 levels: every field fits in
// L2) and 128 x 256 (32768 columns: 7.5 MB per field, the state far beyond L3). One process, one rank.
// A level update is one cell of one column per step (columns x levels). Minimum bytes: 112 per cell (the seven
// prognostic fields T, u, v, q, qc, qr and tracer read once and written once); a step reads and writes far more
// (reference state, tendencies, RK stages, tridiagonal coefficients), so the percentage of the triad is a lower
// bound of what a step moves.
#include "app/bench/bench_common.hpp"
#include "app/config.hpp"
#include "app/model/decomposition.hpp"
#include "app/model/model.hpp"
#include "core/comms.hpp"

#include <benchmark/benchmark.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace {

using namespace strata;

core::Context const& mpi() {
    static core::Context const context; // MPI as a singleton process; finalised at exit
    return context;
}

std::string defaultConfigPath() {
    if (char const* env = std::getenv("STRATA_BENCH_CONFIG")) return env;
    namespace fs = std::filesystem;
    fs::path const besideSource = fs::path(__FILE__).parent_path() / ".." / ".." / "configs" / "default.yaml";
    if (fs::exists(besideSource)) return besideSource.string();
    return "configs/default.yaml";
}

template <class Backend>
void bmModelStep(benchmark::State& state, std::string const& engine, uint32_t nlat, uint32_t nlon) {
    app::Config const cfg = app::loadConfig(defaultConfigPath(), {"grid.horizontal.nlat=" + std::to_string(nlat),
                                                                  "grid.horizontal.nlon=" + std::to_string(nlon),
                                                                  "backend.engine=" + engine});
    auto const& comm = mpi();
    app::HorizontalCoords const horizontal = app::makeHorizontal(cfg.horizontal);
    app::Decomposition const decomp = app::Decomposition::balanced(horizontal.columns(), 0, 1);
    app::Model<Backend> model(cfg, Backend{}, comm, horizontal, decomp);
    model.checkStability();
    model.step(); // first touch of every buffer
    for (auto _ : state) {
        model.step();
        benchmark::ClobberMemory();
    }
    double const cells = static_cast<double>(decomp.local) * cfg.vertical.levels;
    bench::reportThroughput<Backend>(state, cells, 112.0 * cells);
    state.counters["columns"] = decomp.local;
    state.counters["levels"] = cfg.vertical.levels;
    std::string label;
    for (auto const& p : cfg.processOrder)
        label += (label.empty() ? "" : " + ") + p;
    state.SetLabel(label);
}

template <class Backend>
void registerModel() {
    for (auto const& grid : std::vector<std::pair<uint32_t, uint32_t>>{{32, 64}, {128, 256}}) {
        for (std::string const engine : {"auto", "direct", "shmem"}) {
            std::string const name = std::string("model/") + bench::backendName<Backend>() + "/" + engine + "/" +
                                     std::to_string(grid.first) + "x" + std::to_string(grid.second);
            bench::add(name, [engine, grid](benchmark::State& s) {
                bmModelStep<Backend>(s, engine, grid.first, grid.second);
            });
        }
    }
}

int const registered = [] {
    registerModel<core::Serial>();
    registerModel<core::OpenMP>();
    return 0;
}();

} // namespace
