// Lockstep scenarios from pmacc's own tests, and what pmacc does not test, on every CPU backend.
#include "tests/core/backends.hpp"
#include "tests/core/lockstep_kernels.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <numeric>
#include <vector>

using namespace strata;
namespace ls = strata::lockstep;
using test::IotaKernel;

namespace {

// Every element written exactly once and holding its own index.
void requireIota(std::vector<uint32_t> const& data, std::vector<uint32_t> const& writes) {
    for (uint32_t g = 0; g < data.size(); ++g) {
        INFO("element " << g);
        REQUIRE(writes[g] == 1);
        REQUIRE(data[g] == g);
    }
}

template <uint32_t Dom, class Backend>
void iotaWithHalfTheBlocks(Backend const& backend) {
    constexpr uint32_t n = 4096;
    std::vector<uint32_t> data(n, 0xFFFFFFFF), writes(n, 0);
    uint32_t const blocksNeeded = (n + Dom - 1) / Dom;
    ls::launch(backend, ls::config<Dom>(blocksNeeded / 2), IotaKernel{}, data.data(), writes.data(), n);
    requireIota(data, writes);
}

// A data object whose type fixes the block domain (pmacc's MakeBlockCfg trait).
struct Tile64 {
    std::vector<uint32_t> values = std::vector<uint32_t>(1000);
};

} // namespace

template <>
struct strata::lockstep::MakeBlockCfg<Tile64> {
    using type = BlockCfgOf<64>;
};

TEMPLATE_TEST_CASE("iota over 4096 elements with half the blocks, block domain 16", "[lockstep]", STRATA_CPU_BACKENDS) {
    iotaWithHalfTheBlocks<16>(TestType::make());
}

TEMPLATE_TEST_CASE("iota over 4096 elements with half the blocks, block domain 128", "[lockstep]",
                   STRATA_CPU_BACKENDS) {
    iotaWithHalfTheBlocks<128>(TestType::make());
}

TEMPLATE_TEST_CASE("dynamic shared memory with block domain 23", "[lockstep]", STRATA_CPU_BACKENDS) {
    constexpr uint32_t n = 1000, dom = 23;
    std::vector<uint32_t> out(n, 0xFFFFFFFF), writes(n, 0);
    ls::launch(TestType::make(), ls::configSMem<dom>(7, dom * sizeof(uint32_t)), test::ReverseChunkKernel{}, out.data(),
               writes.data(), n);
    for (uint32_t g = 0; g < n; ++g) {
        INFO("element " << g);
        REQUIRE(writes[g] == 1);
        uint32_t const chunk = g / dom, within = g % dom;
        REQUIRE(out[g] == chunk * dom + (dom - 1 - within));
    }
}

TEMPLATE_TEST_CASE("block domain derived from a data object", "[lockstep]", STRATA_CPU_BACKENDS) {
    Tile64 tile;
    auto const n = static_cast<uint32_t>(tile.values.size());
    std::vector<uint32_t> writes(n, 0);
    auto cfg = ls::configFor(tile, 5);
    STATIC_REQUIRE(std::is_same_v<decltype(cfg), ls::LaunchCfg<ls::CtUint32<64>>>);
    ls::launch(TestType::make(), cfg, IotaKernel{}, tile.values.data(), writes.data(), n);
    requireIota(tile.values, writes);
}

TEMPLATE_TEST_CASE("kernel-declared blockDomSize = 42", "[lockstep]", STRATA_CPU_BACKENDS) {
    constexpr uint32_t n = 1000;
    std::vector<uint32_t> data(n, 0xFFFFFFFF), writes(n, 0);
    ls::launch(TestType::make(), ls::config(3), test::DeclaredIotaKernel{}, data.data(), writes.data(), n);
    requireIota(data, writes);
    // The kernel saw its own domain: 3 blocks of 42 cover 126 elements per sweep, so 1000 needs 8 sweeps.
}

