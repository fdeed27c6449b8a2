// strata::math against MPFR at 192 bits (a correctly rounded reference): the largest error in ulps of each function
// over random and edge arguments in the ranges the model uses, printed and required to be at most 1 ulp.
#include <strata/core/math.hpp>

#include <catch2/catch.hpp>

#include <mpfr.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numbers>
#include <random>
#include <vector>

namespace sm = strata::math;

namespace {

constexpr mpfr_prec_t referencePrecision = 192;

// An MPFR number that frees itself.
struct Big {
    mpfr_t v;
    Big() { mpfr_init2(v, referencePrecision); }
    ~Big() { mpfr_clear(v); }
    Big(const Big&) = delete;
    Big& operator=(const Big&) = delete;
};

// |y - exact| in units of the last place of a double in exact's binade (2^-1074 for subnormals). An infinite or
// zero y counts as exact when the exact value rounds to it.
double ulpError(double y, const mpfr_t exact) {
    const double rounded = mpfr_get_d(exact, MPFR_RNDN);
    if (std::isinf(rounded) || std::isinf(y) || mpfr_zero_p(exact)) {
        return y == rounded ? 0.0 : std::numeric_limits<double>::infinity();
    }
    const long binade = mpfr_get_exp(exact); // |exact| in [2^(binade-1), 2^binade)
    const long ulpExponent = std::max(binade - 53, -1074L);
    Big diff;
    mpfr_set_d(diff.v, y, MPFR_RNDN);
    mpfr_sub(diff.v, diff.v, exact, MPFR_RNDN);
    mpfr_mul_2si(diff.v, diff.v, -ulpExponent, MPFR_RNDN);
    return std::fabs(mpfr_get_d(diff.v, MPFR_RNDN));
}

// The largest error of one function, over all results and over the subnormal ones (one more rounding there).
struct Worst {
    const char* name;
    double error = 0.0;
    double x = 0.0;
    double y = 0.0;
    double normalError = 0.0;
    double subnormalError = 0.0;
    long count = 0;
    void record(double e, const mpfr_t exact, double a, double b = 0.0) {
        ++count;
        if (std::fabs(mpfr_get_d(exact, MPFR_RNDN)) < std::numeric_limits<double>::min() && !mpfr_zero_p(exact)) {
            subnormalError = std::max(subnormalError, e);
        } else {
            normalError = std::max(normalError, e);
        }
        if (!(e <= error)) { // NaN errors are kept as the worst
            error = e;
            x = a;
            y = b;
        }
    }
    void report() const {
        std::printf("strata::math::%-4s max error %.4f ulp over %ld arguments (worst at x = %a, y = %a); normal "
                    "results %.4f ulp, subnormal results %.4f ulp\n",
                    name, error, count, x, y, normalError, subnormalError);
    }
};

using Mpfr1 = int (*)(mpfr_ptr, mpfr_srcptr, mpfr_rnd_t);

void check1(Worst& worst, double (*f)(double), Mpfr1 reference, double x) {
    Big in, out;
    mpfr_set_d(in.v, x, MPFR_RNDN);
    reference(out.v, in.v, MPFR_RNDN);
    worst.record(ulpError(f(x), out.v), out.v, x);
}

double logUniform(std::mt19937_64& rng, double lo, double hi) {
    std::uniform_real_distribution<double> u(std::log(lo), std::log(hi));
    return std::exp(u(rng));
}

// A positive double with uniformly random bits: every binade, normal and subnormal, equally likely.
double randomPositiveBits(std::mt19937_64& rng) {
    for (;;) {
        const double v = std::bit_cast<double>(rng() & 0x7fffffffffffffffull);
        if (v > 0.0 && std::isfinite(v)) {
            return v;
        }
    }
}

double smExp(double x) { return sm::exp(x); }
double smLog(double x) { return sm::log(x); }
double smSin(double x) { return sm::sin(x); }
double smCos(double x) { return sm::cos(x); }

} // namespace

