// Column integrals are exact where the midpoint rule is (profiles linear in z), on uniform and stretched grids;
// hydrostatic pressure matches the analytic isothermal profile; reductions match host loops. The expected values
// come from closed forms or independent host loops, never from the code under test.
#include "tests/core/backends.hpp"
#include <strata/operators/column/integrals.hpp>
#include <strata/operators/operators.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <vector>

using namespace strata;
using namespace strata::ops;

namespace {

constexpr auto host = core::MemSpace::Host;

std::shared_ptr<Grid const> uniformGrid(uint32_t n) {
    return std::make_shared<Grid const>(Grid::uniform(n, 12000.0, 100.0));
}
std::shared_ptr<Grid const> stretchedGrid(uint32_t n) {
    return std::make_shared<Grid const>(Grid::stretched(
        n, 30000.0, [](double s) { return s * s * s * 0.7 + 0.3 * s; }, -50.0));
}

// f(z) = a + b z + col on centers; its integral from zLow to zHigh in closed form.
struct Linear {
    double a, b;
    double at(double z, uint32_t col) const { return a + b * z + col; }
    double integral(double zLow, double zHigh, uint32_t col) const {
        return (a + col) * (zHigh - zLow) + b * (zHigh * zHigh - zLow * zLow) / 2;
    }
};

void fill(Field<double, Center>& f, Linear const& p) {
    for (uint32_t c = 0; c < f.columns(); ++c)
        for (uint32_t k = 0; k < f.levels(); ++k)
            f.at(c, k) = p.at(f.grid().centers()[k], c);
}

// |x - y| <= tol * scale, with the scale of the quantity (values can cross zero).
bool close(double x, double y, double scale, double tol) { return std::fabs(x - y) <= tol * scale; }

} // namespace

TEMPLATE_TEST_CASE("column integrals are exact for linear profiles (midpoint rule), uniform and stretched grids",
                   "[column][integrals]", STRATA_CPU_BACKENDS, STRATA_SMALL_GRID_BACKENDS) {
    auto const backend = TestType::make();
    uint32_t const cols = 5;
    Linear const profile{-3.0, 2.5e-3};
    for (auto const& grid : {uniformGrid(1), uniformGrid(40), stretchedGrid(3), stretchedGrid(97)}) {
        uint32_t const n = grid->cells();
        auto const& zf = grid->faces();
        double const zBottom = zf.front(), zTop = zf.back();
        double const largestF = std::fabs(profile.a) + std::fabs(profile.b) * std::max(-zBottom, zTop) + cols;
        double const scale = largestF * (zTop - zBottom) + 1e5; // of the integrals and their start values
        double const tol = 4 * (n + 2) * std::numeric_limits<double>::epsilon(); // rounding of n + 2 sums
        INFO("grid of " << n << " cells, " << zBottom << " .. " << zTop << " m");

        Field<double, Center> f(grid, cols, host);
        fill(f, profile);

        core::Buffer<double> total(cols, host);
        columnIntegral(backend, f, total);
        for (uint32_t c = 0; c < cols; ++c)
            REQUIRE(close(total.host()[c], profile.integral(zBottom, zTop, c), scale, tol));

        core::Buffer<double> starts(cols, host);
        for (uint32_t c = 0; c < cols; ++c)
            starts.host()[c] = 1e5 - 7.0 * c;
        Field<double, Face> up(grid, cols, host), down(grid, cols, host);
        columnIntegralFromBottom(backend, f, up, starts);
        columnIntegralFromTop(backend, f, down, 42.0);
        for (uint32_t c = 0; c < cols; ++c) {
            for (uint32_t k = 0; k <= n; ++k) {
                INFO("column " << c << ", face " << k);
                REQUIRE(close(up.at(c, k), starts.host()[c] + profile.integral(zBottom, zf[k], c), scale, tol));
                REQUIRE(close(down.at(c, k), 42.0 + profile.integral(zf[k], zTop, c), scale, tol));
            }
            REQUIRE(up.at(c, 0) == starts.host()[c]); // the start values are stored as given
            REQUIRE(down.at(c, n) == 42.0);
        }

        // The definite integral is the top face of the upward integral started at 0, bit for bit (same order).
        columnIntegralFromBottom(backend, f, up, 0.0);
        for (uint32_t c = 0; c < cols; ++c)
            REQUIRE(std::memcmp(&up.at(c, n), &total.host()[c], sizeof(double)) == 0);
    }
}

