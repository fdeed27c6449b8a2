// Block collectives (core/lockstep/collectives.hpp, core/threaded_collectives.hpp): the results and their bits do not
// depend on the worker count, `+` follows the documented pairwise tree (and so differs from a left-to-right sum), and
// the checking backend reports a collective that not every worker reaches, one inside a divergent branch, and a result
// read before the collective finished.
#include "tests/core/backends.hpp"
#include <strata/core/lockstep.hpp>
#include <strata/core/threaded.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

using namespace strata;
namespace ls = strata::lockstep;
using Catch::Matchers::Contains;

namespace {

constexpr uint32_t columns = 4;

// x -> a x + b on integers modulo 2^64: associative and exact, not commutative. compose(f, g) applies f, then g.
struct Affine {
    uint64_t a = 1, b = 0;
    bool operator==(Affine const&) const = default;
};
struct Compose {
    STRATA_HD Affine operator()(Affine const& f, Affine const& g) const { return {f.a * g.a, f.b * g.a + g.b}; }
};

// Everything one launch computes, per column.
struct Results {
    std::vector<double> sum, min, max, broadcast, inclusive, exclusive;
    std::vector<uint8_t> any, all;
    std::vector<Affine> fold, affineScan;
    explicit Results(uint32_t n)
        : sum(columns), min(columns), max(columns), broadcast(columns), inclusive(columns * n), exclusive(columns * n),
          any(columns), all(columns), fold(columns), affineScan(columns * n) {}
};

template <class T>
bool sameBits(std::vector<T> const& a, std::vector<T> const& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}
bool sameBits(Results const& a, Results const& b) {
    return sameBits(a.sum, b.sum) && sameBits(a.min, b.min) && sameBits(a.max, b.max) &&
           sameBits(a.broadcast, b.broadcast) && sameBits(a.inclusive, b.inclusive) &&
           sameBits(a.exclusive, b.exclusive) && a.any == b.any && a.all == b.all && a.fold == b.fold &&
           a.affineScan == b.affineScan;
}

struct Inputs {
    std::vector<double> x;
    std::vector<uint8_t> flags;
    std::vector<Affine> maps;
    std::vector<uint32_t> source; // the element each column broadcasts
};

// Values over seven orders of magnitude with both signs (so that summation orders round differently); flags none,
// one, all and random per column.
Inputs makeInputs(uint32_t n, uint32_t seed) {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> unit(-1.0, 1.0);
    std::uniform_int_distribution<int> exponent(-3, 3);
    Inputs in;
    in.x.resize(columns * n);
    for (auto& v : in.x)
        v = unit(rng) * std::pow(10.0, exponent(rng));
    in.flags.assign(columns * n, 0);
    in.flags[1 * n + rng() % n] = 1;
    for (uint32_t k = 0; k < n; ++k) {
        in.flags[2 * n + k] = 1;
        in.flags[3 * n + k] = static_cast<uint8_t>(rng() % 2);
    }
    in.maps.resize(columns * n);
    for (auto& m : in.maps)
        m = {rng() | 1u, rng()};
    for (uint32_t c = 0; c < columns; ++c)
        in.source.push_back(static_cast<uint32_t>(rng() % n));
    return in;
}

struct Args {
    double const* x;
    uint8_t const* flags;
    Affine const* maps;
    uint32_t const* source;
    double* sum;
    double* min;
    double* max;
    double* broadcast;
    double* inclusive;
    double* exclusive;
    uint8_t* any;
    uint8_t* all;
    Affine* fold;
    Affine* affineScan;
};

Args argsOf(Inputs const& in, Results& r) {
    return {in.x.data(),  in.flags.data(), in.maps.data(),     in.source.data(),   r.sum.data(),
            r.min.data(), r.max.data(),    r.broadcast.data(), r.inclusive.data(), r.exclusive.data(),
            r.any.data(), r.all.data(),    r.fold.data(),      r.affineScan.data()};
}

// Every lockstep collective once per column.
template <uint32_t N>
struct LockstepCollectives {
    static constexpr uint32_t blockDomSize = N;
    struct Shared {
        double values[N];
        bool flags[N];
        Affine maps[N];
    };

