// evaluateFused: several destinations from one kernel. Every destination must hold the bits of evaluating its target
// on its own (Shmem on Serial as the reference), on every CPU backend and engine, in one launch; on the checking
// backend (several workers per block, every shared access checked) the targets share the block's buffers one after
// the other, so a missing sync between them is reported as a race.
#include "tests/core/backends.hpp"
#include "tests/operators/engine_cases.hpp"
#include <strata/operators/operators.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <memory>
#include <utility>
#include <vector>

using namespace strata;
using namespace strata::ops;
using strata::test::sameBits;

namespace {

struct Fixture {
    static constexpr uint32_t n = 40, columns = 13;
    std::shared_ptr<Grid const> grid = std::make_shared<Grid const>(
        Grid::stretched(n, 12000.0, [](double s) { return s * s * (1.5 - 0.5 * s) + 0.5 * s * (1.0 - s); }));
    Field<double, Center> theta{grid, columns, core::MemSpace::Host}, kappa{grid, columns, core::MemSpace::Host},
        q{grid, columns, core::MemSpace::Host};
    Field<double, Face> w{grid, columns, core::MemSpace::Host};
    Fixture() {
        for (uint32_t c = 0; c < columns; ++c) {
            for (uint32_t k = 0; k < n; ++k) {
                theta.at(c, k) = 280.0 + 0.5 * k + 0.1 * c + 0.03 * ((k * k + c) % 7);
                kappa.at(c, k) = 1.0 + 0.2 * ((3 * k + c) % 5);
                q.at(c, k) = 0.01 * (1.0 + ((k + 2 * c) % 9));
            }
            for (uint32_t k = 0; k <= n; ++k)
                w.at(c, k) = 0.3 * ((k + c) % 3) - 0.2;
        }
    }
    // Four targets of different depths and staggerings.
    auto diffusion() const { return test::diffusionTree(kappa, theta, 280.0); }
    auto advection() const {
        auto const div = DivergenceF2C{};
        auto const up = Upwind3rdOrderBiasedProductC2F{ThirdOrderOneSided{}, ThirdOrderOneSided{}};
        return -(div(up(w, q)) - q * div(w));
    }
    auto gradient() const { return GradientC2F{SetValue{280.0}, SetGradient{0.0}}(theta); }
    auto scaled() const { return theta * 2.0 + q; }
};

struct Outputs {
    Field<double, Center> a, b, d;
    Field<double, Face> f;
    explicit Outputs(Fixture const& x)
        : a(x.grid, x.columns, core::MemSpace::Host, 0.0), b(x.grid, x.columns, core::MemSpace::Host, 0.5),
          d(x.grid, x.columns, core::MemSpace::Host, 0.0), f(x.grid, x.columns, core::MemSpace::Host, 0.0) {}
};

template <class Backend>
void checkBackend(Backend const& backend, Fixture const& x, Outputs const& ref) {
    for (Engine engine : {Engine::Direct, Engine::Shmem, Engine::Auto}) {
        INFO("backend " << Backend::name << ", engine " << engineName(engine));
        Outputs out(x);
        for (int call = 0; call < 5; ++call) { // Auto: its timed trials and its choice (b accumulates each call)
            uint64_t const before = lockstep::launchCounter().load();
            EvalPlan const plan =
                evaluateFused(backend, engine, EngineOptions{}, assign(out.a, x.diffusion()),
                              accumulate(out.b, x.advection()), assign(out.f, x.gradient()), assign(out.d, x.scaled()));
            CHECK(lockstep::launchCounter().load() - before == 1);
            CHECK(plan.targets == 4);
            if (engine != Engine::Auto) CHECK(plan.engine == engine);
        }
        CHECK(sameBits(out.a, ref.a));
        CHECK(sameBits(out.b, ref.b));
        CHECK(sameBits(out.f, ref.f));
        CHECK(sameBits(out.d, ref.d));
    }
}

} // namespace

TEST_CASE("evaluateFused: one launch, the bits of each target evaluated alone", "[engine][fused]") {
    Fixture const x;
    Outputs ref(x);
    core::Serial const serial;
    evaluate(serial, ref.a, x.diffusion(), Engine::Shmem);
    for (int call = 0; call < 5; ++call)
        evaluateAdd(serial, ref.b, x.advection(), Engine::Shmem);
    evaluate(serial, ref.f, x.gradient(), Engine::Shmem);
    evaluate(serial, ref.d, x.scaled(), Engine::Direct);

    checkBackend(serial, x, ref);
    checkBackend(core::OpenMP{}, x, ref);
    checkBackend(core::Threads{3}, x, ref);
    checkBackend(core::Threads{7}, x, ref);
    checkBackend(test::SmallGridThreadsBackend<7>::make(), x, ref); // 3 blocks a launch: grid-stride
}

