// roofline/: the STREAM triad a[i] = b[i] + s c[i] over three arrays of 2^25 doubles (256 MiB each, far beyond the
// 32 MiB L3), the memory-bandwidth roof every other suite is measured against.
//   roofline/<backend>/triad            a plain loop (Serial) or `omp parallel for schedule(static)` (OpenMP)
//   roofline/<backend>/triad_lockstep   the same loop as a lockstep kernel, threaded(backend, independent(n), body):
//                                       what the kernel layer's block loop costs on a streaming kernel
// Bytes: 24 per element (STREAM's count: b and c read, a written; write-allocate not counted). A "level update" is
// one element. Both run over the arrays of the in-process triad reference (bench_common.hpp), and pct_of_triad
// compares with that reference, the median of its passes interleaved with the run: the same loop on the same arrays,
// so it reads about 100 % and tells how far one benchmark's stretch of time strays from the run's median.
//   roofline/serial/diffusion_loads/<metric>/<levels>
//                                       an experiment on what one core's loads cost: the diffusion tree's two-pass
//                                       column loop (operators/serial/diffusion/hand) over 2^23 points, its metric
//                                       terms (1/dz at centers and faces, the two interpolation weights) read per level
//                                       from arrays (`arrays`: what the operators do, on any grid) or held in registers
//                                       (`scalars`: possible only where they are constant). The same bytes come from
//                                       memory; `scalars` issues 6 loads per two level updates instead of 10. The
//                                       arrays hold one value each, so both give the same bits (checked).
//   roofline/serial/diffusion_loads/<metric>_one_pass/<levels>
//                                       the same in one pass per column, both face fluxes of a center computed where
//                                       they are used (the Direct engine's shape; the same bits, checked)
//   roofline/serial/triad_placement     (x86-64, GCC or Clang) one SSE2 triad loop (the instructions of GCC 12's
//                                       triadSerial at -O3 for x86-64) in 16 copies whose loops start 0, 4, ..., 60
//                                       bytes past a 64-byte boundary; each iteration runs one pass of every copy
//                                       (the order rotated from iteration to iteration) over the triad reference's
//                                       arrays. Counters: gbs_at_<offset> (each copy's median pass, GB/s) and
//                                       fastest_over_slowest (of those medians): how much the same loop's speed
//                                       depends on where its code lies (docs/performance.md, "Code placement")
//   roofline/serial/column_triad/<shape>/<levels>
//                                       the triad over 2^23 points column by column, in one pass (`one_pass`) or in
//                                       two through a column buffer in L1 (`two_pass`: b + s c into the buffer, then
//                                       the buffer less a zero into a: not a memcpy), the shape of the hand-written
//                                       loop and the Shmem engine on one worker: what that shape costs at the triad's
//                                       bytes and arithmetic
#include <strata/app/bench/bench_common.hpp>
#include <strata/core/threaded.hpp>

#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

