// The tridiagonal solver: Thomas and cyclic reduction solve random strictly diagonally dominant systems (residuals
// computed on the host, in long double), agree with each other, are race-free under the Threads checker, and are
// bit-identical across backends and worker counts; the variant rules (Auto, Bfb, the shared-memory fallback) hold.
#include "tests/core/backends.hpp"
#include <strata/operators/column/tridiagonal.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <set>
#include <type_traits>
#include <vector>

using namespace strata;
using namespace strata::ops;

namespace {

constexpr auto host = core::MemSpace::Host;
constexpr uint32_t sizes[] = {1, 2, 3, 64, 127, 128, 300};

template <class T>
struct System {
    Field<T, Center> a, b, c, d;

    // Random and strictly diagonally dominant: |b| = |a| + |c| + margin, margin in [0.1, 1.1), random signs.
    // a[0] and c[n-1] are outside the matrix: they hold NaN, so a solver that reads them fails.
    System(std::shared_ptr<Grid const> const& grid, uint32_t cols, uint64_t seed)
        : a(grid, cols, host), b(grid, cols, host), c(grid, cols, host), d(grid, cols, host) {
        std::mt19937_64 rng(seed);
        std::uniform_real_distribution<double> offDiagonal(-1.0, 1.0), margin(0.1, 1.1), rhs(-1.0, 1.0);
        std::bernoulli_distribution negative(0.3);
        uint32_t const n = grid->cells();
        for (uint32_t col = 0; col < cols; ++col) {
            for (uint32_t k = 0; k < n; ++k) {
                a.at(col, k) = static_cast<T>(offDiagonal(rng));
                c.at(col, k) = static_cast<T>(offDiagonal(rng));
                T const diag = std::fabs(a.at(col, k)) + std::fabs(c.at(col, k)) + static_cast<T>(margin(rng));
                b.at(col, k) = negative(rng) ? -diag : diag;
                d.at(col, k) = static_cast<T>(rhs(rng));
            }
            a.at(col, 0) = std::numeric_limits<T>::quiet_NaN();
            c.at(col, n - 1) = std::numeric_limits<T>::quiet_NaN();
        }
    }

    uint32_t columns() const { return a.columns(); }
    uint32_t levels() const { return a.levels(); }

    // Row k of A x in long double, with a[0] and c[n-1] taken as zero, and the size of its terms.
    long double row(Field<T, Center> const& x, uint32_t col, uint32_t k, long double* magnitude) const {
        uint32_t const n = levels();
        long double const mid = static_cast<long double>(b.at(col, k)) * x.at(col, k);
        long double const low = k > 0 ? static_cast<long double>(a.at(col, k)) * x.at(col, k - 1) : 0.0L;
        long double const high = k + 1 < n ? static_cast<long double>(c.at(col, k)) * x.at(col, k + 1) : 0.0L;
        *magnitude =
            std::fabs(mid) + std::fabs(low) + std::fabs(high) + std::fabs(static_cast<long double>(d.at(col, k)));
        return low + mid + high;
    }

    // Largest componentwise backward error |A x - d|_k / (|A| |x| + |d|)_k over every row of every column.
    double residual(Field<T, Center> const& x) const {
        long double worst = 0;
        for (uint32_t col = 0; col < columns(); ++col)
            for (uint32_t k = 0; k < levels(); ++k) {
                long double magnitude = 0;
                long double const r = row(x, col, k, &magnitude) - d.at(col, k);
                worst = std::max(worst, std::fabs(r) / magnitude);
            }
        return static_cast<double>(worst);
    }
};

// Largest normwise relative difference max_k |x - y| / max_k |x| over the columns.
template <class T>
double relativeDifference(Field<T, Center> const& x, Field<T, Center> const& y) {
    double worst = 0;
    for (uint32_t col = 0; col < x.columns(); ++col) {
        double diff = 0, size = 0;
        for (uint32_t k = 0; k < x.levels(); ++k) {
            diff = std::max(diff, std::fabs(static_cast<double>(x.at(col, k)) - y.at(col, k)));
            size = std::max(size, std::fabs(static_cast<double>(x.at(col, k))));
        }
        worst = std::max(worst, diff / size);
    }
    return worst;
}

template <class T>
bool bitIdentical(Field<T, Center> const& x, Field<T, Center> const& y) {
    for (uint32_t col = 0; col < x.columns(); ++col)
        if (std::memcmp(x.column(col).data(), y.column(col).data(), x.levels() * sizeof(T)) != 0) return false;
    return true;
}

std::shared_ptr<Grid const> gridOf(uint32_t n) { return std::make_shared<Grid const>(Grid::uniform(n, 1000.0)); }

std::set<uint32_t> printedSizes; // the sizes whose Thomas/CR figures were printed

} // namespace