TEST_CASE("evaluateFused: columns that need Shmem tiles are evaluated target by target", "[engine][fused]") {
    Fixture const x;
    Outputs ref(x), out(x);
    core::Serial const serial;
    evaluate(serial, ref.a, x.diffusion(), Engine::Shmem);
    evaluate(serial, ref.f, x.gradient(), Engine::Shmem);
    EngineOptions tiled;
    tiled.maxTileLevels = 16;
    uint64_t const before = lockstep::launchCounter().load();
    EvalPlan const plan = evaluateFused(core::Threads{4}, Engine::Shmem, tiled, assign(out.a, x.diffusion()),
                                        assign(out.f, x.gradient()));
    CHECK(lockstep::launchCounter().load() - before == 2);
    CHECK(plan.targets == 1);
    CHECK(plan.tiles > 1);
    CHECK(sameBits(out.a, ref.a));
    CHECK(sameBits(out.f, ref.f));
}

TEST_CASE("one worker: a single target's Shmem tile is at most a block's items; fused targets keep whole columns",
          "[engine][fused]") {
    Fixture const x;
    Outputs ref(x), out(x);
    core::Serial const serial;
    EvalPlan const whole = evaluate(serial, ref.a, x.diffusion(), Engine::Shmem);
    CHECK(whole.tileLevels == Fixture::n); // 40 levels: under the default 128
    evaluate(serial, ref.f, x.gradient(), Engine::Shmem);
    EngineOptions small;
    small.shmemBlockItems = 16;
    EvalPlan const single = evaluate(serial, out.a, x.diffusion(), Engine::Shmem, small);
    CHECK(single.tileLevels == 16);
    CHECK(single.tiles == 3);
    CHECK(sameBits(out.a, ref.a));
    // on a backend with many workers the items set the columns a block, not the tile
    CHECK(evaluate(core::Threads{4}, out.a, x.diffusion(), Engine::Shmem, small).tileLevels == Fixture::n);
    // several targets: whole columns, one launch
    uint64_t const before = lockstep::launchCounter().load();
    EvalPlan const fused =
        evaluateFused(serial, Engine::Shmem, small, assign(out.a, x.diffusion()), assign(out.f, x.gradient()));
    CHECK(lockstep::launchCounter().load() - before == 1);
    CHECK(fused.targets == 2);
    CHECK(fused.tiles == 1);
    CHECK(sameBits(out.a, ref.a));
    CHECK(sameBits(out.f, ref.f));
}

TEST_CASE("evaluateFused: a destination read by a target, a destination given twice, other columns: errors",
          "[engine][fused]") {
    Fixture x;
    Outputs out(x);
    core::Serial const serial;
    // b is written by the second target and read by the first: the result would depend on the order.
    CHECK_THROWS_AS(
        evaluateFused(serial, Engine::Auto, EngineOptions{}, assign(out.a, out.b * 2.0), assign(out.b, x.scaled())),
        Error);
    CHECK_THROWS_AS(evaluateFused(serial, Engine::Direct, EngineOptions{}, assign(out.a, x.scaled()),
                                  accumulate(out.a, x.diffusion())),
                    Error);
    Field<double, Center> other(x.grid, x.columns + 1, core::MemSpace::Host);
    CHECK_THROWS_AS(evaluateFused(serial, Engine::Direct, EngineOptions{}, assign(out.a, x.scaled()),
                                  assign(other, ops::asExpr(1.0))),
                    Error);
}

namespace {
// Counts its visits of (field, column, level): a field of counters per field, in host memory.
struct CountVisits {
    int* counts;
    uint32_t columns, levels;
    void operator()(uint32_t i, uint32_t c, uint32_t k) const { ++counts[(i * columns + c) * levels + k]; }
};
} // namespace

TEMPLATE_TEST_CASE("forEachPointOfFields: every (field, column, level) once, in one launch", "[engine][fused]",
                   test::SerialBackend, test::OpenMPBackend, test::ThreadsBackend<3>, test::ThreadsBackend<32>,
                   STRATA_SMALL_GRID_BACKENDS) {
    auto const backend = TestType::make();
    // 30 levels: 8 columns a block of many workers (one field each), a partial last block; 1 level; a column deeper
    // than a block
    for (auto [columns, levels] : {std::pair{67u, 30u}, std::pair{5u, 1u}, std::pair{3u, 300u}}) {
        std::vector<int> counts(3u * columns * levels, 0);
        uint64_t const launches = lockstep::launchCounter().load();
        forEachPointOfFields<3>(backend, columns, levels, CountVisits{counts.data(), columns, levels});
        INFO(columns << " columns, " << levels << " levels");
        CHECK(lockstep::launchCounter().load() - launches == 1);
        CHECK(std::count(counts.begin(), counts.end(), 1) == static_cast<std::ptrdiff_t>(counts.size()));
    }
}
