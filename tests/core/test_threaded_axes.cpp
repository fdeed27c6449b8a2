// threaded over two and three independent axes: every index pair or triple once, first axis fastest, with and
// without an interdependent axis, the same bits on every CPU backend as the flattened loop written by hand.
#include "tests/core/backends.hpp"
#include <strata/core/threaded.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

using namespace strata;

namespace {

// Writes a value made of its indices where the flattened loop (first axis fastest) puts it.
struct Mark2 {
    uint32_t ni;
    double* out;
    STRATA_HD void operator()(uint32_t i, uint32_t j) const { out[j * ni + i] += 1000.0 * j + i; }
};
struct Mark3 {
    uint32_t ni, nj;
    double* out;
    STRATA_HD void operator()(uint32_t i, uint32_t j, uint32_t k) const {
        out[(k * nj + j) * ni + i] += 1e6 * k + 1000.0 * j + i;
    }
};

// Per (i, j) a column of Rows values less its mean, from a shared copy (a step over the
// interdependent axis, then one worker sums in a fixed order).
template <uint32_t Rows>
struct ColumnMean2 {
    uint32_t ni;
    double const* in;
    double* out;
    struct Shared {
        double column[Rows];
        double mean;
    };
    template <class Ctx>
    STRATA_HD void operator()(Ctx& ctx, uint32_t i, uint32_t j) const {
        auto column = ctx.sharedArray(&Shared::column);
        auto mean = ctx.sharedVar(&Shared::mean); // one element
        uint32_t const base = (j * ni + i) * Rows;
        ctx.syncInterdependent([&](uint32_t r) { column[r] = in[base + r]; });
        ctx.syncInterdependent([&](uint32_t r) {
            if (r == 0) {
                double s = 0;
                for (uint32_t q = 0; q < Rows; ++q)
                    s += column[q];
                mean[0] = s / Rows;
            }
        });
        ctx.syncInterdependent([&](uint32_t r) { out[base + r] = in[base + r] - mean[0]; });
    }
};

// ColumnMean2 over one independent axis, the index split by hand (the form several axes replace).
template <uint32_t Rows>
struct FlattenedByHand {
    ColumnMean2<Rows> body;
    uint32_t ni;
    using Shared = typename ColumnMean2<Rows>::Shared;
    template <class Ctx>
    STRATA_HD void operator()(Ctx& ctx, uint32_t f) const {
        body(ctx, f % ni, f / ni);
    }
};

} // namespace

TEMPLATE_TEST_CASE("threaded: independent(ni, nj) and (ni, nj, nk) visit every index once, first axis fastest",
                   "[threaded]", STRATA_CPU_BACKENDS) {
    auto const backend = TestType::make();
    for (auto [ni, nj] : {std::pair<uint32_t, uint32_t>{1, 1}, {3, 5}, {7, 1}, {1, 9}, {64, 33}}) {
        INFO(ni << " x " << nj);
        std::vector<double> out(ni * nj, 0.0);
        threaded::threaded(backend, threaded::independent(ni, nj), Mark2{ni, out.data()});
        for (uint32_t j = 0; j < nj; ++j)
            for (uint32_t i = 0; i < ni; ++i)
                REQUIRE(out[j * ni + i] == 1000.0 * j + i); // once: a second visit would double it
    }
    uint32_t const ni = 5, nj = 4, nk = 3;
    std::vector<double> out(ni * nj * nk, 0.0);
    threaded::threaded(backend, threaded::independent(ni, nj, nk), Mark3{ni, nj, out.data()});
    for (uint32_t k = 0; k < nk; ++k)
        for (uint32_t j = 0; j < nj; ++j)
            for (uint32_t i = 0; i < ni; ++i)
                REQUIRE(out[(k * nj + j) * ni + i] == 1e6 * k + 1000.0 * j + i);
}

TEMPLATE_TEST_CASE("threaded: two independent axes with an interdependent one give the hand-flattened call's bits",
                   "[threaded]", STRATA_CPU_BACKENDS) {
    auto const backend = TestType::make();
    constexpr uint32_t rows = 30;
    uint32_t const ni = 6, nj = 7;
    std::vector<double> in(ni * nj * rows);
    for (std::size_t x = 0; x < in.size(); ++x)
        in[x] = std::sin(0.37 * static_cast<double>(x)) + 1e-3 * static_cast<double>(x % 11);
    std::vector<double> twoAxes(in.size(), NAN), flat(in.size(), NAN);
    threaded::threaded(backend, threaded::independent(ni, nj), threaded::interdependent<rows>(),
                       ColumnMean2<rows>{ni, in.data(), twoAxes.data()});
    // The same body, flattened by hand.
    threaded::threaded(backend, threaded::independent(ni * nj), threaded::interdependent<rows>(),
                       FlattenedByHand<rows>{ColumnMean2<rows>{ni, in.data(), flat.data()}, ni});
    for (std::size_t x = 0; x < in.size(); ++x) {
        INFO("value " << x);
        REQUIRE(std::memcmp(&twoAxes[x], &flat[x], sizeof(double)) == 0);
    }
    // and the means are right: each column of the result sums to zero (to rounding)
    for (uint32_t c = 0; c < ni * nj; ++c) {
        double s = 0;
        for (uint32_t r = 0; r < rows; ++r)
            s += twoAxes[c * rows + r];
        REQUIRE(std::fabs(s) < 1e-12);
    }
}