    template <class Worker>
    STRATA_HD void operator()(Worker const& worker, Args const& a) const {
        auto values = ls::sharedArray(worker, &Shared::values);
        auto flags = ls::sharedArray(worker, &Shared::flags);
        auto maps = ls::sharedArray(worker, &Shared::maps);
        auto forEach = ls::makeForEach(worker);
        uint32_t const c = worker.blockDomIdx();
        auto x = forEach([&](uint32_t k) { return a.x[c * N + k]; });
        auto flag = forEach([&](uint32_t k) { return a.flags[c * N + k] != 0; });
        auto map = forEach([&](uint32_t k) { return a.maps[c * N + k]; });

        double const total = ls::sum(forEach, values, x);
        double const smallest = ls::minimum(forEach, values, x);
        double const largest = ls::maximum(forEach, values, x);
        bool const any = ls::anyOf(forEach, flags, flag);
        bool const all = ls::allOf(forEach, flags, flag);
        Affine const fold = ls::reduce(forEach, maps, map, Compose{});
        double const picked = ls::broadcast(forEach, values, x, a.source[c]);
        auto inclusive = ls::inclusiveScan(forEach, values, x, ls::Plus{});
        auto exclusive = ls::exclusiveScan(forEach, values, x, 0.0, ls::Plus{});
        auto affineScan = ls::inclusiveScan(forEach, maps, map, Compose{});

        ls::makeMaster(worker)([&] {
            a.sum[c] = total;
            a.min[c] = smallest;
            a.max[c] = largest;
            a.any[c] = any;
            a.all[c] = all;
            a.fold[c] = fold;
            a.broadcast[c] = picked;
        });
        forEach(
            [&](uint32_t k, double const in, double const ex, Affine const& m) {
                a.inclusive[c * N + k] = in;
                a.exclusive[c * N + k] = ex;
                a.affineScan[c * N + k] = m;
            },
            inclusive, exclusive, affineScan);
    }
};

// The same through `threaded`, over the interdependent axis (of N, or of a run-time extent under the bound N: the
// columns are ctx.extent() long).
template <uint32_t N>
struct ThreadedCollectives {
    Args a;

