// The triad a[i] = b[i] + 3 c[i] with plain and with streaming (non-temporal) stores, at array sizes from 128 KiB to
// 128 MiB: where the arrays leave the caches, and what streaming stores gain there (docs/performance.md, "Streaming
// stores"). Standalone, x86-64 only:
//   g++ -O2 -o /tmp/streaming_triad docs/experiments/streaming_triad.cpp && /tmp/streaming_triad
#include <emmintrin.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>

namespace {

double* allocate(std::size_t n) {
    void* p = nullptr;
    if (posix_memalign(&p, std::size_t{2} << 20, n * sizeof(double)) != 0) std::abort();
    auto* d = static_cast<double*>(p);
    for (std::size_t i = 0; i < n; ++i)
        d[i] = 1.0 + 1e-9 * static_cast<double>(i % 1000);
    return d;
}

template <class F>
double best(F&& f, int repetitions) {
    double b = 1e30;
    for (int r = 0; r < repetitions; ++r) {
        auto const t0 = std::chrono::steady_clock::now();
        f();
        b = std::min(b, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    return b;
}

__attribute__((noinline)) void triad(double* __restrict a, double const* __restrict b, double const* __restrict c,
                                     std::size_t n) {
    for (std::size_t i = 0; i < n; ++i)
        a[i] = b[i] + 3.0 * c[i];
}

__attribute__((noinline)) void triadStreaming(double* __restrict a, double const* __restrict b,
                                              double const* __restrict c, std::size_t n) {
    __m128d const three = _mm_set1_pd(3.0);
    for (std::size_t i = 0; i < n; i += 2)
        _mm_stream_pd(&a[i], _mm_add_pd(_mm_load_pd(&b[i]), _mm_mul_pd(three, _mm_load_pd(&c[i]))));
    _mm_sfence();
}

} // namespace

int main() {
    for (int e = 14; e <= 24; ++e) {
        std::size_t const n = std::size_t{1} << e;
        double *a = allocate(n), *b = allocate(n), *c = allocate(n);
        int const repetitions = std::max(5, static_cast<int>((std::size_t{1} << 27) / n));
        double const plain = best([&] { triad(a, b, c, n); }, repetitions);
        double const streaming = best([&] { triadStreaming(a, b, c, n); }, repetitions);
        double const bytes = 24.0 * static_cast<double>(n);
        std::printf("arrays of %6.1f MB: triad %5.1f GB/s, with streaming stores %5.1f GB/s\n", n * 8e-6,
                    bytes / plain * 1e-9, bytes / streaming * 1e-9);
        std::free(a);
        std::free(b);
        std::free(c);
    }
}
