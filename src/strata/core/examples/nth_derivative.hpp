// The n-th derivative example of ClimaComms' `@threaded` kernel tutorial, on the `threaded` front end, in four forms.
//
// A matrix of `rows` x `cols` doubles, column-major (a column is contiguous), is differentiated n times along each
// column with the periodic second difference D(a)[i] = (a[i+1] - 2 a[i] + a[i-1]) / 2. Written recursively,
// D^n(a)[i] reads a 3^n times, so the forms trade global reads for shared ones and syncs:
//
//   naive      every point evaluates D^n from global memory: 3^n global reads per point
//   shared     each column is staged in shared memory once, D^n reads shared memory
//   twoLevel   D^(n/2) of the column is staged too, D^(n - n/2) is applied to it: 3^(n/2) + 3^(n - n/2) shared reads
//              per point, 3 syncs
//   iterated   every level is staged: D is applied n times, from one shared array into the other (the last one
//              writes global memory): 3 n shared reads per point, n + 1 syncs (the limit of the two-level idea)
//
// All forms evaluate the same arithmetic in the same order (a staged D^k value is the very value the recursion
// computes), so their results are identical bit for bit; the tests check all four on every CPU backend
// (tests/core/test_nth_derivative.cpp), and strata-bench checks every form against two-level. n is a template
// parameter (the recursion unrolls at compile time, and nvcc needs no stack for it); `runNthDerivative` dispatches
// n = 0..10 at run time on the CPU backends, 0..8 on Cuda (naive n = 10 is 3^10 = 59049 reads per point: seconds on
// a CPU core).
#pragma once

#include <strata/core/threaded.hpp>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace strata::examples {

// A column of the matrix in global memory, read-only.
struct GlobalColumn {
    double const* p;
    STRATA_HD double operator[](uint32_t i) const { return p[i]; }
};

template <int N, uint32_t Rows, class Column>
STRATA_HD double nthDerivative(Column const& a, uint32_t i) {
    if constexpr (N == 0) {
        return static_cast<double>(a[i]);
    } else {
        uint32_t const prev = i == 0 ? Rows - 1 : i - 1;
        uint32_t const next = i == Rows - 1 ? 0 : i + 1;
        return (nthDerivative<N - 1, Rows>(a, next) - 2 * nthDerivative<N - 1, Rows>(a, i) +
                nthDerivative<N - 1, Rows>(a, prev)) /
               2;
    }
}

enum class NthDerivativeForm { Naive, Shared, TwoLevel, Iterated };

template <int N, uint32_t Rows>
struct NaiveBody {
    double const* matrix;
    double* result;
    STRATA_HD void operator()(uint32_t k) const {
        uint32_t const i = k % Rows, j = k / Rows;
        result[k] = nthDerivative<N, Rows>(GlobalColumn{matrix + j * Rows}, i);
    }
};

template <int N, uint32_t Rows>
struct SharedBody {
    double const* matrix;
    double* result;
    template <class Ctx>
    STRATA_HD void operator()(Ctx& ctx, uint32_t j) const {
        auto column = ctx.template staticSharedArray<double, Rows>();
        ctx.syncInterdependent([&](uint32_t i) { column[i] = matrix[j * Rows + i]; });
        ctx.syncInterdependent([&](uint32_t i) { result[j * Rows + i] = nthDerivative<N, Rows>(column, i); });
    }
};

template <int N, uint32_t Rows>
struct TwoLevelBody {
    double const* matrix;
    double* result;
    template <class Ctx>
    STRATA_HD void operator()(Ctx& ctx, uint32_t j) const {
        auto column = ctx.template staticSharedArray<double, Rows>();
        auto half = ctx.template staticSharedArray<double, Rows>();
        ctx.syncInterdependent([&](uint32_t i) { column[i] = matrix[j * Rows + i]; });
        ctx.syncInterdependent([&](uint32_t i) { half[i] = nthDerivative<N / 2, Rows>(column, i); });
        ctx.syncInterdependent([&](uint32_t i) { result[j * Rows + i] = nthDerivative<N - N / 2, Rows>(half, i); });
    }
};

