// nth_derivative/: the threaded-kernels example (core/examples/nth_derivative.hpp): the n-th derivative of a
// 100 x 1000 matrix along its columns, n = 1, 2, 4, 6, 8, 10, in its four forms, on Serial and OpenMP.
//   nth_derivative/<backend>/<form>/<n>     form: naive | shared | two_level | iterated
// Reads per point, by construction: naive 3^n global; shared 1 global + 3^n shared; two_level 1 global +
// 3^(n/2) + 3^(n - n/2) shared; iterated 1 global + 3 n shared (counters global_reads_per_point,
// shared_reads_per_point). Naive and shared at n >= 8 run a fixed single iteration (n = 10 is 59049 reads per point,
// seconds per pass). Every result is checked bit for bit against the two-level form before it is reported.
// Bytes: 16 per point (the matrix read once, the result written once). The matrix is 800 KB, so it lives in L2: the
// percentage of the triad says how far from streaming speed a form is, not that it is memory-bound.
#include <strata/app/bench/bench_common.hpp>
#include <strata/core/examples/nth_derivative.hpp>

#include <benchmark/benchmark.h>

#include <cmath>
#include <cstring>
#include <vector>

namespace {

using namespace strata;
using examples::NthDerivativeForm;
constexpr uint32_t rows = 100, cols = 1000;

double power3(int k) { return std::pow(3.0, k); }

std::vector<double> const& matrix() {
    static std::vector<double> const m = [] {
        std::vector<double> v(std::size_t{rows} * cols);
        for (std::size_t k = 0; k < v.size(); ++k)
            v[k] = std::sin(0.01 * static_cast<double>(k));
        return v;
    }();
    return m;
}

template <class Backend>
void bmNthDerivative(benchmark::State& state, NthDerivativeForm form, int n) {
    Backend const backend{};
    auto const& m = matrix();
    std::vector<double> result(m.size()), reference(m.size());
    examples::runNthDerivative<rows>(core::Serial{}, n, NthDerivativeForm::TwoLevel, m.data(), reference.data(), cols);
    for (auto _ : state) {
        examples::runNthDerivative<rows>(backend, n, form, m.data(), result.data(), cols);
        benchmark::DoNotOptimize(result.data());
        benchmark::ClobberMemory();
    }
    if (std::memcmp(result.data(), reference.data(), result.size() * sizeof(double)) != 0)
        state.SkipWithError("result differs from the two-level form");
    double const points = double{rows} * cols;
    bench::reportThroughput<Backend>(state, points, 16.0 * points);
    double global = 1, shared = 0;
    switch (form) {
    case NthDerivativeForm::Naive: global = power3(n); break;
    case NthDerivativeForm::Shared: shared = power3(n); break;
    case NthDerivativeForm::TwoLevel: shared = power3(n / 2) + power3(n - n / 2); break;
    case NthDerivativeForm::Iterated: shared = 3.0 * n; break;
    }
    state.counters["global_reads_per_point"] = global;
    state.counters["shared_reads_per_point"] = shared;
    state.counters["n"] = n;
}

template <class Backend>
void registerNthDerivative() {
    struct Form {
        char const* name;
        NthDerivativeForm form;
    };
    Form const forms[] = {{"naive", NthDerivativeForm::Naive},
                          {"shared", NthDerivativeForm::Shared},
                          {"two_level", NthDerivativeForm::TwoLevel},
                          {"iterated", NthDerivativeForm::Iterated}};
    for (auto const& f : forms) {
        for (int n : {1, 2, 4, 6, 8, 10}) {
            std::string const name =
                std::string("nth_derivative/") + bench::backendName<Backend>() + "/" + f.name + "/" + std::to_string(n);
            auto* b =
                bench::add(name, [form = f.form, n](benchmark::State& s) { bmNthDerivative<Backend>(s, form, n); });
            bool const slow = (f.form == NthDerivativeForm::Naive || f.form == NthDerivativeForm::Shared) && n >= 8;
            if (slow) b->Iterations(1);
        }
    }
}

int const registered = [] {
    registerNthDerivative<core::Serial>();
    registerNthDerivative<core::OpenMP>();
    return 0;
}();

} // namespace
