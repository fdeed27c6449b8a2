// The column solvers (operators/column/) on the Cuda backend, compared with Serial: Thomas and cyclic reduction
// bit-identical to the same variant on Serial (same operations in the same order, --fmad=false, IEEE division), the
// integrals bit-identical, hydrostatic pressure to 1e-14 (CUDA's exp is within 1 ulp, not always glibc's rounding);
// the band solvers (batched tridiagonal, pentadiagonal, 2x2 block) bit-identical to Serial variant by variant, and
// their pivot check naming the same column and level.
// Without a device it prints one line and reports "skipped" to CTest (exit code 77).
#include <strata/operators/column/band.hpp>
#include <strata/operators/column/integrals.hpp>
#include <strata/operators/column/tridiagonal.hpp>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <span>
#include <string>
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

// Fields in host and device pairs, for the band solvers' systems: matrix bands, right-hand sides, solutions.
struct Bands {
    std::vector<std::unique_ptr<Pair>> pairs;
    Bands(std::shared_ptr<Grid const> const& grid, uint32_t cols, int count) {
        for (int i = 0; i < count; ++i)
            pairs.push_back(std::make_unique<Pair>(grid, cols));
    }
    Field<double, Center>& at(int i, bool device) { return device ? pairs[i]->onDevice : pairs[i]->onHost; }
    void set(int i, uint32_t col, uint32_t k, double v) { pairs[i]->set(col, k, v); }
    void upload() {
        for (auto& p : pairs)
            p->upload();
    }
    bool same(int first, int count) {
        bool ok = true;
        for (int i = first; i < first + count; ++i)
            ok = ok && ::same(pairs[i]->onHost, pairs[i]->onDevice);
        return ok;
    }
};

// Row (col, k) strictly diagonally dominant: bands `off` get values in (-1, 1), band `diag` their sum plus 0.5.
void dominantRow(Bands& b, std::vector<int> const& off, int diag, uint32_t col, uint32_t k) {
    double sum = 0;
    for (int i : off) {
        double const v = std::sin(0.37 * k + 1.3 * col + i);
        b.set(i, col, k, v);
        sum += std::fabs(v);
    }
    b.set(diag, col, k, (sum + 0.5) * (k % 3 == 0 ? -1 : 1));
}

// Runs `solve(backend, onDevice, variant, options)` on Serial and Cuda: the same variant ran and the solutions (pairs
// firstX .. firstX + countX - 1) are bit-identical; then, for n >= 7, with the matrix made singular by `breakRow`, both
// throw the same pivot error.
template <class Solve, class Break>
void compareBand(Bands& b, int firstX, int countX, uint32_t n, Solve const& solve, Break const& breakRow, bool& thomas,
                 bool& cr, bool& check) {
    for (Tridiag variant : {Tridiag::Thomas, Tridiag::CyclicReduction}) {
        Tridiag const onHost = solve(core::Serial{}, false, variant, BandOptions{});
        Tridiag const onDevice = solve(core::Cuda{}, true, variant, BandOptions{});
        (variant == Tridiag::Thomas ? thomas : cr) &= onHost == onDevice && b.same(firstX, countX);
    }
    if (n < 7) return;
    breakRow(3, 5);
    b.upload();
    BandOptions checked;
    checked.check = true;
    for (Tridiag variant : {Tridiag::Thomas, Tridiag::CyclicReduction}) {
        std::string messages[2];
        for (bool device : {false, true})
            try {
                if (device)
                    solve(core::Cuda{}, true, variant, checked);
                else
                    solve(core::Serial{}, false, variant, checked);
            } catch (Error const& e) {
                messages[device] = e.what();
            }
        check &= !messages[0].empty() && messages[0] == messages[1] &&
                 messages[0].find("column 3 at level") != std::string::npos;
    }
}

