// What a configuration value may be: a Rule is a predicate plus its description in words ("an integer in [1, 100]").
//
// The description is what error messages print after "expected", so every rule says in the user's terms what would
// have been accepted. Also here: number formatting shared by messages and the resolved YAML, and the nearest-name
// suggestion (optimal string alignment distance: a transposition counts as one edit, so "levles" -> "levels").
#pragma once

#include <algorithm>
#include <charconv>
#include <cmath>
#include <concepts>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace strata::app::detail {

template <class T>
struct Rule {
    std::string expected;
    std::function<bool(T const&)> accepts;
};

// A list of names drawn from `allowed`, each at most once, at least one. `alsoAccepts`, when set, accepts the names
// a pattern of `allowed` stands for ("tendency_of_<var>": tendency_of_T).
struct DistinctSubset {
    std::vector<std::string> allowed;
    std::function<bool(std::string const&)> alsoAccepts = {};
    bool accepts(std::string const& name) const {
        return std::find(allowed.begin(), allowed.end(), name) != allowed.end() || (alsoAccepts && alsoAccepts(name));
    }
};

// A list of numbers, at least one, each accepted by `each` (the rules relating the entries are in config.cpp).
struct NumberList {
    Rule<double> each;
};

// Shortest text that reads back as the same double; fixed notation for everyday magnitudes (100000, not 1e+05).
inline std::string formatNumber(double x) {
    char buf[64];
    double const mag = std::abs(x);
    auto const format =
        (mag == 0.0 || (mag >= 1e-5 && mag < 1e15)) ? std::chars_format::fixed : std::chars_format::scientific;
    auto const result = std::to_chars(buf, buf + sizeof buf, x, format);
    return std::string(buf, result.ptr);
}

template <class T>
std::string formatNumber(T x) requires std::integral<T> {
    return std::to_string(x);
}

inline std::string joined(std::vector<std::string> const& names) {
    std::string s;
    for (auto const& n : names)
        s += (s.empty() ? "" : ", ") + n;
    return s;
}

template <class T>
constexpr char const* numberKind() {
    return std::is_integral_v<T> ? "an integer" : "a number";
}

template <class T>
Rule<T> atLeast(T lo) {
    return {std::string(numberKind<T>()) + " >= " + formatNumber(lo), [lo](T const& x) { return x >= lo; }};
}

template <class T>
Rule<T> between(T lo, T hi) {
    return {std::string(numberKind<T>()) + " in [" + formatNumber(lo) + ", " + formatNumber(hi) + "]",
            [lo, hi](T const& x) { return x >= lo && x <= hi; }};
}

inline Rule<double> above(double lo) {
    return {"a number > " + formatNumber(lo), [lo](double x) { return x > lo; }};
}

inline Rule<double> anyNumber() {
    return {"a number", [](double) { return true; }};
}

inline Rule<std::string> anyText() {
    return {"a string", [](std::string const&) { return true; }};
}

inline Rule<std::string> nonEmptyText() {
    return {"a non-empty string", [](std::string const& s) { return !s.empty(); }};
}

inline Rule<std::string> oneOf(std::vector<std::string> values) {
    std::string expected = "one of: " + joined(values);
    return {std::move(expected), [values = std::move(values)](std::string const& s) {
                return std::find(values.begin(), values.end(), s) != values.end();
            }};
}

