// strata::math: exp, log, pow, sin, cos and sqrt that give the same bits on every backend.
//
// The platform's elementary functions (glibc's, CUDA's) differ in the last bit now and then, so a kernel that calls
// them gives the CPU's bits on the CPU and other bits on a GPU. These are written with IEEE basic operations only
// (+ - * /, no fma, no table lookups, integer work on the bits of a double), so under Strata's floating-point
// contract (round to nearest, -ffp-contract=off / nvcc --fmad=false, no -ffast-math) they give identical bits on
// Serial, OpenMP, Threads and CUDA, scalar or vectorised. sqrt is IEEE's correctly rounded square root on every
// platform and is the platform's.
//
// Accuracy (measured against MPFR, tests/core/test_math.cpp; docs/architecture.md lists the figures): at most 1 ulp
//   exp  over [-745.2, 709.8] (subnormal results included), log over all positive doubles, subnormals included,
//   pow  for positive x and finite y with a finite nonzero result, negative x with integer y, sin and cos for
//   |x| < 2^26.
// Special values follow C's functions (C11 Annex F):
//   exp: exp(NaN) = NaN, exp(+inf) = +inf, exp(-inf) = +0, overflow gives +inf and underflow +0.
//   log: log(+-0) = -inf, log(x < 0) = NaN, log(+inf) = +inf, log(NaN) = NaN.
//   pow: pow(x, +-0) = 1 and pow(1, y) = 1 even for NaN; pow(x < 0, non-integer y) = NaN; pow(+-0, y < 0) = +inf
//        (-inf for odd integer y and x = -0); pow(+-0, y > 0) = +0 (x for odd integer y); pow(-1, +-inf) = 1;
//        |x| < 1 gives +0 for y = +inf and +inf for y = -inf, |x| > 1 the reverse; pow(+-inf, y) as 1 / pow(+-0, y);
//        overflow gives +-inf, underflow +-0; otherwise NaN in gives NaN.
//   sin, cos: sin(+-0) = +-0, cos(+-0) = 1, NaN and +-inf give NaN.
// Range reduction of sin and cos: x = n pi/2 + r with pi/2 in five parts, exact for |x| < 2^26 (about 6.7e7). Beyond
// that an angle in double has lost its fraction of a turn to rounding, and sin and cos return NaN, visibly, rather
// than a value without meaning; the model's angles (latitudes, phases of a period) are far inside.
#pragma once

#include <strata/core/config.hpp>
#include <strata/core/detail/math_detail.hpp>

#include <cmath>

namespace strata::math {

// Correctly rounded on every platform (IEEE 754 requires it; nvcc's default -prec-sqrt=true keeps it so).
STRATA_HD inline double sqrt(double x) { return std::sqrt(x); }

STRATA_HD inline double exp(double x) {
    // Outside [-746, 710] the result is 0 or inf; there the arithmetic's value is replaced (a select of the result
    // rather than a clamp of the argument: a clamp makes the compiler fold a constant path and stop vectorising).
    const double y = detail::expPair(x, 0.0); // NaN propagates through the arithmetic
    const double high = x > 710.0 ? detail::infinity() : y;
    return x < -746.0 ? 0.0 : high;
}

STRATA_HD inline double log(double x) {
    const bool regular = x > 0.0 && x < detail::infinity();
    const double y = detail::logPair(regular ? x : 1.0).hi;
    if (regular) {
        return y;
    }
    return x == 0.0 ? -detail::infinity() : (x < 0.0 ? detail::quietNan() : x + x);
}

STRATA_HD inline double pow(double x, double y) {
    using detail::infinity;
    const double ax = detail::absOf(x);
    const double ay = detail::absOf(y);
    const bool regular = ax > 0.0 && ax < infinity() && ay < infinity(); // not NaN, not 0, not inf
    const detail::Pair l = detail::logPair(regular ? ax : 2.0);
    // |y log|x|| beyond 1000 overflows or underflows for sure; below it y is small enough for Dekker's split.
    const double estimate = y * l.hi;
    const bool saturated = !(detail::absOf(estimate) < 1000.0);
    const double ys = regular && !saturated ? y : 0.0;
    const detail::Pair prod = detail::twoProd(ys, l.hi);
    const detail::Pair e = detail::fastTwoSum(prod.hi, prod.lo + ys * l.lo);
    const bool clamp = e.hi > 710.0 || e.hi < -746.0;
    const double magnitudeRegular = detail::expPair(clamp ? (e.hi > 0.0 ? 710.0 : -746.0) : e.hi, clamp ? 0.0 : e.lo);
    const double saturatedValue = estimate > 0.0 ? infinity() : 0.0;

    // The integer and parity of y (an infinite y counts as an even integer).
    const bool yInteger = std::floor(y) == y;
    const bool yOdd = yInteger && ay < 0x1p53 && std::floor(0.5 * y) != 0.5 * y;

    // |x|^y where x or y is 0 or infinite.
    double magnitude = saturated ? saturatedValue : magnitudeRegular;
    if (ax == 0.0) {
        magnitude = y < 0.0 ? infinity() : 0.0;
    } else if (ax == infinity()) {
        magnitude = y < 0.0 ? 0.0 : infinity();
    } else if (ay == infinity()) {
        magnitude = ax == 1.0 ? 1.0 : ((ax < 1.0) == (y > 0.0) ? 0.0 : infinity());
    }

    const bool negative = (detail::bitsOf(x) & detail::kSignBit) != 0;
    double result = negative && yOdd ? -magnitude : magnitude;
    if (negative && !yInteger && ax > 0.0 && ax < infinity()) {
        result = detail::quietNan();
    }
    if (detail::isNan(x) || detail::isNan(y)) {
        result = x + y;
    }
    return y == 0.0 || x == 1.0 ? 1.0 : result;
}

namespace detail {
struct SinCos {
    double sin;
    double cos;
};

STRATA_HD inline SinCos sinCos(double x) {
    const bool reducible = absOf(x) < 0x1p26; // false for inf and NaN
    const Reduced red = reduceHalfPi(reducible ? x : 0.0);
    const double s = sinKernel(red.r);
    const double c = cosKernel(red.r);
    // sin(n pi/2 + r) for n mod 4 = 0, 1, 2, 3: s, c, -s, -c; cos: c, -s, -c, s. One select and a sign flip each
    // (nested selects would keep the compiler from vectorising a loop of calls).
    const std::uint64_t q = static_cast<std::uint64_t>(red.quadrant);
    const bool odd = (q & 1) != 0;
    const std::uint64_t sinSign = (q & 2) << 62;
    const std::uint64_t cosSign = ((q + 1) & 2) << 62;
    SinCos out{fromBits(bitsOf(odd ? c : s) ^ sinSign), fromBits(bitsOf(odd ? s : c) ^ cosSign)};
    if (!reducible) {
        out = {quietNan(), quietNan()};
    }
    return out;
}
} // namespace detail

STRATA_HD inline double sin(double x) {
    const double y = detail::sinCos(x).sin;
    return x == 0.0 ? x : y; // keeps the sign of zero
}

STRATA_HD inline double cos(double x) { return detail::sinCos(x).cos; }

} // namespace strata::math