TEMPLATE_TEST_CASE("column integrals are second order, not exact, on a quadratic profile", "[column][integrals]",
                   STRATA_CPU_BACKENDS, STRATA_SMALL_GRID_BACKENDS) {
    // Proves the exactness test above can fail: the midpoint rule misses sum dz^3 / 12 * f'' on a parabola.
    auto const backend = TestType::make();
    double previous = 0;
    for (uint32_t n : {16u, 32u, 64u}) {
        auto grid = stretchedGrid(n);
        Field<double, Center> f(grid, 1, host);
        for (uint32_t k = 0; k < n; ++k)
            f.at(0, k) = grid->centers()[k] * grid->centers()[k];
        core::Buffer<double> total(1, host);
        columnIntegral(backend, f, total);
        double const z0 = grid->faces().front(), z1 = grid->faces().back();
        double missing = 0;
        for (double dz : grid->dzCenter())
            missing += dz * dz * dz / 12; // f'' dz^3 / 24 per cell, f'' = 2
        double const error = (z1 * z1 * z1 - z0 * z0 * z0) / 3 - total.host()[0];
        REQUIRE(error == Approx(missing).epsilon(1e-9));
        if (previous != 0) REQUIRE(std::log2(previous / error) == Approx(2.0).margin(0.05));
        previous = error;
    }
}

TEMPLATE_TEST_CASE("hydrostatic pressure is exact for an isothermal atmosphere", "[column][integrals]",
                   STRATA_CPU_BACKENDS, STRATA_SMALL_GRID_BACKENDS) {
    auto const backend = TestType::make();
    double const g = 9.80616, rd = 287.04, temperature = 250.0;
    uint32_t const cols = 4;
    for (auto const& grid : {uniformGrid(30), stretchedGrid(300)}) {
        uint32_t const n = grid->cells();
        double const z0 = grid->faces().front();
        INFO("grid of " << n << " cells");
        Field<double, Center> t(grid, cols, host, temperature);
        core::Buffer<double> ps(cols, host);
        for (uint32_t c = 0; c < cols; ++c)
            ps.host()[c] = 101325.0 - 900.0 * c;
        Field<double, Face> pFace(grid, cols, host);
        Field<double, Center> pCenter(grid, cols, host);
        hydrostaticPressure(backend, t, ps, g, rd, pFace, pCenter);

        double worst = 0;
        for (uint32_t c = 0; c < cols; ++c) {
            auto analytic = [&](double z) { return ps.host()[c] * std::exp(-g * (z - z0) / (rd * temperature)); };
            for (uint32_t k = 0; k <= n; ++k)
                worst = std::max(worst, std::fabs(pFace.at(c, k) / analytic(grid->faces()[k]) - 1));
            for (uint32_t k = 0; k < n; ++k)
                worst = std::max(worst, std::fabs(pCenter.at(c, k) / analytic(grid->centers()[k]) - 1));
            REQUIRE(pFace.at(c, 0) == ps.host()[c]);
        }
        INFO("largest relative error " << worst);
        REQUIRE(worst < 1e-13);
    }
}

TEMPLATE_TEST_CASE("hydrostatic pressure takes a scalar surface pressure and follows the cell temperatures",
                   "[column][integrals]", STRATA_CPU_BACKENDS, STRATA_SMALL_GRID_BACKENDS) {
    // Two isothermal layers: above the interface the profile continues from the interface pressure.
    auto const backend = TestType::make();
    double const g = 9.81, rd = 287.0, tLow = 280.0, tHigh = 220.0, ps = 1e5;
    auto grid = uniformGrid(20);
    double const z0 = grid->faces().front(), zi = grid->faces()[8];
    Field<double, Center> t(grid, 2, host);
    for (uint32_t c = 0; c < 2; ++c)
        for (uint32_t k = 0; k < 20; ++k)
            t.at(c, k) = k < 8 ? tLow : tHigh;
    Field<double, Face> pFace(grid, 2, host);
    Field<double, Center> pCenter(grid, 2, host);
    hydrostaticPressure(backend, t, ps, g, rd, pFace, pCenter);
    double const pi = ps * std::exp(-g * (zi - z0) / (rd * tLow));
    for (uint32_t c = 0; c < 2; ++c) {
        for (uint32_t k = 0; k <= 20; ++k) {
            double const z = grid->faces()[k];
            double const expected =
                k <= 8 ? ps * std::exp(-g * (z - z0) / (rd * tLow)) : pi * std::exp(-g * (z - zi) / (rd * tHigh));
            REQUIRE(pFace.at(c, k) == Approx(expected).epsilon(1e-13));
        }
        double const zc = grid->centers()[8]; // the first center above the interface
        REQUIRE(pCenter.at(c, 8) == Approx(pi * std::exp(-g * (zc - zi) / (rd * tHigh))).epsilon(1e-13));
    }
}