TEMPLATE_TEST_CASE("N-dimensional block domain 8 x 4 x 3", "[lockstep]", STRATA_CPU_BACKENDS) {
    constexpr uint32_t dom = 8 * 4 * 3, blocks = 5, n = dom * blocks;
    std::vector<uint32_t> x(n), y(n), z(n), writes(n, 0);
    ls::launch(TestType::make(), ls::config(blocks), test::NDKernel{}, x.data(), y.data(), z.data(), writes.data());
    for (uint32_t g = 0; g < n; ++g) {
        uint32_t const lin = g % dom;
        INFO("element " << g);
        REQUIRE(writes[g] == 1);
        REQUIRE(x[g] == lin % 8);
        REQUIRE(y[g] == (lin / 8) % 4);
        REQUIRE(z[g] == lin / 32);
    }
}

TEMPLATE_TEST_CASE("context variables across steps, makeMaster once per block", "[lockstep]", STRATA_CPU_BACKENDS) {
    constexpr uint32_t dom = 37, blocks = 9;
    std::vector<uint32_t> out(dom * blocks, 0), masterRuns(blocks, 0);
    ls::launch(TestType::make(), ls::config(blocks), test::ContextVarKernel{}, out.data(), masterRuns.data());
    for (uint32_t b = 0; b < blocks; ++b) {
        REQUIRE(masterRuns[b] == 1);
        for (uint32_t i = 0; i < dom; ++i) {
            uint32_t const next = (i + 1) % dom;
            INFO("block " << b << " index " << i);
            REQUIRE(out[b * dom + i] == 1000 + 3 * i + 3 * i + (7 * b + 1) + next * next);
        }
    }
}

TEMPLATE_TEST_CASE("block reduction and inclusive scan in shared memory, domain 100", "[lockstep]",
                   STRATA_CPU_BACKENDS) {
    constexpr uint32_t n = 100, blocks = 6;
    std::vector<int64_t> in(n * blocks);
    for (uint32_t k = 0; k < in.size(); ++k)
        in[k] = static_cast<int64_t>((k * 7919u) % 1000u) - 500;
    std::vector<int64_t> sums(blocks, -1), scans(n * blocks, -1);
    ls::launch(TestType::make(), ls::config(blocks), test::ReduceScanKernel{}, in.data(), sums.data(), scans.data());
    for (uint32_t b = 0; b < blocks; ++b) {
        int64_t running = 0;
        for (uint32_t i = 0; i < n; ++i) {
            running += in[b * n + i];
            INFO("block " << b << " index " << i);
            REQUIRE(scans[b * n + i] == running);
        }
        REQUIRE(sums[b] == running);
    }
}

TEST_CASE("Threads rejects a worker count it cannot run", "[lockstep]") {
    std::vector<uint32_t> data(16), writes(16);
    REQUIRE_THROWS_AS(
        ls::launch(core::Threads{0, true}, ls::config<16>(1), IotaKernel{}, data.data(), writes.data(), 16u), Error);
}

namespace {
// The two members of a worker that forEachInRange2D reads.
struct FakeWorker {
    uint32_t workers, index;
    uint32_t numWorkers() const { return workers; }
    uint32_t workerIdx() const { return index; }
};
} // namespace

// forEachInRange2D steps each worker's (o, i) pair instead of dividing per element: every pair must come exactly
// once, from the worker forEachInRange would give it (element o * inner + i to worker (o * inner + i) % workers),
// for worker counts below, equal to and above the inner size, one and several wraps a step.
TEST_CASE("forEachInRange2D visits every (outer, inner) pair once, on the worker of its flat index", "[lockstep]") {
    for (uint32_t workers : {1u, 3u, 7u, 30u, 32u, 256u})
        for (uint32_t inner : {1u, 2u, 7u, 30u, 31u, 64u, 300u})
            for (uint32_t outer : {1u, 3u, 8u, 34u}) {
                std::vector<int> seen(outer * inner, 0);
                bool rightWorker = true;
                for (uint32_t w = 0; w < workers; ++w)
                    strata::lockstep::forEachInRange2D(FakeWorker{workers, w}, outer, inner,
                                                       [&](uint32_t o, uint32_t i) {
                                                           REQUIRE(o < outer);
                                                           REQUIRE(i < inner);
                                                           ++seen[o * inner + i];
                                                           rightWorker = rightWorker && (o * inner + i) % workers == w;
                                                       });
                INFO(workers << " workers, " << outer << " x " << inner);
                CHECK(rightWorker);
                CHECK(std::count(seen.begin(), seen.end(), 1) == static_cast<std::ptrdiff_t>(seen.size()));
            }
}
