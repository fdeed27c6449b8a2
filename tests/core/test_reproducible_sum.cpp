// ReproducibleSum, single process: exactness against a __float128 reference, bit-identical results under any order
// or split, the wire format, NaN/inf, subnormals and the top of the double range.
#include <strata/core/comms.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <bit>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <span>
#include <vector>

using strata::core::ReproducibleSum;

namespace {

__extension__ typedef __float128 quad; // GCC's binary128: 113-bit significand, exponent range far beyond double's

constexpr double inf = std::numeric_limits<double>::infinity();

// A double with a uniformly random 52-bit fraction, binary exponent uniform in [minExp, maxExp] and a random sign.
// Built from raw generator bits so the data is the same on every standard library.
std::vector<double> randomDoubles(std::size_t n, int minExp, int maxExp, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::vector<double> xs(n);
    auto const span = static_cast<std::uint64_t>(maxExp - minExp + 1);
    for (double& x : xs) {
        std::uint64_t const bits = rng();
        double const mantissa = 1.0 + std::ldexp(static_cast<double>(bits >> 12), -52); // [1, 2), exact
        int const e = minExp + static_cast<int>(rng() % span);
        x = std::ldexp(mantissa, e) * ((bits & 1u) != 0 ? -1.0 : 1.0);
    }
    return xs;
}

double reproducibleSum(std::span<double const> xs) {
    ReproducibleSum s;
    s.add(xs);
    return s.value();
}

double naiveSum(std::span<double const> xs) {
    double s = 0.0;
    for (double x : xs)
        s += x;
    return s;
}

bool sameBits(double a, double b) { return std::memcmp(&a, &b, sizeof(double)) == 0; }

std::uint64_t bitsOf(double x) { return std::bit_cast<std::uint64_t>(x); }

quad quadSum(std::span<double const> xs) {
    quad s = 0;
    for (double x : xs)
        s += static_cast<quad>(x);
    return s;
}

quad quadAbs(quad x) { return x < 0 ? -x : x; }

} // namespace

TEST_CASE("exact where the float128 reference is exact", "[reproducible_sum]") {
    // Magnitudes 2^-20 .. 2^21 with 53-bit significands: every bit lies in 2^-72 .. 2^21, and 10^4 of them sum to
    // below 2^35, so every float128 partial sum fits in 107 < 113 bits and the reference is the exact sum.
    auto const xs = randomDoubles(10000, -20, 20, 12345);
    double const expected = static_cast<double>(quadSum(xs)); // one correct rounding of the exact sum
    double const got = reproducibleSum(xs);
    INFO("got " << got << " expected " << expected);
    CHECK(bitsOf(got) == bitsOf(expected));
}

TEST_CASE("correctly rounded over the whole double range", "[reproducible_sum]") {
    // Magnitudes 2^-997 .. 2^997 (about 1e-300 .. 1e300), mixed signs. The float128 sum is not exact here, but its
    // error is below n * 2^-113 * sum|x|; whenever both ends of that interval round to the same double, that double
    // is the correctly rounded exact sum and ReproducibleSum must return exactly it.
    for (std::uint64_t seed : {1u, 2u, 3u, 4u}) {
        auto const xs = randomDoubles(100000, -997, 997, seed);
        quad const s = quadSum(xs);
        quad absSum = 0;
        for (double x : xs)
            absSum += quadAbs(static_cast<quad>(x));
        quad const bound = static_cast<quad>(2.0 * static_cast<double>(xs.size())) * absSum * 0x1p-113;
        double const lo = static_cast<double>(s - bound);
        double const hi = static_cast<double>(s + bound);
        double const got = reproducibleSum(xs);
        INFO("seed " << seed << " got " << got << " float128 " << static_cast<double>(s));
        REQUIRE(std::isfinite(got));
        CHECK(got >= lo);
        CHECK(got <= hi);
        if (bitsOf(lo) == bitsOf(hi)) CHECK(bitsOf(got) == bitsOf(lo));
    }
}

TEST_CASE("cancellation and rounding decided far below the top digits", "[reproducible_sum]") {
    CHECK(reproducibleSum(std::vector<double>{1e300, 1.0, -1e300}) == 1.0);
    CHECK(reproducibleSum(std::vector<double>{1e300, -1e300, -1.0}) == -1.0);
    CHECK(reproducibleSum(std::vector<double>{1e300, 1e-300, -1e300}) == 1e-300);
    CHECK(reproducibleSum(std::vector<double>{DBL_MAX, DBL_TRUE_MIN, -DBL_MAX}) == DBL_TRUE_MIN);
    // 1 + 2^-53 is a tie: round to even gives 1. Anything beyond the tie, even 2^-1074, rounds up.
    CHECK(reproducibleSum(std::vector<double>{1.0, 0x1p-53}) == 1.0);
    CHECK(reproducibleSum(std::vector<double>{1.0, 0x1p-53, DBL_TRUE_MIN}) == 1.0 + 0x1p-52);
    CHECK(reproducibleSum(std::vector<double>{1.0, 0x1p-53, -DBL_TRUE_MIN}) == 1.0);
    CHECK(reproducibleSum(std::vector<double>{1.0 + 0x1p-52, 0x1p-53}) == 1.0 + 0x1p-51); // tie to even, upwards
    CHECK(reproducibleSum(std::vector<double>{-1.0, -0x1p-53, -DBL_TRUE_MIN}) == -(1.0 + 0x1p-52));
    // Exactly cancelling data gives +0.
    CHECK(bitsOf(reproducibleSum(std::vector<double>{0.1, 0.2, -0.1, -0.2})) == bitsOf(0.0));
    CHECK(bitsOf(ReproducibleSum().value()) == bitsOf(0.0));
}

