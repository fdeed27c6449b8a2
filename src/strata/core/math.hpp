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

#if defined(STRATA_PLATFORM_MATH)
// The build option STRATA_PLATFORM_MATH: the platform's functions (glibc's on the CPU, CUDA's on a device) in place of
// the ones below, to compare speed and results with. The bits then differ between the CPU and a GPU, and the
// regression references (made with strata::math's) no longer match in the last bits.
STRATA_HD inline double sqrt(double x) { return ::sqrt(x); }
STRATA_HD inline double exp(double x) { return ::exp(x); }
STRATA_HD inline double log(double x) { return ::log(x); }
STRATA_HD inline double pow(double x, double y) { return ::pow(x, y); }
STRATA_HD inline double sin(double x) { return ::sin(x); }
STRATA_HD inline double cos(double x) { return ::cos(x); }
#else

// Correctly rounded on every platform (IEEE 754 requires it; nvcc's default -prec-sqrt=true keeps it so).
STRATA_HD STRATA_MATH_INLINE double sqrt(double x) { return std::sqrt(x); }

// How the functions stay vectorisable: the special cases never branch around floating-point work. The tests of the
// argument come first, next to each other; the arithmetic then always runs (logPair and expPair give finite values
// for any bits), and its result is combined with a special value arithmetically (z * factor, z + adjustment). GCC
// duplicates the work between two tests of the same condition into two paths, and under -ftrapping-math does not
// turn paths with floating-point work back into one vector stream.

STRATA_HD STRATA_MATH_INLINE double exp(double x) {
    // Beyond |x| = 746 the result is inf or 0: exp(+-746) gives them, and keeps 2^k's exponent in range. NaN
    // propagates through the arithmetic.
    const bool outside = detail::absOf(x) > 746.0;
    const double edge = detail::fromBits(detail::bitsOf(746.0) | (detail::bitsOf(x) & detail::kSignBit));
    return detail::expPair(outside ? edge : x, 0.0);
}

STRATA_HD STRATA_MATH_INLINE double log(double x) {
    using detail::infinity;
    // Added to the arithmetic's (finite) value: 0 for a positive finite x, else -inf for +-0, NaN for x < 0, x
    // itself for +inf and NaN.
    const double negativeOrNot = x < 0.0 ? detail::quietNan() : x;
    const double special = x == 0.0 ? -infinity() : negativeOrNot;
    const double adjustment = x > 0.0 && x < infinity() ? 0.0 : special;
    const detail::Pair l = detail::logPair(x);
    return (l.hi + l.lo) + adjustment;
}

