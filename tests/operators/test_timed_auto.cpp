// Auto's timed choice (operators/engine.hpp): on Serial and OpenMP the first calls of an expression and shape
// alternate the engines and keep each one's best time; later calls take the faster. The choice is tested with times
// fed by hand (what it must pick follows from the times, not from the code), and evaluate with it must give the bits
// of an explicit engine on every call, trial calls included (evaluateAdd adds exactly once per call).
#include "tests/operators/engine_cases.hpp"
#include <strata/operators/operators.hpp>

#include <catch2/catch.hpp>

#include <cstring>
#include <memory>
#include <vector>

using namespace strata;
using namespace strata::ops;
using strata::test::sameBits;

namespace {

struct Case {
    static constexpr uint32_t n = 48;
    uint32_t columns;
    std::shared_ptr<Grid const> grid = std::make_shared<Grid const>(Grid::uniform(n, 4800.0));
    Field<double, Center> theta, kappa;
    explicit Case(uint32_t cols)
        : columns(cols), theta(grid, cols, core::MemSpace::Host), kappa(grid, cols, core::MemSpace::Host) {
        for (uint32_t c = 0; c < cols; ++c)
            for (uint32_t k = 0; k < n; ++k) {
                theta.at(c, k) = 290.0 + 0.37 * k + 0.01 * c * k;
                kappa.at(c, k) = 1.0 + 0.05 * ((k * 7 + c) % 11);
            }
    }
    auto diffusion() const { return test::diffusionTree(kappa, theta, 290.0); }
};

} // namespace

TEST_CASE("TimedChoice: trials alternate Shmem and Direct, then the lower best time wins", "[engine][auto]") {
    SECTION("a slow first trial (page faults) does not decide") {
        detail::TimedChoice c;
        std::vector<Engine> tried;
        double const times[] = {10.0, 3.0, 2.0, 3.5}; // Shmem, Direct, Shmem, Direct
        for (double t : times) {
            REQUIRE(c.timing());
            tried.push_back(c.next());
            c.record(tried.back(), t);
        }
        CHECK(tried == std::vector<Engine>{Engine::Shmem, Engine::Direct, Engine::Shmem, Engine::Direct});
        CHECK_FALSE(c.timing());
        CHECK(c.best(Engine::Shmem) == 2.0);
        CHECK(c.best(Engine::Direct) == 3.0);
        CHECK(c.next() == Engine::Shmem);
    }
    SECTION("Direct wins when its best is lower") {
        detail::TimedChoice c;
        double const times[] = {5.0, 4.0, 4.9, 4.2};
        for (double t : times)
            c.record(c.next(), t);
        CHECK(c.next() == Engine::Direct);
        CHECK(c.next() == Engine::Direct); // stays
    }
}

TEST_CASE("TimedChoice: a clear choice is timed again every 64 calls, not in the first 32", "[engine][auto]") {
    detail::TimedChoice c;
    double const trials[] = {9.0, 5.0, 8.0, 5.5}; // Shmem's best 8.0 is 1.6x Direct's: a clear choice
    for (double t : trials)
        c.record(c.next(), t);
    std::vector<long long> rechecks;
    for (long long i = 1; i <= 200; ++i) {
        if (c.timing()) {
            rechecks.push_back(i);
            REQUIRE(c.next() == Engine::Shmem);
            c.record(Engine::Shmem, 8.5);
        } else {
            REQUIRE(c.next() == Engine::Direct);
            c.skip();
        }
    }
    CHECK(rechecks == std::vector<long long>{64, 128, 192});
}

TEST_CASE("TimedChoice: a close choice is timed again in runs of closeRun calls 4, 8, 16, 32 calls after the "
          "trials, then every 64; a faster time there wins",
          "[engine][auto]") {
    static_assert(detail::TimedChoice::closeRun == 3, "the schedule below is written for runs of three calls");
    detail::TimedChoice c;
    double const trials[] = {6.5, 5.0, 6.0, 5.5}; // Shmem's trials slowed (noise): Direct is taken, a close call
    for (double t : trials)
        c.record(c.next(), t);
    REQUIRE(c.next() == Engine::Direct);
    // 300 calls whose re-checks of Shmem are all slow (6.0): Direct stays; the re-checks' places
    std::vector<long long> rechecks;
    for (long long i = 1; i <= 300; ++i) {
        if (c.timing()) {
            rechecks.push_back(i);
            REQUIRE(c.next() == Engine::Shmem);
            c.record(Engine::Shmem, 6.0);
        } else {
            REQUIRE(c.next() == Engine::Direct);
            c.skip();
        }
    }
    CHECK(rechecks == std::vector<long long>{4,  5,  6,  8,   9,   10,  16,  17,  18,  32,  33,  34,
                                             64, 65, 66, 128, 129, 130, 192, 193, 194, 256, 257, 258});
    // The next run (calls 320-322) times Shmem after itself: its first call is still slow (an engine's time depends on
    // what ran before it), its second beats Direct's 5.0, and the run goes on timing Shmem (now the faster engine: a
    // run that lost its state would stop timing here); Shmem is taken from then on.
    for (long long i = 301; i < 320; ++i) {
        REQUIRE_FALSE(c.timing());
        c.skip();
    }
    double const run[] = {6.2, 4.5, 4.0};
    for (double t : run) {
        REQUIRE(c.timing());
        REQUIRE(c.next() == Engine::Shmem);
        c.record(Engine::Shmem, t);
    }
    CHECK_FALSE(c.timing());
    CHECK(c.next() == Engine::Shmem);
    CHECK(c.best(Engine::Shmem) == 4.0);
    CHECK(c.best(Engine::Direct) == 5.0);
    // and the re-checks now time Direct, in runs (still a close call: 5.0 / 4.0 = 1.25), from call 384
    for (long long i = 323; i < 384; ++i) {
        REQUIRE_FALSE(c.timing());
        c.skip();
    }
    for (int i = 0; i < detail::TimedChoice::closeRun; ++i) {
        REQUIRE(c.timing());
        REQUIRE(c.next() == Engine::Direct);
        c.record(Engine::Direct, 5.5);
    }
    CHECK_FALSE(c.timing());
    CHECK(c.next() == Engine::Shmem);
}