// "YYYY-MM-DD hh:mm:ss" or "YYYY-MM-DD" (midnight), a real date of the CF "standard" calendar that the output's time
// axis uses (what cftime, xarray and ncview decode): years 1 to 9999 (the calendar has no year 0), Julian before
// 1582-10-15 (so 1500-02-29 exists) and Gregorian from then on (1582-10-05 to 1582-10-14 do not exist).
inline bool isTimestamp(std::string const& s) {
    auto digits = [&](std::size_t pos, std::size_t n, int& out) {
        if (pos + n > s.size()) return false;
        for (std::size_t i = pos; i < pos + n; ++i)
            if (s[i] < '0' || s[i] > '9') return false;
        auto const r = std::from_chars(s.data() + pos, s.data() + pos + n, out);
        return r.ec == std::errc{} && r.ptr == s.data() + pos + n;
    };
    int y = 0, mo = 0, d = 0, h = 0, mi = 0, se = 0;
    if (s.size() != 10 && s.size() != 19) return false;
    if (!digits(0, 4, y) || s[4] != '-' || !digits(5, 2, mo) || s[7] != '-' || !digits(8, 2, d)) return false;
    if (y < 1 || mo < 1 || mo > 12 || d < 1) return false;
    bool const julian = y < 1582 || (y == 1582 && (mo < 10 || (mo == 10 && d < 15)));
    if (y == 1582 && mo == 10 && d >= 5 && d <= 14) return false; // the days the Gregorian reform skipped
    bool const leap = julian ? y % 4 == 0 : (y % 4 == 0 && (y % 100 != 0 || y % 400 == 0));
    static constexpr int monthDays[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (d > monthDays[mo - 1] + (mo == 2 && leap ? 1 : 0)) return false;
    if (s.size() == 10) return true;
    return s[10] == ' ' && digits(11, 2, h) && s[13] == ':' && digits(14, 2, mi) && s[16] == ':' && digits(17, 2, se) &&
           h < 24 && mi < 60 && se < 60;
}

inline Rule<std::string> timestamp() {
    return {"a date 'YYYY-MM-DD hh:mm:ss' or 'YYYY-MM-DD' of the CF standard calendar: year 1 to 9999, no "
            "1582-10-05 to 1582-10-14",
            isTimestamp};
}

// The first control character (a byte below 0x20, tab and newline included, or 0x7f) in `s`, or npos.
inline std::size_t firstControl(std::string_view s) {
    for (std::size_t i = 0; i < s.size(); ++i)
        if (static_cast<unsigned char>(s[i]) < 0x20 || s[i] == 0x7f) return i;
    return std::string_view::npos;
}

// `s` for a message: control characters as \xNN, and at most 200 bytes (longer text cut, its length said).
inline std::string printable(std::string_view s) {
    constexpr std::size_t limit = 200;
    std::string out;
    for (std::size_t i = 0; i < s.size() && i < limit; ++i) {
        auto const c = static_cast<unsigned char>(s[i]);
        if (c < 0x20 || c == 0x7f) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\x%02x", c);
            out += buf;
        } else {
            out += s[i];
        }
    }
    if (s.size() > limit) out += "... (" + std::to_string(s.size()) + " bytes)";
    return out;
}

// Edits (insert, delete, substitute, swap two neighbours) turning a into b.
inline std::size_t editDistance(std::string_view a, std::string_view b) {
    std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
    for (std::size_t i = 0; i <= a.size(); ++i)
        d[i][0] = i;
    for (std::size_t j = 0; j <= b.size(); ++j)
        d[0][j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
        for (std::size_t j = 1; j <= b.size(); ++j) {
            std::size_t const cost = a[i - 1] == b[j - 1] ? 0 : 1;
            d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
                d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
        }
    }
    return d[a.size()][b.size()];
}

// The candidate closest to `name` (the first of equals), if it is close enough to be a plausible typo: at most
// max(2, length / 3) edits. Empty otherwise.
inline std::string nearestName(std::string const& name, std::vector<std::string> const& candidates) {
    std::string best;
    std::size_t bestDistance = std::max<std::size_t>(2, name.size() / 3) + 1;
    for (auto const& c : candidates) {
        std::size_t const dist = editDistance(name, c);
        if (dist < bestDistance) best = c, bestDistance = dist;
    }
    return best;
}

// "; did you mean 'x'?" for a plausible typo, else nothing.
inline std::string suggestion(std::string const& name, std::vector<std::string> const& candidates) {
    std::string const nearest = nearestName(name, candidates);
    return nearest.empty() ? "" : "; did you mean '" + nearest + "'?";
}

} // namespace strata::app::detail
