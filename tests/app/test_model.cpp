// The model end to end through runCase: the heat-equation case converges to its analytic solution at second order,
// and a surface heat flux warms the column. Budgets, invariants and stability: test_physics.cpp.
#include <strata/app/config.hpp>
#include <strata/app/model/decomposition.hpp>
#include <strata/app/model/model.hpp>
#include <strata/app/model/run.hpp>
#include <strata/core/comms.hpp>
#include <strata/core/memory.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <sstream>
#include <string>
#include <unistd.h>

using namespace strata;

namespace {

core::Context& comm() {
    static core::Context context; // MPI as a singleton process
    return context;
}

app::RunSummary run(std::string const& name, std::vector<std::string> const& overrides) {
    auto const config = app::loadConfig(std::string(STRATA_SOURCE_DIR) + "/configs/" + name + ".yaml", overrides);
    app::RunOptions options;
    // One folder per process: CTest runs the test cases of this file in parallel, and two may run the same case.
    options.outputDir =
        (std::filesystem::path(STRATA_BINARY_DIR) / ("test_model_output_" + std::to_string(::getpid()))).string();
    options.progress = false;
    std::ostringstream log;
    return app::runCase(config, comm(), options, log);
}

} // namespace

TEST_CASE("heat equation: second-order convergence to the analytic solution", "[model]") {
    // dt shrinks with dz^2 so the explicit diffusion number stays 0.389; the run lasts 4000 s at every resolution.
    auto at = [](int levels) {
        double const dt = 10.0 * (64.0 / levels) * (64.0 / levels);
        return run("heat_equation",
                   {"grid.vertical.levels=" + std::to_string(levels), "time.dt=" + std::to_string(dt),
                    "time.steps=" + std::to_string(static_cast<int>(4000.0 / dt)), "output.interval=4000"});
    };
    auto const coarse = at(32), fine = at(64);
    double const order = std::log2(coarse.analyticError / fine.analyticError);
    WARN("heat equation: max error " << coarse.analyticError << " K at 32 levels, " << fine.analyticError
                                     << " K at 64 levels: order " << order);
    REQUIRE(fine.analyticError < 1e-3);
    REQUIRE(order > 1.9);
    REQUIRE(order < 2.1);
}

TEST_CASE("a surface heat flux warms the atmosphere", "[model]") {
    auto const none = run("default", {"time.steps=18", "time.days="});
    auto const some =
        run("default", {"time.steps=18", "time.days=", "processes.vertical_diffusion.surface_heat_flux=0.1"});
    REQUIRE(some.finalMeanT > none.finalMeanT);
}

TEST_CASE("the memory estimate equals the bytes the model allocates on the real grid", "[model][memory]") {
    // The estimate extrapolates two probe models (2 and 4 columns) to the rank's columns: exact when every array is
    // per column or fixed. Measured here on the full grid of each case, so a per-column array that the probes miss
    // (or an array whose size grows otherwise) fails it.
    for (std::string const name : {"default", "moist_held_suarez", "kessler_column", "ekman", "held_suarez"}) {
        INFO(name);
        auto const config = app::loadConfig(std::string(STRATA_SOURCE_DIR) + "/configs/" + name + ".yaml", {});
        auto const estimate = app::estimateMemory(config, comm());
        auto const horizontal = app::makeHorizontal(config.horizontal);
        auto const decomposition = app::Decomposition::balanced(horizontal.columns(), 0, 1);
        std::size_t const before = core::detail::liveBufferBytes();
        app::Model<core::Serial> model(config, core::Serial{}, comm(), horizontal, decomposition);
        std::size_t const measured = core::detail::liveBufferBytes() - before;
        WARN(name << ": " << measured << " bytes allocated by the model, estimated "
                  << estimate.modelFixed + decomposition.local * estimate.modelPerColumn << " ("
                  << estimate.modelPerColumn << " per column)");
        REQUIRE(estimate.localColumns == decomposition.local);
        REQUIRE(measured == estimate.modelFixed + decomposition.local * estimate.modelPerColumn);
        REQUIRE(estimate.rank0 > measured);
    }
}