TEMPLATE_TEST_CASE("column sum, min and max match host loops on Center and Face fields", "[column][reductions]",
                   STRATA_CPU_BACKENDS, STRATA_SMALL_GRID_BACKENDS) {
    auto const backend = TestType::make();
    uint32_t const cols = 9;
    auto grid = stretchedGrid(71);
    std::mt19937_64 rng(20240611);
    std::uniform_real_distribution<double> value(-1e3, 1e3);
    Field<double, Center> onCenters(grid, cols, host);
    Field<double, Face> onFaces(grid, cols, host);
    for (uint32_t c = 0; c < cols; ++c) {
        for (double& v : onCenters.column(c))
            v = value(rng);
        for (double& v : onFaces.column(c))
            v = value(rng);
    }

    auto check = [&](auto const& field) {
        core::Buffer<double> sum(cols, host), lo(cols, host), hi(cols, host);
        columnSum(backend, field, sum);
        columnMin(backend, field, lo);
        columnMax(backend, field, hi);
        for (uint32_t c = 0; c < cols; ++c) {
            auto const column = field.column(c);
            double s = 0;
            for (double v : column) // the documented order, bottom up: equal bit for bit
                s += v;
            REQUIRE(sum.host()[c] == s);
            REQUIRE(lo.host()[c] == *std::min_element(column.begin(), column.end()));
            REQUIRE(hi.host()[c] == *std::max_element(column.begin(), column.end()));
        }
    };
    check(onCenters);
    check(onFaces);

    // A NaN anywhere in a column makes its min and max NaN, first level or not.
    onFaces.at(2, 0) = std::numeric_limits<double>::quiet_NaN();
    onFaces.at(5, 40) = std::numeric_limits<double>::quiet_NaN();
    core::Buffer<double> lo(cols, host), hi(cols, host);
    columnMin(backend, onFaces, lo);
    columnMax(backend, onFaces, hi);
    for (uint32_t c = 0; c < cols; ++c) {
        bool const hasNan = c == 2 || c == 5;
        REQUIRE(std::isnan(lo.host()[c]) == hasNan);
        REQUIRE(std::isnan(hi.host()[c]) == hasNan);
    }
}

// Levels 30 (34 columns a tile on Threads: 300 columns end in a partial tile of 28), 113 (9 a tile), 256 (4 a tile),
// 300 (3 a tile), 1024 (one column a tile) and 1025 (deeper than a tile: one worker per column). On Threads the running
// integrals and hydrostatic pressure go through TiledScanBody (terms side by side, the recurrence in shared memory, the
// results written back), whose shared accesses the checker watches; everything must have Serial's bits.
TEST_CASE("column integrals are bit-identical on Serial, OpenMP and Threads with 7 and 32 workers",
          "[column][integrals][bfb]") {
    for (uint32_t const levels : {30u, 113u, 256u, 300u, 1024u, 1025u}) {
        INFO(levels << " levels");
        auto grid = stretchedGrid(levels);
        uint32_t const cols = 300; // more than one block of the column loop
        std::mt19937_64 rng(7);
        std::uniform_real_distribution<double> value(200.0, 300.0);
        Field<double, Center> f(grid, cols, host);
        for (uint32_t c = 0; c < cols; ++c)
            for (double& v : f.column(c))
                v = value(rng);

        auto run = [&](auto const& backend) {
            std::vector<double> out;
            Field<double, Face> up(grid, cols, host), down(grid, cols, host), pFace(grid, cols, host);
            Field<double, Center> pCenter(grid, cols, host);
            core::Buffer<double> total(cols, host), sum(cols, host);
            columnIntegral(backend, f, total);
            columnIntegralFromBottom(backend, f, up, 1.0);
            columnIntegralFromTop(backend, f, down, -1.0);
            columnSum(backend, f, sum);
            hydrostaticPressure(backend, f, 1e5, 9.81, 287.0, pFace, pCenter);
            for (auto const* field : {&up, &down, &pFace})
                for (uint32_t c = 0; c < cols; ++c)
                    out.insert(out.end(), field->column(c).begin(), field->column(c).end());
            for (uint32_t c = 0; c < cols; ++c)
                out.insert(out.end(), pCenter.column(c).begin(), pCenter.column(c).end());
            out.insert(out.end(), total.host().begin(), total.host().end());
            out.insert(out.end(), sum.host().begin(), sum.host().end());
            return out;
        };
        auto const reference = run(core::Serial{});
        // and with grid limits that make each launch walk its blocks grid-stride: 300 columns are 2 blocks of the
        // column loop (1 block a launch on Serial), and 9 tiles or more at 30 levels or deeper on Threads
        for (auto const& other :
             {run(core::OpenMP{}), run(core::Threads{7, true}), run(core::Threads{32, true}),
              run(core::GridLimited<core::Serial, 1>{}), run(test::SmallGridThreadsBackend<7>::make())}) {
            REQUIRE(other.size() == reference.size());
            REQUIRE(std::memcmp(other.data(), reference.data(), reference.size() * sizeof(double)) == 0);
        }
    }
}