    template <class Ctx>
    STRATA_HD void operator()(Ctx& ctx, uint32_t c) const {
        auto values = ctx.template staticSharedArray<double, N>();
        auto flags = ctx.template staticSharedArray<bool, N>();
        auto maps = ctx.template staticSharedArray<Affine, N>();
        Args const& args = a;
        uint32_t const n = ctx.extent();
        auto x = [&](uint32_t k) { return args.x[c * n + k]; };
        auto flag = [&](uint32_t k) { return args.flags[c * n + k] != 0; };
        auto map = [&](uint32_t k) { return args.maps[c * n + k]; };

        double const total = threaded::reduce(ctx, values, x, ls::Plus{});
        double const smallest = threaded::reduce(ctx, values, x, ls::Min{});
        double const largest = threaded::reduce(ctx, values, x, ls::Max{});
        bool const any = threaded::reduce(ctx, flags, flag, ls::LogicalOr{});
        bool const all = threaded::reduce(ctx, flags, flag, ls::LogicalAnd{});
        Affine const fold = threaded::reduce(ctx, maps, map, Compose{});
        double const picked = threaded::broadcast(ctx, values, args.source[c], x);
        threaded::inclusiveScan(
            ctx, values, x, [&](uint32_t k, double s) { args.inclusive[c * n + k] = s; }, ls::Plus{});
        threaded::exclusiveScan(
            ctx, values, x, 0.0, [&](uint32_t k, double s) { args.exclusive[c * n + k] = s; }, ls::Plus{});
        threaded::inclusiveScan(
            ctx, maps, map, [&](uint32_t k, Affine const& s) { args.affineScan[c * n + k] = s; }, Compose{});
        if (ctx.worker().workerIdx() == 0) {
            args.sum[c] = total;
            args.min[c] = smallest;
            args.max[c] = largest;
            args.any[c] = any;
            args.all[c] = all;
            args.fold[c] = fold;
            args.broadcast[c] = picked;
        }
    }
};

template <uint32_t N, class Backend>
Results runLockstep(Backend const& backend, Inputs const& in) {
    Results r(N);
    ls::launch(backend, ls::config(columns), LockstepCollectives<N>{}, argsOf(in, r));
    return r;
}

template <uint32_t N, class Backend>
Results runThreaded(Backend const& backend, Inputs const& in) {
    Results r(N);
    constexpr std::size_t bytes =
        ls::collectiveBytes<double, N>() + ls::collectiveBytes<bool, N>() + ls::collectiveBytes<Affine, N>();
    threaded::threaded(backend, threaded::independent(columns), threaded::interdependent<N>(bytes),
                       ThreadedCollectives<N>{argsOf(in, r)});
    return r;
}

// Through threaded with a run-time extent n under the bound N.
template <uint32_t N, class Backend>
Results runThreadedUpTo(Backend const& backend, Inputs const& in, uint32_t n) {
    Results r(n);
    constexpr std::size_t bytes =
        ls::collectiveBytes<double, N>() + ls::collectiveBytes<bool, N>() + ls::collectiveBytes<Affine, N>();
    threaded::threaded(backend, threaded::independent(columns), threaded::interdependentUpTo<N>(n, bytes),
                       ThreadedCollectives<N>{argsOf(in, r)});
    return r;
}

double leftToRight(double const* x, uint32_t n) {
    double s = 0;
    for (uint32_t k = 0; k < n; ++k)
        s += x[k];
    return s;
}

// Serial's results against the documented orders and exact answers.
void checkAgainstHost(Results const& r, Inputs const& in, uint32_t n) {
    for (uint32_t c = 0; c < columns; ++c) {
        INFO("column " << c);
        std::vector<double> const x(in.x.begin() + c * n, in.x.begin() + (c + 1) * n);
        double const tree = ls::detail::serialTreeReduce(x, ls::Plus{});
        REQUIRE(std::memcmp(&r.sum[c], &tree, sizeof(double)) == 0);
        REQUIRE(r.min[c] == *std::min_element(x.begin(), x.end()));
        REQUIRE(r.max[c] == *std::max_element(x.begin(), x.end()));
        bool any = false, all = true;
        Affine fold = in.maps[c * n];
        for (uint32_t k = 0; k < n; ++k) {
            any = any || in.flags[c * n + k];
            all = all && in.flags[c * n + k];
            if (k > 0) fold = Compose{}(fold, in.maps[c * n + k]);
            REQUIRE(r.affineScan[c * n + k] == fold); // the left-to-right composition, exactly: operands in order
        }
        REQUIRE(bool(r.any[c]) == any);
        REQUIRE(bool(r.all[c]) == all);
        REQUIRE(r.fold[c] == fold);
        REQUIRE(r.broadcast[c] == x[in.source[c]]);
        auto const scan = ls::detail::serialScan(x, ls::Plus{});
        REQUIRE(std::memcmp(&r.inclusive[c * n], scan.data(), n * sizeof(double)) == 0);
        REQUIRE(r.exclusive[c * n] == 0.0);
        for (uint32_t k = 1; k < n; ++k)
            REQUIRE(r.exclusive[c * n + k] == scan[k - 1]);
    }
}

template <uint32_t N>
void checkSize() {
    INFO("domain size " << N);
    Inputs const in = makeInputs(N, 1000 + N);
    Results const reference = runLockstep<N>(core::Serial{}, in);
    checkAgainstHost(reference, in, N);
    REQUIRE(sameBits(runLockstep<N>(core::OpenMP{}, in), reference));
    REQUIRE(sameBits(runThreaded<N>(core::Serial{}, in), reference));
    REQUIRE(sameBits(runThreaded<N>(core::OpenMP{}, in), reference));
    for (uint32_t workers : {1u, 2u, 7u, 64u}) {
        INFO(workers << " workers");
        REQUIRE(sameBits(runLockstep<N>(core::Threads{workers, true}, in), reference));
        REQUIRE(sameBits(runThreaded<N>(core::Threads{workers, true}, in), reference));
    }
}

// A run-time extent n under the bound Bound gives the bits of the compile-time domain of n.
template <uint32_t n, uint32_t Bound>
void checkUpTo() {
    INFO("extent " << n << " under the bound " << Bound);
    Inputs const in = makeInputs(n, 2000 + n);
    Results const reference = runLockstep<n>(core::Serial{}, in);
    REQUIRE(sameBits(runThreadedUpTo<Bound>(core::Serial{}, in, n), reference));
    REQUIRE(sameBits(runThreadedUpTo<Bound>(core::OpenMP{}, in, n), reference));
    for (uint32_t workers : {1u, 2u, 7u, 64u}) {
        INFO(workers << " workers");
        REQUIRE(sameBits(runThreadedUpTo<Bound>(core::Threads{workers, true}, in, n), reference));
    }
}

// Over an extent of at most 8: the sum of 1.5 per element, the scan's emits counted, a broadcast from `from`.
struct SmallExtent {
    uint32_t from;
    double* sum;
    uint32_t* emitted;
    struct Shared {
        double scratch[8];
    };
    template <class Ctx>
    STRATA_HD void operator()(Ctx& ctx, uint32_t) const {
        auto scratch = ctx.sharedArray(&Shared::scratch);
        auto const one = [](uint32_t) { return 1.5; };
        double const total = threaded::reduce(ctx, scratch, one, ls::Plus{});
        threaded::inclusiveScan(
            ctx, scratch, one, [&](uint32_t, double) { ++emitted[ctx.worker().workerIdx()]; }, ls::Plus{});
        double const picked = threaded::broadcast(ctx, scratch, from, one);
        if (ctx.worker().workerIdx() == 0) sum[0] = total + picked;
    }
};

} // namespace

