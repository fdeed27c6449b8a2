// What every strata-bench suite shares: the STREAM triad that is the roofline, and the counters each result reports.
//
// Suites (the name's first component, so that --benchmark_filter=^operators/ picks one):
//   roofline/        STREAM triad a[i] = b[i] + s c[i], plain loop and through the lockstep layer
//   nth_derivative/  the threaded-kernels example, naive / shared / two-level / iterated, n = 1 .. 10
//   operators/       column-stencil expressions, engines Direct / Shmem / Auto and a hand-written fused loop
//   column/          tridiagonal solves (Thomas, cyclic reduction, a hand-written Thomas) and column integrals
//   model/           one full model step of configs/default.yaml
// Names are suite/backend/case/variant[/size], e.g. operators/serial/diffusion/shmem/64.
//
// Counters of every result (rates use wall-clock time: every benchmark runs with UseRealTime):
//   level_updates_per_second  output points (column levels) written per second
//   bytes_per_second          effective bandwidth: the benchmark's minimum bytes per iteration (every input field
//                             read once, every output field written once; each benchmark states its byte model in
//                             its file and in the counter min_bytes_per_point) divided by the time
//   pct_of_triad              bytes_per_second as a percentage of the triad bandwidth of the same backend measured
//                             in the same process (Serial: one thread; OpenMP: every OpenMP thread)
//   triad_bytes_per_second    that triad bandwidth (the median of every reference pass so far: see below), so that
//                             the JSON is self-contained
//   triad_latest_bytes_per_second, triad_min_bytes_per_second, triad_max_bytes_per_second, triad_passes
//                             the median of the latest sample of reference passes, the slowest and the fastest pass so
//                             far, and how many passes the median is of
// The triad reference (TriadReference below) is measured like the benchmarks it scales, not once: when a result is
// reported (reportThroughput, after its timed loop) and a second or more has passed since the reference's latest
// sample, 3 more passes of the triad run, so that its passes are interleaved with the benchmarks over the whole run
// (about a tenth of the run's time), and pct_of_triad uses the median of all the passes of the process so far (at
// the first result: of 9 passes, after one untimed). The passes run over one set of three arrays of 2^25 doubles
// (256 MiB each, 8 x the 32 MiB L3), kept for the process and shared with roofline/<backend>/triad, from the
// allocator of Strata's fields (core::detail::hostAllocate: the same kind of pages as the engines' fields), 24 bytes
// per element (STREAM's count: b and c read, a written; the write-allocate read of a is not counted, here or in any
// benchmark's byte model).
#pragma once

#include <strata/core/backend.hpp>
#include <strata/core/lockstep.hpp>
#include <strata/core/memory.hpp>

#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#if defined(_OPENMP)
#include <omp.h>
#endif

namespace strata::bench {

inline constexpr std::size_t triadElements = std::size_t{1} << 25;
inline constexpr double triadBytesPerElement = 24.0;
inline constexpr double triadScalar = 3.0;

// An array of doubles that is not zero-filled on allocation (the first touch decides where its pages live). It comes
// from the allocator of Strata's fields (core::detail::hostAllocate: huge pages from 2 MiB), so that the triad and
// the peers that use these arrays run on the same kind of pages as the engines they are compared with.
struct RawArray {
    struct Release {
        std::size_t bytes;
        void operator()(double* q) const noexcept { core::detail::hostRelease(q, bytes); }
    };
    std::unique_ptr<double[], Release> p;
    explicit RawArray(std::size_t n)
        : p(static_cast<double*>(core::detail::hostAllocate(n * sizeof(double))), Release{n * sizeof(double)}) {}
    double* get() const { return p.get(); }
};

// The triad kernels themselves (also the roofline suite's bodies). One copy of each in the program, at a 64-byte
// boundary, for the reference and the roofline suite alike: on the AMD EPYC the same SSE2 triad loop runs at 29-38 GB/s
// depending on where its code lies within a 64-byte line (docs/performance.md, "Code placement"), so a copy inlined
// into each caller would make each measure a different roof, and a build that moves unrelated code a different one.
// (GCC's noipa: neither inlined nor cloned for the constant arguments of a caller.)
#if defined(__clang__)
#define STRATA_BENCH_ONE_COPY __attribute__((noinline, aligned(64)))
#elif defined(__GNUC__)
#define STRATA_BENCH_ONE_COPY __attribute__((noipa, aligned(64)))
#else
#define STRATA_BENCH_ONE_COPY
#endif
STRATA_BENCH_ONE_COPY inline void triadSerial(double* __restrict a, double const* __restrict b,
                                              double const* __restrict c, double s, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i)
        a[i] = b[i] + s * c[i];
}