TEMPLATE_TEST_CASE("Thomas and cyclic reduction solve random diagonally dominant systems and agree to 1e-12",
                   "[column][tridiagonal]", STRATA_CPU_BACKENDS, STRATA_SMALL_GRID_BACKENDS) {
    auto const backend = TestType::make();
    for (uint32_t n : sizes) {
        INFO("n = " << n);
        auto grid = gridOf(n);
        uint32_t const cols = 6;
        System<double> const sys(grid, cols, 1000 + n);
        Field<double, Center> thomas(grid, cols, host), cr(grid, cols, host);
        REQUIRE(solveTridiagonal(backend, sys.a, sys.b, sys.c, sys.d, thomas, Tridiag::Thomas) == Tridiag::Thomas);
        REQUIRE(solveTridiagonal(backend, sys.a, sys.b, sys.c, sys.d, cr, Tridiag::CyclicReduction) ==
                Tridiag::CyclicReduction);
        double const rThomas = sys.residual(thomas), rCr = sys.residual(cr), diff = relativeDifference(thomas, cr);
        if (printedSizes.insert(n).second) // once per size: the figures are the same on every backend
            std::printf("tridiagonal n = %3u: |Thomas - CR| / |Thomas| = %.2e, backward error Thomas %.2e, CR %.2e\n",
                        n, diff, rThomas, rCr);
        INFO("backward errors: Thomas " << rThomas << ", CR " << rCr << "; Thomas vs CR " << diff);
        REQUIRE(rThomas < 2e-15); // a few ulps: measured up to 5e-16
        REQUIRE(rCr < 2e-15);
        REQUIRE(diff < 1e-12);
    }
}

TEMPLATE_TEST_CASE("both variants recover a known solution of implicit diffusion", "[column][tridiagonal]",
                   STRATA_CPU_BACKENDS, STRATA_SMALL_GRID_BACKENDS) {
    // (1 + 2r) x[k] - r (x[k-1] + x[k+1]) = d[k] with zero-flux ends (b = 1 + r there): d is made from a chosen x.
    auto const backend = TestType::make();
    uint32_t const n = 100, cols = 3;
    double const r = 50.0; // dt K / dz^2: stiff, weakly conditioned (about 4 r = 200)
    auto grid = gridOf(n);
    Field<double, Center> a(grid, cols, host, -r), b(grid, cols, host, 1 + 2 * r), c(grid, cols, host, -r);
    Field<double, Center> d(grid, cols, host), expected(grid, cols, host), x(grid, cols, host);
    for (uint32_t col = 0; col < cols; ++col) {
        b.at(col, 0) = b.at(col, n - 1) = 1 + r;
        for (uint32_t k = 0; k < n; ++k)
            expected.at(col, k) = std::cos(0.05 * k * (col + 1)) + 0.01 * k;
        for (uint32_t k = 0; k < n; ++k) {
            double const below = k > 0 ? expected.at(col, k - 1) : 0.0, above = k + 1 < n ? expected.at(col, k + 1) : 0;
            d.at(col, k) = b.at(col, k) * expected.at(col, k) - r * (below + above);
        }
    }
    for (Tridiag variant : {Tridiag::Thomas, Tridiag::CyclicReduction}) {
        INFO(tridiagName(variant));
        solveTridiagonal(backend, a, b, c, d, x, variant);
        REQUIRE(relativeDifference(expected, x) < 1e-12);
    }
}

