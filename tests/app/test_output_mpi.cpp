// OutputFile under mpiexec: whatever the number of ranks, the file holds the same values, bit for bit the same as
// one rank writing alone; errors on one rank reach every rank without a deadlock.
//
// Usage: test_output_mpi <directory>. Writes <directory>/npN_*.nc (N = ranks), so runs at different N never share a
// file. Exit code is nonzero on every rank if any rank saw a failure.
#include "output_test_support.hpp"
#include <strata/app/io/output.hpp>
#include <strata/core/error.hpp>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

namespace fs = std::filesystem;
using strata::app::OutputFile;
using strata::app::OutputFileSpec;
using strata::core::Context;
using namespace strata::test;

namespace {

int failures = 0;

void check(bool ok, Context const& ctx, std::string const& what) {
    if (ok) return;
    ++failures;
    std::fprintf(stderr, "test_output_mpi: rank %d of %d: FAILED: %s\n", ctx.rank(), ctx.size(), what.c_str());
}

// Parallel write, read back on rank 0, and bfb against the same file written by rank 0 alone.
void checkLayout(Context const& ctx, fs::path const& dir, bool latlon, bool doublePrecision) {
    std::string const name = "np" + std::to_string(ctx.size()) + (latlon ? "_latlon" : "_ncol");
    OutputFileSpec spec = smallSpec((dir / (name + ".nc")).string(), latlon, doublePrecision);
    auto const [first, count] = shareOf(spec.horizontal.columns(), ctx.rank(), ctx.size());
    writeFile(ctx, spec, first, count);
    if (!ctx.isRoot()) return;

    for (auto const& entry : fs::directory_iterator(dir))
        check(!(entry.path().filename().string().starts_with(name + ".nc.") && entry.path().extension() == ".partial"),
              ctx, name + ": " + entry.path().string() + " left after close()");
    {
        netCDF::NcFile file(spec.path, netCDF::NcFile::read);
        std::string const mismatch = checkValues(file, spec);
        check(mismatch.empty(), ctx, name + ": " + mismatch);
    }
    OutputFileSpec serial = spec;
    serial.path = (dir / (name + "_serial.nc")).string();
    {
        Context self(MPI_COMM_SELF);
        writeFile(self, serial, 0, static_cast<uint32_t>(serial.horizontal.columns()));
    }
    std::ostringstream report;
    int const status = strata::app::compareFiles(serial.path, spec.path, {.bfb = true}, report);
    check(status == 0, ctx, name + ": differs from the serial file:\n" + report.str());
}

// Every rank must get the Error: rank 0 cannot create the file; one rank passes the wrong size.
void checkErrorsReachEveryRank(Context const& ctx, fs::path const& dir) {
    fs::path const plain = dir / ("np" + std::to_string(ctx.size()) + "_plain_file");
    if (ctx.isRoot()) std::ofstream(plain) << "not a directory";
    ctx.barrier();
    OutputFileSpec spec = smallSpec((plain / "out.nc").string(), true, true);
    auto const [first, count] = shareOf(spec.horizontal.columns(), ctx.rank(), ctx.size());
    bool thrown = false;
    try {
        OutputFile out(ctx, spec, first, count);
    } catch (strata::Error const& e) {
        thrown = std::string(e.what()).find("out.nc") != std::string::npos;
    }
    check(thrown, ctx, "a file that cannot be created: no strata::Error naming it on this rank");

    spec.path = (dir / ("np" + std::to_string(ctx.size()) + "_wrong_size.nc")).string();
    OutputFile out(ctx, spec, first, count);
    uint32_t const claimed = ctx.rank() == ctx.size() - 1 ? count + 1 : count; // the last rank is wrong
    thrown = false;
    try {
        writeRecord(out, spec, first, claimed, 0);
    } catch (strata::Error const&) {
        thrown = true;
    }
    check(thrown, ctx, "a wrong data size on the last rank: no strata::Error on this rank");
    writeRecord(out, spec, first, count, 0); // still usable: nobody is stuck in a collective
    out.close();
}

// Destroyed without close() on every rank: the .partial stays, nothing is renamed.
void checkUnwinding(Context const& ctx, fs::path const& dir) {
    OutputFileSpec const spec =
        smallSpec((dir / ("np" + std::to_string(ctx.size()) + "_died.nc")).string(), true, true);
    auto const [first, count] = shareOf(spec.horizontal.columns(), ctx.rank(), ctx.size());
    std::string partial;
    try {
        OutputFile out(ctx, spec, first, count);
        partial = out.partialPath(); // every rank knows rank 0's temporary name
        writeRecord(out, spec, first, count, 0);
        throw std::runtime_error("the model blew up");
    } catch (std::runtime_error const&) {
    }
    ctx.barrier();
    check(partial.starts_with(spec.path + ".") && partial.ends_with(".partial"), ctx, "temporary name " + partial);
    if (ctx.isRoot()) {
        check(fs::exists(partial), ctx, "no .partial after unwinding");
        check(!fs::exists(spec.path), ctx, "a finished file after unwinding");
    }
}

} // namespace

int main(int argc, char** argv) {
    int globalFailures = 0;
    {
        Context ctx(&argc, &argv);
        if (argc != 2) {
            if (ctx.isRoot()) std::fprintf(stderr, "usage: test_output_mpi <directory>\n");
            return 2;
        }
        fs::path const dir = argv[1];
        // Started by strata_add_mpi_test with the rank count it asked mpiexec for.
        char const* expected = std::getenv("STRATA_EXPECTED_RANKS");
        check(expected != nullptr && std::atoi(expected) == ctx.size(), ctx,
              "STRATA_EXPECTED_RANKS (" + std::string(expected ? expected : "unset") + ") == size " +
                  std::to_string(ctx.size()));
        try {
            if (ctx.isRoot()) fs::create_directories(dir);
            ctx.barrier();
            checkLayout(ctx, dir, true, true);
            checkLayout(ctx, dir, false, false);
            checkErrorsReachEveryRank(ctx, dir);
            checkUnwinding(ctx, dir);
        } catch (std::exception const& e) {
            check(false, ctx, std::string("unexpected exception: ") + e.what());
            MPI_Abort(ctx.comm(), 3);
        }
        MPI_Allreduce(&failures, &globalFailures, 1, MPI_INT, MPI_SUM, ctx.comm());
        if (ctx.isRoot())
            std::printf("test_output_mpi: %d ranks: %s\n", ctx.size(), globalFailures == 0 ? "passed" : "FAILED");
    }
    return globalFailures == 0 ? 0 : 1;
}