TEST_CASE("threaded: independent(...) whose extents' product exceeds 32 bits is refused at the call", "[threaded]") {
    REQUIRE_THROWS_WITH(threaded::threaded(core::Serial{}, threaded::independent(70000, 70000), Mark2{1, nullptr}),
                        Catch::Matchers::Contains("4900000000") && Catch::Matchers::Contains("2^32 - 1"));
}

namespace {

// Each column less its mean over the first ctx.extent() levels (the rest untouched), the column staged in a shared
// array sized for the bound.
template <uint32_t Bound>
struct AnomalyUpTo {
    uint32_t levels; // the column stride in memory
    double const* in;
    double* out;
    struct Shared {
        double column[Bound];
        double mean;
    };
    template <class Ctx>
    STRATA_HD void operator()(Ctx& ctx, uint32_t col) const {
        auto column = ctx.sharedArray(&Shared::column);
        auto mean = ctx.sharedVar(&Shared::mean);
        uint32_t const n = ctx.extent();
        ctx.syncInterdependent([&](uint32_t r) { column[r] = in[col * levels + r]; });
        ctx.syncInterdependent([&](uint32_t r) {
            if (r == 0) {
                double s = 0;
                for (uint32_t q = 0; q < n; ++q)
                    s += column[q];
                mean[0] = s / n;
            }
        });
        ctx.syncInterdependent([&](uint32_t r) { out[col * levels + r] = in[col * levels + r] - mean[0]; });
    }
};

} // namespace

TEMPLATE_TEST_CASE("threaded: interdependentUpTo<N>(extent) runs the steps below a run-time extent, with the bits of "
                   "the compile-time extent",
                   "[threaded]", STRATA_CPU_BACKENDS) {
    auto const backend = TestType::make();
    constexpr uint32_t levels = 17, columns = 9;
    // Padded by the bound, so that a step that ran past the extent would read and write inside the vectors and be
    // seen (the padding of `bounded` must stay NaN).
    std::vector<double> in(levels * columns + 64);
    for (std::size_t x = 0; x < in.size(); ++x)
        in[x] = std::cos(0.71 * static_cast<double>(x)) + 1e-3 * static_cast<double>(x % 13);
    std::vector<double> bounded(in.size(), NAN), exact(in.size(), NAN);
    threaded::threaded(backend, threaded::independent(columns), threaded::interdependentUpTo<64>(levels),
                       AnomalyUpTo<64>{levels, in.data(), bounded.data()});
    threaded::threaded(backend, threaded::independent(columns), threaded::interdependent<levels>(),
                       AnomalyUpTo<levels>{levels, in.data(), exact.data()});
    for (std::size_t x = 0; x < in.size(); ++x) {
        INFO("value " << x);
        REQUIRE(std::memcmp(&bounded[x], &exact[x], sizeof(double)) == 0); // every level written, none past the column
    }
    for (std::size_t x = levels * columns; x < bounded.size(); ++x)
        REQUIRE(std::isnan(bounded[x]));
    // An extent above the bound is refused at the call, naming both.
    REQUIRE_THROWS_WITH(
        threaded::threaded(backend, threaded::independent(columns), threaded::interdependentUpTo<16>(levels),
                           AnomalyUpTo<16>{levels, in.data(), bounded.data()}),
        Catch::Matchers::Contains("interdependentUpTo<16>(17)") && Catch::Matchers::Contains("at most 16"));
}

namespace {

// Counts its visits of every index (a second visit, or none, shows).
struct Visit {
    uint32_t* visits;
    STRATA_HD void operator()(uint32_t i) const { ++visits[i]; }
};

// Which block ran each independent index, and in which order within the block.
template <uint32_t Rows>
struct RecordBlock {
    uint32_t* block;
    uint32_t* order;
    uint32_t* next; // per block, the next sequence number
    ColumnMean2<Rows> mean;
    using Shared = typename ColumnMean2<Rows>::Shared;
    template <class Ctx>
    STRATA_HD void operator()(Ctx& ctx, uint32_t j) const {
        uint32_t const b = ctx.worker().blockDomIdx();
        ctx.syncInterdependent([&](uint32_t r) {
            if (r == 0) {
                block[j] = b;
                order[j] = next[b]++;
            }
        });
        mean(ctx, 0, j);
    }
};

// AnomalyUpTo over two independent axes, the first of extent 1.
template <uint32_t Bound>
struct AnomalyUpTo2 {
    AnomalyUpTo<Bound> anomaly;
    using Shared = typename AnomalyUpTo<Bound>::Shared;
    template <class Ctx>
    STRATA_HD void operator()(Ctx& ctx, uint32_t, uint32_t col) const {
        anomaly(ctx, col);
    }
};

} // namespace

