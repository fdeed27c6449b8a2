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
//
// The cost model of the step (docs/performance.md): for every part of the step (each process, and "model" for the
// step's own copies and Runge-Kutta stages), its minimum bytes and transcendental functions (StepCost, stated by the
// process) and its kernel launches (counted), turned into a time with the triad bandwidth, the cost of one
// transcendental function and of one empty launch, all three measured in this process:
//   model time = max(bytes / triad bandwidth, transcendentals x t_transcendental) + launches x t_launch
// Counters per part P: P.ms (measured, per step), P.model_ms, P.launches, P.transfers (host <-> device copies, counted
// as a GPU run would make them), P.min_bytes, P.transcendentals; for the step: launches_per_step, transfers_per_step,
// cost_model_ms and x_cost_model (measured time / model time). scripts/plot_bench
// --cost-model prints them as a table.
#include <strata/app/bench/bench_common.hpp>
#include <strata/app/config.hpp>
#include <strata/app/model/decomposition.hpp>
#include <strata/app/model/model.hpp>
#include <strata/core/comms.hpp>

#include <benchmark/benchmark.h>

#include <algorithm>
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
    model.resetProfile();
    for (auto _ : state) {
        model.step();
        benchmark::ClobberMemory();
    }
    double const cells = static_cast<double>(decomp.local) * cfg.vertical.cells();
    bench::reportThroughput<Backend>(state, cells, 112.0 * cells);

    double const steps = static_cast<double>(state.iterations());
    double const bandwidth = bench::triadReference<Backend>();
    double const tTranscendental = bench::transcendentalSeconds(), tLaunch = bench::launchSeconds<Backend>();
    double launches = 0, transfers = 0, modelSeconds = 0, measuredSeconds = 0;
    for (auto const& part : model.profile()) {
        double const bytes = part.cost.bytesPerCell * cells + part.cost.bytesPerColumn * decomp.local;
        double const transcendentals =
            part.cost.transcendentalsPerCell * cells + part.cost.transcendentalsPerColumn * decomp.local;
        double const partLaunches = static_cast<double>(part.launches) / steps;
        double const partModel =
            std::max(bytes / bandwidth, transcendentals * tTranscendental) + partLaunches * tLaunch;
        state.counters[part.name + ".ms"] = 1e3 * part.seconds / steps;
        state.counters[part.name + ".model_ms"] = 1e3 * partModel;
        state.counters[part.name + ".launches"] = partLaunches;
        state.counters[part.name + ".transfers"] = static_cast<double>(part.transfers) / steps;
        state.counters[part.name + ".min_bytes"] = bytes;
        state.counters[part.name + ".transcendentals"] = transcendentals;
        launches += partLaunches;
        transfers += static_cast<double>(part.transfers) / steps;
        modelSeconds += partModel;
        measuredSeconds += part.seconds / steps;
    }
    state.counters["launches_per_step"] = launches;
    state.counters["transfers_per_step"] = transfers; // host <-> device copies (a GPU run's synchronous copies)
    state.counters["cost_model_ms"] = 1e3 * modelSeconds;
    state.counters["x_cost_model"] = modelSeconds > 0 ? measuredSeconds / modelSeconds : 0.0;
    state.counters["t_transcendental_ns"] = 1e9 * tTranscendental;
    state.counters["t_launch_us"] = 1e6 * tLaunch;
    state.counters["columns"] = decomp.local;
    state.counters["levels"] = cfg.vertical.cells();
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
