// Shared by the model physics tests (test_physics.cpp, test_physics_checks.cpp): a configured case as a
// Model<Serial> on one rank, field set-up and reductions, and whole runs through runCase into a scratch folder that
// is removed when the test process ends. The including test defines STRATA_TEST_NAME (the folder's name) and
// STRATA_SOURCE_DIR (where configs/ is).
#pragma once

#include <strata/app/config.hpp>
#include <strata/app/model/decomposition.hpp>
#include <strata/app/model/model.hpp>
#include <strata/app/model/run.hpp>
#include <strata/core/comms.hpp>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

namespace strata::test {

using app::CenterField;
using Serial = core::Serial;

inline core::Context& comm() {
    static core::Context context; // MPI as a singleton process
    return context;
}

// A configured case as a Model<Serial> on one rank, for tests that reach into the state.
struct Case {
    app::Config cfg;
    app::HorizontalCoords horizontal;
    app::Decomposition decomposition;
    std::unique_ptr<app::Model<Serial>> model;

    Case(std::string const& name, std::vector<std::string> const& overrides)
        : Case(app::loadConfig(std::string(STRATA_SOURCE_DIR) + "/configs/" + name + ".yaml", overrides)) {}
    explicit Case(app::Config c)
        : cfg(std::move(c)), horizontal(app::makeHorizontal(cfg.horizontal)),
          decomposition(app::Decomposition::balanced(horizontal.columns(), 0, 1)),
          model(std::make_unique<app::Model<Serial>>(cfg, Serial{}, comm(), horizontal, decomposition)) {}
    Case(Case const&) = delete; // the model refers to cfg

    app::State& state() { return model->state(); }
    void steps(int n) {
        for (int i = 0; i < n; ++i)
            model->step();
    }
    app::Process<Serial>* process(std::string const& name) {
        for (auto& p : model->processes())
            if (p->name() == name) return p.get();
        return nullptr;
    }
};

template <class F>
void setField(CenterField& f, F&& value) {
    for (uint32_t c = 0; c < f.columns(); ++c)
        for (uint32_t k = 0; k < f.levels(); ++k)
            f.at(c, k) = value(c, k);
    f.toDevice();
}

// The largest error(c, k, value) over the field; a NaN wins.
template <class F>
double maxOver(CenterField& f, F&& error) {
    f.toHost();
    double worst = 0;
    for (uint32_t c = 0; c < f.columns(); ++c)
        for (uint32_t k = 0; k < f.levels(); ++k) {
            double const e = error(c, k, f.at(c, k));
            if (!(e <= worst)) worst = e; // NaN wins
        }
    return worst;
}

// A number as text that reads back to the same double.
inline std::string num(double x) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.17g", x);
    return buf;
}

// A folder of this test process for run outputs, removed when the process ends.
struct ScratchFolder {
    std::filesystem::path path = std::filesystem::temp_directory_path() /
                                 (std::string("strata_") + STRATA_TEST_NAME + "_" + std::to_string(::getpid()));
    ~ScratchFolder() {
        std::error_code ignored;
        std::filesystem::remove_all(path, ignored);
    }
};

inline app::RunSummary runQuiet(std::string const& name, std::vector<std::string> const& overrides) {
    static ScratchFolder const folder;
    auto const config = app::loadConfig(std::string(STRATA_SOURCE_DIR) + "/configs/" + name + ".yaml", overrides);
    app::RunOptions options;
    options.outputDir = folder.path.string();
    options.progress = false;
    std::ostringstream log;
    return app::runCase(config, comm(), options, log);
}

} // namespace strata::test