void bandSolvers() {
    bool thomas = true, cr = true, check = true;
    for (uint32_t n : {1u, 2u, 3u, 7u, 64u, 300u, 1000u}) {
        auto grid = std::make_shared<Grid const>(Grid::uniform(n, 1000.0));
        uint32_t const cols = 70;
        double const nan = NAN; // outside the matrix: never read

        // Tridiagonal, a matrix per column, three right-hand sides: a, b, c = 0..2, d = 3..5, x = 6..8.
        Bands t(grid, cols, 9);
        for (uint32_t col = 0; col < cols; ++col)
            for (uint32_t k = 0; k < n; ++k) {
                dominantRow(t, {0, 2}, 1, col, k);
                for (int j = 3; j < 6; ++j)
                    t.set(j, col, k, std::sin(0.01 * k * k + col + j));
            }
        for (uint32_t col = 0; col < cols; ++col) {
            t.set(0, col, 0, nan);
            t.set(2, col, n - 1, nan);
        }
        t.upload();
        compareBand(
            t, 6, 3, n,
            [&](auto const& backend, bool dev, Tridiag variant, BandOptions const& options) {
                Field<double, Center> const* d[] = {&t.at(3, dev), &t.at(4, dev), &t.at(5, dev)};
                Field<double, Center>* x[] = {&t.at(6, dev), &t.at(7, dev), &t.at(8, dev)};
                return solveTridiagonalBatch(backend, t.at(0, dev), t.at(1, dev), t.at(2, dev), std::span(d),
                                             std::span(x), variant, options);
            },
            [&](uint32_t col, uint32_t k) {
                for (int i = 0; i < 3; ++i)
                    t.set(i, col, k, 0);
            },
            thomas, cr, check);

        // Pentadiagonal: e, a, b, c, f = 0..4, d = 5, x = 6.
        Bands p(grid, cols, 7);
        for (uint32_t col = 0; col < cols; ++col)
            for (uint32_t k = 0; k < n; ++k) {
                dominantRow(p, {0, 1, 3, 4}, 2, col, k);
                p.set(5, col, k, std::cos(0.02 * k + col));
                if (k < 2) p.set(0, col, k, nan);
                if (k < 1) p.set(1, col, k, nan);
                if (k + 1 >= n) p.set(3, col, k, nan);
                if (k + 2 >= n) p.set(4, col, k, nan);
            }
        p.upload();
        compareBand(
            p, 6, 1, n,
            [&](auto const& backend, bool dev, Tridiag variant, BandOptions const& options) {
                return solvePentadiagonal(backend, p.at(0, dev), p.at(1, dev), p.at(2, dev), p.at(3, dev), p.at(4, dev),
                                          p.at(5, dev), p.at(6, dev), variant, options);
            },
            [&](uint32_t col, uint32_t k) {
                for (int i = 0; i < 5; ++i)
                    p.set(i, col, k, 0);
            },
            thomas, cr, check);

        // 2x2 block tridiagonal: A, B, C = 0..3, 4..7, 8..11 (uu, uv, vu, vv), du, dv = 12, 13, xu, xv = 14, 15.
        Bands q(grid, cols, 16);
        for (uint32_t col = 0; col < cols; ++col)
            for (uint32_t k = 0; k < n; ++k) {
                dominantRow(q, {0, 1, 5, 8, 9}, 4, col, k);
                dominantRow(q, {2, 3, 6, 10, 11}, 7, col, k);
                q.set(12, col, k, std::sin(0.03 * k + col));
                q.set(13, col, k, std::cos(0.05 * k * col));
                for (int i = 0; i < 4; ++i) {
                    if (k == 0) q.set(i, col, k, nan);
                    if (k + 1 == n) q.set(8 + i, col, k, nan);
                }
            }
        q.upload();
        compareBand(
            q, 14, 2, n,
            [&](auto const& backend, bool dev, Tridiag variant, BandOptions const& options) {
                auto block = [&](int i) {
                    return Block2x2<double>{q.at(i, dev), q.at(i + 1, dev), q.at(i + 2, dev), q.at(i + 3, dev)};
                };
                return solveBlockTridiagonal(backend, block(0), block(4), block(8), q.at(12, dev), q.at(13, dev),
                                             q.at(14, dev), q.at(15, dev), variant, options);
            },
            [&](uint32_t col, uint32_t k) {
                for (int i : {0, 1, 4, 5, 8, 9}) // row u
                    q.set(i, col, k, 0);
            },
            thomas, cr, check);
    }
    expect(thomas, "band solvers, Thomas: Cuda bit-identical to Serial, n = 1 .. 1000");
    expect(cr, "band solvers, cyclic reduction: Cuda bit-identical to Serial (the same fallback to Thomas)");
    expect(check, "band solvers: a singular system throws the same pivot error on Cuda as on Serial");
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
    bandSolvers();
    integrals();
    return failures == 0 ? 0 : 1;
}