TEST_CASE("column integrals reject mismatched arguments with a clear error", "[column][integrals]") {
    auto grid = uniformGrid(10);
    auto other = uniformGrid(11);
    Field<double, Center> f(grid, 3, host, 1.0), t(grid, 3, host, 250.0);
    Field<double, Face> wrongGrid(other, 3, host), wrongColumns(grid, 4, host), faces(grid, 3, host);
    core::Buffer<double> shortBuffer(2, host), out(3, host);
    core::Serial const serial;
    REQUIRE_THROWS_WITH(columnIntegralFromBottom(serial, f, wrongGrid, 0.0),
                        Catch::Contains("columnIntegralFromBottom") &&
                            Catch::Contains("integral has 3 columns on a grid of 11 cells"));
    REQUIRE_THROWS_WITH(columnIntegralFromTop(serial, f, wrongColumns, 0.0), Catch::Contains("4 columns"));
    REQUIRE_THROWS_WITH(columnIntegral(serial, f, shortBuffer), Catch::Contains("one value per column: 3"));
    REQUIRE_THROWS_WITH(columnIntegralFromBottom(serial, f, faces, shortBuffer), Catch::Contains("bottom holds 2"));
    REQUIRE_THROWS_WITH(hydrostaticPressure(serial, t, 1e5, 9.81, 287.0, faces, t), Catch::Contains("pCenter"));
    REQUIRE_NOTHROW(columnMax(serial, faces, out));
}

// Operands of the expression-integral tests: a, b on centers (linear profiles), w on faces from `wave(k, c)`, and a
// Center field of the same shape.
struct IntegrandFields {
    Field<double, Center> a, b, shape;
    Field<double, Face> w;
    template <class Wave>
    IntegrandFields(std::shared_ptr<Grid const> const& grid, uint32_t cols, Wave const& wave)
        : a(grid, cols, host), b(grid, cols, host), shape(grid, cols, host), w(grid, cols, host) {
        fill(a, Linear{1.5, 2e-4});
        fill(b, Linear{-0.3, 1e-5});
        for (uint32_t c = 0; c < cols; ++c)
            for (uint32_t k = 0; k < w.levels(); ++k)
                w.at(c, k) = wave(k, c);
    }
};

TEMPLATE_TEST_CASE("the integral of an expression equals evaluating it (Direct) and integrating, bit for bit",
                   "[column][integrals]", STRATA_CPU_BACKENDS, STRATA_SMALL_GRID_BACKENDS) {
    auto const backend = TestType::make();
    auto const grid = stretchedGrid(19);
    uint32_t const cols = 6;
    IntegrandFields fields(grid, cols, [](uint32_t k, uint32_t c) { return std::sin(0.4 * k + c); });
    auto const &a = fields.a, &b = fields.b;
    auto const& w = fields.w;
    auto& scratch = fields.shape;
    // a pointwise product with a stencil in it, as the model's budget integrals have
    auto const expr = a * DivergenceF2C{}(w) / b;
    core::Buffer<double> fused(cols, host), viaField(cols, host);
    evaluate(backend, scratch, expr, Engine::Direct);
    columnIntegral(backend, scratch, viaField);
    columnIntegralOf(backend, scratch, expr, fused);
    for (uint32_t c = 0; c < cols; ++c) {
        INFO("column " << c);
        REQUIRE(std::memcmp(&fused.host()[c], &viaField.host()[c], sizeof(double)) == 0);
        REQUIRE(std::isfinite(fused.host()[c]));
    }
    Field<double, Center> other(uniformGrid(7), cols, host);
    REQUIRE_THROWS_AS(columnIntegralOf(backend, other, expr, fused), Error); // operands of another shape
}