TEST_CASE("exp within 1 ulp over [-745.13, 709.78]", "[math][accuracy]") {
    std::mt19937_64 rng(1);
    Worst worst{"exp"};
    std::uniform_real_distribution<double> all(-745.13, 709.78);
    std::uniform_real_distribution<double> subnormalResults(-745.13, -708.4);
    std::uniform_real_distribution<double> small(-1.0, 1.0);
    for (int i = 0; i < 200000; ++i) {
        check1(worst, smExp, mpfr_exp, all(rng));
    }
    for (int i = 0; i < 50000; ++i) {
        check1(worst, smExp, mpfr_exp, subnormalResults(rng));
        check1(worst, smExp, mpfr_exp, small(rng));
        check1(worst, smExp, mpfr_exp, std::copysign(logUniform(rng, 1e-300, 1.0), small(rng)));
    }
    // Around the boundaries of the reduction n = round(4x / ln 2) and the edges of the range.
    const double quarterLn2 = 0.25 * std::log(2.0);
    for (int n = -4300; n <= 4096; n += 7) {
        double x = (n + 0.5) * quarterLn2;
        for (int step = 0; step < 4; ++step) {
            check1(worst, smExp, mpfr_exp, x);
            x = std::nextafter(x, 0.0);
        }
    }
    for (const double x : {709.782712893384, 709.78271289338397, -708.3964185322641, -745.1332191019411, -745.13,
                           -744.44007192138126, 0.0, 1e-320, -1e-320, 1.0, -1.0}) {
        check1(worst, smExp, mpfr_exp, x);
    }
    worst.report();
    REQUIRE(worst.error <= 1.0);
}

TEST_CASE("log within 1 ulp over the positive doubles", "[math][accuracy]") {
    std::mt19937_64 rng(2);
    Worst worst{"log"};
    std::uniform_real_distribution<double> nearOne(0.5, 2.0);
    std::uniform_real_distribution<double> model(1.0, 1.1e5); // pressures in Pa, temperatures, ratios
    for (int i = 0; i < 150000; ++i) {
        check1(worst, smLog, mpfr_log, randomPositiveBits(rng));
        check1(worst, smLog, mpfr_log, nearOne(rng));
    }
    for (int i = 0; i < 50000; ++i) {
        check1(worst, smLog, mpfr_log, model(rng));
        check1(worst, smLog, mpfr_log, 1.0 + std::ldexp(nearOne(rng) - 1.25, -static_cast<int>(rng() % 50)));
        check1(worst, smLog, mpfr_log, std::bit_cast<double>(rng() & 0x000fffffffffffffull) + 0x1p-1074);
    }
    double x = 1.0;
    for (int i = 0; i < 1000; ++i) { // the ulps next to 1, both sides
        check1(worst, smLog, mpfr_log, x);
        check1(worst, smLog, mpfr_log, 2.0 - x);
        x = std::nextafter(x, 2.0);
    }
    for (const double v : {std::numeric_limits<double>::denorm_min(), std::numeric_limits<double>::min(),
                           std::numeric_limits<double>::max(), 0x1.6a09e667f3bccp+0, 0x1.6a09e667f3bcdp+0,
                           0x1.6a09e667f3bccp-1, 0x1.6a09e667f3bcdp-1, 2.0, 0.5, 0x1p-1030}) {
        check1(worst, smLog, mpfr_log, v);
    }
    worst.report();
    REQUIRE(worst.error <= 1.0);
}

