// The core test kernels on the Cuda backend, compared with Serial. Compiled in the CUDA configuration; without a
// device it prints one line and reports "skipped" to CTest (exit code 77).
#include "tests/core/lockstep_kernels.hpp"
#include <strata/core/examples/nth_derivative.hpp>
#include <strata/core/memory.hpp>

#include <cstdio>
#include <cstring>
#include <vector>

using namespace strata;
namespace ls = strata::lockstep;

namespace {

int failures = 0;

void expect(bool ok, char const* what) {
    std::printf("%s: %s\n", ok ? "ok  " : "FAIL", what);
    if (!ok) ++failures;
}

template <class T>
bool same(std::vector<T> const& a, core::Buffer<T>& b) {
    b.toHost();
    return a.size() == b.size() && std::memcmp(a.data(), b.host().data(), a.size() * sizeof(T)) == 0;
}

void iota() {
    constexpr uint32_t n = 4096;
    std::vector<uint32_t> data(n, 0), writes(n, 0);
    ls::launch(core::Serial{}, ls::config<128>(16), test::IotaKernel{}, data.data(), writes.data(), n);
    core::Buffer<uint32_t> d(n, core::MemSpace::Cuda), w(n, core::MemSpace::Cuda);
    ls::launch(core::Cuda{}, ls::config<128>(16), test::IotaKernel{}, d.device(), w.device(), n);
    expect(same(data, d) && same(writes, w), "iota, block domain 128, half the blocks");
}

void reduceScan() {
    constexpr uint32_t n = 100, blocks = 6;
    std::vector<int64_t> in(n * blocks), sums(blocks), scans(n * blocks);
    for (uint32_t k = 0; k < in.size(); ++k)
        in[k] = static_cast<int64_t>((k * 7919u) % 1000u) - 500;
    ls::launch(core::Serial{}, ls::config(blocks), test::ReduceScanKernel{}, in.data(), sums.data(), scans.data());
    core::Buffer<int64_t> dIn(in.size(), core::MemSpace::Cuda), dSums(blocks, core::MemSpace::Cuda),
        dScans(in.size(), core::MemSpace::Cuda);
    std::copy(in.begin(), in.end(), dIn.host().begin());
    dIn.toDevice();
    ls::launch(core::Cuda{}, ls::config(blocks), test::ReduceScanKernel{}, dIn.device(), dSums.device(),
               dScans.device());
    expect(same(sums, dSums) && same(scans, dScans), "block reduction and scan, domain 100");
}

void nthDerivative() {
    constexpr uint32_t rows = 100, cols = 1000;
    std::vector<double> m(rows * cols);
    for (uint32_t k = 0; k < m.size(); ++k)
        m[k] = static_cast<double>((k * 2654435761u) % 1000u) / 1000.0;
    core::Buffer<double> dm(m.size(), core::MemSpace::Cuda), dr(m.size(), core::MemSpace::Cuda);
    std::copy(m.begin(), m.end(), dm.host().begin());
    dm.toDevice();
    bool ok = true;
    for (int n = 1; n <= 8; ++n) {
        std::vector<double> ref(m.size());
        examples::runNthDerivative<rows>(core::Serial{}, n, examples::NthDerivativeForm::Naive, m.data(), ref.data(),
                                         cols);
        for (auto form : {examples::NthDerivativeForm::Naive, examples::NthDerivativeForm::Shared,
                          examples::NthDerivativeForm::TwoLevel}) {
            examples::runNthDerivative<rows>(core::Cuda{}, n, form, dm.device(), dr.device(), cols);
            ok = ok && same(ref, dr);
        }
    }
    expect(ok, "n-th derivative, three forms, n = 1..8, bit-identical to Serial");
}

} // namespace

int main() {
    int const devices = core::cudaDeviceCount();
    if (devices == 0) {
        std::printf("SKIP: no CUDA device visible; the Cuda backend was compiled and linked but cannot run here\n");
        return 77;
    }
    iota();
    reduceScan();
    nthDerivative();
    return failures == 0 ? 0 : 1;
}