// On backends with many workers per block (Threads here, Cuda on a device) the definite integrals and the
// reductions stage tiles of neighbouring columns in shared memory (TiledColumnsBody). The expected values are host
// loops over the same terms in the same order (k = 0, 1, ...), so a tile that mixes up columns or levels, drops a
// partial tile's last columns or sums out of order fails bit for bit. Levels: 30 (34 columns a tile; 300 columns
// end in a partial tile of 28), 256 (4 a tile), 300 (3 a tile, 124 of the 1024 values unused), 1024 (one column a
// tile) and 1025 (deeper than a tile: one worker per column).
TEST_CASE("column integrals and reductions in shared-memory tiles have the bits of host loops in the same order",
          "[column][integrals][bfb]") {
    for (uint32_t const levels : {30u, 256u, 300u, 1024u, 1025u}) {
        auto const grid = stretchedGrid(levels);
        uint32_t const cols = 300;
        IntegrandFields fields(grid, cols, [](uint32_t k, uint32_t c) { return std::sin(0.05 * k + 0.3 * c); });
        auto const &a = fields.a, &b = fields.b;
        auto const& w = fields.w;
        auto const div = DivergenceF2C{};
        auto const e0 = a * div(w);
        auto const e1 = a / b;
        // host loops: the integrands point by point, summed bottom up (the divergence as the operator defines it:
        // (w[k+1] - w[k]) / dz[k], here as its reciprocal spacing times the difference, as grid.hpp stores it)
        auto const& dz = grid->dzCenter();
        auto const& rdz = grid->rdzCenter();
        std::vector<double> want0(cols), want1(cols), wantA(cols), sumW(cols), minW(cols), maxA(cols);
        for (uint32_t c = 0; c < cols; ++c) {
            double s0 = 0, s1 = 0, sA = 0;
            for (uint32_t k = 0; k < levels; ++k) {
                s0 += a.at(c, k) * ((w.at(c, k + 1) - w.at(c, k)) * rdz[k]) * dz[k];
                s1 += a.at(c, k) / b.at(c, k) * dz[k];
                sA += a.at(c, k) * dz[k];
            }
            want0[c] = s0;
            want1[c] = s1;
            wantA[c] = sA;
            double sw = w.at(c, 0), lo = w.at(c, 0), hi = a.at(c, 0);
            for (uint32_t k = 1; k <= levels; ++k) {
                sw += w.at(c, k);
                lo = std::min(lo, w.at(c, k));
            }
            for (uint32_t k = 1; k < levels; ++k)
                hi = std::max(hi, a.at(c, k));
            sumW[c] = sw;
            minW[c] = lo;
            maxA[c] = hi;
        }
        auto check = [&](auto const& backend, char const* name) {
            INFO(name << ", " << levels << " levels");
            core::Buffer<double> both(2 * cols, host), one(cols, host), plain(cols, host), sw(cols, host),
                lo(cols, host), hi(cols, host);
            columnIntegralsOf(backend, fields.shape, both, e0, e1);
            columnIntegralOf(backend, fields.shape, e1, one);
            columnIntegral(backend, a, plain);
            columnSum(backend, w, sw);
            columnMin(backend, w, lo);
            columnMax(backend, a, hi);
            for (uint32_t c = 0; c < cols; ++c) {
                INFO("column " << c);
                REQUIRE(std::memcmp(&both.host()[c], &want0[c], sizeof(double)) == 0);
                REQUIRE(std::memcmp(&both.host()[cols + c], &want1[c], sizeof(double)) == 0);
                REQUIRE(std::memcmp(&one.host()[c], &want1[c], sizeof(double)) == 0);
                REQUIRE(std::memcmp(&plain.host()[c], &wantA[c], sizeof(double)) == 0);
                REQUIRE(std::memcmp(&sw.host()[c], &sumW[c], sizeof(double)) == 0);
                REQUIRE(lo.host()[c] == minW[c]);
                REQUIRE(hi.host()[c] == maxA[c]);
            }
        };
        check(core::Serial{}, "Serial");
        check(core::OpenMP{}, "OpenMP");
        check(core::Threads{7, true}, "Threads, 7 workers");
        check(core::Threads{32, true}, "Threads, 32 workers");
    }
}