#if defined(__x86_64__) && defined(__GNUC__) && defined(__ELF__)
#define STRATA_BENCH_TRIAD_PLACEMENT 1
// strata_bench_triad_at_<offset>(a, b, c, bytes, s): a = b + s c over `bytes` bytes (a multiple of 16), the loop at
// `offset` bytes past a 64-byte boundary (the padding before it is jumped over). Each copy on a 256-byte boundary.
asm(R"(
    .pushsection .text
    .irp off, 0, 4, 8, 12, 16, 20, 24, 28, 32, 36, 40, 44, 48, 52, 56, 60
    .p2align 8
    .globl strata_bench_triad_at_\off
    .hidden strata_bench_triad_at_\off
    .type strata_bench_triad_at_\off, @function
strata_bench_triad_at_\off:
    unpcklpd %xmm0, %xmm0
    xorl %eax, %eax
    testq %rcx, %rcx
    je 2f
    jmp 1f
    .p2align 6
    .fill \off, 1, 0x90
1:  movupd (%rdx,%rax), %xmm1
    movupd (%rsi,%rax), %xmm2
    mulpd %xmm0, %xmm1
    addpd %xmm2, %xmm1
    movups %xmm1, (%rdi,%rax)
    addq $16, %rax
    cmpq %rcx, %rax
    jne 1b
2:  ret
    .size strata_bench_triad_at_\off, . - strata_bench_triad_at_\off
    .endr
    .popsection
)");
extern "C" {
#define STRATA_BENCH_TRIAD_AT(off)                                                                                     \
    void strata_bench_triad_at_##off(double* a, double const* b, double const* c, std::size_t bytes, double s);
STRATA_BENCH_TRIAD_AT(0)
STRATA_BENCH_TRIAD_AT(4)
STRATA_BENCH_TRIAD_AT(8)
STRATA_BENCH_TRIAD_AT(12)
STRATA_BENCH_TRIAD_AT(16)
STRATA_BENCH_TRIAD_AT(20)
STRATA_BENCH_TRIAD_AT(24)
STRATA_BENCH_TRIAD_AT(28)
STRATA_BENCH_TRIAD_AT(32)
STRATA_BENCH_TRIAD_AT(36)
STRATA_BENCH_TRIAD_AT(40)
STRATA_BENCH_TRIAD_AT(44)
STRATA_BENCH_TRIAD_AT(48)
STRATA_BENCH_TRIAD_AT(52)
STRATA_BENCH_TRIAD_AT(56)
STRATA_BENCH_TRIAD_AT(60)
#undef STRATA_BENCH_TRIAD_AT
}
#endif

