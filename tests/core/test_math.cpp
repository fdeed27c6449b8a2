// strata::math without a reference library: the documented special values, and the same bits from a scalar call and
// from a vectorised loop (`omp simd`) over the same arguments.
#include <strata/core/math.hpp>

#include <catch2/catch.hpp>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

namespace sm = strata::math;

namespace {

constexpr double inf = std::numeric_limits<double>::infinity();
constexpr double qnan = std::numeric_limits<double>::quiet_NaN();
constexpr double tiny = std::numeric_limits<double>::denorm_min();
constexpr double huge = std::numeric_limits<double>::max();

bool sameBits(double a, double b) { return std::bit_cast<std::uint64_t>(a) == std::bit_cast<std::uint64_t>(b); }
bool isPositiveZero(double x) { return x == 0.0 && !std::signbit(x); }
bool isNegativeZero(double x) { return x == 0.0 && std::signbit(x); }

} // namespace

TEST_CASE("exp special values", "[math]") {
    CHECK(sm::exp(0.0) == 1.0);
    CHECK(sm::exp(-0.0) == 1.0);
    CHECK(sm::exp(inf) == inf);
    CHECK(isPositiveZero(sm::exp(-inf)));
    CHECK(std::isnan(sm::exp(qnan)));
    CHECK(sm::exp(709.79) == inf); // overflow
    CHECK(sm::exp(1e300) == inf);
    CHECK(isPositiveZero(sm::exp(-745.2))); // underflow
    CHECK(isPositiveZero(sm::exp(-1e300)));
    CHECK(sm::exp(-745.13) == tiny); // the smallest subnormal
    CHECK(sm::exp(709.78) < inf);
    CHECK(sm::exp(tiny) == 1.0);
    CHECK(sm::exp(1.0) == 0x1.5bf0a8b145769p+1); // e, correctly rounded
}

TEST_CASE("log special values", "[math]") {
    CHECK(sm::log(1.0) == 0.0);
    CHECK(isPositiveZero(sm::log(1.0)));
    CHECK(sm::log(0.0) == -inf);
    CHECK(sm::log(-0.0) == -inf);
    CHECK(std::isnan(sm::log(-1.0)));
    CHECK(std::isnan(sm::log(-tiny)));
    CHECK(std::isnan(sm::log(-inf)));
    CHECK(sm::log(inf) == inf);
    CHECK(std::isnan(sm::log(qnan)));
    CHECK(sm::log(tiny) == -0x1.74385446d71c3p+9); // -1074 ln 2, subnormal argument
    CHECK(sm::log(huge) == 0x1.62e42fefa39efp+9);
    CHECK(sm::log(2.0) == 0x1.62e42fefa39efp-1);
}

