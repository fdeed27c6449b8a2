// Context under mpiexec: the global reproducible sum has the same bits as one local ReproducibleSum over the whole
// array, whatever the number of ranks; node-local rank and device mapping are sane.
//
// Every rank builds the same global array, keeps a balanced contiguous chunk, and compares ctx.sum(chunk) with the
// whole-array sum it computes itself. Exit code is nonzero on every rank if any rank saw a failure.
#include <strata/core/comms.hpp>

#include <bit>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <span>
#include <string>
#include <vector>

using strata::core::Context;
using strata::core::ReproducibleSum;

namespace {

constexpr std::size_t globalSize = 100003;

// Magnitudes 2^-997 .. 2^997 (about 1e-300 .. 1e300), mixed signs, from raw mt19937_64 bits: the same on every rank.
std::vector<double> globalArray() {
    std::mt19937_64 rng(42);
    std::vector<double> xs(globalSize);
    for (double& x : xs) {
        std::uint64_t const bits = rng();
        double const mantissa = 1.0 + std::ldexp(static_cast<double>(bits >> 12), -52);
        int const e = -997 + static_cast<int>(rng() % 1995);
        x = std::ldexp(mantissa, e) * ((bits & 1u) != 0 ? -1.0 : 1.0);
    }
    return xs;
}

int failures = 0;

void check(bool ok, Context const& ctx, char const* what) {
    if (ok) return;
    ++failures;
    std::fprintf(stderr, "test_comms_mpi: rank %d of %d: FAILED: %s\n", ctx.rank(), ctx.size(), what);
}
void check(bool ok, Context const& ctx, std::string const& what) { check(ok, ctx, what.c_str()); }

} // namespace

int main(int argc, char** argv) {
    int globalFailures = 0;
    {
        Context ctx(&argc, &argv);
        int const rank = ctx.rank(), size = ctx.size();

        // Node-local numbering and device mapping.
        check(size >= 1 && rank >= 0 && rank < size, ctx, "0 <= rank < size");
        // Started by strata_add_mpi_test with the rank count it asked mpiexec for.
        char const* expectedRanks = std::getenv("STRATA_EXPECTED_RANKS");
        check(expectedRanks != nullptr && std::atoi(expectedRanks) == size, ctx,
              "STRATA_EXPECTED_RANKS (" + std::string(expectedRanks ? expectedRanks : "unset") + ") == size " +
                  std::to_string(size));
        check(ctx.isRoot() == (rank == 0), ctx, "isRoot() == (rank == 0)");
        check(ctx.localSize() >= 1 && ctx.localSize() <= size, ctx, "1 <= localSize <= size");
        check(ctx.localRank() >= 0 && ctx.localRank() < ctx.localSize(), ctx, "0 <= localRank < localSize");
        check(ctx.deviceFor(0) == -1, ctx, "deviceFor(0) == -1");
        check(ctx.deviceFor(2) == ctx.localRank() % 2, ctx, "deviceFor(2) == localRank % 2");
        check(ctx.deviceFor(1) == 0, ctx, "deviceFor(1) == 0");
        // Each node has exactly one local rank 0, and the node sizes add up to the world size.
        int const nodeLeader = ctx.localRank() == 0 ? 1 : 0;
        int const leaderLocalSize = nodeLeader != 0 ? ctx.localSize() : 0;
        int leaders = 0, coveredRanks = 0;
        MPI_Allreduce(&nodeLeader, &leaders, 1, MPI_INT, MPI_SUM, ctx.comm());
        MPI_Allreduce(&leaderLocalSize, &coveredRanks, 1, MPI_INT, MPI_SUM, ctx.comm());
        check(leaders >= 1 && coveredRanks == size, ctx, "local sizes of the node leaders add up to size");

        // The global sum against the local whole-array sum.
        std::vector<double> const xs = globalArray();
        std::size_t const begin = globalSize * static_cast<std::size_t>(rank) / static_cast<std::size_t>(size);
        std::size_t const end = globalSize * static_cast<std::size_t>(rank + 1) / static_cast<std::size_t>(size);
        std::span<double const> const chunk = std::span<double const>(xs).subspan(begin, end - begin);

        ReproducibleSum whole;
        whole.add(xs);
        double const expected = whole.value();
        double const got = ctx.sum(chunk);
        check(std::isfinite(expected), ctx, "the whole-array sum is finite");
        check(std::bit_cast<std::uint64_t>(got) == std::bit_cast<std::uint64_t>(expected), ctx,
              "ctx.sum(chunk) has the bits of the whole-array ReproducibleSum");

        // Uneven split: everything on the last rank, nothing elsewhere.
        std::span<double const> const lopsided = rank == size - 1 ? std::span<double const>(xs) : chunk.first(0);
        check(std::bit_cast<std::uint64_t>(ctx.sum(lopsided)) == std::bit_cast<std::uint64_t>(expected), ctx,
              "ctx.sum with all data on one rank");

        // Errors raised alike: every rank learns the lowest failing rank and its own words; no problem, no rank.
        auto const none = strata::core::firstProblem(ctx.comm(), "");
        check(none.rank == size && none.problem.empty(), ctx, "firstProblem with no problem gives {size, \"\"}");
        std::string const mine = rank % 2 == 1 || size == 1 ? "disk full on rank " + std::to_string(rank) : "";
        auto const first = strata::core::firstProblem(ctx.comm(), mine);
        int const expectedFirst = size == 1 ? 0 : 1;
        check(first.rank == expectedFirst && first.problem == "disk full on rank " + std::to_string(expectedFirst), ctx,
              "firstProblem gives the lowest failing rank's text on every rank");
        std::string text = rank == 0 ? std::string(1000, 'x') + "root" : "";
        strata::core::broadcast(ctx.comm(), text);
        check(text == std::string(1000, 'x') + "root", ctx, "broadcast gives rank 0's text to every rank");

        if (ctx.isRoot())
            std::printf("test_comms_mpi: ranks %d sum %.17g bits 0x%016" PRIx64 "\n", size, got,
                        std::bit_cast<std::uint64_t>(got));

        MPI_Allreduce(&failures, &globalFailures, 1, MPI_INT, MPI_SUM, ctx.comm());
        if (ctx.isRoot() && globalFailures != 0) std::printf("test_comms_mpi: %d failed checks\n", globalFailures);
    }
    return globalFailures == 0 ? 0 : 1;
}