STRATA_BENCH_ONE_COPY inline void triadOpenMP(double* __restrict a, double const* __restrict b,
                                              double const* __restrict c, double s, std::size_t n) {
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < static_cast<std::int64_t>(n); ++i)
        a[i] = b[i] + s * c[i];
}

// The triad as a lockstep loop body: threaded(backend, independent(n), TriadBody{...}) (roofline suites, CPU and GPU).
struct TriadBody {
    double* a;
    double const* b;
    double const* c;
    double s;
    STRATA_HD void operator()(uint32_t i) const { a[i] = b[i] + s * c[i]; }
};

// The data of one level count, D(levels, columns) with columns = points / levels (at least one), kept while
// consecutive benchmarks use the same level count (suites register level count first); the previous one is freed
// before the next is made.
template <class D>
D& dataForLevels(uint32_t levels, uint32_t points) {
    static std::unique_ptr<D> data;
    if (!data || data->levels != levels) {
        data.reset();
        data = std::make_unique<D>(levels, std::max<uint32_t>(1, points / levels));
    }
    return *data;
}

// Fills the three arrays with the same static schedule the OpenMP triad uses (first touch).
inline void triadInit(double* a, double* b, double* c, std::size_t n, bool parallel) {
    if (parallel) {
#pragma omp parallel for schedule(static)
        for (std::int64_t i = 0; i < static_cast<std::int64_t>(n); ++i) {
            a[i] = 0.0;
            b[i] = 1.0 + 1e-9 * static_cast<double>(i);
            c[i] = 2.0 - 1e-9 * static_cast<double>(i);
        }
    } else {
        for (std::size_t i = 0; i < n; ++i) {
            a[i] = 0.0;
            b[i] = 1.0 + 1e-9 * static_cast<double>(i);
            c[i] = 2.0 - 1e-9 * static_cast<double>(i);
        }
    }
}

// The three arrays of the triad reference and of roofline/<backend>/triad: made and first touched once (with the
// OpenMP triad's static schedule, which on one memory node puts the pages where a serial touch would), kept for the
// process.
struct TriadArrays {
    RawArray a{triadElements}, b{triadElements}, c{triadElements};
    TriadArrays() { triadInit(a.get(), b.get(), c.get(), triadElements, true); }
};
inline TriadArrays& triadArrays() {
    static TriadArrays arrays;
    return arrays;
}

// One pass of the triad over the shared arrays, bytes per second.
inline double triadPass(bool parallel) {
    TriadArrays& t = triadArrays();
    auto const t0 = std::chrono::steady_clock::now();
    if (parallel)
        triadOpenMP(t.a.get(), t.b.get(), t.c.get(), triadScalar, triadElements);
    else
        triadSerial(t.a.get(), t.b.get(), t.c.get(), triadScalar, triadElements);
    double const s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    benchmark::DoNotOptimize(t.a.get());
    benchmark::ClobberMemory();
    return triadBytesPerElement * static_cast<double>(triadElements) / s;
}

