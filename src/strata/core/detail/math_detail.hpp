// The building blocks of strata::math (math.hpp): bit access, exact double-double steps and the reduced-argument
// kernels. Every step is an IEEE basic operation (+ - * /) or an exact bit manipulation, so the results depend only
// on the floating-point contract (round to nearest, no contraction of a*b + c): Dekker's splitting stands in for
// fma, which the CPU baseline (x86-64 without -mfma) would call from libm, out of reach of vectorisation.
#pragma once

#include <strata/core/config.hpp>

#include <cstdint>
#if !defined(__CUDA_ARCH__)
#include <bit>
#endif

// Inlined always: a call that stays a call keeps a loop of calls from vectorising, and GCC declines to inline the
// larger of these functions where a translation unit calls them often.
#if defined(__CUDACC__)
#define STRATA_MATH_INLINE __forceinline__
#elif defined(__GNUC__)
#define STRATA_MATH_INLINE __attribute__((always_inline)) inline
#else
#define STRATA_MATH_INLINE inline
#endif

namespace strata::math::detail {

STRATA_HD STRATA_MATH_INLINE std::uint64_t bitsOf(double x) {
#if defined(__CUDA_ARCH__)
    return static_cast<std::uint64_t>(__double_as_longlong(x));
#else
    return std::bit_cast<std::uint64_t>(x);
#endif
}

STRATA_HD STRATA_MATH_INLINE double fromBits(std::uint64_t b) {
#if defined(__CUDA_ARCH__)
    return __longlong_as_double(static_cast<long long>(b));
#else
    return std::bit_cast<double>(b);
#endif
}

inline constexpr std::uint64_t kInfBits = 0x7ff0000000000000ull;
inline constexpr std::uint64_t kNanBits = 0x7ff8000000000000ull;
inline constexpr std::uint64_t kSignBit = 0x8000000000000000ull;

STRATA_HD STRATA_MATH_INLINE double infinity() { return fromBits(kInfBits); }
STRATA_HD STRATA_MATH_INLINE double quietNan() { return fromBits(kNanBits); }
STRATA_HD STRATA_MATH_INLINE double absOf(double x) { return fromBits(bitsOf(x) & ~kSignBit); }
STRATA_HD STRATA_MATH_INLINE bool isNan(double x) { return x != x; }
STRATA_HD STRATA_MATH_INLINE bool isFinite(double x) { return absOf(x) < infinity(); }

// 2^k for -1022 <= k <= 1023, built from the exponent field.
STRATA_HD STRATA_MATH_INLINE double powerOfTwo(std::int64_t k) {
    return fromBits(static_cast<std::uint64_t>(k + 1023) << 52);
}

// A double-double value hi + lo with |lo| <= ulp(hi) / 2.
struct Pair {
    double hi;
    double lo;
};

// hi + lo = a + b exactly, for any a, b (Knuth).
STRATA_HD STRATA_MATH_INLINE Pair twoSum(double a, double b) {
    const double s = a + b;
    const double bv = s - a;
    const double av = s - bv;
    return {s, (a - av) + (b - bv)};
}

// hi + lo = a + b exactly when |a| >= |b| or a = 0 (Dekker).
STRATA_HD STRATA_MATH_INLINE Pair fastTwoSum(double a, double b) {
    const double s = a + b;
    return {s, b - (s - a)};
}

// a = hi + lo with both halves of at most 26 significant bits; |a| < 2^995.
STRATA_HD STRATA_MATH_INLINE Pair split(double a) {
    const double c = 134217729.0 * a; // 2^27 + 1
    const double hi = c - (c - a);
    return {hi, a - hi};
}

// hi + lo = a * b exactly, without fma (Dekker); |a|, |b| < 2^995 and no underflow in the partial products.
STRATA_HD STRATA_MATH_INLINE Pair twoProd(double a, double b) {
    const double p = a * b;
    const Pair as = split(a);
    const Pair bs = split(b);
    const double err = ((as.hi * bs.hi - p) + as.hi * bs.lo + as.lo * bs.hi) + as.lo * bs.lo;
    return {p, err};
}

// (a.hi + a.lo) * (b.hi + b.lo) to about 2^-102 relative.
STRATA_HD STRATA_MATH_INLINE Pair mulPair(Pair a, Pair b) {
    const Pair p = twoProd(a.hi, b.hi);
    return fastTwoSum(p.hi, p.lo + (a.hi * b.lo + a.lo * b.hi));
}

// ln 2 = kLn2Hi + kLn2Lo; kLn2Hi has 42 significant bits, so that n * kLn2Hi is exact for |n| < 2^11.
inline constexpr double kLn2Hi = 0x1.62e42fefa3800p-1;
inline constexpr double kLn2Lo = 0x1.ef35793c76730p-45;

// a with its low 53 - Bits significand bits cleared: the leading Bits bits of a (fewer for a subnormal a), exactly,
// and a - leadingBits<Bits>(a) is exact too. A mask, not Dekker's split: two operations instead of four, no overflow.
template <int Bits>
STRATA_HD STRATA_MATH_INLINE double leadingBits(double a) {
    return fromBits(bitsOf(a) & (~std::uint64_t{0} << (53 - Bits)));
}

// 1 where a significand field (52 bits) is at least the field t, else 0: the carry out of field + 2^52 - t (SSE2
// has no 64-bit integer comparison).
STRATA_HD STRATA_MATH_INLINE std::uint64_t fieldAtLeast(std::uint64_t field, std::uint64_t t) {
    return (field + (0x0010000000000000ull - t)) >> 52;
}

// ifLow where low is all ones, ifHigh where high is, else ifMiddle (low and high not both all ones).
STRATA_HD STRATA_MATH_INLINE double pickByMask(std::uint64_t low, std::uint64_t high, double ifLow, double ifMiddle,
                                               double ifHigh) {
    return fromBits((low & bitsOf(ifLow)) | (high & bitsOf(ifHigh)) | (~(low | high) & bitsOf(ifMiddle)));
}

// log(x) = hi + lo to about 2^-66 relative, for positive finite x (normal or subnormal); |lo| < 2^-16 |hi|, not
// normalised (log rounds hi + lo once; pow multiplies hi exactly and lo in double, and expPair takes the sum as is).
// x = 2^k m with m in [sqrt(2)/2, sqrt(2)), and m = c (m / c) with c = 25/32, 1 or 21/16 by whether m is below
// 2^-1/4, between, or above 2^1/4; log(m / c) = 2 atanh(s) = 2s + 2s^3/3 + s^5 T(s^2) with s = (m - c) / (m + c),
// |s| < 0.0865, in double-double from one division. c = 1 around m = 1, so that log keeps its relative accuracy
// next to x = 1. The leading terms are exact where they must be: with a the leading 15 bits of s, a^3 has 45 bits
// and (171/256) a^3 53; the rest of 2s^3/3 and the tail T (a minimax polynomial, 2^-72 relative to log m), each
// below 2^-16 of log m, take double.
STRATA_HD STRATA_MATH_INLINE Pair logPair(double x) {
    // Selects only between constants or arguments, and integer arithmetic instead of integer comparisons, so that
    // a loop of calls vectorises (a select whose arm holds floating-point work stops GCC under -ftrapping-math).
    // Scaled by 2^54 or 2^-54, exactly, so that a subnormal x becomes normal. One select, whose value both uses
    // read (a second select on the same condition lets the compiler split the loop body into two paths).
    const double scale = x < 0x1p-500 ? 0x1p54 : 0x1p-54;
    const double xs = x * scale;
    const std::uint64_t bits = bitsOf(xs);
    const std::uint64_t mantissa = bits & 0x000fffffffffffffull;
    // m would be above sqrt(2): then m is halved and k raised by one.
    const std::uint64_t upper = fieldAtLeast(mantissa, 0x6a09e667f3bcdull);
    const double m = fromBits(mantissa | (0x3ff0000000000000ull - (upper << 52)));
    // The biased exponent (+ upper) as a double without an integer conversion: 2^52 + e, less 2^52.
    const double biased = fromBits(0x4330000000000000ull | ((bits >> 52) + upper)) - 0x1p52;
    const double scaleExponent = fromBits(0x4330000000000000ull | (bitsOf(scale) >> 52)) - 0x1p52; // biased
    const double k = biased - scaleExponent;

    // c = 25/32 where m < 2^-1/4 (1.mantissa in [sqrt(2), 2^3/4), m halved), 21/16 where m >= 2^1/4, else 1; and
    // log c = logCHi + logCLo. Picked by masks of all ones or zeros, not selects.
    const std::uint64_t low = 0 - (upper ^ fieldAtLeast(mantissa, 0xae89f995ad3adull));  // at least 2^3/4: upper
    const std::uint64_t high = 0 - (upper ^ fieldAtLeast(mantissa, 0x306fe0a31b715ull)); // upper: at least 2^1/4
    const double c = pickByMask(low, high, 0x1.9p-1, 1.0, 0x1.5p+0);
    const double logCHi = pickByMask(low, high, -0x1.f991c6cb3b379p-3, 0.0, 0x1.1675cababa60ep-2);
    const double logCLo = pickByMask(low, high, -0x1.f665066f980a2p-57, 0.0, 0x1.ce63eab883717p-61);

    // s = f / d as sHi + sLo, f = m - c (exact, Sterbenz), d = m + c = dHi + dLo (exact: c's exponent is at least
    // m's). sLo from the residual f - sHi d, exact because every product in it is: dHi = dh + dl with dh its leading
    // 26 bits, sHi = sh + sl (26 + 27 bits); dl + dLo rounds, at 2^-78 of f.
    const double f = m - c;
    const Pair d = fastTwoSum(c, m);
    const double inverse = 1.0 / d.hi;
    const double sHi = f * inverse;
    const double dh = leadingBits<26>(d.hi);
    const double dl = (d.hi - dh) + d.lo;
    const double sh = leadingBits<26>(sHi);
    const double sl = sHi - sh;
    const double sLo = (((f - sh * dh) - sl * dh) - sHi * dl) * inverse;

    const double s = sHi + sLo;
    const double z = s * s;
    const double z2 = z * z;
    const double t01 = 0x1.9999999999990p-2 + z * 0x1.249249249696dp-2; // ~2/5 + 2/7 z
    const double t23 = 0x1.c71c71b061aabp-3 + z * 0x1.745d34b86bbe6p-3;
    const double t45 = 0x1.3aff9a618f664p-3 + z * 0x1.17fc41e338c3ep-3;
    const double t = (t01 + z2 * t23) + (z2 * z2) * t45;
    const double tail = (s * z2) * t; // s^5 T(s^2)

    // 2s^3/3 = (171/256) a^3 - a^3/768 + 2e (a^2 + a e + e^2/3) for s = a + e.
    const double a = leadingBits<15>(sHi);
    const double e = (sHi - a) + sLo;
    const double a2 = a * a;
    const double a3 = a2 * a;
    const double cubeRest = a3 * -0x1.5555555555555p-10 + (2.0 * e) * (a2 + e * (a + e * 0x1.5555555555555p-2));
    const Pair head = fastTwoSum(2.0 * sHi, 0x1.56p-1 * a3); // 2 sHi + (171/256) a^3
    const Pair withC = fastTwoSum(logCHi, head.hi);          // |log c| > |log(m / c)| unless c = 1
    const Pair sum = fastTwoSum(k * kLn2Hi, withC.hi);       // |k ln2| > |log m| unless k = 0
    const double small = (tail + cubeRest) + 2.0 * sLo;
    const double lo = ((k * kLn2Lo + logCLo) + small) + (head.lo + (withC.lo + sum.lo));
    return {sum.hi, lo};
}

// exp(hi + lo) for -746 <= hi <= 710 and |lo| <= 2^-16 |hi| (pow passes logPair's lo times y, not normalised).
// hi + lo = k ln2 + r with k = round(hi / ln2), |r| < 0.36 (ln2/2 + 746 2^-16), r = r.hi + r.lo in double-double;
// exp(r) = 1 + r + r^2 (1/2 + r Q(r)) with Q a minimax polynomial of degree 9 (2^-62.4 relative to exp(r) for
// |r| < 0.36) evaluated by Estrin's scheme (short chains of dependent operations, where Horner's is one chain of 20),
// summed so that only the last addition rounds at the result's precision.
STRATA_HD STRATA_MATH_INLINE double expPair(double hi, double lo) {
    constexpr double shifter = 0x1.8p52;
    const double t = hi * 0x1.71547652b82fep+0 + shifter; // 1/ln2
    const double n = t - shifter;
    const std::int64_t k = static_cast<std::int64_t>(bitsOf(t) - bitsOf(shifter));
    const Pair r = twoSum(hi - n * kLn2Hi, lo - n * kLn2Lo); // hi - n ln2Hi is exact

    const double x = r.hi;
    const double x2 = x * x;
    const double x4 = x2 * x2;
    const double q01 = 0x1.5555555555555p-3 + x * 0x1.555555555551ep-5; // ~1/3! + x/4!
    const double q23 = 0x1.111111110ffc3p-7 + x * 0x1.6c16c16c2fe06p-10;
    const double q45 = 0x1.a01a01aea3fcap-13 + x * 0x1.a01a01279e101p-16;
    const double q67 = 0x1.71ddf7b35e006p-19 + x * 0x1.27e5de723aa54p-22;
    const double q89 = 0x1.af64699b6afd4p-26 + x * 0x1.1dfdad329d8b6p-29;
    const double q = (q01 + x2 * q23) + x4 * ((q45 + x2 * q67) + x4 * q89);
    const double p = x2 * (0.5 + x * q); // exp(x) - 1 - x
    const Pair one = fastTwoSum(1.0, x);
    const double y = one.hi + (one.lo + ((r.lo + r.lo * x) + p));

    // 2^k in two normal factors, so that a subnormal or near-overflow result is rounded once, by the last product.
    const std::int64_t k1 = k >> 1;
    return (y * powerOfTwo(k1)) * powerOfTwo(k - k1);
}

// The reduced argument of sin and cos: x = n pi/2 + (hi + lo), |hi + lo| <= pi/4 (1 + 2^-50), for |x| < 2^26.
// Cody and Waite with pi/2 in four 27-bit parts (each n * part exact for |n| < 2^26) and a 53-bit fifth.
struct Reduced {
    Pair r;
    std::int64_t quadrant; // n mod 4
};

STRATA_HD STRATA_MATH_INLINE Reduced reduceHalfPi(double x) {
    constexpr double shifter = 0x1.8p52;
    const double t = x * 0x1.45f306dc9c883p-1 + shifter; // 2/pi
    const double n = t - shifter;
    const std::int64_t ni = static_cast<std::int64_t>(bitsOf(t) - bitsOf(shifter));
    const double a1 = x - n * 0x1.921fb54000000p+0; // exact
    const Pair a2 = twoSum(a1, -(n * 0x1.10b4610000000p-30));
    const Pair a3 = twoSum(a2.hi, -(n * 0x1.a626330000000p-58));
    const Pair a4 = twoSum(a3.hi, -(n * 0x1.45c06e0000000p-86));
    const double err = ((a2.lo + a3.lo) + a4.lo) - n * 0x1.cd129024e088ap-115;
    return {twoSum(a4.hi, err), ni & 3};
}

// sin(hi + lo) for |hi + lo| <= pi/4 + eps: r - r^3/6 in double-double, r^5/5! ... r^19/19! in double.
STRATA_HD STRATA_MATH_INLINE double sinKernel(Pair r) {
    const double x = r.hi;
    const Pair z = twoProd(x, x);
    const Pair cubeParts = twoProd(z.hi, x);
    const Pair cube = fastTwoSum(cubeParts.hi, cubeParts.lo + z.lo * x);
    const Pair sixthOfCube = mulPair(cube, Pair{0x1.5555555555555p-3, 0x1.5555555555555p-57});
    const double zh = z.hi;
    double s = -0x1.2f49b46814157p-57; // -1/19!
    s = 0x1.952c77030ad4ap-49 + zh * s;
    s = -0x1.ae7f3e733b81fp-41 + zh * s;
    s = 0x1.6124613a86d09p-33 + zh * s;
    s = -0x1.ae64567f544e4p-26 + zh * s;
    s = 0x1.71de3a556c734p-19 + zh * s;
    s = -0x1.a01a01a01a01ap-13 + zh * s;
    s = 0x1.1111111111111p-7 + zh * s;         // 1/5!
    const double tail = (cube.hi * zh) * s;    // r^5/5! - r^7/7! + ...
    const double lo = r.lo * (1.0 - 0.5 * zh); // sin(x + lo) - sin(x) to first order
    const Pair head = twoSum(x, -sixthOfCube.hi);
    return head.hi + (head.lo + ((lo - sixthOfCube.lo) + tail));
}

// cos(hi + lo) for |hi + lo| <= pi/4 + eps: 1 - r^2/2 in double-double, r^4/4! ... r^18/18! in double.
STRATA_HD STRATA_MATH_INLINE double cosKernel(Pair r) {
    const double x = r.hi;
    const Pair z = twoProd(x, x);
    const double zh = z.hi;
    double c = -0x1.6827863b97d97p-53; // -1/18!
    c = 0x1.ae7f3e733b81fp-45 + zh * c;
    c = -0x1.93974a8c07c9dp-37 + zh * c;
    c = 0x1.1eed8eff8d898p-29 + zh * c;
    c = -0x1.27e4fb7789f5cp-22 + zh * c;
    c = 0x1.a01a01a01a01ap-16 + zh * c;
    c = -0x1.6c16c16c16c17p-10 + zh * c;
    c = 0x1.5555555555555p-5 + zh * c; // 1/4!
    const double tail = (zh * zh) * c;
    const double lo = r.lo * x; // cos(x + lo) - cos(x) = -lo sin(x) to first order
    const Pair head = twoSum(1.0, -0.5 * z.hi);
    return head.hi + (head.lo + ((tail - 0.5 * z.lo) - lo));
}

} // namespace strata::math::detail
