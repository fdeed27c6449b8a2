// roofline/: the STREAM triad a[i] = b[i] + s c[i] over three arrays of 2^25 doubles (256 MiB each, far beyond the
// 32 MiB L3), the memory-bandwidth roof every other suite is measured against.
//   roofline/<backend>/triad            a plain loop (Serial) or `omp parallel for schedule(static)` (OpenMP)
//   roofline/<backend>/triad_lockstep   the same loop as a lockstep kernel, threaded(backend, independent(n), body):
//                                       what the kernel layer's block loop costs on a streaming kernel
// Bytes: 24 per element (STREAM's count: b and c read, a written; write-allocate not counted). A "level update" is
// one element. pct_of_triad compares with the reference measured once at start (bench_common.hpp): the two are the
// same loop, so it reads about 100 % and tells how repeatable the reference is.
#include "app/bench/bench_common.hpp"
#include "core/threaded.hpp"

#include <benchmark/benchmark.h>

namespace {

using namespace strata;

struct TriadBody {
    double* a;
    double const* b;
    double const* c;
    double s;
    STRATA_HD void operator()(uint32_t i) const { a[i] = b[i] + s * c[i]; }
};

template <class Backend>
void bmTriad(benchmark::State& state, bool lockstep) {
    constexpr bool parallel = std::is_same_v<Backend, core::OpenMP>;
    std::size_t const n = bench::triadElements;
    bench::RawArray a(n), b(n), c(n);
    bench::triadInit(a.get(), b.get(), c.get(), n, parallel);
    for (auto _ : state) {
        if (lockstep)
            threaded::threaded(Backend{}, threaded::independent(static_cast<uint32_t>(n)),
                               TriadBody{a.get(), b.get(), c.get(), bench::triadScalar});
        else if (parallel)
            bench::triadOpenMP(a.get(), b.get(), c.get(), bench::triadScalar, n);
        else
            bench::triadSerial(a.get(), b.get(), c.get(), bench::triadScalar, n);
        benchmark::DoNotOptimize(a.get());
        benchmark::ClobberMemory();
    }
    bench::reportThroughput<Backend>(state, static_cast<double>(n),
                                     bench::triadBytesPerElement * static_cast<double>(n));
}

template <class Backend>
void registerRoofline() {
    std::string const base = std::string("roofline/") + bench::backendName<Backend>() + "/";
    bench::add(base + "triad", [](benchmark::State& s) { bmTriad<Backend>(s, false); });
    bench::add(base + "triad_lockstep", [](benchmark::State& s) { bmTriad<Backend>(s, true); });
}

int const registered = [] {
    registerRoofline<core::Serial>();
    registerRoofline<core::OpenMP>();
    return 0;
}();

} // namespace
