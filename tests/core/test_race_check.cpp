// The Threads backend must catch the classic lockstep bugs every time, whatever the thread schedule.
// These tests fail if the checker stops catching them.
#include "tests/core/lockstep_kernels.hpp"

#include <catch2/catch.hpp>

#include <vector>

using namespace strata;
namespace ls = strata::lockstep;
using Catch::Matchers::Contains;

TEST_CASE("a neighbour's shared value read without sync() is caught by Threads, every time", "[lockstep][race]") {
    std::vector<double> out(64 * 4);
    for (uint32_t workers : {2u, 7u, 32u, 64u}) {
        for (int repeat = 0; repeat < 20; ++repeat) {
            INFO(workers << " workers, repeat " << repeat);
            REQUIRE_THROWS_WITH(
                ls::launch(core::Threads{workers, true}, ls::config(4), test::NeighbourReadKernel<false>{}, out.data()),
                Contains("sync()"));
        }
    }
}

TEST_CASE("the same kernel with the sync() passes on Threads and gives the right values", "[lockstep][race]") {
    for (uint32_t workers : {1u, 2u, 7u, 32u, 64u}) {
        std::vector<double> out(64 * 4, -1.0);
        INFO(workers << " workers");
        REQUIRE_NOTHROW(
            ls::launch(core::Threads{workers, true}, ls::config(4), test::NeighbourReadKernel<true>{}, out.data()));
        for (uint32_t g = 0; g < out.size(); ++g)
            REQUIRE(out[g] == 1.0 + ((g % 64) + 1) % 64);
    }
}

TEST_CASE("with one worker there is no race to find", "[lockstep][race]") {
    std::vector<double> out(64 * 4);
    REQUIRE_NOTHROW(ls::launch(core::Threads{1, true}, ls::config(4), test::NeighbourReadKernel<false>{}, out.data()));
}

TEST_CASE("a sync() reached by only some workers is caught by Threads", "[lockstep][race]") {
    std::vector<double> out(64);
    for (uint32_t workers : {2u, 7u, 32u}) {
        INFO(workers << " workers");
        REQUIRE_THROWS_WITH(
            ls::launch(core::Threads{workers, true}, ls::config(2), test::DivergentSyncKernel{}, out.data()),
            Contains("sync()"));
    }
}

namespace {
struct OutOfRangeKernel {
    static constexpr uint32_t blockDomSize = 8;
    struct Shared {
        float a[8];
    };
    template <class W>
    void operator()(W const& worker) const {
        auto a = ls::sharedArray(worker, &Shared::a);
        ls::makeForEach(worker)([&](uint32_t i) { a[i + 1] = 1.0f; });
    }
};
} // namespace

TEST_CASE("a shared-array index out of range is caught by Threads", "[lockstep][race]") {
    REQUIRE_THROWS_WITH(ls::launch(core::Threads{4, true}, ls::config(1), OutOfRangeKernel{}),
                        Contains("out of range"));
}