TEST_CASE("the step profile accounts for every kernel launch, and every process states its cost", "[model][profile]") {
    // Model::profile() splits a step's launches between the processes and the step's own work: their sum must be the
    // launches the step made (lockstep::launchCounter), the same every step, and no part of the default case may
    // come without its cost model (Process::stepCost, docs/performance.md).
    auto const config = app::loadConfig(std::string(STRATA_SOURCE_DIR) + "/configs/default.yaml", {});
    auto const horizontal = app::makeHorizontal(config.horizontal);
    auto const decomposition = app::Decomposition::balanced(horizontal.columns(), 0, 1);
    app::Model<core::Serial> model(config, core::Serial{}, comm(), horizontal, decomposition);
    model.step(); // set-up made once (the steady subsidence velocity, the diffusivity's decay)
    model.resetProfile();
    uint64_t const before = lockstep::launchCounter().load();
    int const steps = 3;
    for (int i = 0; i < steps; ++i)
        model.step();
    uint64_t const made = lockstep::launchCounter().load() - before;
    uint64_t counted = 0;
    double seconds = 0;
    auto const parts = model.profile();
    REQUIRE(parts.size() == config.processOrder.size() + 1);
    for (auto const& part : parts) {
        INFO(part.name << ": " << part.launches << " launches, basis '" << part.cost.basis << "'");
        counted += part.launches;
        seconds += part.seconds;
        REQUIRE(part.launches % steps == 0); // the same launches every step
        REQUIRE(part.cost.basis != "not stated");
        REQUIRE(part.cost.bytesPerCell + part.cost.bytesPerColumn > 0);
    }
    REQUIRE(counted == made);
    REQUIRE(seconds > 0);
    WARN("default case: " << made / steps << " kernel launches per step");
}

TEST_CASE("a step of the default case copies nothing between host and device; the state check copies once",
          "[model][profile]") {
    // On a GPU every copy is a synchronous wait. The budget terms, the ledger's sums and the surface means stay in
    // the backend's memory (app/model/column_sums.hpp); the host reads them only for output and restarts. The copies
    // are counted on the CPU backends as a GPU run would make them (core::transferCounter).
    auto const config = app::loadConfig(std::string(STRATA_SOURCE_DIR) + "/configs/default.yaml", {});
    auto const horizontal = app::makeHorizontal(config.horizontal);
    auto const decomposition = app::Decomposition::balanced(horizontal.columns(), 0, 1);
    app::Model<core::Serial> model(config, core::Serial{}, comm(), horizontal, decomposition);
    model.step();
    model.resetProfile();
    uint64_t const before = core::transferCounter().load();
    int const steps = 3;
    for (int i = 0; i < steps; ++i)
        model.step();
    REQUIRE(core::transferCounter().load() == before);
    for (auto const& part : model.profile()) {
        INFO(part.name);
        REQUIRE(part.transfers == 0);
    }
    uint64_t const check = core::transferCounter().load();
    REQUIRE_FALSE(model.checkState().has_value());
    REQUIRE(core::transferCounter().load() - check == 1);

    // Kessler's sedimentation copies one value per column each step: the host picks the number of sub-steps from the
    // largest rain Courant number (a host decision; everything else of that case stays on the device).
    auto const kessler = app::loadConfig(std::string(STRATA_SOURCE_DIR) + "/configs/kessler_column.yaml", {});
    auto const kh = app::makeHorizontal(kessler.horizontal);
    app::Model<core::Serial> column(kessler, core::Serial{}, comm(), kh,
                                    app::Decomposition::balanced(kh.columns(), 0, 1));
    column.step();
    uint64_t const k0 = core::transferCounter().load();
    for (int i = 0; i < steps; ++i)
        column.step();
    REQUIRE(core::transferCounter().load() - k0 == static_cast<uint64_t>(steps));
}

TEST_CASE("a run that goes wrong stops with the variable, place and step, and writes that state", "[model][state]") {
    // A surface heat flux of 1e30 K m/s heats the lowest level to ~1e30 K in one step.
    try {
        run("default", {"processes.vertical_diffusion.surface_heat_flux=1e30", "output.path=out/went_wrong.nc"});
        FAIL("the run did not stop");
    } catch (app::StateError const& e) {
        std::string const what = e.what();
        INFO(what);
        CHECK(what.find("after step 1 ") != std::string::npos);
        CHECK(what.find("T = ") != std::string::npos);
        CHECK(what.find("level 0") != std::string::npos);
        CHECK(what.find("(lat ") != std::string::npos);
        CHECK(what.find("air temperature in [100, 400] K") != std::string::npos);
        CHECK(what.find("went_wrong.nc") != std::string::npos);
    }
    auto const out = std::filesystem::path(STRATA_BINARY_DIR) / ("test_model_output_" + std::to_string(::getpid())) /
                     "went_wrong.nc";
    CHECK(std::filesystem::is_regular_file(out));
}