TEST_CASE("pow special values", "[math]") {
    for (const double x : {0.0, -0.0, 1.0, -1.0, 2.5, -2.5, inf, -inf, qnan, tiny}) {
        CHECK(sm::pow(x, 0.0) == 1.0);
        CHECK(sm::pow(x, -0.0) == 1.0);
    }
    for (const double y : {0.0, 0.5, -3.0, inf, -inf, qnan}) {
        CHECK(sm::pow(1.0, y) == 1.0);
    }
    CHECK(std::isnan(sm::pow(qnan, 2.0)));
    CHECK(std::isnan(sm::pow(2.0, qnan)));
    CHECK(std::isnan(sm::pow(-2.0, 0.5)));
    CHECK(std::isnan(sm::pow(-tiny, 0.2857)));
    // Zero base.
    CHECK(sm::pow(0.0, -3.0) == inf);
    CHECK(sm::pow(-0.0, -3.0) == -inf);
    CHECK(sm::pow(-0.0, -2.0) == inf);
    CHECK(sm::pow(-0.0, -0.5) == inf);
    CHECK(sm::pow(0.0, -inf) == inf);
    CHECK(isPositiveZero(sm::pow(0.0, 3.0)));
    CHECK(isNegativeZero(sm::pow(-0.0, 3.0)));
    CHECK(isPositiveZero(sm::pow(-0.0, 2.0)));
    CHECK(isPositiveZero(sm::pow(-0.0, 0.5)));
    CHECK(isPositiveZero(sm::pow(0.0, inf)));
    // Infinite exponent.
    CHECK(sm::pow(-1.0, inf) == 1.0);
    CHECK(sm::pow(-1.0, -inf) == 1.0);
    CHECK(isPositiveZero(sm::pow(0.5, inf)));
    CHECK(sm::pow(0.5, -inf) == inf);
    CHECK(sm::pow(-0.5, -inf) == inf);
    CHECK(sm::pow(2.0, inf) == inf);
    CHECK(isPositiveZero(sm::pow(-2.0, -inf)));
    // Infinite base.
    CHECK(sm::pow(inf, 0.5) == inf);
    CHECK(isPositiveZero(sm::pow(inf, -0.5)));
    CHECK(sm::pow(-inf, 3.0) == -inf);
    CHECK(sm::pow(-inf, 2.0) == inf);
    CHECK(sm::pow(-inf, 0.5) == inf);
    CHECK(isNegativeZero(sm::pow(-inf, -3.0)));
    CHECK(isPositiveZero(sm::pow(-inf, -2.0)));
    // Negative base, integer exponent; overflow and underflow keep the sign of an odd power.
    CHECK(sm::pow(-2.0, 3.0) == -8.0);
    CHECK(sm::pow(-2.0, -2.0) == 0.25);
    CHECK(sm::pow(-3.0, 0x1p53 + 2.0) == inf); // beyond 2^53 every double is even
    CHECK(sm::pow(-10.0, 309.0) == -inf);
    CHECK(isNegativeZero(sm::pow(-10.0, -400.0 - 1.0)));
    CHECK(sm::pow(10.0, 1e300) == inf);
    CHECK(isPositiveZero(sm::pow(10.0, -1e300)));
    CHECK(isPositiveZero(sm::pow(0.1, 1e300)));
    // Exact cases.
    CHECK(sm::pow(2.0, 10.0) == 1024.0);
    CHECK(sm::pow(2.0, -1074.0) == tiny);
    CHECK(sm::pow(4.0, 0.5) == 2.0);
    CHECK(sm::pow(10.0, 2.0) == 100.0);
}

TEST_CASE("sin and cos special values", "[math]") {
    CHECK(isPositiveZero(sm::sin(0.0)));
    CHECK(isNegativeZero(sm::sin(-0.0)));
    CHECK(sm::cos(0.0) == 1.0);
    CHECK(sm::cos(-0.0) == 1.0);
    for (const double x : {inf, -inf, qnan, 0x1p26, -0x1p26, 1e300}) {
        CHECK(std::isnan(sm::sin(x)));
        CHECK(std::isnan(sm::cos(x)));
    }
    CHECK(sm::sin(tiny) == tiny);
    CHECK(sm::sin(-1e-200) == -1e-200);
    CHECK(sm::cos(1e-200) == 1.0);
}

TEST_CASE("sqrt is the correctly rounded square root", "[math]") {
    CHECK(sm::sqrt(2.0) == 0x1.6a09e667f3bcdp+0);
    CHECK(std::isnan(sm::sqrt(-1.0)));
    CHECK(isNegativeZero(sm::sqrt(-0.0)));
}