TEST_CASE("Thomas over more columns than a launch's blocks hold: the grid-stride loop, bit for bit",
          "[column][tridiagonal]") {
    // Thomas takes 8 columns a worker and 256 workers a block on Serial (2048 columns a block), one column a worker on
    // Threads: 2100 columns are 2 blocks on Serial, 9 on Threads, so grid limits of 1 and 3 blocks make both walk the
    // rest grid-stride.
    auto grid = gridOf(10);
    uint32_t const cols = 2100;
    System<double> const sys(grid, cols, 4242);
    auto solve = [&](auto const& backend) {
        Field<double, Center> x(grid, cols, host);
        solveTridiagonal(backend, sys.a, sys.b, sys.c, sys.d, x, Tridiag::Thomas);
        return x;
    };
    auto const reference = solve(core::Serial{});
    REQUIRE(bitIdentical(solve(core::GridLimited<core::Serial, 1>{}), reference));
    REQUIRE(bitIdentical(solve(test::SmallGridThreadsBackend<7>::make()), reference));
}

TEMPLATE_TEST_CASE("solving in place (x = d) gives the out-of-place result bit for bit", "[column][tridiagonal]",
                   STRATA_CPU_BACKENDS, STRATA_SMALL_GRID_BACKENDS) {
    auto const backend = TestType::make();
    for (uint32_t n : {1u, 5u, 300u}) {
        auto grid = gridOf(n);
        for (Tridiag variant : {Tridiag::Thomas, Tridiag::CyclicReduction}) {
            INFO("n = " << n << ", " << tridiagName(variant));
            System<double> sys(grid, 4, 77 + n);
            Field<double, Center> x(grid, 4, host);
            solveTridiagonal(backend, sys.a, sys.b, sys.c, sys.d, x, variant);
            solveTridiagonal(backend, sys.a, sys.b, sys.c, sys.d, sys.d, variant);
            REQUIRE(bitIdentical(x, sys.d));
        }
    }
}

TEMPLATE_TEST_CASE("variant rules: Auto and Bfb run Thomas on CPU, CR falls back to Thomas when it does not fit",
                   "[column][tridiagonal]", STRATA_CPU_BACKENDS, STRATA_SMALL_GRID_BACKENDS) {
    auto const backend = TestType::make();
    uint32_t const n = 300;
    auto grid = gridOf(n);
    System<double> const sys(grid, 3, 5);
    Field<double, Center> thomas(grid, 3, host), x(grid, 3, host);
    REQUIRE(solveTridiagonal(backend, sys.a, sys.b, sys.c, sys.d, thomas, Tridiag::Thomas) == Tridiag::Thomas);

    REQUIRE(solveTridiagonal(backend, sys.a, sys.b, sys.c, sys.d, x, Tridiag::Auto) == Tridiag::Thomas);
    REQUIRE(bitIdentical(thomas, x));
    REQUIRE(solveTridiagonal(backend, sys.a, sys.b, sys.c, sys.d, x, Tridiag::Bfb) == Tridiag::Thomas);
    REQUIRE(bitIdentical(thomas, x));

    // Exactly enough shared memory: CR runs, and it is another algorithm (its last bits differ from Thomas's).
    TridiagOptions fits{cyclicReductionBytes<double>(n)};
    REQUIRE(cyclicReductionBytes<double>(n) == 8 * n * sizeof(double));
    REQUIRE(solveTridiagonal(backend, sys.a, sys.b, sys.c, sys.d, x, Tridiag::CyclicReduction, fits) ==
            Tridiag::CyclicReduction);
    REQUIRE_FALSE(bitIdentical(thomas, x));
    // One byte short: Thomas instead.
    TridiagOptions tooSmall{cyclicReductionBytes<double>(n) - 1};
    REQUIRE(solveTridiagonal(backend, sys.a, sys.b, sys.c, sys.d, x, Tridiag::CyclicReduction, tooSmall) ==
            Tridiag::Thomas);
    REQUIRE(bitIdentical(thomas, x));

    // The default limit, 48 KiB, holds 768 levels of double and not 769.
    auto tall = gridOf(769);
    System<double> const tallSys(tall, 1, 9);
    Field<double, Center> tallX(tall, 1, host);
    REQUIRE(solveTridiagonal(backend, tallSys.a, tallSys.b, tallSys.c, tallSys.d, tallX, Tridiag::CyclicReduction) ==
            Tridiag::Thomas);
    REQUIRE(tallSys.residual(tallX) < 1e-15);
    auto fitting = gridOf(768);
    System<double> const fitSys(fitting, 1, 9);
    Field<double, Center> fitX(fitting, 1, host);
    REQUIRE(solveTridiagonal(backend, fitSys.a, fitSys.b, fitSys.c, fitSys.d, fitX, Tridiag::CyclicReduction) ==
            Tridiag::CyclicReduction);
    REQUIRE(fitSys.residual(fitX) < 1e-15);
}