TEST_CASE("threaded collectives over an extent of 0, and a broadcast from past the extent", "[threaded][collectives]") {
    for (uint32_t workers : {1u, 3u}) {
        INFO(workers << " workers");
        double sum = -1;
        std::vector<uint32_t> emitted(workers, 0);
        // extent 3: 4.5 + 1.5, three emits in all
        threaded::threaded(core::Threads{workers, true}, threaded::independent(1), threaded::interdependentUpTo<8>(3),
                           SmallExtent{2, &sum, emitted.data()});
        REQUIRE(sum == 6.0);
        REQUIRE(std::accumulate(emitted.begin(), emitted.end(), 0u) == 3u);
        REQUIRE_THROWS_WITH(threaded::threaded(core::Threads{workers, true}, threaded::independent(1),
                                               threaded::interdependentUpTo<8>(3),
                                               SmallExtent{5, &sum, emitted.data()}),
                            Contains("threaded::broadcast from element 5 of 3"));
    }
    double sum = -1;
    uint32_t emitted = 0;
    REQUIRE_THROWS_WITH(threaded::threaded(core::Serial{}, threaded::independent(1), threaded::interdependentUpTo<8>(0),
                                           SmallExtent{0, &sum, &emitted}),
                        Contains("from element 0 of 0"));
    REQUIRE(emitted == 0u); // nothing to scan
}