namespace {

using namespace strata;

using bench::TriadBody;

#if defined(STRATA_BENCH_TRIAD_PLACEMENT)
void bmTriadPlacement(benchmark::State& state) {
    using Copy = void (*)(double*, double const*, double const*, std::size_t, double);
    static constexpr Copy copies[] = {
        strata_bench_triad_at_0,  strata_bench_triad_at_4,  strata_bench_triad_at_8,  strata_bench_triad_at_12,
        strata_bench_triad_at_16, strata_bench_triad_at_20, strata_bench_triad_at_24, strata_bench_triad_at_28,
        strata_bench_triad_at_32, strata_bench_triad_at_36, strata_bench_triad_at_40, strata_bench_triad_at_44,
        strata_bench_triad_at_48, strata_bench_triad_at_52, strata_bench_triad_at_56, strata_bench_triad_at_60};
    constexpr std::size_t count = sizeof copies / sizeof copies[0];
    std::size_t const n = bench::triadElements;
    bench::TriadArrays& arrays = bench::triadArrays();
    double* const a = arrays.a.get();
    double const *const b = arrays.b.get(), *const c = arrays.c.get();
    std::vector<double> gbs[count];
    std::size_t round = 0;
    for (auto _ : state) {
        for (std::size_t i = 0; i < count; ++i) {
            std::size_t const j = (i + round) % count;
            auto const t0 = std::chrono::steady_clock::now();
            copies[j](a, b, c, n * sizeof(double), bench::triadScalar);
            benchmark::ClobberMemory();
            double const seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            gbs[j].push_back(bench::triadBytesPerElement * static_cast<double>(n) / seconds / 1e9);
        }
        ++round;
    }
    for (std::size_t i = 0; i < n; ++i)
        if (!(a[i] == b[i] + bench::triadScalar * c[i])) {
            state.SkipWithError("a copy's triad differs from the triad");
            return;
        }
    double fastest = 0, slowest = 1e300;
    for (std::size_t j = 0; j < count; ++j) {
        double const m = bench::medianOf(gbs[j]);
        state.counters["gbs_at_" + std::to_string(4 * j)] = m;
        fastest = std::max(fastest, m);
        slowest = std::min(slowest, m);
    }
    state.counters["fastest_over_slowest"] = fastest / slowest;
    bench::reportThroughput<core::Serial>(state, static_cast<double>(count * n),
                                          bench::triadBytesPerElement * static_cast<double>(count * n));
}
#endif

template <class Backend>
void bmTriad(benchmark::State& state, bool lockstep) {
    constexpr bool parallel = Backend::hostParallel;
    std::size_t const n = bench::triadElements;
    bench::TriadArrays& arrays = bench::triadArrays();
    bench::RawArray const &a = arrays.a, &b = arrays.b, &c = arrays.c;
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

// The diffusion flux interp(K) grad(theta) at interior faces into f, then its divergence with zero boundary fluxes,
// column by column (levels contiguous). Scalars: the metric terms are arguments, not arrays.
struct Metric {
    double const* rdzc;
    double const* rdzf;
    double const* wBelow;
    double const* wAbove;
};
template <bool Scalars, bool OnePass = false>
void diffusionColumns(Metric const& m, double const* __restrict K, double const* __restrict th, double* __restrict out,
                      std::size_t columns, uint32_t n, double* __restrict f) {
    double const rc = m.rdzc[1], rf = m.rdzf[1], wb = m.wBelow[1], wa = m.wAbove[1];
    for (std::size_t c = 0; c < columns; ++c) {
        double const* const k_ = K + c * n;
        double const* const t = th + c * n;
        double* const o = out + c * n;
        if constexpr (OnePass) {
            auto face = [&](uint32_t k) {
                if constexpr (Scalars)
                    return (k_[k - 1] * wb + k_[k] * wa) * ((t[k] - t[k - 1]) * rf);
                else
                    return (k_[k - 1] * m.wBelow[k] + k_[k] * m.wAbove[k]) * ((t[k] - t[k - 1]) * m.rdzf[k]);
            };
            o[0] = (face(1) - 0.0) * (Scalars ? rc : m.rdzc[0]);
            for (uint32_t k = 1; k + 1 < n; ++k)
                o[k] = (face(k + 1) - face(k)) * (Scalars ? rc : m.rdzc[k]);
            o[n - 1] = (0.0 - face(n - 1)) * (Scalars ? rc : m.rdzc[n - 1]);
        } else if constexpr (Scalars) {
            for (uint32_t k = 1; k < n; ++k)
                f[k] = (k_[k - 1] * wb + k_[k] * wa) * ((t[k] - t[k - 1]) * rf);
            o[0] = (f[1] - 0.0) * rc;
            for (uint32_t k = 1; k + 1 < n; ++k)
                o[k] = (f[k + 1] - f[k]) * rc;
            o[n - 1] = (0.0 - f[n - 1]) * rc;
        } else {
            for (uint32_t k = 1; k < n; ++k)
                f[k] = (k_[k - 1] * m.wBelow[k] + k_[k] * m.wAbove[k]) * ((t[k] - t[k - 1]) * m.rdzf[k]);
            o[0] = (f[1] - 0.0) * m.rdzc[0];
            for (uint32_t k = 1; k + 1 < n; ++k)
                o[k] = (f[k + 1] - f[k]) * m.rdzc[k];
            o[n - 1] = (0.0 - f[n - 1]) * m.rdzc[n - 1];
        }
    }
}

void bmDiffusionLoads(benchmark::State& state, bool scalars, bool onePass, uint32_t n) {
    std::size_t const columns = (std::size_t{1} << 23) / n, points = columns * n;
    bench::RawArray K(points), th(points), out(points), ref(points);
    for (std::size_t i = 0; i < points; ++i) {
        th.get()[i] = 300.0 + 0.01 * static_cast<double>(i % 977);
        K.get()[i] = 1.0 + 0.001 * static_cast<double>(i % 613);
        out.get()[i] = 0.0;
        ref.get()[i] = 0.0;
    }
    double const dz = 20000.0 / n;
    std::vector<double> rdzc(n + 1, 1.0 / dz), rdzf(n + 1, 1.0 / dz), w(n + 1, 0.5), f(n + 1, 0.0);
    Metric const m{rdzc.data(), rdzf.data(), w.data(), w.data()};
    for (auto _ : state) {
        if (onePass) {
            if (scalars)
                diffusionColumns<true, true>(m, K.get(), th.get(), out.get(), columns, n, f.data());
            else
                diffusionColumns<false, true>(m, K.get(), th.get(), out.get(), columns, n, f.data());
        } else if (scalars) {
            diffusionColumns<true>(m, K.get(), th.get(), out.get(), columns, n, f.data());
        } else {
            diffusionColumns<false>(m, K.get(), th.get(), out.get(), columns, n, f.data());
        }
        benchmark::DoNotOptimize(out.get());
        benchmark::ClobberMemory();
    }
    diffusionColumns<false>(m, K.get(), th.get(), ref.get(), columns, n, f.data());
    for (std::size_t i = 0; i < points; ++i)
        if (!(out.get()[i] == ref.get()[i])) {
            state.SkipWithError("the two loops differ");
            return;
        }
    bench::reportThroughput<core::Serial>(state, static_cast<double>(points),
                                          bench::triadBytesPerElement * static_cast<double>(points));
}

// The triad column by column over 2^23 points: in one pass, or through a column buffer f (see the header).
void bmColumnTriad(benchmark::State& state, bool twoPass, uint32_t n) {
    std::size_t const columns = (std::size_t{1} << 23) / n, points = columns * n;
    bench::RawArray a(points), b(points), c(points), ref(points);
    bench::triadInit(a.get(), b.get(), c.get(), points, false);
    std::vector<double> buffer(n);
    double const s = bench::triadScalar;
    // The second pass subtracts a zero the compiler cannot see (the same bits): a plain copy would become a call to
    // memcpy, whose strategy changes with the length (glibc takes `rep movsb` from about 2 KiB), not the loop's shape.
    double zero = 0.0;
    benchmark::DoNotOptimize(zero);
    auto run = [&](double* __restrict out, double const* __restrict x, double const* __restrict y,
                   double* __restrict f) {
        for (std::size_t col = 0; col < columns; ++col) {
            double* const o = out + col * n;
            double const* const xc = x + col * n;
            double const* const yc = y + col * n;
            if (twoPass) {
                for (uint32_t k = 0; k < n; ++k)
                    f[k] = xc[k] + s * yc[k];
                for (uint32_t k = 0; k < n; ++k)
                    o[k] = f[k] - zero;
            } else {
                for (uint32_t k = 0; k < n; ++k)
                    o[k] = xc[k] + s * yc[k];
            }
        }
    };
    for (auto _ : state) {
        run(a.get(), b.get(), c.get(), buffer.data());
        benchmark::DoNotOptimize(a.get());
        benchmark::ClobberMemory();
    }
    bench::triadSerial(ref.get(), b.get(), c.get(), s, points);
    for (std::size_t i = 0; i < points; ++i)
        if (!(a.get()[i] == ref.get()[i])) {
            state.SkipWithError("differs from the triad");
            return;
        }
    bench::reportThroughput<core::Serial>(state, static_cast<double>(points),
                                          bench::triadBytesPerElement * static_cast<double>(points));
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
#if defined(STRATA_BENCH_TRIAD_PLACEMENT)
    bench::add("roofline/serial/triad_placement", bmTriadPlacement)->Iterations(8);
#endif
    for (uint32_t const n : {64u, 256u, 1024u}) {
        for (bool const onePass : {false, true})
            for (bool const scalars : {false, true})
                bench::add("roofline/serial/diffusion_loads/" + std::string(scalars ? "scalars" : "arrays") +
                               (onePass ? "_one_pass/" : "/") + std::to_string(n),
                           [=](benchmark::State& s) { bmDiffusionLoads(s, scalars, onePass, n); });
    }
    for (uint32_t const n : {32u, 64u, 128u, 256u, 1024u}) {
        for (bool const twoPass : {false, true})
            bench::add("roofline/serial/column_triad/" + std::string(twoPass ? "two_pass/" : "one_pass/") +
                           std::to_string(n),
                       [=](benchmark::State& s) { bmColumnTriad(s, twoPass, n); });
    }
    return 0;
}();

} // namespace
