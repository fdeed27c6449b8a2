// own_process: Strata's driver with a process of one's own (newtonian_cooling.hpp), registered before the case is
// read. The same YAML, output, restart files, budgets and checks as the `strata` program:
//   own_process CASE.yaml OUTPUT_DIR [key.path=value]... [--restart=FILE]
// It exits 1 when the run's heat budget does not close (largest column residual above 1e-10), 2 on a configuration
// or stability error. Under mpirun, every rank runs its share of the columns.
#include "newtonian_cooling.hpp"

#include <strata/app/config.hpp>
#include <strata/app/model/registry.hpp>
#include <strata/app/model/run.hpp>
#include <strata/core/comms.hpp>

#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

int main(int argc, char** argv) {
    namespace app = strata::app;
    app::deferStopSignals(); // as `strata run`: a stop while MPI starts is answered after the first step
    strata::core::Context comm(&argc, &argv);
    try {
        app::registerProcess<own::NewtonianCooling>(); // before the configuration is read
        if (argc < 3) throw app::ConfigError("too few arguments", "the command line", "CASE.yaml OUTPUT_DIR ...");
        app::RunOptions options;
        options.outputDir = argv[2];
        std::vector<std::string> overrides;
        for (int i = 3; i < argc; ++i) {
            std::string const arg = argv[i];
            if (arg.starts_with("--restart="))
                options.restartFrom = arg.substr(10);
            else
                overrides.push_back(arg); // as `strata run --set key.path=value`
        }
        app::Config const config = app::loadConfig(argv[1], overrides);
        app::RunSummary const summary = app::runCase(config, comm, options, std::cout);
        double const heat = summary.runResidual[app::HeatBudget];
        bool const closed = heat <= 1e-10;
        if (comm.isRoot())
            std::printf("own_process: heat budget residual %.2e (at most 1e-10): %s\n", heat,
                        closed ? "closed" : "NOT CLOSED");
        return closed ? 0 : 1;
    } catch (app::ConfigError const& e) {
        if (comm.isRoot()) std::cerr << "own_process: configuration error: " << e.what() << "\n";
        return 2;
    } catch (app::StabilityError const& e) {
        if (comm.isRoot()) std::cerr << "own_process: unstable configuration: " << e.what() << "\n";
        return 2;
    } catch (std::exception const& e) {
        std::cerr << "own_process: error (rank " << comm.rank() << "): " << e.what() << "\n";
        return 1;
    }
}