TEST_CASE("threaded collectives under interdependentUpTo<N>(extent) give the bits of the compile-time extent",
          "[threaded][collectives]") {
    checkUpTo<1, 64>();
    checkUpTo<2, 64>();
    checkUpTo<3, 64>();
    checkUpTo<7, 64>();
    checkUpTo<30, 64>();
    checkUpTo<64, 64>();
    checkUpTo<100, 256>();
}

TEST_CASE("block collectives give the same bits on Serial, OpenMP and Threads with 1, 2, 7 and 64 workers",
          "[lockstep][collectives]") {
    checkSize<1>();
    checkSize<2>();
    checkSize<3>();
    checkSize<7>();
    checkSize<30>();
    checkSize<64>();
    checkSize<100>();
    checkSize<256>();
}

TEST_CASE("sum follows the pairwise tree, not left-to-right summation", "[lockstep][collectives]") {
    // (1 + 1e100) + (-1e100 + 1) = 0 in the tree; ((1 + 1e100) - 1e100) + 1 = 1 from the left.
    std::vector<double> const x{1.0, 1e100, -1e100, 1.0};
    REQUIRE(ls::detail::serialTreeReduce(x, ls::Plus{}) == 0.0);
    REQUIRE(leftToRight(x.data(), 4) == 1.0);
    Inputs in = makeInputs(4, 7);
    std::copy(x.begin(), x.end(), in.x.begin());
    for (uint32_t workers : {1u, 3u}) {
        Results const r = runLockstep<4>(core::Threads{workers, true}, in);
        REQUIRE(r.sum[0] == 0.0);
        REQUIRE(r.inclusive[3] == 0.0); // Brent-Kung: element 3 is (x0 + x1) + (x2 + x3) as well
    }
    // On random values the tree and the left-to-right sum differ in the last bits in most columns: the test above
    // compares against the tree, so a collective that summed left to right would fail it.
    Inputs const random = makeInputs(256, 1256);
    Results const r = runLockstep<256>(core::Serial{}, random);
    uint32_t differ = 0;
    for (uint32_t c = 0; c < columns; ++c)
        differ += r.sum[c] != leftToRight(&random.x[c * 256], 256);
    REQUIRE(differ > 0);
}

namespace {
// A sum whose order depends on the workers (each worker sums its own elements, then worker 0 adds the partial sums):
// the control showing that the bit comparison above can fail.
template <uint32_t N>
struct WorkerOrderSum {
    static constexpr uint32_t blockDomSize = N;
    struct Shared {
        double partial[64];
    };
    template <class Worker>
    void operator()(Worker const& worker, double const* x, double* out) const {
        auto partial = ls::sharedArray(worker, &Shared::partial);
        double mine = 0;
        ls::makeForEach(worker)([&](uint32_t k) { mine += x[worker.blockDomIdx() * N + k]; });
        partial[worker.workerIdx()] = mine;
        worker.sync();
        ls::makeMaster(worker)([&] {
            double s = 0;
            for (uint32_t w = 0; w < worker.numWorkers(); ++w)
                s += partial[w];
            out[worker.blockDomIdx()] = s;
        });
    }
};
} // namespace

TEST_CASE("control: a worker-ordered sum does change its bits with the worker count", "[lockstep][collectives]") {
    Inputs const in = makeInputs(256, 1256);
    std::vector<double> one(columns), seven(columns);
    ls::launch(core::Threads{1, true}, ls::config(columns), WorkerOrderSum<256>{}, in.x.data(), one.data());
    ls::launch(core::Threads{7, true}, ls::config(columns), WorkerOrderSum<256>{}, in.x.data(), seven.data());
    REQUIRE_FALSE(sameBits(one, seven));
}