TEST_CASE("the same bits in any order and any split", "[reproducible_sum]") {
    auto xs = randomDoubles(100000, -997, 997, 777);
    double const reference = reproducibleSum(xs);
    double const naive = naiveSum(xs);

    std::mt19937 rng(20240611);
    auto shuffled = xs;
    std::shuffle(shuffled.begin(), shuffled.end(), rng);
    CHECK(sameBits(reproducibleSum(shuffled), reference));
    // The data is hard: plain left-to-right double summation depends on the order.
    CHECK_FALSE(sameBits(naiveSum(shuffled), naive));

    std::vector<double> sorted = xs;
    std::sort(sorted.begin(), sorted.end());
    CHECK(sameBits(reproducibleSum(sorted), reference));
    std::reverse(sorted.begin(), sorted.end());
    CHECK(sameBits(reproducibleSum(sorted), reference));

    for (std::size_t chunks : {2u, 3u, 7u, 64u, 1000u}) {
        // Uneven contiguous chunks of the shuffled data, merged in reverse order.
        std::vector<ReproducibleSum> parts(chunks);
        for (std::size_t c = 0; c < chunks; ++c) {
            std::size_t const begin = c * shuffled.size() / chunks, end = (c + 1) * shuffled.size() / chunks;
            parts[c].add(std::span<double const>(shuffled).subspan(begin, end - begin));
        }
        ReproducibleSum total;
        for (std::size_t c = chunks; c-- > 0;)
            total.merge(parts[c]);
        INFO(chunks << " chunks");
        CHECK(sameBits(total.value(), reference));
    }

    // Strided split (like a round-robin over threads), merged as a tree.
    std::vector<ReproducibleSum> lanes(8);
    for (std::size_t i = 0; i < xs.size(); ++i)
        lanes[i % lanes.size()].add(xs[i]);
    for (std::size_t width = 1; width < lanes.size(); width *= 2)
        for (std::size_t i = 0; i + width < lanes.size(); i += 2 * width)
            lanes[i].merge(lanes[i + width]);
    CHECK(sameBits(lanes[0].value(), reference));
}

TEST_CASE("wire round trip", "[reproducible_sum]") {
    auto const xs = randomDoubles(10000, -997, 997, 99);
    ReproducibleSum s;
    s.add(xs);
    s.add(inf);
    s.add(std::numeric_limits<double>::quiet_NaN());
    auto const wire = s.toWire();
    REQUIRE(wire.size() == static_cast<std::size_t>(ReproducibleSum::wireSize));
    auto const back = ReproducibleSum::fromWire(wire);
    CHECK(back.toWire() == wire);

    ReproducibleSum finite;
    finite.add(xs);
    auto const finiteBack = ReproducibleSum::fromWire(finite.toWire());
    CHECK(sameBits(finiteBack.value(), finite.value()));
    CHECK(finiteBack.toWire() == finite.toWire());
    // Wires add like the accumulators they came from (this is what the MPI reduction relies on).
    std::vector<int64_t> summed = finite.toWire();
    auto const other = finite.toWire();
    for (std::size_t k = 0; k < summed.size(); ++k)
        summed[k] += other[k];
    ReproducibleSum twice = finite;
    twice.merge(finite);
    CHECK(sameBits(ReproducibleSum::fromWire(summed).value(), twice.value()));
    CHECK(sameBits(twice.value(), 2.0 * finite.value())); // exact doubling

    std::vector<int64_t> const wrongSize(ReproducibleSum::wireSize - 1, 0);
    CHECK_THROWS(ReproducibleSum::fromWire(wrongSize));
}

