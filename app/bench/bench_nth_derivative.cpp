// The threaded-kernels example as a benchmark: n-th derivative of a 100 x 1000 matrix along its columns, in the
// naive, shared-memory and two-level forms, on the CPU backends. Counters: points per second, and the global and
// shared reads per point the form does by construction (3^n global for naive; 1 global + 3^n shared for shared;
// 1 global + 3^(n/2) + 3^(n - n/2) shared for two-level).
#include "core/examples/nth_derivative.hpp"

#include <benchmark/benchmark.h>

#include <cmath>
#include <vector>

namespace {

using strata::examples::NthDerivativeForm;
constexpr uint32_t rows = 100, cols = 1000;

double power3(int k) { return std::pow(3.0, k); }

template <class Backend>
void bmNthDerivative(benchmark::State& state, Backend backend, NthDerivativeForm form) {
    int const n = static_cast<int>(state.range(0));
    std::vector<double> matrix(rows * cols), result(rows * cols);
    for (std::size_t k = 0; k < matrix.size(); ++k)
        matrix[k] = std::sin(0.01 * static_cast<double>(k));
    for (auto _ : state) {
        strata::examples::runNthDerivative<rows>(backend, n, form, matrix.data(), result.data(), cols);
        benchmark::DoNotOptimize(result.data());
        benchmark::ClobberMemory();
    }
    state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) * rows * cols);
    double global = 1, shared = 0;
    switch (form) {
    case NthDerivativeForm::Naive: global = power3(n); break;
    case NthDerivativeForm::Shared: shared = power3(n); break;
    case NthDerivativeForm::TwoLevel: shared = power3(n / 2) + power3(n - n / 2); break;
    }
    state.counters["global_reads_per_point"] = global;
    state.counters["shared_reads_per_point"] = shared;
}

void nArgs(benchmark::internal::Benchmark* b) {
    for (int n : {1, 4, 8})
        b->Arg(n);
    b->Unit(benchmark::kMillisecond);
}

BENCHMARK_CAPTURE(bmNthDerivative, serial_naive, strata::core::Serial{}, NthDerivativeForm::Naive)->Apply(nArgs);
BENCHMARK_CAPTURE(bmNthDerivative, serial_shared, strata::core::Serial{}, NthDerivativeForm::Shared)->Apply(nArgs);
BENCHMARK_CAPTURE(bmNthDerivative, serial_two_level, strata::core::Serial{}, NthDerivativeForm::TwoLevel)->Apply(nArgs);
BENCHMARK_CAPTURE(bmNthDerivative, openmp_naive, strata::core::OpenMP{}, NthDerivativeForm::Naive)->Apply(nArgs);
BENCHMARK_CAPTURE(bmNthDerivative, openmp_shared, strata::core::OpenMP{}, NthDerivativeForm::Shared)->Apply(nArgs);
BENCHMARK_CAPTURE(bmNthDerivative, openmp_two_level, strata::core::OpenMP{}, NthDerivativeForm::TwoLevel)->Apply(nArgs);
// The checking backend, unchecked, 32 workers per block: what real threads and barriers cost on this host.
BENCHMARK_CAPTURE(bmNthDerivative, threads32_two_level, strata::core::Threads{32, false}, NthDerivativeForm::TwoLevel)
    ->Apply(nArgs);

} // namespace