TEST_CASE("the Brent-Kung scan is exact on integers at every size from 1 to 300", "[lockstep][collectives]") {
    for (uint32_t n = 1; n <= 300; ++n) {
        std::vector<int64_t> x(n);
        for (uint32_t k = 0; k < n; ++k)
            x[k] = static_cast<int64_t>(k * k % 17) - 5;
        auto const scan = ls::detail::serialScan(x, ls::Plus{});
        int64_t s = 0;
        for (uint32_t k = 0; k < n; ++k) {
            s += x[k];
            REQUIRE(scan[k] == s);
        }
        REQUIRE(ls::detail::serialTreeReduce(x, ls::Plus{}) == s);
    }
}

TEST_CASE("one worker's evaluations (in index order, recursive) give the tree's and Brent-Kung's bits at every size "
          "from 1 to 300",
          "[lockstep][collectives]") {
    std::mt19937_64 rng(42);
    std::uniform_real_distribution<double> unit(-1.0, 1.0);
    for (uint32_t n = 1; n <= 300; ++n) {
        INFO("n = " << n);
        std::vector<double> x(n);
        for (auto& v : x)
            v = unit(rng) * std::pow(10.0, static_cast<int>(rng() % 7) - 3);
        ls::detail::OrderedTree<double, 300> tree;
        auto const scan = ls::detail::serialScan(x, ls::Plus{});
        for (uint32_t k = 0; k < n; ++k) {
            tree.push(x[k], ls::Plus{});
            double const prefix = tree.inclusivePrefix();
            REQUIRE(std::memcmp(&prefix, &scan[k], sizeof(double)) == 0);
        }
        double const total = tree.total(ls::Plus{}), expected = ls::detail::serialTreeReduce(x, ls::Plus{});
        REQUIRE(std::memcmp(&total, &expected, sizeof(double)) == 0);
        double const recursive = ls::detail::pairwiseTree<512, double>(
            0, n, [&](uint32_t k) { return x[k]; }, ls::Plus{});
        REQUIRE(std::memcmp(&recursive, &expected, sizeof(double)) == 0);
    }
}

// ---- Misuse, caught by the checking backend ----------------------------------------------------------------------

namespace {
constexpr uint32_t misuseDom = 30;

// The last worker skips the collective.
struct CollectiveNotReached {
    static constexpr uint32_t blockDomSize = misuseDom;
    struct Shared {
        double scratch[misuseDom];
    };
    template <class Worker>
    void operator()(Worker const& worker, double* out) const {
        auto scratch = ls::sharedArray(worker, &Shared::scratch);
        auto forEach = ls::makeForEach(worker);
        auto x = forEach([](uint32_t k) { return 1.0 + k; });
        double total = 0;
        if (worker.workerIdx() + 1 < worker.numWorkers() || worker.numWorkers() == 1)
            total = ls::sum(forEach, scratch, x);
        ls::makeMaster(worker)([&] { out[worker.blockDomIdx()] = total; });
    }
};

// Half the workers take one branch and half the other: the same number of syncs, different collectives.
template <bool SameCollective>
struct CollectiveInBranch {
    static constexpr uint32_t blockDomSize = misuseDom;
    struct Shared {
        double scratch[misuseDom];
    };
    template <class Worker>
    void operator()(Worker const& worker, double* out) const {
        auto scratch = ls::sharedArray(worker, &Shared::scratch);
        auto forEach = ls::makeForEach(worker);
        auto x = forEach([](uint32_t k) { return 1.0 + k; });
        double r = 0;
        if (worker.workerIdx() % 2 == 0) {
            r = ls::sum(forEach, scratch, x);
        } else {
            if constexpr (SameCollective)
                r = ls::sum(forEach, scratch, x);
            else
                r = ls::maximum(forEach, scratch, x);
        }
        ls::makeMaster(worker)([&] { out[worker.blockDomIdx()] = r; });
    }
};

// A scan's emit step reads the neighbour's result, which another worker may not have emitted yet.
struct ReadBeforeFinished {
    double* out;
    template <class Ctx>
    void operator()(Ctx& ctx, uint32_t c) const {
        auto scratch = ctx.template staticSharedArray<double, misuseDom>();
        auto running = ctx.template staticSharedArray<double, misuseDom>();
        threaded::inclusiveScan(
            ctx, scratch, [](uint32_t k) { return 1.0 + k; },
            [&](uint32_t k, double s) {
                running[k] = s;
                out[c * misuseDom + k] = k == 0 ? s : s - running[k - 1]; // wrong: running[k - 1] is not yet final
            },
            ls::Plus{});
    }
};

template <class Backend>
void readBeforeFinished(Backend const& backend, double* out) {
    threaded::threaded(backend, threaded::independent(2),
                       threaded::interdependent<misuseDom>(2 * ls::collectiveBytes<double, misuseDom>()),
                       ReadBeforeFinished{out});
}
} // namespace