TEMPLATE_TEST_CASE("threaded: blockSize<B>() and coarsen(k) visit every index of a loop once", "[threaded]",
                   STRATA_CPU_BACKENDS) {
    auto const backend = TestType::make();
    for (uint32_t n : {0u, 1u, 13u, 64u, 1000u}) {
        std::vector<uint32_t> visits(n, 0);
        auto const once = [&](char const* knobs) {
            INFO(n << " indices, " << knobs);
            for (uint32_t i = 0; i < n; ++i)
                REQUIRE(visits[i] == 1);
            std::fill(visits.begin(), visits.end(), 0u);
        };
        threaded::threaded(backend, threaded::independent(n), threaded::coarsen(3), Visit{visits.data()});
        once("coarsen(3)");
        threaded::threaded(backend, threaded::independent(n), threaded::blockSize<1>(), Visit{visits.data()});
        once("blockSize<1>()");
        threaded::threaded(backend, threaded::independent(n), threaded::blockSize<5>().coarsen(7),
                           Visit{visits.data()});
        once("blockSize<5>().coarsen(7)");
        threaded::threaded(backend, threaded::independent(n), threaded::blockSize<64>().coarsen(1000),
                           Visit{visits.data()});
        once("blockSize<64>().coarsen(1000)");
    }
    // several axes take the knobs too
    uint32_t const ni = 7, nj = 5;
    std::vector<double> out(ni * nj, 0.0);
    threaded::threaded(backend, threaded::independent(ni, nj), threaded::blockSize<4>().coarsen(3),
                       Mark2{ni, out.data()});
    for (uint32_t j = 0; j < nj; ++j)
        for (uint32_t i = 0; i < ni; ++i)
            REQUIRE(out[j * ni + i] == 1000.0 * j + i);
    REQUIRE_THROWS_WITH(threaded::threaded(backend, threaded::independent(4), threaded::coarsen(0), Visit{nullptr}),
                        Catch::Matchers::Contains("coarsen(0)") && Catch::Matchers::Contains("k >= 1"));
}

TEMPLATE_TEST_CASE("threaded: coarsen(k) with an interdependent axis runs k consecutive columns per block, with the "
                   "bits of the uncoarsened call",
                   "[threaded]", STRATA_CPU_BACKENDS) {
    auto const backend = TestType::make();
    constexpr uint32_t rows = 30;
    uint32_t const columns = 23;
    std::vector<double> in(columns * rows);
    for (std::size_t x = 0; x < in.size(); ++x)
        in[x] = std::sin(0.53 * static_cast<double>(x)) + 1e-3 * static_cast<double>(x % 7);
    std::vector<double> plain(in.size(), NAN), coarse(in.size(), NAN);
    threaded::threaded(backend, threaded::independent(1, columns), threaded::interdependent<rows>(),
                       ColumnMean2<rows>{1, in.data(), plain.data()});
    for (uint32_t k : {1u, 2u, 4u, 23u, 50u}) {
        INFO("coarsen(" << k << ")");
        std::fill(coarse.begin(), coarse.end(), NAN);
        std::vector<uint32_t> block(columns, UINT32_MAX), order(columns, UINT32_MAX), next(columns, 0);
        threaded::threaded(
            backend, threaded::independent(columns), threaded::interdependent<rows>(), threaded::coarsen(k),
            RecordBlock<rows>{block.data(), order.data(), next.data(), ColumnMean2<rows>{1, in.data(), coarse.data()}});
        REQUIRE(std::memcmp(plain.data(), coarse.data(), plain.size() * sizeof(double)) == 0);
        // Columns j and j + 1 of one chunk of k run in one block, one after the other; a chunk boundary starts the
        // next block (the backends here have more blocks than chunks).
        for (uint32_t j = 0; j < columns; ++j) {
            INFO("column " << j);
            REQUIRE(block[j] == j / k);
            REQUIRE(order[j] == j % k);
        }
    }
    // and with two independent axes and a run-time extent
    std::vector<double> bounded(in.size(), NAN);
    threaded::threaded(backend, threaded::independent(1, columns), threaded::interdependentUpTo<64>(rows),
                       threaded::coarsen(3), AnomalyUpTo2<64>{{rows, in.data(), bounded.data()}});
    REQUIRE(std::memcmp(plain.data(), bounded.data(), plain.size() * sizeof(double)) == 0);
}