STRATA_HD STRATA_MATH_INLINE double pow(double x, double y) {
    using detail::infinity;
    const double ax = detail::absOf(x);
    const double ay = detail::absOf(y);

    // Whether y is an integer, and odd (an infinite y counts as even): y + 2^52 rounds y to an integer, whose parity
    // is then the last bit. Integer work by masks, not comparisons (SSE2 has no 64-bit integer comparison).
    const double zero = detail::fromBits(detail::bitsOf(y) & detail::kSignBit); // +-0, not a constant: no own path
    const double shift = ay < 0x1p52 ? 0x1p52 : zero;
    const double rounded = ay + shift;
    const bool yInteger = rounded - shift == ay;
    const bool yBelow2To53 = ay < 0x1p53;
    const std::uint64_t oddMask = yInteger & yBelow2To53 ? 0 - (detail::bitsOf(rounded) & 1) : 0;
    const std::uint64_t signFlip = detail::bitsOf(x) & detail::kSignBit & oddMask;

    // The factor that exp(y log|x|) is multiplied by: 1, or the value of a special case. Where x is 0 or infinite,
    // or y infinite, the arithmetic below gives a finite positive value, 0 or inf of the same kind as the special
    // value (logPair(0) = -746.5 and logPair(inf) = 747 in effect; y is clamped to 2^900), so the product is it.
    // Every comparison is made unconditionally (& and |, not && and ||, single-level selects): a comparison may
    // raise an exception, and GCC does not speculate one into a vector stream.
    const bool xZero = ax == 0.0;
    const bool xInfinite = ax == infinity();
    const bool yInfinite = ay == infinity();
    const bool yNegative = y < 0.0;
    const bool anyNan = detail::isNan(x) | detail::isNan(y);
    const bool one = (y == 0.0) | (x == 1.0);
    const bool vanishing = (ax < 1.0) == (y > 0.0); // |x|^(+-inf) = 0
    const double zeroBase = yNegative ? infinity() : 0.0;
    const double infiniteBase = yNegative ? 0.0 : infinity();
    const double infiniteExponentOff1 = vanishing ? 0.0 : infinity();
    const double infiniteExponent = ax == 1.0 ? 1.0 : infiniteExponentOff1;
    double special = xZero ? zeroBase : 1.0;
    special = xInfinite ? infiniteBase : special;
    special = yInfinite ? infiniteExponent : special;
    // x < 0 (finite, nonzero) with a non-integer y gives NaN: the sign bit as a mask (no ordered comparison of x).
    const std::uint64_t negativeMask = 0 - (detail::bitsOf(x) >> 63);
    const std::uint64_t nanMask = xZero | xInfinite | yInteger ? 0 : negativeMask & detail::kNanBits;
    special = detail::fromBits(detail::bitsOf(special) | nanMask);
    special = anyNan ? detail::quietNan() : special;
    special = one ? 1.0 : special;

    // y log|x| in double-double; beyond |y| = 2^900 (where Dekker's split would overflow) the result saturates
    // anyway, and exp's argument is clamped to +-746, where it gives inf or 0.
    const double yClamped = detail::fromBits(detail::bitsOf(0x1p900) | (detail::bitsOf(y) & detail::kSignBit));
    const double ys = ay < 0x1p900 ? y : yClamped;
    const detail::Pair l = detail::logPair(ax);
    const detail::Pair prod = detail::twoProd(ys, l.hi);
    const double productLo = prod.lo + ys * l.lo; // below 2^-16 |prod.hi|: expPair's range allows for it
    const bool outside = detail::absOf(prod.hi) > 746.0;
    const double edge = detail::fromBits(detail::bitsOf(746.0) | (detail::bitsOf(prod.hi) & detail::kSignBit));
    const double eHi = outside ? edge : prod.hi;
    const double eLo = outside ? detail::fromBits(detail::bitsOf(productLo) & detail::kSignBit) : productLo;
    const double z = detail::expPair(eHi, eLo);
    return detail::fromBits(detail::bitsOf(z * special) ^ signFlip);
}

namespace detail {
struct SinCos {
    double sin;
    double cos;
};

STRATA_HD STRATA_MATH_INLINE SinCos sinCos(double x) {
    const bool reducible = absOf(x) < 0x1p26;                 // false for inf and NaN
    const double invalid = reducible ? -0.0 : quietNan();     // y + -0 = y for every y, -0 included
    const double signedZero = fromBits(bitsOf(x) & kSignBit); // not a constant: no path of its own
    const Reduced red = reduceHalfPi(reducible ? x : signedZero);
    // The kernels take r with the sign of x flipped off (sin is odd, cos even, and rounding to nearest is symmetric,
    // so the bits are those of the kernels at r), and the sign goes back on the result: sin(-0) = -0 that way.
    const std::uint64_t rSign = bitsOf(x) & kSignBit;
    const Pair ar{fromBits(bitsOf(red.r.hi) ^ rSign), fromBits(bitsOf(red.r.lo) ^ rSign)};
    const double s = sinKernel(ar);
    const double c = cosKernel(ar);
    // sin(n pi/2 + r) for n mod 4 = 0, 1, 2, 3: s, c, -s, -c; cos: c, -s, -c, s. Masks, not nested selects.
    const std::uint64_t q = static_cast<std::uint64_t>(red.quadrant);
    const std::uint64_t odd = 0 - (q & 1); // all ones for odd n
    const std::uint64_t sinBits = (bitsOf(c) & odd) | (bitsOf(s) & ~odd);
    const std::uint64_t cosBits = (bitsOf(s) & odd) | (bitsOf(c) & ~odd);
    const std::uint64_t sinSign = ((q & 2) << 62) ^ (rSign & ~odd);
    const std::uint64_t cosSign = (((q + 1) & 2) << 62) ^ (rSign & odd);
    return {fromBits(sinBits ^ sinSign) + invalid, fromBits(cosBits ^ cosSign) + invalid};
}
} // namespace detail

STRATA_HD STRATA_MATH_INLINE double sin(double x) { return detail::sinCos(x).sin; }

STRATA_HD STRATA_MATH_INLINE double cos(double x) { return detail::sinCos(x).cos; }

#endif // STRATA_PLATFORM_MATH

} // namespace strata::math