TEST_CASE("a collective that not every worker reaches is caught by Threads", "[lockstep][collectives][race]") {
    std::vector<double> out(2);
    REQUIRE_NOTHROW(ls::launch(core::Serial{}, ls::config(2), CollectiveNotReached{}, out.data()));
    REQUIRE(out[0] == 465.0);
    for (uint32_t workers : {2u, 7u, 64u}) {
        INFO(workers << " workers");
        REQUIRE_THROWS_WITH(ls::launch(core::Threads{workers, true}, ls::config(2), CollectiveNotReached{}, out.data()),
                            Contains("waits in sum (") && Contains("test_collectives.cpp"));
    }
}

TEST_CASE("a collective inside a divergent branch is caught by Threads, even with matching sync counts",
          "[lockstep][collectives][race]") {
    std::vector<double> out(2);
    REQUIRE_NOTHROW(ls::launch(core::Serial{}, ls::config(2), CollectiveInBranch<false>{}, out.data()));
    REQUIRE_NOTHROW(ls::launch(core::Threads{1, true}, ls::config(2), CollectiveInBranch<false>{}, out.data()));
    for (uint32_t workers : {2u, 7u, 64u}) {
        INFO(workers << " workers");
        REQUIRE_THROWS_WITH(
            ls::launch(core::Threads{workers, true}, ls::config(2), CollectiveInBranch<false>{}, out.data()),
            Contains("inside a branch") && Contains("sum (") && Contains("maximum ("));
        // The same collective written twice, one in each branch: two call sites.
        REQUIRE_THROWS_WITH(
            ls::launch(core::Threads{workers, true}, ls::config(2), CollectiveInBranch<true>{}, out.data()),
            Contains("inside a branch"));
    }
}

TEST_CASE("a collective's result read before the collective finished is caught by Threads",
          "[lockstep][collectives][race]") {
    std::vector<double> out(2 * misuseDom);
    REQUIRE_NOTHROW(readBeforeFinished(core::Serial{}, out.data()));
    for (uint32_t k = 0; k < misuseDom; ++k)
        REQUIRE(out[k] == 1.0 + k);
    for (uint32_t workers : {2u, 7u, 64u}) {
        for (int repeat = 0; repeat < 10; ++repeat) { // whatever the thread schedule
            INFO(workers << " workers, repeat " << repeat);
            REQUIRE_THROWS_WITH(readBeforeFinished(core::Threads{workers, true}, out.data()), Contains("sync()"));
        }
    }
}

namespace {
struct ScratchTooSmall {
    static constexpr uint32_t blockDomSize = 8;
    template <class Worker>
    void operator()(Worker const& worker) const {
        auto forEach = ls::makeForEach(worker);
        auto x = forEach([](uint32_t k) { return double(k); });
        (void)ls::sum(forEach, ls::dynSharedArray<double>(worker), x);
    }
};
} // namespace

TEST_CASE("a collective's scratch smaller than its domain is an error naming both sizes", "[lockstep][collectives]") {
    REQUIRE_THROWS_WITH(ls::launch(core::Serial{}, ls::configSMem(1, 4 * sizeof(double)), ScratchTooSmall{}),
                        Contains("holds 4") && Contains("has 8"));
}
