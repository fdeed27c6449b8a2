// Streaming stores (operators/engine/common.hpp): the Shmem engine on Serial and OpenMP writes a destination of at
// least EngineOptions::streamingStoreBytes with non-temporal stores. They must write exactly the values of a plain
// store, at every alignment and length of a column run, for double and float, and be used exactly where the options
// say (Shmem, written not added, one worker per block). The random-tree test (test_engine_equivalence) also compares
// their bits with Direct's on every tree, tiled (unaligned tile starts) and not.
#include "tests/core/backends.hpp"
#include "tests/operators/engine_cases.hpp"
#include <strata/operators/operators.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <memory>
#include <vector>

using namespace strata;
using namespace strata::ops;
using strata::test::sameBits;

TEMPLATE_TEST_CASE("streamStore writes exactly src to dst at every offset and length, and nothing else",
                   "[engine][streaming]", double, float) {
    using T = TestType;
    constexpr uint32_t guard = 9;
    for (uint32_t offset = 0; offset < 8; ++offset)
        for (uint32_t n = 0; n <= 41; ++n) {
            alignas(64) T dst[64 + 2 * guard];
            T src[64];
            for (uint32_t i = 0; i < 64 + 2 * guard; ++i)
                dst[i] = static_cast<T>(-1.0 - i);
            for (uint32_t i = 0; i < 64; ++i)
                src[i] = static_cast<T>(std::sin(0.37 * i + offset)) * static_cast<T>(1e3);
            detail::streamStore(dst + guard + offset, src, n);
            lockstep::detail::storeFence();
            INFO("offset " << offset << ", length " << n);
            for (uint32_t i = 0; i < 64 + 2 * guard; ++i) {
                bool const written = i >= guard + offset && i < guard + offset + n;
                T const expected = written ? src[i - guard - offset] : static_cast<T>(-1.0 - i);
                REQUIRE(std::memcmp(&dst[i], &expected, sizeof(T)) == 0);
            }
        }
}

namespace {

struct Data {
    static constexpr uint32_t columns = 11;
    uint32_t n;
    std::shared_ptr<Grid const> grid;
    Field<double, Center> theta, kappa;
    explicit Data(uint32_t levels = 37)
        : n(levels), grid(std::make_shared<Grid const>(
                         Grid::stretched(n, 9000.0, [](double s) { return s + 0.3 * s * (1.0 - s); }))),
          theta(grid, columns, core::MemSpace::Host), kappa(grid, columns, core::MemSpace::Host) {
        for (uint32_t c = 0; c < columns; ++c)
            for (uint32_t k = 0; k < n; ++k) {
                theta.at(c, k) = 285.0 + 0.4 * k + std::sin(0.3 * k + c);
                kappa.at(c, k) = 1.0 + 0.1 * ((2 * k + c) % 7);
            }
    }
    auto diffusion() const { return test::diffusionTree(kappa, theta, 285.0); }
};

EngineOptions streamingAbove(std::size_t bytes, uint32_t maxTileLevels = 0) {
    EngineOptions o;
    o.streamingStoreBytes = bytes;
    o.maxTileLevels = maxTileLevels;
    return o;
}

} // namespace

TEST_CASE("the Shmem engine streams a destination of at least streamingStoreBytes on Serial and OpenMP only",
          "[engine][streaming]") {
    Data const x;
    Field<double, Center> reference(x.grid, x.columns, core::MemSpace::Host);
    evaluate(core::Serial{}, reference, x.diffusion(), Engine::Direct);
    std::size_t const bytes = std::size_t{x.theta.stride()} * x.columns * sizeof(double);

    auto run = [&](auto const& backend, Engine engine, EngineOptions const& options, uint32_t streamed) {
        Field<double, Center> out(x.grid, x.columns, core::MemSpace::Host, -7.0);
        EvalPlan const plan = evaluate(backend, out, x.diffusion(), engine, options);
        INFO(plan.describe());
        CHECK(plan.streamed == streamed);
        CHECK(sameBits(out, reference));
    };
    run(core::Serial{}, Engine::Shmem, streamingAbove(bytes), 1);     // exactly the threshold
    run(core::Serial{}, Engine::Shmem, streamingAbove(bytes + 1), 0); // one byte short of it
    run(core::Serial{}, Engine::Shmem, streamingAbove(0, 5), 1);      // tiles of 5: unaligned tile starts
    run(core::OpenMP{}, Engine::Shmem, streamingAbove(0), 1);         // several threads, one fence each
    run(core::OpenMP{}, Engine::Shmem, streamingAbove(0, 3), 1);      //
    run(core::Serial{}, Engine::Direct, streamingAbove(0), 0);        // Direct keeps its one pass
    run(core::Threads{4, true}, Engine::Shmem, streamingAbove(0), 0); // several workers per block
    run(core::Serial{}, Engine::Shmem, EngineOptions{}, 0);           // the default: 32 MiB
    run(core::GridLimited<core::Serial, 3>{}, Engine::Shmem, streamingAbove(0, 5), 1); // grid-stride blocks

    // evaluateAdd reads its destination: never streamed, and still the bits of evaluate plus an addition.
    Field<double, Center> added(x.grid, x.columns, core::MemSpace::Host, 1.5),
        expected(x.grid, x.columns, core::MemSpace::Host);
    for (uint32_t c = 0; c < x.columns; ++c)
        for (uint32_t k = 0; k < x.n; ++k)
            expected.at(c, k) = 1.5 + reference.at(c, k);
    EvalPlan const plan = evaluateAdd(core::Serial{}, added, x.diffusion(), Engine::Shmem, streamingAbove(0));
    CHECK(plan.streamed == 0);
    CHECK(sameBits(added, expected));

    // Fused: the written target streams, the accumulated one does not; one launch, the same bits.
    Field<double, Center> a(x.grid, x.columns, core::MemSpace::Host), b(x.grid, x.columns, core::MemSpace::Host, 1.5);
    EvalPlan const fused = evaluateFused(core::Serial{}, Engine::Shmem, streamingAbove(0), assign(a, x.diffusion()),
                                         accumulate(b, x.diffusion()));
    CHECK(fused.targets == 2);
    CHECK(fused.streamed == 1);
    CHECK(sameBits(a, reference));
    CHECK(sameBits(b, expected));
}

TEST_CASE("streaming stores: columns and tiles longer than one 128-value run", "[engine][streaming]") {
    Data const x(300); // runs of 128, 128 and 44 values a column, or per tile
    Field<double, Center> reference(x.grid, x.columns, core::MemSpace::Host);
    evaluate(core::Serial{}, reference, x.diffusion(), Engine::Direct);
    for (uint32_t tile : {0u, 200u, 129u}) { // the whole column; tiles of 200 + 100; 129 + 129 + 42
        EngineOptions o = streamingAbove(0, tile);
        o.shmemBlockItems = 1024; // on one worker a tile is otherwise at most 128 levels: a single run
        auto run = [&](auto const& backend) {
            Field<double, Center> out(x.grid, x.columns, core::MemSpace::Host, -7.0);
            EvalPlan const plan = evaluate(backend, out, x.diffusion(), Engine::Shmem, o);
            INFO(plan.describe());
            CHECK(plan.tileLevels > 128);
            CHECK(plan.streamed == 1);
            CHECK(sameBits(out, reference));
        };
        run(core::Serial{});
        run(core::OpenMP{});
    }
}
