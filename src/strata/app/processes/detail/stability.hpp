// Helpers the processes' stability checks share: where a limit is exceeded, and the lowest eigenvalue of a
// symmetric tridiagonal matrix.
#pragma once

#include <strata/app/model/process.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

namespace strata::app {

namespace detail {

// The largest number(c, k) over the faces of a field, and where it is.
struct Worst {
    double value = 0;
    uint32_t column = 0, face = 0;
};
template <class F>
Worst worstFace(FaceField const& field, F&& number) {
    Worst w;
    for (uint32_t c = 0; c < field.columns(); ++c)
        for (uint32_t k = 0; k < field.levels(); ++k) {
            double const x = number(c, k);
            if (x > w.value) w = {x, c, k};
        }
    return w;
}

using app::rk3RealAxisLimit;

inline std::string limitText(double limit) {
    std::ostringstream s;
    s << limit;
    return s.str();
}

inline std::string formatLimit(char const* what, double value, double limit, uint32_t col, uint32_t index,
                               char const* where = "face") {
    std::ostringstream s;
    s << what << " = " << value << " at column " << col << ", " << where << " " << index
      << " exceeds the stability limit " << limit;
    return s.str();
}

// The lowest eigenvalue of a symmetric tridiagonal matrix (diagonal a, off-diagonal b), to 1e-12 relative, by
// bisection on the Sturm count (the number of eigenvalues below x is the number of negative pivots of the LDL^T
// factorisation of the matrix minus x), inside the Gershgorin interval.
inline double lowestEigenvalue(std::vector<double> const& a, std::vector<double> const& b) {
    std::size_t const n = a.size();
    if (n == 0) return 0;
    double lo = 0, hi = 0;
    for (std::size_t i = 0; i < n; ++i) {
        double const r = (i > 0 ? std::fabs(b[i - 1]) : 0.0) + (i + 1 < n ? std::fabs(b[i]) : 0.0);
        lo = std::min(lo, a[i] - r);
        hi = std::max(hi, a[i] + r);
    }
    auto below = [&](double x) {
        std::size_t count = 0;
        double d = 1;
        for (std::size_t i = 0; i < n; ++i) {
            d = (a[i] - x) - (i > 0 ? b[i - 1] * b[i - 1] / d : 0.0);
            if (d == 0) d = -1e-300 * (std::fabs(a[i]) + 1.0); // a zero pivot counts as negative, and stays finite
            if (d < 0) ++count;
        }
        return count;
    };
    // Invariant: below(lo) == 0 and below(hi) >= 1 (Gershgorin bounds; hi may itself be an eigenvalue).
    hi = std::nextafter(hi, std::numeric_limits<double>::infinity());
    for (int i = 0; i < 200 && hi - lo > 1e-12 * std::max(std::fabs(lo), std::fabs(hi)); ++i) {
        double const mid = 0.5 * (lo + hi);
        (below(mid) >= 1 ? hi : lo) = mid;
    }
    return 0.5 * (lo + hi);
}

} // namespace detail
} // namespace strata::app