TEST_CASE("TimedChoice: a clear choice's re-check is a single call", "[engine][auto]") {
    detail::TimedChoice c;
    double const trials[] = {5.0, 9.0, 4.0, 8.0}; // Shmem 4.0, Direct 8.0: 2x apart
    for (double t : trials)
        c.record(c.next(), t);
    for (long long i = 1; i < detail::TimedChoice::recheckEvery; ++i) {
        REQUIRE_FALSE(c.timing());
        c.skip();
    }
    REQUIRE(c.timing());
    REQUIRE(c.next() == Engine::Direct);
    SECTION("a slow re-check") {
        c.record(Engine::Direct, 8.5);
        CHECK_FALSE(c.timing());
        CHECK(c.next() == Engine::Shmem);
    }
    SECTION("a re-check whose time makes the call close: still one call (judged when it was scheduled)") {
        c.record(Engine::Direct, 4.5);
        CHECK_FALSE(c.timing());
        CHECK(c.next() == Engine::Shmem);
    }
}

TEST_CASE("Timed Auto on Serial: every call gives the explicit engines' bits, and the choice settles",
          "[engine][auto]") {
    Case const k(37); // a new shape for this test: a fresh timed choice
    core::Serial const serial;
    Field<double, Center> ref(k.grid, k.columns, core::MemSpace::Host), out(k.grid, k.columns, core::MemSpace::Host);
    REQUIRE(evaluate(serial, ref, k.diffusion(), Engine::Shmem).engine == Engine::Shmem);

    std::vector<Engine> engines;
    for (int call = 0; call < detail::TimedChoice::trials + 3; ++call) {
        for (uint32_t c = 0; c < k.columns; ++c)
            for (uint32_t l = 0; l < Case::n; ++l)
                out.at(c, l) = -1.0;
        EvalPlan const plan = evaluate(serial, out, k.diffusion());
        CHECK(plan.timed);
        engines.push_back(plan.engine);
        CHECK(sameBits(out, ref));
    }
    // The trials alternate, Shmem first; after them one engine, every call (until the first re-check, the 4th call
    // after the trials).
    CHECK(engines[0] == Engine::Shmem);
    CHECK(engines[1] == Engine::Direct);
    CHECK(engines[2] == Engine::Shmem);
    CHECK(engines[3] == Engine::Direct);
    for (std::size_t i = detail::TimedChoice::trials + 1; i < engines.size(); ++i)
        CHECK(engines[i] == engines[detail::TimedChoice::trials]);
}

// (Catch runs a test case again for each section: each case below has a shape of its own, so its trials start fresh.)
TEST_CASE("Timed Auto: evaluateAdd adds once per call, trials included", "[engine][auto]") {
    Case const k(41);
    core::Serial const serial;
    {
        Field<double, Center> acc(k.grid, k.columns, core::MemSpace::Host, 0.0),
            accRef(k.grid, k.columns, core::MemSpace::Host, 0.0);
        for (int call = 0; call < detail::TimedChoice::trials + 2; ++call) {
            evaluateAdd(serial, acc, k.diffusion());
            evaluateAdd(serial, accRef, k.diffusion(), Engine::Shmem);
        }
        CHECK(sameBits(acc, accRef));
    }
}

TEST_CASE("Timed Auto off (EngineOptions::timedAuto = false): the planner's rule, untimed", "[engine][auto]") {
    Case const k(43);
    core::Serial const serial;
    Field<double, Center> ref(k.grid, k.columns, core::MemSpace::Host), out(k.grid, k.columns, core::MemSpace::Host);
    evaluate(serial, ref, k.diffusion(), Engine::Direct);
    for (int call = 0; call < detail::TimedChoice::trials + 1; ++call) {
        EngineOptions options;
        options.timedAuto = false;
        EvalPlan const plan = evaluate(serial, out, k.diffusion(), Engine::Auto, options);
        CHECK(plan.engine == Engine::Shmem);
        CHECK_FALSE(plan.timed);
        CHECK(sameBits(out, ref));
    }
}

TEST_CASE("Timed Auto applies to the one-worker CPU backends only", "[engine][auto]") {
    Case const k(5);
    Field<double, Center> out(k.grid, k.columns, core::MemSpace::Host);
    // The checking backend keeps the planner's rule: its timings mean nothing and its runs stay reproducible.
    EvalPlan const plan = evaluate(core::Threads{3}, out, k.diffusion());
    CHECK_FALSE(plan.timed);
    CHECK(plan.engine == Engine::Shmem);
    // A depth-0 tree has nothing to stage: Direct, untimed.
    Field<double, Center> scaled(k.grid, k.columns, core::MemSpace::Host);
    EvalPlan const flat = evaluate(core::Serial{}, scaled, k.theta * 2.0);
    CHECK_FALSE(flat.timed);
    CHECK(flat.engine == Engine::Direct);
}