TEST_CASE("pow within 1 ulp for the model's exponents and a positive base", "[math][accuracy]") {
    std::mt19937_64 rng(3);
    Worst worst{"pow"};
    auto check = [&](double x, double y) {
        Big bx, by, out;
        mpfr_set_d(bx.v, x, MPFR_RNDN);
        mpfr_set_d(by.v, y, MPFR_RNDN);
        mpfr_pow(out.v, bx.v, by.v, MPFR_RNDN);
        worst.record(ulpError(sm::pow(x, y), out.v), out.v, x, y);
    };
    // The model's exponents: Kessler's 0.1364, 0.875, 0.2046, 0.525, kappa = R/cp, 1.5 and their inverses.
    const double kappa = 287.04 / 1004.64;
    const double modelExponents[] = {0.1364, 0.875, 0.2046, 0.525, kappa, 1.5, 2.0 / 7.0, 1.0 / kappa, -kappa, 0.5};
    for (const double y : modelExponents) {
        for (int i = 0; i < 20000; ++i) {
            check(logUniform(rng, 1e-6, 1e6), y);
        }
    }
    // Any exponent: random bases and exponents, results near overflow and in the subnormal range.
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    for (int i = 0; i < 60000; ++i) {
        const double x = logUniform(rng, 1e-300, 1e300);
        check(x, (unit(rng) - 0.5) * 8.0);
        const double l = std::log(x);
        if (std::fabs(l) > 1e-3) {
            check(x, (700.0 + 9.78 * unit(rng)) / l);  // results up to the overflow threshold
            check(x, -(708.0 + 37.0 * unit(rng)) / l); // subnormal results
            check(x, (unit(rng) - 0.5) * 1400.0 / l);  // every binade
        }
        const double nearOne = 1.0 + std::ldexp(unit(rng) - 0.5, -static_cast<int>(rng() % 40));
        check(nearOne, (unit(rng) - 0.5) * 1e6);
    }
    // x within a few binades of 1 and |y log x| near the overflow and underflow thresholds: log x has few bits of k ln2
    // there, and its relative error, magnified by |y log x| ~ 709, weighs most.
    for (int i = 0; i < 20000; ++i) {
        const double x = 0.5 + 3.5 * unit(rng);
        const double l = std::log(x);
        if (std::fabs(l) > 1e-3) {
            check(x, (700.0 + 9.78 * unit(rng)) / l);
            check(x, -(700.0 + 45.0 * unit(rng)) / l);
        }
    }
    for (int n = -1074; n <= 1023; ++n) {
        check(2.0, n);
    }
    worst.report();
    REQUIRE(worst.error <= 1.0);
}

TEST_CASE("sin and cos within 1 ulp for |x| < 2^26", "[math][accuracy]") {
    std::mt19937_64 rng(4);
    Worst worstSin{"sin"};
    Worst worstCos{"cos"};
    auto check = [&](double x) {
        check1(worstSin, smSin, mpfr_sin, x);
        check1(worstCos, smCos, mpfr_cos, x);
    };
    const double twoPi = 2.0 * std::numbers::pi;
    std::uniform_real_distribution<double> turn(-twoPi, twoPi);
    std::uniform_real_distribution<double> sign(-1.0, 1.0);
    for (int i = 0; i < 200000; ++i) {
        check(turn(rng));
    }
    for (int i = 0; i < 50000; ++i) {
        check(std::copysign(logUniform(rng, 1e-300, 0x1p26), sign(rng)));
    }
    // Near multiples of pi/2, where the reduced argument is smallest and cancellation largest.
    for (long n = 1; n < 100000; n = n * 11 / 10 + 1) {
        double x = static_cast<double>(n) * (std::numbers::pi / 2.0);
        for (int step = 0; step < 8; ++step) {
            check(x);
            check(-x);
            x = std::nextafter(x, 0.0);
        }
    }
    for (const double x :
         {0x1p26 - 1.0, std::nextafter(0x1p26, 0.0), 1e-310, std::numbers::pi / 4.0, std::numbers::pi, 1e-8}) {
        check(x);
    }
    worstSin.report();
    worstCos.report();
    REQUIRE(worstSin.error <= 1.0);
    REQUIRE(worstCos.error <= 1.0);
}

TEST_CASE("the ulp measure sees an error of 2 ulps and one of a dropped series term", "[math][accuracy]") {
    std::mt19937_64 rng(5);
    std::uniform_real_distribution<double> all(-700.0, 700.0);
    Worst twoUlps{"exp+2"};
    Worst dropped{"exp-t"};
    for (int i = 0; i < 1000; ++i) {
        const double x = all(rng);
        Big in, out;
        mpfr_set_d(in.v, x, MPFR_RNDN);
        mpfr_exp(out.v, in.v, MPFR_RNDN);
        const double y = sm::exp(x);
        twoUlps.record(ulpError(std::nextafter(std::nextafter(y, 0.0), 0.0), out.v), out.v, x);
        // exp(x) = 2^k exp(r) without r^8/8!: the error of a series one term short (|r| <= ln2/2).
        const double k = std::nearbyint(x / std::numbers::ln2);
        const double r = (x - k * 0x1.62e42fefa3800p-1) - k * 0x1.ef35793c76730p-45;
        dropped.record(ulpError(std::ldexp(sm::exp(r) - std::pow(r, 8) / 40320.0, static_cast<int>(k)), out.v), out.v,
                       x);
    }
    twoUlps.report();
    dropped.report();
    REQUIRE(twoUlps.error >= 1.5);
    REQUIRE(dropped.error > 1.0);
}
