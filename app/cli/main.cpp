// The `strata` program. Subcommands: info (this build and what it sees). The model driver (run, validate, compare)
// comes with the app issue.
#include "app/info.hpp"
#include "app/version.hpp"
#include "core/comms.hpp"
#include "core/error.hpp"

#include <CLI/CLI.hpp>

#include <iostream>
#include <sstream>

int main(int argc, char** argv) {
    CLI::App cli{"Strata: a column-physics mini-app built on a shared-memory column-stencil kernel layer"};
    cli.set_version_flag("--version", std::string(strata::app::version) + " (git " + strata::app::gitHash + ")");
    cli.require_subcommand(1);
    auto* info = cli.add_subcommand("info", "Print the version, git hash, backends compiled in, devices seen and the "
                                            "MPI library");
    try {
        cli.parse(argc, argv);
    } catch (CLI::ParseError const& e) {
        int const code = cli.exit(e);
        return code == 0 ? 0 : 2; // usage errors exit 2
    }

    try {
        strata::core::Context ctx(&argc, &argv);
        if (info->parsed()) {
            std::ostringstream text;
            strata::app::printInfo(text);
            if (ctx.isRoot()) {
                std::cout << text.str() << "mpi ranks: " << ctx.size() << "\n";
            }
        }
        return 0;
    } catch (strata::Error const& e) {
        std::cerr << "strata: error: " << e.what() << "\n";
        return 1;
    }
}
