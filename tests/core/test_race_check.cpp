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

TEST_CASE("the checker's error for a read without sync() names the kernel as the source writes it", "[lockstep][race]") {
    std::vector<double> out(64);
    REQUIRE_THROWS_WITH(
        ls::launch(core::Threads{2, true}, ls::config(1), test::NeighbourReadKernel<false>{}, out.data()),
        Catch::Matchers::StartsWith("kernel strata::test::NeighbourReadKernel<false> (Threads backend): block 0"));
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

namespace {
// A kernel whose Shared is 512 bytes, and one whose block holds 64 but reads and writes its shared memory through the
// larger type: every element past the eighth lies outside the block's buffer.
struct WideKernel {
    struct Shared {
        double v[64];
    };
};
struct ThroughWiderSharedKernel {
    static constexpr uint32_t blockDomSize = 64;
    struct Shared {
        double v[8];
    };
    template <class W>
    void operator()(W const& worker, double* out) const {
        auto v = ls::sharedArray(worker, &WideKernel::Shared::v); // the bug: another kernel's layout
        auto forEach = ls::makeForEach(worker);
        forEach([&](uint32_t i) { v[i] = 1.0 + i; });
        worker.sync();
        forEach([&](uint32_t i) { out[i] = v[i]; });
    }
};
} // namespace

TEST_CASE("shared memory accessed past the block's buffer is caught by Threads and never touched", "[lockstep][race]") {
    for (uint32_t workers : {1u, 4u, 64u}) {
        for (int repeat = 0; repeat < 10; ++repeat) {
            INFO(workers << " workers, repeat " << repeat);
            std::vector<double> out(64, -1.0);
            REQUIRE_THROWS_WITH(
                ls::launch(core::Threads{workers, true}, ls::config(2), ThroughWiderSharedKernel{}, out.data()),
                Contains("outside the block's 64 bytes of shared memory"));
            // The stores past the buffer were not performed: a read there gives the poison pattern (a NaN), not the
            // value the kernel wrote.
            for (uint32_t i = 8; i < 64; ++i)
                REQUIRE(!(out[i] == 1.0 + i));
        }
    }
}