inline double medianOf(std::vector<double> v) {
    if (v.empty()) return 0.0;
    std::sort(v.begin(), v.end());
    std::size_t const n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// The triad bandwidth of one kind (Serial: one thread; OpenMP: every OpenMP thread), sampled again and again over
// the run: every pass is kept, and the reference is their median.
class TriadReference {
public:
    static constexpr int passesPerSample = 3;
    static constexpr int firstPasses = 9;                // on first use, after one untimed pass
    static constexpr double secondsBetweenSamples = 1.0; // at least, from the end of one sample to the next

    explicit TriadReference(bool parallel) : parallel_(parallel) {}

    // Runs `passes` passes now and keeps them; returns their median, bytes/s.
    double sample(int passes = passesPerSample) {
        std::vector<double> now;
        for (int i = 0; i < passes; ++i)
            now.push_back(triadPass(parallel_));
        passes_.insert(passes_.end(), now.begin(), now.end());
        latest_ = medianOf(now);
        lastSample_ = std::chrono::steady_clock::now();
        return latest_;
    }
    // A sample if secondsBetweenSamples have passed since the latest (the first use: its passes); returns median().
    double update() {
        if (passes_.empty()) return median();
        if (std::chrono::duration<double>(std::chrono::steady_clock::now() - lastSample_).count() >=
            secondsBetweenSamples)
            sample();
        return median();
    }
    // The median of every pass so far, bytes/s (the first use runs its passes).
    double median() {
        if (passes_.empty()) {
            triadPass(parallel_); // pages and caches settle; not counted
            sample(firstPasses);
        }
        return medianOf(passes_);
    }
    double latest() const { return latest_; }
    double slowest() const { return passes_.empty() ? 0.0 : *std::min_element(passes_.begin(), passes_.end()); }
    double fastest() const { return passes_.empty() ? 0.0 : *std::max_element(passes_.begin(), passes_.end()); }
    std::size_t passes() const { return passes_.size(); }

private:
    bool parallel_;
    std::vector<double> passes_;
    double latest_ = 0.0;
    std::chrono::steady_clock::time_point lastSample_{};
};

template <class Backend>
TriadReference& triadReferenceOf() {
    static TriadReference reference(Backend::hostParallel);
    return reference;
}

// The triad reference of Backend's kind as it stands: the median of its passes so far, bytes/s.
template <class Backend>
double triadReference() {
    return triadReferenceOf<Backend>().median();
}

// The cost of one transcendental function of the kinds the model evaluates (exp, log, pow, sin, sqrt in turn, on
// arguments of the model's ranges), seconds per call: the best of 5 passes of 2^20 calls, measured once.
inline double transcendentalSeconds() {
    static double const seconds = [] {
        constexpr int calls = 1 << 20;
        double best = 1e9;
        for (int pass = 0; pass < 5; ++pass) {
            double sum = 0;
            auto const t0 = std::chrono::steady_clock::now();
            for (int i = 0; i < calls; i += 5) {
                double const x = 0.5 + 1e-6 * i;
                sum += std::exp(-x) + std::log(x) + std::pow(x, 0.2857) + std::sin(x) + std::sqrt(x);
            }
            benchmark::DoNotOptimize(sum);
            best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / calls);
        }
        return best;
    }();
    return seconds;
}

// The cost of launching a kernel that does nothing, one block, on Backend (OpenMP: a fork and join of its
// threads), seconds: the best of 5 passes of 2000 launches, measured once per backend.
struct EmptyKernel {
    template <class W>
    STRATA_HD void operator()(W const&) const {}
};
template <class Backend>
double launchSeconds() {
    static double const seconds = [] {
        constexpr int launches = 2000;
        double best = 1e9;
        for (int pass = 0; pass < 5; ++pass) {
            auto const t0 = std::chrono::steady_clock::now();
            for (int i = 0; i < launches; ++i)
                lockstep::launch(Backend{}, lockstep::config<1>(1), EmptyKernel{});
            best =
                std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / launches);
        }
        return best;
    }();
    return seconds;
}

inline int threadsOf(bool parallel) {
#if defined(_OPENMP)
    return parallel ? omp_get_max_threads() : 1;
#else
    (void)parallel;
    return 1;
#endif
}

// Sets the counters every result reports, after the triad reference's sample when one is due (outside the timed
// loop). `points` and `bytes` are per iteration; min_bytes_per_point documents the byte model (bytes / points).
template <class Backend>
void reportThroughput(benchmark::State& state, double points, double bytes) {
    using benchmark::Counter;
    TriadReference& reference = triadReferenceOf<Backend>();
    double const triad = reference.update();
    state.counters["level_updates_per_second"] = Counter(points, Counter::kIsIterationInvariantRate);
    state.counters["bytes_per_second"] = Counter(bytes, Counter::kIsIterationInvariantRate);
    state.counters["pct_of_triad"] = Counter(100.0 * bytes / triad, Counter::kIsIterationInvariantRate);
    state.counters["triad_bytes_per_second"] = triad;
    state.counters["triad_latest_bytes_per_second"] = reference.latest();
    state.counters["triad_min_bytes_per_second"] = reference.slowest();
    state.counters["triad_max_bytes_per_second"] = reference.fastest();
    state.counters["triad_passes"] = static_cast<double>(reference.passes());
    state.counters["min_bytes_per_point"] = points > 0 ? bytes / points : 0.0;
    state.counters["threads"] = threadsOf(Backend::hostParallel);
}

// The tag's own name ("serial", "openmp", ...): a string literal, so data() ends in a NUL.
template <class Backend>
constexpr char const* backendName() {
    return Backend::name.data();
}

// Registers one benchmark with the settings every suite uses: wall-clock time, milliseconds.
template <class F>
benchmark::internal::Benchmark* add(std::string const& name, F&& f) {
    return benchmark::RegisterBenchmark(name.c_str(), std::forward<F>(f))->UseRealTime()->Unit(benchmark::kMillisecond);
}

} // namespace strata::bench
