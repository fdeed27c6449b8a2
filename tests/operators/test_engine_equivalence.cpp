// Direct and Shmem give the same bits for randomly generated expression trees (stencil depth 1 to 4, a quarter each,
// every operator, random boundary conditions), for 1, 2, 3, 7, 64, 300 and 1000 levels, on Serial, OpenMP and Threads
// with several worker counts, with and without tiling, with and without streaming stores. Built four times
// (STRATA_TREE_PART = 0..3), 50 trees each.
#include "tests/core/backends.hpp"
#include "tests/operators/random_trees.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <sstream>
#include <vector>

using namespace strata;
using namespace strata::ops;

#ifndef STRATA_TREE_PART
#define STRATA_TREE_PART 0
#endif

namespace {

constexpr uint32_t treesPerPart = 50;
constexpr uint32_t columns = 3;

struct Case {
    std::shared_ptr<Grid const> grid;
    Field<double, Center> c0, c1;
    Field<double, Face> f0, f1;
    std::vector<double> perColumn;

    explicit Case(uint32_t levels)
        : grid(std::make_shared<Grid const>(
              Grid::stretched(levels, 1000.0, [](double s) { return s + 0.2 * s * (1 - s); }))),
          c0(grid, columns, core::MemSpace::Host), c1(grid, columns, core::MemSpace::Host),
          f0(grid, columns, core::MemSpace::Host), f1(grid, columns, core::MemSpace::Host), perColumn(columns) {
        for (uint32_t c = 0; c < columns; ++c) {
            perColumn[c] = 0.5 + c;
            for (uint32_t k = 0; k < c0.levels(); ++k) {
                c0.at(c, k) = std::sin(0.1 * k + c) + 2.0;
                c1.at(c, k) = std::cos(0.07 * k * (c + 1)) - 0.3;
            }
            for (uint32_t k = 0; k < f0.levels(); ++k) {
                f0.at(c, k) = std::sin(0.05 * k - c) * 1.5; // changes sign: upwind stencils see both directions
                f1.at(c, k) = 1.0 + 0.01 * k;
            }
        }
    }
    test::TreeLeaves leaves() const { return {{&c0, &c1}, {&f0, &f1}, {perColumn.data()}}; }
};

// Every level of every column identical bit for bit (padding excluded).
template <class S>
bool identical(Field<double, S> const& a, Field<double, S> const& b) {
    for (uint32_t c = 0; c < a.columns(); ++c) {
        auto const x = a.column(c), y = b.column(c);
        if (std::memcmp(x.data(), y.data(), x.size() * sizeof(double)) != 0) return false;
    }
    return true;
}

std::map<int, int> depthHistogram;

template <uint64_t Seed>
void checkTree() {
    constexpr uint32_t treeId = STRATA_TREE_PART * treesPerPart + Seed;
    constexpr int maxDepth = 1 + static_cast<int>(treeId % 4);
    using Stagger = std::conditional_t<(test::mix(treeId * 7919) % 2) == 0, Center, Face>;
    for (uint32_t levels : {1u, 2u, 3u, 7u, 64u, 300u, 1000u}) {
        Case data(levels);
        auto const expr = test::gen<test::mix(treeId + 12345), maxDepth, Stagger, true>(data.leaves());
        using E = std::remove_cvref_t<decltype(expr)>;
        static_assert(E::depth == maxDepth, "the generator makes trees of exactly the requested depth");
        if (levels == 1) ++depthHistogram[E::depth];
        Field<double, Stagger> reference(data.grid, columns, core::MemSpace::Host, -1.0);
        // The reference takes the general path at every level; every configuration below evaluates the levels far
        // from the boundaries on the interior path (operators without boundary branches), and must match it.
        evaluate(core::Serial{}, reference, expr, Engine::Direct, EngineOptions{48 * 1024, 0, false});

        auto check = [&](auto const& backend, Engine engine, EngineOptions options, char const* what) {
            Field<double, Stagger> out(data.grid, columns, core::MemSpace::Host, -2.0);
            EvalPlan const plan = evaluate(backend, out, expr, engine, options);
            INFO("tree " << treeId << " (depth " << E::depth << ", " << Stagger::name << "), " << levels << " levels, "
                         << what << ": " << plan.describe());
            REQUIRE(identical(out, reference));
        };
        EngineOptions const untiled{};
        EngineOptions const tiled{48 * 1024, 5};
        EngineOptions streaming{}; // Shmem's streaming stores at any size (default: destinations of 32 MiB or more)
        streaming.streamingStoreBytes = 0;
        EngineOptions streamingTiled = tiled; // tiles starting at levels 5, 10, ...: unaligned destination runs
        streamingTiled.streamingStoreBytes = 0;
        EngineOptions streamingLong = streaming; // tiles of up to 1024 levels: columns of several 128-value runs
        streamingLong.shmemBlockItems = 1024;
        check(core::Serial{}, Engine::Shmem, untiled, "Serial Shmem");
        check(core::Serial{}, Engine::Shmem, tiled, "Serial Shmem, tiles of 5 levels");
        check(core::OpenMP{}, Engine::Shmem, untiled, "OpenMP Shmem");
        check(core::Serial{}, Engine::Shmem, streaming, "Serial Shmem, streaming stores");
        check(core::Serial{}, Engine::Shmem, streamingTiled, "Serial Shmem, tiles of 5, streaming stores");
        check(core::OpenMP{}, Engine::Shmem, streamingTiled, "OpenMP Shmem, tiles of 5, streaming stores");
        check(core::Serial{}, Engine::Shmem, streamingLong, "Serial Shmem, 1024-level blocks, streaming stores");
        check(core::Serial{}, Engine::Direct, untiled, "Serial Direct");
        check(core::OpenMP{}, Engine::Direct, untiled, "OpenMP Direct");
        check(core::Threads{7, true}, Engine::Shmem, untiled, "Threads{7} Shmem");
        check(core::Threads{2, true}, Engine::Shmem, tiled, "Threads{2} Shmem, tiles of 5 levels");
        if (levels <= 64) check(core::Threads{32, true}, Engine::Shmem, untiled, "Threads{32} Shmem");
        check(core::Threads{3, true}, Engine::Direct, untiled, "Threads{3} Direct");
        // at most 3 blocks a launch: the kernels' grid-stride loops take the rest (tests/core/backends.hpp)
        check(core::GridLimited<core::Serial, 3>{}, Engine::Shmem, tiled, "Serial Shmem, tiles of 5, 3 blocks");
        check(core::GridLimited<core::Serial, 3>{}, Engine::Direct, untiled, "Serial Direct, 3 blocks");
        check(test::SmallGridThreadsBackend<5>::make(), Engine::Shmem, tiled, "Threads{5} Shmem, tiles of 5, 3 blocks");
        check(test::SmallGridThreadsBackend<3>::make(), Engine::Direct, untiled, "Threads{3} Direct, 3 blocks");
    }
}

template <std::size_t... I>
void checkTrees(std::index_sequence<I...>) {
    (checkTree<I>(), ...);
}

} // namespace

TEST_CASE("Direct and Shmem are bit-identical on random expression trees, part " STRATA_TREE_PART_NAME,
          "[operators][engines]") {
    checkTrees(std::make_index_sequence<treesPerPart>{});
    std::ostringstream histogram;
    for (auto [depth, count] : depthHistogram)
        histogram << " depth " << depth << ": " << count;
    WARN("trees by stencil depth:" << histogram.str());
}