template <int N, uint32_t Rows>
struct IteratedBody {
    double const* matrix;
    double* result;
    template <class Ctx>
    STRATA_HD void operator()(Ctx& ctx, uint32_t j) const {
        auto from = ctx.template staticSharedArray<double, Rows>();
        auto to = ctx.template staticSharedArray<double, Rows>();
        if constexpr (N == 0) {
            ctx.syncInterdependent([&](uint32_t i) { result[j * Rows + i] = matrix[j * Rows + i]; });
        } else {
            ctx.syncInterdependent([&](uint32_t i) { from[i] = matrix[j * Rows + i]; });
            for (int step = 1; step < N; ++step) { // D^step into `to`, then swap
                ctx.syncInterdependent([&](uint32_t i) { to[i] = nthDerivative<1, Rows>(from, i); });
                auto const t = from;
                from = to;
                to = t;
            }
            ctx.syncInterdependent([&](uint32_t i) { result[j * Rows + i] = nthDerivative<1, Rows>(from, i); });
        }
    }
};

template <int N, uint32_t Rows, class Backend>
void nthDerivative(Backend const& backend, NthDerivativeForm form, double const* matrix, double* result,
                   uint32_t cols) {
    using threaded::independent;
    using threaded::interdependent;
    switch (form) {
    case NthDerivativeForm::Naive:
        threaded::threaded(backend, independent(Rows * cols), NaiveBody<N, Rows>{matrix, result});
        break;
    case NthDerivativeForm::Shared:
        threaded::threaded(backend, independent(cols), interdependent<Rows>(threaded::sharedBytesFor<double, Rows>(1)),
                           SharedBody<N, Rows>{matrix, result});
        break;
    case NthDerivativeForm::TwoLevel:
        threaded::threaded(backend, independent(cols), interdependent<Rows>(threaded::sharedBytesFor<double, Rows>(2)),
                           TwoLevelBody<N, Rows>{matrix, result});
        break;
    case NthDerivativeForm::Iterated:
        threaded::threaded(backend, independent(cols), interdependent<Rows>(threaded::sharedBytesFor<double, Rows>(2)),
                           IteratedBody<N, Rows>{matrix, result});
        break;
    }
}

// The largest n that runNthDerivative dispatches: 10 on the CPU backends; 8 on Cuda, where nvcc unrolls the
// recursion completely and each n above 8 multiplies the device test's compile time.
template <class Backend>
inline constexpr int maxNthDerivative = Backend::isGpu ? 8 : 10;

template <uint32_t Rows, class Backend>
void runNthDerivative(Backend const& backend, int n, NthDerivativeForm form, double const* matrix, double* result,
                      uint32_t cols) {
    constexpr int maxN = maxNthDerivative<Backend>;
    switch (n) {
    case 0: return nthDerivative<0, Rows>(backend, form, matrix, result, cols);
    case 1: return nthDerivative<1, Rows>(backend, form, matrix, result, cols);
    case 2: return nthDerivative<2, Rows>(backend, form, matrix, result, cols);
    case 3: return nthDerivative<3, Rows>(backend, form, matrix, result, cols);
    case 4: return nthDerivative<4, Rows>(backend, form, matrix, result, cols);
    case 5: return nthDerivative<5, Rows>(backend, form, matrix, result, cols);
    case 6: return nthDerivative<6, Rows>(backend, form, matrix, result, cols);
    case 7: return nthDerivative<7, Rows>(backend, form, matrix, result, cols);
    case 8: return nthDerivative<8, Rows>(backend, form, matrix, result, cols);
    case 9:
        if constexpr (maxN >= 9) return nthDerivative<9, Rows>(backend, form, matrix, result, cols);
        break;
    case 10:
        if constexpr (maxN >= 10) return nthDerivative<10, Rows>(backend, form, matrix, result, cols);
        break;
    default: break;
    }
    throw std::invalid_argument("runNthDerivative: n must be 0.." + std::to_string(maxN) + " on this backend");
}

} // namespace strata::examples
