// The column solvers (operators/column/) on the Cuda backend, compared with Serial: Thomas and cyclic reduction
// bit-identical to the same variant on Serial (same operations in the same order, --fmad=false, IEEE division), the
// integrals bit-identical, hydrostatic pressure to 1e-14 (CUDA's exp is within 1 ulp, not always glibc's rounding).
// Without a device it prints one line and reports "skipped" to CTest (exit code 77).
#include <strata/operators/column/integrals.hpp>
#include <strata/operators/column/tridiagonal.hpp>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

using namespace strata;
using namespace strata::ops;

namespace {

int failures = 0;

void expect(bool ok, char const* what) {
    std::printf("%s: %s\n", ok ? "ok  " : "FAIL", what);
    if (!ok) ++failures;
}

// The same values in a host field and a device field (copied to the device).
struct Pair {
    Field<double, Center> onHost, onDevice;
    Pair(std::shared_ptr<Grid const> const& grid, uint32_t cols)
        : onHost(grid, cols, core::MemSpace::Host), onDevice(grid, cols, core::MemSpace::Cuda) {}
    void set(uint32_t col, uint32_t k, double v) { onHost.at(col, k) = onDevice.at(col, k) = v; }
    void upload() { onDevice.toDevice(); }
};

template <class S>
bool same(Field<double, S> const& host, Field<double, S>& device) {
    device.toHost();
    for (uint32_t c = 0; c < host.columns(); ++c)
        if (std::memcmp(host.column(c).data(), device.column(c).data(), host.levels() * sizeof(double)) != 0)
            return false;
    return true;
}

void tridiagonal() {
    bool thomasSame = true, crSame = true, crRan = true;
    for (uint32_t n : {1u, 2u, 3u, 64u, 127u, 128u, 300u, 1000u}) {
        auto grid = std::make_shared<Grid const>(Grid::uniform(n, 1000.0));
        uint32_t const cols = 70;
        Pair a(grid, cols), b(grid, cols), c(grid, cols), d(grid, cols);
        for (uint32_t col = 0; col < cols; ++col)
            for (uint32_t k = 0; k < n; ++k) {
                double const lo = std::sin(0.37 * k + col), hi = std::cos(0.11 * k * col + 1);
                a.set(col, k, k == 0 ? NAN : lo); // outside the matrix: never read
                c.set(col, k, k + 1 == n ? NAN : hi);
                b.set(col, k, (std::fabs(lo) + std::fabs(hi) + 0.5) * (k % 3 == 0 ? -1 : 1));
                d.set(col, k, std::sin(0.01 * k * k + col));
            }
        for (Pair* p : {&a, &b, &c, &d})
            p->upload();
        Field<double, Center> xHost(grid, cols, core::MemSpace::Host), xDevice(grid, cols, core::MemSpace::Cuda);
        for (Tridiag variant : {Tridiag::Thomas, Tridiag::CyclicReduction}) {
            Tridiag const onHost =
                solveTridiagonal(core::Serial{}, a.onHost, b.onHost, c.onHost, d.onHost, xHost, variant);
            Tridiag const onDevice =
                solveTridiagonal(core::Cuda{}, a.onDevice, b.onDevice, c.onDevice, d.onDevice, xDevice, variant);
            bool const ok = onHost == onDevice && same(xHost, xDevice);
            (variant == Tridiag::Thomas ? thomasSame : crSame) &= ok;
            if (variant == Tridiag::CyclicReduction && n <= 768) crRan &= onDevice == Tridiag::CyclicReduction;
        }
        Tridiag const automatic =
            solveTridiagonal(core::Cuda{}, a.onDevice, b.onDevice, c.onDevice, d.onDevice, xDevice, Tridiag::Auto);
        crRan &= automatic == (n <= 768 ? Tridiag::CyclicReduction : Tridiag::Thomas);
    }
    expect(thomasSame, "tridiagonal, Thomas: Cuda bit-identical to Serial, n = 1 .. 1000");
    expect(crSame, "tridiagonal, cyclic reduction: Cuda bit-identical to Serial (n = 1000 falls back to Thomas)");
    expect(crRan, "tridiagonal: CyclicReduction and Auto run cyclic reduction on Cuda when the column fits");
}

void integrals() {
    auto grid =
        std::make_shared<Grid const>(Grid::stretched(90, 30000.0, [](double s) { return s * (0.4 + 0.6 * s); }));
    uint32_t const cols = 300;
    Pair t(grid, cols);
    for (uint32_t col = 0; col < cols; ++col)
        for (uint32_t k = 0; k < 90; ++k)
            t.set(col, k, 290.0 - 0.0065 * grid->centers()[k] + 0.01 * col);
    t.upload();
    auto const host = core::MemSpace::Host;
    auto const dev = core::MemSpace::Cuda;
    Field<double, Face> upHost(grid, cols, host), upDevice(grid, cols, dev), downHost(grid, cols, host),
        downDevice(grid, cols, dev), pfHost(grid, cols, host), pfDevice(grid, cols, dev);
    Field<double, Center> pcHost(grid, cols, host), pcDevice(grid, cols, dev);
    core::Buffer<double> totalHost(cols, host), totalDevice(cols, dev), maxHost(cols, host), maxDevice(cols, dev);

    columnIntegral(core::Serial{}, t.onHost, totalHost);
    columnIntegral(core::Cuda{}, t.onDevice, totalDevice);
    columnIntegralFromBottom(core::Serial{}, t.onHost, upHost, 1.0);
    columnIntegralFromBottom(core::Cuda{}, t.onDevice, upDevice, 1.0);
    columnIntegralFromTop(core::Serial{}, t.onHost, downHost, 2.0);
    columnIntegralFromTop(core::Cuda{}, t.onDevice, downDevice, 2.0);
    columnMax(core::Serial{}, t.onHost, maxHost);
    columnMax(core::Cuda{}, t.onDevice, maxDevice);
    totalDevice.toHost();
    maxDevice.toHost();
    bool const sums = std::memcmp(totalHost.host().data(), totalDevice.host().data(), cols * sizeof(double)) == 0 &&
                      std::memcmp(maxHost.host().data(), maxDevice.host().data(), cols * sizeof(double)) == 0;
    expect(sums && same(upHost, upDevice) && same(downHost, downDevice),
           "column integrals and reductions: Cuda bit-identical to Serial");

    hydrostaticPressure(core::Serial{}, t.onHost, 1e5, 9.81, 287.0, pfHost, pcHost);
    hydrostaticPressure(core::Cuda{}, t.onDevice, 1e5, 9.81, 287.0, pfDevice, pcDevice);
    pfDevice.toHost();
    pcDevice.toHost();
    double worst = 0;
    for (uint32_t col = 0; col < cols; ++col) {
        for (uint32_t k = 0; k <= 90; ++k)
            worst = std::fmax(worst, std::fabs(pfDevice.at(col, k) / pfHost.at(col, k) - 1));
        for (uint32_t k = 0; k < 90; ++k)
            worst = std::fmax(worst, std::fabs(pcDevice.at(col, k) / pcHost.at(col, k) - 1));
    }
    std::printf("hydrostatic pressure: largest relative difference Cuda vs Serial %.2e\n", worst);
    expect(worst < 1e-14, "hydrostatic pressure: Cuda within 1e-14 of Serial");
}

} // namespace

int main() {
    if (core::cudaDeviceCount() == 0) {
        std::printf("SKIP: no CUDA device visible; the column solvers were compiled for Cuda but cannot run here\n");
        return 77;
    }
    tridiagonal();
    integrals();
    return failures == 0 ? 0 : 1;
}
