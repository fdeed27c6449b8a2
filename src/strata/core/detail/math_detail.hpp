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

// log(x) = hi + lo to about 2^-100 relative, for positive finite x (normal or subnormal).
// x = 2^k m with m in [sqrt(2)/2, sqrt(2)); log(m) = 2 atanh(s) with s = (m - 1) / (m + 1), |s| < 0.1716, by its
// Taylor series in double-double for the leading terms s + s^3/3 and in double for the tail (s^5/5 ... s^25/25).
STRATA_HD STRATA_MATH_INLINE Pair logPair(double x) {
    // Selects only between constants or arguments, and integer arithmetic instead of integer comparisons, so that
    // a loop of calls vectorises (a select whose arm holds floating-point work stops GCC under -ftrapping-math).
    // Scaled by 2^54 or 2^-54, exactly, so that a subnormal x becomes normal. One select, whose value both uses
    // read (a second select on the same condition lets the compiler split the loop body into two paths).
    const double scale = x < 0x1p-500 ? 0x1p54 : 0x1p-54;
    const double xs = x * scale;
    const std::uint64_t bits = bitsOf(xs);
    const std::uint64_t mantissa = bits & 0x000fffffffffffffull;
    // 1 when m would be above sqrt(2) (mantissa field >= 0x6a09e667f3bcd): then m is halved and k raised by one.
    const std::uint64_t upper = (mantissa + (0x0010000000000000ull - 0x6a09e667f3bcdull)) >> 52;
    const double m = fromBits(mantissa | (0x3ff0000000000000ull - (upper << 52)));
    // The biased exponent (+ upper) as a double without an integer conversion: 2^52 + e, less 2^52.
    const double biased = fromBits(0x4330000000000000ull | ((bits >> 52) + upper)) - 0x1p52;
    const double scaleExponent = fromBits(0x4330000000000000ull | (bitsOf(scale) >> 52)) - 0x1p52; // biased
    const double k = biased - scaleExponent;

    const double f = m - 1.0; // exact (Sterbenz)
    const double dHi = 2.0 + f;
    const double dLo = (2.0 - dHi) + f;
    const double sHi = f / dHi;
    const Pair sd = twoProd(sHi, dHi);
    const double sLo = (((f - sd.hi) - sd.lo) - sHi * dLo) / dHi;

    const Pair sSquared = twoProd(sHi, sHi);
    const Pair zz = fastTwoSum(sSquared.hi, sSquared.lo + 2.0 * sHi * sLo); // s^2
    const double zh = zz.hi;
    double tail = 0x1.47ae147ae147bp-5; // 1/25
    tail = 0x1.642c8590b2164p-5 + zh * tail;
    tail = 0x1.8618618618618p-5 + zh * tail;
    tail = 0x1.af286bca1af28p-5 + zh * tail;
    tail = 0x1.e1e1e1e1e1e1ep-5 + zh * tail;
    tail = 0x1.1111111111111p-4 + zh * tail;
    tail = 0x1.3b13b13b13b14p-4 + zh * tail;
    tail = 0x1.745d1745d1746p-4 + zh * tail;
    tail = 0x1.c71c71c71c71cp-4 + zh * tail;
    tail = 0x1.2492492492492p-3 + zh * tail;
    tail = 0x1.999999999999ap-3 + zh * tail; // 1/5
    tail = (zh * zh) * tail;                 // z^2/5 + z^3/7 + ... + z^12/25
    const Pair zThird = mulPair(zz, Pair{0x1.5555555555555p-2, 0x1.5555555555555p-56});
    const Pair series = fastTwoSum(zThird.hi, zThird.lo + tail); // atanh(s)/s - 1
    const Pair sp = mulPair(Pair{sHi, sLo}, series);
    const Pair at = fastTwoSum(sHi, sp.hi);
    const double atLo = at.lo + (sLo + sp.lo);

    const Pair sum = twoSum(k * kLn2Hi, 2.0 * at.hi);
    return fastTwoSum(sum.hi, sum.lo + (2.0 * atLo + k * kLn2Lo));
}

// exp(hi + lo) for -746 <= hi <= 710 and |lo| <= ulp(hi).
// hi + lo = k ln2 + r with k = round((hi + lo) / ln2), |r| <= ln2/2 (1 + 2^-40), r = r.hi + r.lo in double-double;
// exp(r) = 1 + r + q with q = r^2/2! + ... + r^14/14! (Taylor; the next term is below 2^-62 relative), summed so that
// only the last addition rounds at the result's precision.
STRATA_HD STRATA_MATH_INLINE double expPair(double hi, double lo) {
    constexpr double shifter = 0x1.8p52;
    const double t = hi * 0x1.71547652b82fep+0 + shifter; // 1/ln2
    const double n = t - shifter;
    const std::int64_t k = static_cast<std::int64_t>(bitsOf(t) - bitsOf(shifter));
    const Pair r = twoSum(hi - n * kLn2Hi, lo - n * kLn2Lo); // hi - n ln2Hi is exact

    const double x = r.hi;
    double e = 0x1.93974a8c07c9dp-37; // 1/14!
    e = 0x1.6124613a86d09p-33 + x * e;
    e = 0x1.1eed8eff8d898p-29 + x * e;
    e = 0x1.ae64567f544e4p-26 + x * e;
    e = 0x1.27e4fb7789f5cp-22 + x * e;
    e = 0x1.71de3a556c734p-19 + x * e;
    e = 0x1.a01a01a01a01ap-16 + x * e;
    e = 0x1.a01a01a01a01ap-13 + x * e;
    e = 0x1.6c16c16c16c17p-10 + x * e;
    e = 0x1.1111111111111p-7 + x * e;
    e = 0x1.5555555555555p-5 + x * e;
    e = 0x1.5555555555555p-3 + x * e;
    e = 0.5 + x * e;
    const double q = (x * x) * e; // exp(x) - 1 - x
    const Pair head = fastTwoSum(1.0, x);
    const double y = head.hi + (head.lo + ((r.lo + r.lo * x) + q));

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