TEST_CASE("NaN and infinities", "[reproducible_sum]") {
    double const nan = std::numeric_limits<double>::quiet_NaN();
    CHECK(std::isnan(reproducibleSum(std::vector<double>{1.0, nan, 2.0})));
    CHECK(std::isnan(reproducibleSum(std::vector<double>{nan, inf})));
    CHECK(reproducibleSum(std::vector<double>{1.0, inf, -1e308}) == inf);
    CHECK(reproducibleSum(std::vector<double>{1.0, -inf, 1e308}) == -inf);
    CHECK(reproducibleSum(std::vector<double>{inf, inf}) == inf);
    CHECK(std::isnan(reproducibleSum(std::vector<double>{inf, 1.0, -inf})));

    // Counters travel through merge: one part holds +inf, another -inf.
    ReproducibleSum a, b;
    a.add(inf);
    b.add(-inf);
    ReproducibleSum c = a;
    c.merge(ReproducibleSum());
    CHECK(c.value() == inf);
    c.merge(b);
    CHECK(std::isnan(c.value()));
    ReproducibleSum d;
    d.add(1.0);
    d.merge(ReproducibleSum::fromWire([] {
        ReproducibleSum n;
        n.add(std::numeric_limits<double>::signaling_NaN());
        return n.toWire();
    }()));
    CHECK(std::isnan(d.value()));
}

TEST_CASE("subnormals are summed exactly", "[reproducible_sum]") {
    CHECK(reproducibleSum(std::vector<double>{DBL_TRUE_MIN}) == DBL_TRUE_MIN);
    CHECK(reproducibleSum(std::vector<double>{DBL_TRUE_MIN, DBL_TRUE_MIN, DBL_TRUE_MIN}) == 3 * DBL_TRUE_MIN);
    CHECK(reproducibleSum(std::vector<double>{-DBL_TRUE_MIN, DBL_TRUE_MIN}) == 0.0);
    // Crossing into the normal range, and back.
    double const topSubnormal = DBL_MIN - DBL_TRUE_MIN;
    CHECK(reproducibleSum(std::vector<double>{topSubnormal, DBL_TRUE_MIN}) == DBL_MIN);
    CHECK(reproducibleSum(std::vector<double>{DBL_MIN, -DBL_TRUE_MIN}) == topSubnormal);
    CHECK(reproducibleSum(std::vector<double>{1.0, DBL_TRUE_MIN, -1.0}) == DBL_TRUE_MIN);

    // Random subnormals: their exact sum is a multiple of 2^-1074 below 2^-1012 (1000 of them), so the float128 sum is
    // exact and its conversion is the correctly rounded result.
    std::mt19937_64 rng(5);
    std::vector<double> xs(1000);
    for (double& x : xs) {
        std::uint64_t const bits = rng();
        x = std::bit_cast<double>(bits & ((std::uint64_t{1} << 52) - 1)) * ((bits >> 63) != 0 ? -1.0 : 1.0);
    }
    double const expected = static_cast<double>(quadSum(xs));
    CHECK(bitsOf(reproducibleSum(xs)) == bitsOf(expected));
    std::reverse(xs.begin(), xs.end());
    CHECK(bitsOf(reproducibleSum(xs)) == bitsOf(expected));
}

TEST_CASE("the largest finite doubles", "[reproducible_sum]") {
    // No intermediate overflow: the accumulator reaches 2^1056, so only the final rounding can overflow, and it does
    // so the IEEE way (round to nearest, +-inf beyond DBL_MAX + half an ulp).
    CHECK(reproducibleSum(std::vector<double>{DBL_MAX, DBL_MAX}) == inf);
    CHECK(reproducibleSum(std::vector<double>{-DBL_MAX, -DBL_MAX}) == -inf);
    CHECK(reproducibleSum(std::vector<double>{DBL_MAX, DBL_MAX, -DBL_MAX}) == DBL_MAX);
    CHECK(reproducibleSum(std::vector<double>{-DBL_MAX, -DBL_MAX, DBL_MAX}) == -DBL_MAX);
    CHECK(reproducibleSum(std::vector<double>{DBL_MAX, DBL_MAX, -DBL_MAX, -DBL_MAX}) == 0.0);
    // DBL_MAX's ulp is 2^971: below half of it rounds down, the tie rounds to even (2^1024, i.e. overflow).
    CHECK(reproducibleSum(std::vector<double>{DBL_MAX, 0x1p969}) == DBL_MAX);
    CHECK(reproducibleSum(std::vector<double>{DBL_MAX, 0x1p970, -DBL_TRUE_MIN}) == DBL_MAX);
    CHECK(reproducibleSum(std::vector<double>{DBL_MAX, 0x1p970}) == inf);
    CHECK(reproducibleSum(std::vector<double>{-DBL_MAX, -0x1p970}) == -inf);

    // Many copies: a million DBL_MAX overflow the double but not the accumulator.
    ReproducibleSum many;
    for (int i = 0; i < 1000000; ++i)
        many.add(DBL_MAX);
    CHECK(many.value() == inf);
    ReproducibleSum minus;
    for (int i = 0; i < 999999; ++i)
        minus.add(-DBL_MAX);
    many.merge(minus);
    CHECK(many.value() == DBL_MAX);
    auto const back = ReproducibleSum::fromWire(many.toWire());
    CHECK(back.value() == DBL_MAX);
}