namespace {

// Arguments of every kind: the model's ranges, the edges, subnormals and special values.
std::vector<double> mixedArguments(double lo, double hi) {
    std::mt19937_64 rng(20261127);
    std::uniform_real_distribution<double> uniform(lo, hi);
    std::vector<double> x;
    for (int i = 0; i < 4093; ++i) { // odd, so that the vector loop has a remainder
        x.push_back(uniform(rng));
    }
    for (const double v : {0.0, -0.0, 1.0, -1.0, tiny, -tiny, 1e-310, huge, -huge, inf, -inf, qnan, 709.78, -745.13,
                           0.5, 1e-300, 0x1p26, 3.14159, 6.2831853}) {
        x.push_back(v);
    }
    return x;
}

// Called through a pointer the compiler cannot see through, one argument at a time.
template <class F>
[[gnu::noinline]] std::vector<double> scalarCalls(F f, const std::vector<double>& x) {
    std::vector<double> y(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) {
        volatile double arg = x[i];
        y[i] = f(arg);
    }
    return y;
}

#if defined(_OPENMP)
#define STRATA_OMP_SIMD _Pragma("omp simd")
#else
#define STRATA_OMP_SIMD
#endif

[[gnu::noinline]] std::vector<double> simdExp(const std::vector<double>& x) {
    std::vector<double> y(x.size());
    const double* in = x.data();
    double* out = y.data();
    const std::size_t n = x.size();
    STRATA_OMP_SIMD
    for (std::size_t i = 0; i < n; ++i) {
        out[i] = sm::exp(in[i]);
    }
    return y;
}
[[gnu::noinline]] std::vector<double> simdLog(const std::vector<double>& x) {
    std::vector<double> y(x.size());
    const double* in = x.data();
    double* out = y.data();
    const std::size_t n = x.size();
    STRATA_OMP_SIMD
    for (std::size_t i = 0; i < n; ++i) {
        out[i] = sm::log(in[i]);
    }
    return y;
}
// The exponent a compile-time constant, as in the model's calls (with an exponent that varies along the loop GCC 12
// keeps the loop scalar under -ftrapping-math: the special cases' comparisons of y end up on branches).
template <double Y>
[[gnu::noinline]] std::vector<double> simdPow(const std::vector<double>& x) {
    std::vector<double> y(x.size());
    const double* in = x.data();
    double* out = y.data();
    const std::size_t n = x.size();
    STRATA_OMP_SIMD
    for (std::size_t i = 0; i < n; ++i) {
        out[i] = sm::pow(in[i], Y);
    }
    return y;
}
[[gnu::noinline]] std::vector<double> simdSin(const std::vector<double>& x) {
    std::vector<double> y(x.size());
    const double* in = x.data();
    double* out = y.data();
    const std::size_t n = x.size();
    STRATA_OMP_SIMD
    for (std::size_t i = 0; i < n; ++i) {
        out[i] = sm::sin(in[i]);
    }
    return y;
}
[[gnu::noinline]] std::vector<double> simdCos(const std::vector<double>& x) {
    std::vector<double> y(x.size());
    const double* in = x.data();
    double* out = y.data();
    const std::size_t n = x.size();
    STRATA_OMP_SIMD
    for (std::size_t i = 0; i < n; ++i) {
        out[i] = sm::cos(in[i]);
    }
    return y;
}

std::size_t countDifferentBits(const std::vector<double>& a, const std::vector<double>& b) {
    std::size_t differ = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
        differ += sameBits(a[i], b[i]) ? 0 : 1;
    }
    return differ;
}

} // namespace

TEST_CASE("a vectorised loop gives the scalar calls' bits", "[math]") {
    const auto e = mixedArguments(-750.0, 712.0);
    CHECK(countDifferentBits(simdExp(e), scalarCalls([](double v) { return sm::exp(v); }, e)) == 0);
    const auto l = mixedArguments(0.0, 1e5);
    CHECK(countDifferentBits(simdLog(l), scalarCalls([](double v) { return sm::log(v); }, l)) == 0);
    const auto p = mixedArguments(-2.0, 3.0);
    const auto powScalar = [&](double y) { return scalarCalls([y](double v) { return sm::pow(v, y); }, p); };
    CHECK(countDifferentBits(simdPow<0.2857142857142857>(p), powScalar(0.2857142857142857)) == 0);
    CHECK(countDifferentBits(simdPow<0.1364>(p), powScalar(0.1364)) == 0);
    CHECK(countDifferentBits(simdPow<1.5>(p), powScalar(1.5)) == 0);
    CHECK(countDifferentBits(simdPow<-3.0>(p), powScalar(-3.0)) == 0);
    CHECK(countDifferentBits(simdPow<0.0>(p), powScalar(0.0)) == 0);
    const auto s = mixedArguments(-10.0, 10.0);
    CHECK(countDifferentBits(simdSin(s), scalarCalls([](double v) { return sm::sin(v); }, s)) == 0);
    CHECK(countDifferentBits(simdCos(s), scalarCalls([](double v) { return sm::cos(v); }, s)) == 0);
}
