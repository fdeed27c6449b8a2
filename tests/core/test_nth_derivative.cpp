// The threaded-kernels example: the four forms of the n-th derivative agree bit for bit, on every backend, and
// match an independent host computation (iterated periodic second differences, not the recursion under test).
#include "tests/core/backends.hpp"
#include <strata/core/examples/nth_derivative.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <vector>

using namespace strata;
using examples::NthDerivativeForm;

namespace {
constexpr uint32_t rows = 100, cols = 1000;

std::vector<double> makeMatrix() {
    std::vector<double> m(rows * cols);
    for (uint32_t j = 0; j < cols; ++j)
        for (uint32_t i = 0; i < rows; ++i)
            m[j * rows + i] = std::sin(0.0628 * i * (1 + j % 7)) + 0.001 * static_cast<double>((i * 31 + j * 17) % 101);
    return m;
}

// D^n by repeated application of the second difference to whole columns.
std::vector<double> iteratedReference(std::vector<double> const& m, int n) {
    std::vector<double> a = m, b(m.size());
    for (int step = 0; step < n; ++step) {
        for (uint32_t j = 0; j < cols; ++j)
            for (uint32_t i = 0; i < rows; ++i) {
                double const* c = &a[j * rows];
                b[j * rows + i] = (c[(i + 1) % rows] - 2 * c[i] + c[(i + rows - 1) % rows]) / 2;
            }
        std::swap(a, b);
    }
    return a;
}

// Asks for two shared columns.
struct Greedy {
    template <class Ctx>
    void operator()(Ctx& ctx, uint32_t) const {
        auto a = ctx.template staticSharedArray<double, rows>();
        auto b = ctx.template staticSharedArray<double, rows>();
        (void)a;
        (void)b;
    }
};

// The two-level form with its shared memory declared by the body, once: `struct Shared` sizes the block.
template <int N>
struct TwoLevelDeclaredBody {
    double const* matrix;
    double* result;
    struct Shared {
        double column[rows];
        double half[rows];
    };
    template <class Ctx>
    void operator()(Ctx& ctx, uint32_t j) const {
        auto column = ctx.sharedArray(&Shared::column);
        auto half = ctx.sharedArray(&Shared::half);
        ctx.syncInterdependent([&](uint32_t i) { column[i] = matrix[j * rows + i]; });
        ctx.syncInterdependent([&](uint32_t i) { half[i] = examples::nthDerivative<N / 2, rows>(column, i); });
        ctx.syncInterdependent(
            [&](uint32_t i) { result[j * rows + i] = examples::nthDerivative<N - N / 2, rows>(half, i); });
    }
};

bool bitIdentical(std::vector<double> const& x, std::vector<double> const& y) {
    return x.size() == y.size() && std::memcmp(x.data(), y.data(), x.size() * sizeof(double)) == 0;
}
} // namespace

TEMPLATE_TEST_CASE("n-th derivative: naive, shared, two-level and iterated forms are bit-identical, n = 1..8",
                   "[threaded][nth-derivative]", STRATA_CPU_BACKENDS) {
    auto const backend = TestType::make();
    auto const matrix = makeMatrix();
    for (int n = 1; n <= 8; ++n) {
        INFO("n = " << n);
        std::vector<double> naive(matrix.size(), NAN), shared(matrix.size(), NAN), twoLevel(matrix.size(), NAN),
            iterated(matrix.size(), NAN);
        examples::runNthDerivative<rows>(backend, n, NthDerivativeForm::Naive, matrix.data(), naive.data(), cols);
        examples::runNthDerivative<rows>(backend, n, NthDerivativeForm::Shared, matrix.data(), shared.data(), cols);
        examples::runNthDerivative<rows>(backend, n, NthDerivativeForm::TwoLevel, matrix.data(), twoLevel.data(), cols);
        REQUIRE(bitIdentical(naive, shared));
        REQUIRE(bitIdentical(naive, twoLevel));
        examples::runNthDerivative<rows>(backend, n, NthDerivativeForm::Iterated, matrix.data(), iterated.data(), cols);
        REQUIRE(bitIdentical(naive, iterated));
        // Against the iterated reference the order of operations differs, so compare with a tolerance.
        auto const ref = iteratedReference(matrix, n);
        double maxErr = 0, maxRef = 0;
        for (std::size_t k = 0; k < ref.size(); ++k) {
            maxErr = std::max(maxErr, std::fabs(naive[k] - ref[k]));
            maxRef = std::max(maxRef, std::fabs(ref[k]));
        }
        REQUIRE(maxErr <= 1e-12 * std::max(1.0, maxRef));
    }
}

TEST_CASE("n-th derivative: results are identical across backends", "[threaded][nth-derivative]") {
    auto const matrix = makeMatrix();
    for (int n : {1, 4, 8}) {
        INFO("n = " << n);
        std::vector<double> serial(matrix.size()), openmp(matrix.size()), threads(matrix.size());
        examples::runNthDerivative<rows>(core::Serial{}, n, NthDerivativeForm::TwoLevel, matrix.data(), serial.data(),
                                         cols);
        examples::runNthDerivative<rows>(core::OpenMP{}, n, NthDerivativeForm::Shared, matrix.data(), openmp.data(),
                                         cols);
        examples::runNthDerivative<rows>(core::Threads{7, true}, n, NthDerivativeForm::Naive, matrix.data(),
                                         threads.data(), cols);
        REQUIRE(bitIdentical(serial, openmp));
        REQUIRE(bitIdentical(serial, threads));
    }
}

TEMPLATE_TEST_CASE("threaded: a body's struct Shared sizes the block, with no bytes stated at the call",
                   "[threaded][nth-derivative]", STRATA_CPU_BACKENDS) {
    auto const backend = TestType::make();
    auto const matrix = makeMatrix();
    std::vector<double> declared(matrix.size(), NAN), reserved(matrix.size(), NAN);
    threaded::threaded(backend, threaded::independent(cols), threaded::interdependent<rows>(),
                       TwoLevelDeclaredBody<4>{matrix.data(), declared.data()});
    examples::runNthDerivative<rows>(backend, 4, NthDerivativeForm::TwoLevel, matrix.data(), reserved.data(), cols);
    REQUIRE(bitIdentical(declared, reserved));
}

TEMPLATE_TEST_CASE("threaded: asking for more shared memory than reserved is an error naming both sizes", "[threaded]",
                   STRATA_CPU_BACKENDS) {
    auto const backend = TestType::make();
    REQUIRE_THROWS_WITH(threaded::threaded(backend, threaded::independent(3),
                                           threaded::interdependent<rows>(threaded::sharedBytesFor<double, rows>(1)),
                                           Greedy{}),
                        Catch::Matchers::Contains("1600") && Catch::Matchers::Contains("800"));
}
