// The `strata` program.
//   strata run CONFIG [--set key.path=value]... [--output DIR] [--restart FILE] [--manifest FILE]
//                                                                run a case (under mpirun for several ranks)
//   strata validate CONFIG [--set ...]                           check a configuration, run nothing
//   strata compare A.nc B.nc [--rtol [VAR=]R]... [--atol [VAR=]A]... [--tolerances FILE] [--common-times] [--bfb]
//                                                                compare two outputs (0 same, 1 different, 2 error)
//   strata info                                                  the build: version, backends, devices, MPI
// Usage and configuration errors exit with 2 before any output is created; other failures with 1.
#include <strata/app/config.hpp>
#include <strata/app/info.hpp>
#include <strata/app/io/output.hpp>
#include <strata/app/model/process.hpp>
#include <strata/app/model/run.hpp>
#include <strata/app/version.hpp>
#include <strata/core/comms.hpp>
#include <strata/core/error.hpp>

#include <CLI/CLI.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <new>
#include <sstream>
#include <string>
#include <vector>

namespace {

std::string commandLine(int argc, char** argv) {
    std::string s;
    for (int i = 0; i < argc; ++i) {
        if (i) s += ' ';
        s += argv[i];
    }
    return s;
}

// The files a finished run wrote, one "KIND PATH" line each, for scripts (scripts/run reads the history's path from
// it, not from the log, whose wording may change). Written whole under a temporary name and renamed, so a reader
// never sees half a manifest.
void writeManifest(std::string const& manifest, strata::app::RunSummary const& summary) {
    std::string const partial = manifest + ".partial";
    {
        std::ofstream out(partial, std::ios::trunc);
        out << "history " << summary.outputPath << "\nrestart " << summary.restartPath << "\n";
        out.flush();
        if (!out) throw strata::Error("cannot write the manifest " + partial, "--manifest", "a writable file");
    }
    std::error_code ec;
    std::filesystem::rename(partial, manifest, ec);
    if (ec) throw strata::Error("cannot rename " + partial + " to " + manifest + ": " + ec.message());
}

// A file's bytes ("" when it cannot be read: the loader then says why, on every rank alike).
std::string fileBytes(std::string const& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Every rank must run the same case: ranks started with different files or arguments (an MPMD launch, a file
// changed between the ranks' reads) would step different physics side by side, or wait forever in a collective that
// only some of them reach. A 64-bit FNV-1a hash of the configuration file, the overrides and the options, compared.
void requireSameOnEveryRank(strata::core::Context const& comm, std::string const& what) {
    uint64_t hash = 14695981039346656037ull;
    for (unsigned char ch : what)
        hash = (hash ^ ch) * 1099511628211ull;
    uint64_t low = hash, high = hash;
    MPI_Allreduce(MPI_IN_PLACE, &low, 1, MPI_UINT64_T, MPI_MIN, comm.comm());
    MPI_Allreduce(MPI_IN_PLACE, &high, 1, MPI_UINT64_T, MPI_MAX, comm.comm());
    if (low != high)
        throw strata::app::ConfigError("the ranks were started with different configurations or arguments",
                                       "the command line",
                                       "every rank running the same file with the same --set, "
                                       "--output and --restart");
}

// What the command line holds, filled in by CLI11 as it parses.
struct Arguments {
    std::string configPath, outputDir, fileA, fileB, restartFrom, manifest;
    std::vector<std::string> overrides, rtols, atols;
    std::string tolerances;
    strata::app::CompareOptions compare;
    CLI::App *run = nullptr, *validate = nullptr, *compareFiles = nullptr, *info = nullptr; // the subcommands
};

void addRunCommand(CLI::App& cli, Arguments& args) {
    auto* run = args.run =
        cli.add_subcommand("run", "Run a case: strata run CONFIG [--set key.path=value]... [--output DIR]");
    run->add_option("config", args.configPath, "YAML configuration file")->required();
    run->add_option("--set", args.overrides, "Override a configuration value, e.g. --set time.days=2 (repeatable)");
    run->add_option("--output", args.outputDir,
                    "Directory for the output file (replaces the directory of output.path)");
    run->add_option("--restart", args.restartFrom,
                    "Continue from a restart file: the run ends where the uninterrupted run would, its history is "
                    "continued");
    run->add_option("--manifest", args.manifest,
                    "After a successful run, write the paths of the files it wrote to FILE, one 'history PATH' and "
                    "one 'restart PATH' line (for scripts)");
}

void addValidateCommand(CLI::App& cli, Arguments& args) {
    auto* validate = args.validate = cli.add_subcommand("validate", "Check a configuration without running it");
    validate->add_option("config", args.configPath, "YAML configuration file")->required();
    validate->add_option("--set", args.overrides, "Override a configuration value (repeatable)");
}

void addCompareCommand(CLI::App& cli, Arguments& args) {
    auto* cmp = args.compareFiles =
        cli.add_subcommand("compare", "Compare two NetCDF outputs variable by variable (exit 0: within "
                                      "tolerance, 1: different, 2: unreadable or usage error)");
    cmp->add_option("a", args.fileA, "First file")->required();
    cmp->add_option("b", args.fileB, "Second file (the reference)")->required();
    cmp->add_option("--rtol", args.rtols,
                    "Relative tolerance, |a - b| <= atol + rtol |b|: R for every variable, or VAR=R for one "
                    "(repeatable)");
    cmp->add_option("--atol", args.atols, "Absolute tolerance: A for every variable, or VAR=A for one (repeatable)");
    cmp->add_option("--tolerances", args.tolerances,
                    "YAML file of tolerances: rtol, atol, variables: {VAR: {rtol: R, atol: A}} (--rtol and --atol "
                    "override it)");
    cmp->add_flag("--common-times", args.compare.commonTimes,
                  "Compare the records of the times both files hold (histories of different lengths)");
    cmp->add_flag("--bfb", args.compare.bfb, "Require identical bits");
}

void addInfoCommand(CLI::App& cli, Arguments& args) {
    args.info = cli.add_subcommand("info", "Print the version, git hash, backends compiled in, devices seen and the "
                                           "MPI library");
}

// `strata compare`, without MPI: 0 same, 1 different, 2 a bad tolerance or an unreadable file.
int compareCommand(Arguments& args) {
    try {
        if (!args.tolerances.empty()) strata::app::readToleranceFile(args.compare, args.tolerances);
        for (auto const& r : args.rtols)
            strata::app::addToleranceArgument(args.compare, "rtol", r);
        for (auto const& a : args.atols)
            strata::app::addToleranceArgument(args.compare, "atol", a);
    } catch (strata::Error const& e) {
        std::cerr << "strata compare: " << e.what() << "\n";
        return 2;
    }
    return strata::app::compareFiles(args.fileA, args.fileB, args.compare, std::cout);
}

int infoCommand(strata::core::Context const& comm) {
    std::ostringstream text;
    strata::app::printInfo(text);
    if (comm.isRoot()) std::cout << text.str() << "mpi ranks: " << comm.size() << "\n";
    return 0;
}

// Before loading: a file that one rank cannot read must not leave the others waiting in the comparison.
void requireSameInvocationOnEveryRank(strata::core::Context const& comm, Arguments const& args) {
    std::string invocation = fileBytes(args.configPath);
    for (auto const& text : args.overrides)
        invocation += '\0' + text;
    for (std::string const* text : {&args.outputDir, &args.restartFrom, &args.manifest})
        invocation += '\0' + *text;
    requireSameOnEveryRank(comm, invocation);
}

int validateCommand(strata::core::Context const& comm, strata::app::Config const& config, std::string const& path) {
    auto const memory = strata::app::estimateMemory(config, comm);
    if (comm.isRoot())
        std::cout << "strata validate: " << path << " is valid: " << config.totalSteps() << " steps, output every "
                  << config.outputEvery() << " steps to " << config.output.path << "\nmemory on " << comm.size()
                  << " rank(s): " << strata::app::bytesText(memory.rank0) << " on rank 0, "
                  << strata::app::bytesText(memory.perRank) << " per other rank ("
                  << strata::app::bytesText(memory.modelPerColumn) << " per column, " << memory.localColumns
                  << " columns per rank); " << strata::app::bytesText(memory.available) << " available per rank ("
                  << memory.availableFrom << ")\n";
    strata::app::checkRunnable(config, comm); // memory, output path, stability, initial state
    if (comm.isRoot()) std::cout << "stability limits and the initial state: ok\n";
    return 0;
}

// The paths `strata run` was given: `--restart ""` (an unset shell variable) asks for a continuation, not a fresh
// run; a control character in a path would split or garble every message that prints it (and the manifest).
void checkPathArguments(Arguments const& args) {
    if (args.run->count("--restart") > 0 && args.restartFrom.empty())
        throw strata::app::ConfigError("an empty file name", "--restart", "the restart file to continue from");
    for (auto const& [option, value] : {std::pair<char const*, std::string const&>{"--output", args.outputDir},
                                        {"--restart", args.restartFrom},
                                        {"--manifest", args.manifest}})
        for (unsigned char ch : value)
            if (ch < 0x20 || ch == 0x7f) {
                char code[8];
                std::snprintf(code, sizeof code, "0x%02x", ch);
                throw strata::app::ConfigError(std::string("the path holds a control character (") + code + ")", option,
                                               "a path of printable characters");
            }
}

// Rank 0 looks whether the manifest can be written there, and every rank follows its verdict.
void checkManifestWritable(strata::core::Context const& comm, std::string const& manifest) {
    int writable = 0;
    if (comm.isRoot()) {
        auto const folder = std::filesystem::absolute(manifest).parent_path();
        writable = std::filesystem::is_directory(folder) && !std::filesystem::is_directory(manifest);
    }
    MPI_Bcast(&writable, 1, MPI_INT, 0, comm.comm());
    if (!writable)
        throw strata::app::ConfigError("'" + manifest + "' cannot be written", "--manifest",
                                       "a file path in an existing folder");
}

int runCommand(strata::core::Context const& comm, strata::app::Config const& config, Arguments const& args,
               std::string const& history) {
    strata::app::RunOptions options;
    options.outputDir = args.outputDir;
    options.history = history;
    options.restartFrom = args.restartFrom;
    checkPathArguments(args);
    if (!args.manifest.empty()) checkManifestWritable(comm, args.manifest); // rank 0 writes it
    auto const summary = strata::app::runCase(config, comm, options, std::cout);
    if (!args.manifest.empty() && comm.isRoot()) writeManifest(args.manifest, summary);
    return 0;
}

// The subcommands that run under MPI: info, validate and run.
int mpiCommand(strata::core::Context const& comm, Arguments const& args, std::string const& history) {
    if (args.info->parsed()) return infoCommand(comm);
    requireSameInvocationOnEveryRank(comm, args);
    strata::app::Config const config = strata::app::loadConfig(args.configPath, args.overrides);
    if (args.validate->parsed()) return validateCommand(comm, config, args.configPath);
    return runCommand(comm, config, args, history);
}

// The exit code of the exception being handled, after its one message: 2 for a usage or configuration error (before
// any output exists), 128 + the signal for a stop, 1 for anything else.
int failureExitCode(strata::core::Context const& comm) {
    try {
        throw;
    } catch (strata::app::ConfigError const& e) {
        if (comm.isRoot()) std::cerr << "strata: configuration error: " << e.what() << "\n";
        return 2;
    } catch (strata::app::StabilityError const& e) {
        if (comm.isRoot()) std::cerr << "strata: unstable configuration: " << e.what() << "\n";
        return 2;
    } catch (strata::app::RestartError const& e) {
        if (comm.isRoot()) std::cerr << "strata: restart error: " << e.what() << "\n";
        return 2;
    } catch (strata::app::StopSignal const& e) {
        if (comm.isRoot()) std::cerr << "strata: " << e.what() << "\n";
        return 128 + e.signal();
    } catch (strata::app::StateError const& e) {
        if (comm.isRoot()) std::cerr << "strata: the run went wrong: " << e.what() << "\n";
        return 1; // every rank agreed on it (one reduction), so every rank returns
    } catch (strata::Error const& e) {
        std::cerr << "strata: error (rank " << comm.rank() << "): " << e.what() << "\n";
        return 1;
    } catch (std::bad_alloc const&) {
        // Possibly on this rank alone, while the others wait in a collective: abort the whole job, never hang.
        std::cerr << "strata: out of memory on rank " << comm.rank()
                  << " (strata validate prints the memory a run needs per rank)\n";
        if (comm.size() > 1) MPI_Abort(comm.comm(), 1);
        return 1;
    } catch (std::exception const& e) {
        std::cerr << "strata: internal error on rank " << comm.rank() << ": " << e.what() << "\n";
        if (comm.size() > 1) MPI_Abort(comm.comm(), 1);
        return 1;
    }
}

// MPI from the start of the command to its end (the Context finalises it), whatever the command throws.
int underMpi(int& argc, char**& argv, Arguments const& args, std::string const& history) {
    strata::core::Context comm(&argc, &argv);
    try {
        return mpiCommand(comm, args, history);
    } catch (std::exception const&) { // every kind failureExitCode names derives from it
        return failureExitCode(comm);
    }
}

} // namespace

// Before any other code of the program (static constructors included): the sooner the run's signals are held, the
// shorter the moment after exec in which a stop kills the process by the signal's default action.
__attribute__((constructor)) void holdStopSignalsFromTheStart() { strata::app::deferStopSignals(); }

int main(int argc, char** argv) {
    strata::app::deferStopSignals(); // again: before MPI starts its threads, which inherit the mask
    std::string const history = commandLine(argc, argv);
    CLI::App cli{"Strata: a column-physics mini-app built on a shared-memory column-stencil kernel layer"};
    cli.set_version_flag("--version", std::string(strata::app::version) + " (git " + strata::app::gitHash + ")");
    cli.require_subcommand(1);
    Arguments args;
    addRunCommand(cli, args);
    addValidateCommand(cli, args);
    addCompareCommand(cli, args);
    addInfoCommand(cli, args);
    try {
        cli.parse(argc, argv);
    } catch (CLI::ParseError const& e) {
        int const code = cli.exit(e);
        return code == 0 ? 0 : 2;
    }

    if (!args.run->parsed()) strata::app::releaseStopSignals(); // only a run answers them with a restart
    if (args.compareFiles->parsed()) return compareCommand(args);
    int const code = underMpi(argc, argv, args, history);
    if (code != 0) {
        // A failed run ends without the libraries' exit handlers (MPI is finalised, every file Strata keeps is
        // closed or left as it is): after a failed write (a full disk) HDF5's handler would flush the broken file
        // again and crash, turning exit 1 into a segmentation fault.
        std::cout.flush();
        std::cerr.flush();
        std::_Exit(code);
    }
    return 0;
}
