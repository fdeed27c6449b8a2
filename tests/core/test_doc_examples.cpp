// Runs the examples of docs/lockstep.md (extracted at build time) and checks their results against plain host loops.
#include "tests/core/backends.hpp"
#include <strata/core/lockstep.hpp>
#include <strata/core/threaded.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

namespace doc {
using namespace strata;
#include "doc_lockstep.hpp"
} // namespace doc

using namespace strata;
using Catch::Matchers::Contains;

namespace {
std::vector<double> sampleField(uint32_t columns, uint32_t levels) {
    std::vector<double> f(columns * levels);
    for (uint32_t k = 0; k < f.size(); ++k)
        f[k] = std::sin(0.37 * k) * (1 + k % 5);
    return f;
}
} // namespace

TEMPLATE_TEST_CASE("docs/lockstep.md: Axpy", "[docs]", STRATA_CPU_BACKENDS) {
    uint32_t const n = 5000;
    std::vector<double> x(n), y(n), expected(n);
    for (uint32_t k = 0; k < n; ++k) {
        x[k] = 0.5 * k;
        y[k] = 1.0 - k;
        expected[k] = 3.0 * x[k] + y[k];
    }
    doc::axpy(TestType::make(), 3.0, x.data(), y.data(), n);
    REQUIRE(y == expected);
}

TEMPLATE_TEST_CASE("docs/lockstep.md: Smooth3", "[docs]", STRATA_CPU_BACKENDS) {
    uint32_t const columns = 9, levels = 64;
    auto const in = sampleField(columns, levels);
    std::vector<double> out(in.size());
    lockstep::launch(TestType::make(), lockstep::config(columns), doc::Smooth3{}, in.data(), out.data());
    for (uint32_t c = 0; c < columns; ++c)
        for (uint32_t k = 0; k < levels; ++k) {
            double const* col = &in[c * levels];
            double const expected = (col[k == 0 ? 0 : k - 1] + col[k] + col[k == 63 ? 63 : k + 1]) / 3;
            REQUIRE(out[c * levels + k] == expected);
        }
}

TEMPLATE_TEST_CASE("docs/lockstep.md: NormaliseColumns", "[docs]", STRATA_CPU_BACKENDS) {
    uint32_t const columns = 7, levels = 64;
    auto field = sampleField(columns, levels);
    auto const original = field;
    std::vector<double> columnMax(columns);
    lockstep::launch(TestType::make(), lockstep::config(columns), doc::NormaliseColumns{}, field.data(),
                     columnMax.data());
    for (uint32_t c = 0; c < columns; ++c) {
        double m = 0;
        for (uint32_t k = 0; k < levels; ++k)
            m = std::max(m, std::fabs(original[c * levels + k]));
        REQUIRE(columnMax[c] == m);
        for (uint32_t k = 0; k < levels; ++k)
            REQUIRE(field[c * levels + k] == original[c * levels + k] / m);
    }
}

TEST_CASE("docs/lockstep.md: Smooth3WithoutSync is caught by Threads, not by Serial", "[docs]") {
    uint32_t const columns = 3, levels = 64;
    auto const in = sampleField(columns, levels);
    std::vector<double> out(in.size());
    REQUIRE_NOTHROW(
        lockstep::launch(core::Serial{}, lockstep::config(columns), doc::Smooth3WithoutSync{}, in.data(), out.data()));
    REQUIRE_THROWS_WITH(lockstep::launch(core::Threads{7, true}, lockstep::config(columns), doc::Smooth3WithoutSync{},
                                         in.data(), out.data()),
                        Contains("sync()"));
}

TEMPLATE_TEST_CASE("docs/lockstep.md: ColumnAnomaly with threaded", "[docs]", STRATA_CPU_BACKENDS) {
    constexpr uint32_t levels = 40;
    uint32_t const columns = 11;
    auto const field = sampleField(columns, levels);
    std::vector<double> anomaly(field.size());
    doc::columnAnomaly<levels>(TestType::make(), field.data(), anomaly.data(), columns);
    for (uint32_t c = 0; c < columns; ++c) {
        double sum = 0;
        for (uint32_t k = 0; k < levels; ++k)
            sum += field[c * levels + k];
        for (uint32_t k = 0; k < levels; ++k)
            REQUIRE(anomaly[c * levels + k] == field[c * levels + k] - sum / levels);
    }
}

namespace {
struct CountVisits {
    uint32_t* visits;
    void operator()(uint32_t i) const { ++visits[i]; }
};
} // namespace

TEMPLATE_TEST_CASE("docs/lockstep.md: the knobs blockSize and coarsen", "[docs]", STRATA_CPU_BACKENDS) {
    constexpr uint32_t levels = 40;
    uint32_t const columns = 11, n = 1001;
    auto const field = sampleField(columns, levels);
    std::vector<double> tuned(field.size()), plain(field.size());
    std::vector<uint32_t> visits(n, 0);
    doc::columnAnomalyTuned<levels>(TestType::make(), CountVisits{visits.data()}, n, field.data(), tuned.data(),
                                    columns);
    doc::columnAnomaly<levels>(TestType::make(), field.data(), plain.data(), columns);
    REQUIRE(std::count(visits.begin(), visits.end(), 2u) == n); // two loops, each index once in each
    REQUIRE(std::memcmp(tuned.data(), plain.data(), plain.size() * sizeof(double)) == 0);
}

TEMPLATE_TEST_CASE("docs/lockstep.md: ColumnPressure with block collectives", "[docs]", STRATA_CPU_BACKENDS) {
    uint32_t const columns = 5, levels = 64;
    auto dp = sampleField(columns, levels);
    for (auto& v : dp)
        v = 1000.0 + 100.0 * v;
    std::vector<double> p(dp.size()), bottom(columns);
    lockstep::launch(TestType::make(), lockstep::config(columns), doc::ColumnPressure{}, dp.data(), 50.0, p.data(),
                     bottom.data());
    for (uint32_t c = 0; c < columns; ++c) {
        std::vector<double> const col(dp.begin() + c * levels, dp.begin() + (c + 1) * levels);
        auto const scan = lockstep::detail::serialScan(col, lockstep::Plus{});
        REQUIRE(p[c * levels] == 50.0);
        for (uint32_t k = 1; k < levels; ++k)
            REQUIRE(p[c * levels + k] == 50.0 + scan[k - 1]);
        REQUIRE(bottom[c] == 50.0 + lockstep::detail::serialTreeReduce(col, lockstep::Plus{}));
    }
}

TEMPLATE_TEST_CASE("docs/lockstep.md: ColumnRange with threaded collectives", "[docs]", STRATA_CPU_BACKENDS) {
    constexpr uint32_t levels = 40;
    uint32_t const columns = 6;
    auto const field = sampleField(columns, levels);
    std::vector<double> range(columns);
    doc::columnRange<levels>(TestType::make(), field.data(), range.data(), columns);
    for (uint32_t c = 0; c < columns; ++c) {
        auto const [lo, hi] = std::minmax_element(field.begin() + c * levels, field.begin() + (c + 1) * levels);
        REQUIRE(range[c] == *hi - *lo);
    }
}