TEST_CASE("Bfb and cyclic reduction are bit-identical across Serial, OpenMP and Threads with 1, 7 and 32 workers",
          "[column][tridiagonal][bfb]") {
    for (uint32_t n : sizes) {
        auto grid = gridOf(n);
        uint32_t const cols = 37;
        System<double> const sys(grid, cols, 31 * n);
        for (Tridiag variant : {Tridiag::Bfb, Tridiag::CyclicReduction}) {
            INFO("n = " << n << ", " << tridiagName(variant));
            auto run = [&](auto const& backend) {
                auto x = std::make_unique<Field<double, Center>>(grid, cols, host);
                solveTridiagonal(backend, sys.a, sys.b, sys.c, sys.d, *x, variant);
                return x;
            };
            auto const reference = run(core::Serial{});
            REQUIRE(bitIdentical(*reference, *run(core::OpenMP{})));
            REQUIRE(bitIdentical(*reference, *run(core::Threads{1, true})));
            REQUIRE(bitIdentical(*reference, *run(core::Threads{7, true})));
            REQUIRE(bitIdentical(*reference, *run(core::Threads{32, true})));
        }
    }
}

TEMPLATE_TEST_CASE("single precision: both variants solve and agree to float rounding", "[column][tridiagonal]",
                   STRATA_CPU_BACKENDS, STRATA_SMALL_GRID_BACKENDS) {
    auto const backend = TestType::make();
    auto grid = gridOf(127);
    System<float> const sys(grid, 5, 3);
    Field<float, Center> thomas(grid, 5, host), cr(grid, 5, host);
    solveTridiagonal(backend, sys.a, sys.b, sys.c, sys.d, thomas, Tridiag::Thomas);
    solveTridiagonal(backend, sys.a, sys.b, sys.c, sys.d, cr, Tridiag::CyclicReduction);
    REQUIRE(sys.residual(thomas) < 1e-6);
    REQUIRE(sys.residual(cr) < 1e-6);
    REQUIRE(relativeDifference(thomas, cr) < 1e-5);
}

TEST_CASE("solveTridiagonal rejects mismatched fields and x aliasing a coefficient", "[column][tridiagonal]") {
    auto grid = gridOf(10);
    System<double> sys(grid, 2, 1);
    Field<double, Center> x(grid, 2, host), wrongColumns(grid, 3, host), wrongGrid(gridOf(11), 2, host);
    core::Serial const serial;
    REQUIRE_THROWS_WITH(solveTridiagonal(serial, sys.a, sys.b, wrongColumns, sys.d, x),
                        Catch::Contains("solveTridiagonal") && Catch::Contains("c has 3 columns"));
    REQUIRE_THROWS_WITH(solveTridiagonal(serial, sys.a, sys.b, sys.c, wrongGrid, x),
                        Catch::Contains("d has 2 columns on a grid of 11 cells"));
    REQUIRE_THROWS_WITH(solveTridiagonal(serial, sys.a, sys.b, sys.c, sys.d, sys.b),
                        Catch::Contains("x is also the input b"));
}