TEMPLATE_TEST_CASE("several integrals in one launch: each with the bits of its own columnIntegralOf",
                   "[column][integrals]", STRATA_CPU_BACKENDS, STRATA_SMALL_GRID_BACKENDS) {
    auto const backend = TestType::make();
    auto const grid = stretchedGrid(19);
    uint32_t const cols = 5;
    IntegrandFields fields(grid, cols, [](uint32_t k, uint32_t c) { return std::cos(0.3 * k - 1.0 * c); });
    auto const &a = fields.a, &b = fields.b, &shape = fields.shape;
    auto const& w = fields.w;
    auto const div = DivergenceF2C{};
    // The model's advection budgets: psi * div(rho0 w) for several psi sharing w.
    auto const e0 = a * div(w);
    auto const e1 = (a / b) * div(w);
    auto const e2 = b * div(w);
    core::Buffer<double> all(3 * cols, host), one(cols, host);
    columnIntegralsOf(backend, shape, all, e0, e1, e2);
    auto same = [&](auto const& expr, uint32_t i) {
        columnIntegralOf(backend, shape, expr, one);
        for (uint32_t c = 0; c < cols; ++c) {
            INFO("expression " << i << ", column " << c);
            REQUIRE(std::memcmp(&all.host()[i * cols + c], &one.host()[c], sizeof(double)) == 0);
        }
    };
    same(e0, 0);
    same(e1, 1);
    same(e2, 2);
    REQUIRE(all.host()[0] != all.host()[2 * cols]); // different integrands, different integrals

    core::Buffer<double> tooShort(2 * cols, host);
    REQUIRE_THROWS_WITH(columnIntegralsOf(backend, shape, tooShort, e0, e1, e2),
                        Catch::Contains("columnIntegralsOf") && Catch::Contains("3 x 5 values"));
    Field<double, Center> other(uniformGrid(7), cols, host);
    REQUIRE_THROWS_AS(columnIntegralsOf(backend, other, all, e0, e1, e2), Error); // operands of another shape
}

namespace {
// A `then` of columnIntegralsOfThen: reads the column's two integrals just written and folds them into a running
// sum and a running count, as the model's budget ledger does.
struct FoldTwo {
    double const* integrals;
    double* sum;
    uint32_t columns;
    STRATA_HD void operator()(uint32_t col) const { sum[col] += integrals[col] - integrals[columns + col]; }
};
} // namespace

// columnIntegralsOfThen runs `then` for each column after its integrals are written, in the same launch: on the one-
// worker backends right after the column's walk, on Threads (tiles of 1024 / levels columns in shared memory, as on a
// GPU) on the worker that wrote the column's integrals. The expected sums are the integrals of columnIntegralsOf,
// folded on the host: a `then` that ran before the integrals were written, ran for another column or not at all
// fails bit for bit. 30 levels (tiles of 34, 300 columns: a partial last tile) and 1025 (one worker per column).
TEST_CASE("integrals and a per-column step after them in one launch", "[column][integrals][bfb]") {
    for (uint32_t const levels : {30u, 1025u}) {
        auto const grid = stretchedGrid(levels);
        uint32_t const cols = 300;
        IntegrandFields fields(grid, cols, [](uint32_t k, uint32_t c) { return std::sin(0.07 * k - 0.2 * c); });
        auto const &a = fields.a, &b = fields.b;
        core::Buffer<double> plain(2 * cols, host);
        columnIntegralsOf(core::Serial{}, fields.shape, plain, a * b, a / b);
        auto check = [&](auto const& backend, char const* name) {
            INFO(name << ", " << levels << " levels");
            core::Buffer<double> out(2 * cols, host), sum(cols, host, 0.0);
            for (int pass = 0; pass < 2; ++pass)
                columnIntegralsOfThen(backend, fields.shape, out, FoldTwo{out.device(), sum.device(), cols}, a * b,
                                      a / b);
            for (uint32_t c = 0; c < cols; ++c) {
                INFO("column " << c);
                double const once = plain.host()[c] - plain.host()[cols + c], want = (0.0 + once) + once;
                REQUIRE(std::memcmp(&out.host()[c], &plain.host()[c], sizeof(double)) == 0);
                REQUIRE(std::memcmp(&sum.host()[c], &want, sizeof(double)) == 0);
            }
        };
        check(core::Serial{}, "Serial");
        check(core::OpenMP{}, "OpenMP");
        check(core::Threads{7, true}, "Threads, 7 workers");
        check(core::Threads{32, true}, "Threads, 32 workers");
    }
}
