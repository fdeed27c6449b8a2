// Auto's timed choice of the store kind (operators/engine.hpp): on Serial and OpenMP, where Auto runs Shmem into a
// destination that Shmem would write with streaming stores, whether to stream is a timed choice of its own, made on
// Auto's Shmem calls by the rules of the engines' (detail::TimedChoice: its trials alternate streaming and plain
// stores, streaming first). Every call must give the bits of the explicit engines, whichever stores it took.
#include "tests/operators/engine_cases.hpp"
#include <strata/operators/operators.hpp>

#include <catch2/catch.hpp>

#include <memory>
#include <vector>

using namespace strata;
using namespace strata::ops;
using strata::test::sameBits;

TEST_CASE("Timed Auto: streaming or plain stores as a timed choice of their own, with the same bits",
          "[engine][auto][streaming]") {
    uint32_t const n = 44, columns = 23; // a shape of its own: fresh timed choices
    auto grid = std::make_shared<Grid const>(Grid::uniform(n, 4400.0));
    Field<double, Center> theta(grid, columns, core::MemSpace::Host), kappa(grid, columns, core::MemSpace::Host);
    for (uint32_t c = 0; c < columns; ++c)
        for (uint32_t k = 0; k < n; ++k) {
            theta.at(c, k) = 290.0 + 0.37 * k + 0.01 * c * k;
            kappa.at(c, k) = 1.0 + 0.05 * ((k * 7 + c) % 11);
        }
    auto const tree = test::diffusionTree(kappa, theta, 290.0);
    core::Serial const serial;
    EngineOptions always;
    always.streamingStoreBytes = 0; // every destination a candidate
    Field<double, Center> ref(grid, columns, core::MemSpace::Host), out(grid, columns, core::MemSpace::Host);
    REQUIRE(evaluate(serial, ref, tree, Engine::Direct, always).streamed == 0);
    REQUIRE(evaluate(serial, out, tree, Engine::Shmem, always).streamed == (STRATA_STREAMING_STORES ? 1u : 0u));
    CHECK(sameBits(out, ref));

    std::vector<uint32_t> shmemStreamed; // plan.streamed of Auto's Shmem calls, in order
    for (int call = 0; call < 3 * detail::TimedChoice::trials; ++call) {
        for (uint32_t c = 0; c < columns; ++c)
            for (uint32_t k = 0; k < n; ++k)
                out.at(c, k) = -1.0;
        EvalPlan const plan = evaluate(serial, out, tree, Engine::Auto, always);
        CHECK(plan.timed);
        if (plan.engine == Engine::Shmem)
            shmemStreamed.push_back(plan.streamed);
        else
            CHECK(plan.streamed == 0);
        CHECK(sameBits(out, ref));
    }
    // The engines' trials alternate Shmem and Direct, Shmem first; the store kind's trials ride on the Shmem calls:
    // streaming, plain, streaming, plain (where the CPU has streaming stores; the later Shmem calls depend on the
    // times).
    REQUIRE(shmemStreamed.size() >= 2);
    uint32_t const s = STRATA_STREAMING_STORES ? 1u : 0u;
    CHECK(shmemStreamed[0] == s);
    CHECK(shmemStreamed[1] == 0);
    if (shmemStreamed.size() >= 4) {
        CHECK(shmemStreamed[2] == s);
        CHECK(shmemStreamed[3] == 0);
    }
}
