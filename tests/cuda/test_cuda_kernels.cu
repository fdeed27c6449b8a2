// The core test kernels on the Cuda backend, compared with Serial. Compiled in the CUDA configuration; without a
// device it prints one line and reports "skipped" to CTest (exit code 77).
#include "tests/core/lockstep_kernels.hpp"
#include <strata/core/examples/nth_derivative.hpp>
#include <strata/core/math.hpp>
#include <strata/core/memory.hpp>
#include <strata/core/threaded.hpp>

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

// Every lockstep collective and two threaded ones over 100 levels (a block of four warps, the last one partly idle):
// the same bits as Serial, which runs them with one worker.
struct CollectivesKernel {
    static constexpr uint32_t blockDomSize = 100;
    struct Shared {
        double values[100];
        bool flags[100];
    };
    template <class Worker>
    STRATA_HD void operator()(Worker const& worker, double const* x, double* scalars, double* scans) const {
        auto values = ls::sharedArray(worker, &Shared::values);
        auto flags = ls::sharedArray(worker, &Shared::flags);
        auto forEach = ls::makeForEach(worker);
        uint32_t const c = worker.blockDomIdx();
        auto v = forEach([&](uint32_t k) { return x[c * 100 + k]; });
        auto positive = forEach([&](uint32_t k) { return x[c * 100 + k] > 0; });
        double const total = ls::sum(forEach, values, v);
        double const smallest = ls::minimum(forEach, values, v);
        double const largest = ls::maximum(forEach, values, v);
        bool const any = ls::anyOf(forEach, flags, positive);
        bool const all = ls::allOf(forEach, flags, positive);
        double const picked = ls::broadcast(forEach, values, v, 37);
        auto inclusive = ls::inclusiveScan(forEach, values, v, ls::Plus{});
        auto exclusive = ls::exclusiveScan(forEach, values, v, 0.0, ls::Plus{});
        ls::makeMaster(worker)([&] {
            double const r[6] = {total, smallest, largest, any ? 1.0 : 0.0, all ? 1.0 : 0.0, picked};
            for (uint32_t i = 0; i < 6; ++i)
                scalars[c * 6 + i] = r[i];
        });
        forEach(
            [&](uint32_t k, double in, double ex) { scans[(2 * c) * 100 + k] = in, scans[(2 * c + 1) * 100 + k] = ex; },
            inclusive, exclusive);
    }
};

struct ThreadedSum {
    double const* x;
    double* out;
    template <class Ctx>
    STRATA_HD void operator()(Ctx& ctx, uint32_t c) const {
        auto scratch = ctx.template staticSharedArray<double, 100>();
        double const* col = x + c * 100;
        double* dst = out;
        struct Value {
            double const* col;
            STRATA_HD double operator()(uint32_t k) const { return col[k]; }
        };
        struct Emit {
            double* dst;
            uint32_t c;
            STRATA_HD void operator()(uint32_t k, double s) const { dst[c * 100 + k] = s; }
        };
        double const total = threaded::reduce(ctx, scratch, Value{col}, ls::Plus{});
        threaded::inclusiveScan(ctx, scratch, Value{col}, Emit{dst, c}, ls::Plus{});
        if (ctx.worker().workerIdx() == 0) dst[c * 100] += 0.0 * total; // keeps total; the scan's element 0 stays
    }
};

template <class Backend>
void runThreadedSum(Backend const& backend, double const* x, double* out, uint32_t cols) {
    threaded::threaded(backend, threaded::independent(cols),
                       threaded::interdependent<100>(ls::collectiveBytes<double, 100>()), ThreadedSum{x, out});
}

void collectives() {
    constexpr uint32_t blocks = 6;
    std::vector<double> in(100 * blocks), scalars(6 * blocks), scans(2 * 100 * blocks), tscan(100 * blocks);
    for (uint32_t k = 0; k < in.size(); ++k)
        in[k] = (static_cast<double>((k * 2654435761u) % 2001u) - 1000.0) * (k % 7 == 0 ? 1e6 : 1e-3);
    ls::launch(core::Serial{}, ls::config(blocks), CollectivesKernel{}, in.data(), scalars.data(), scans.data());
    runThreadedSum(core::Serial{}, in.data(), tscan.data(), blocks);
    core::Buffer<double> dIn(in.size(), core::MemSpace::Cuda), dScalars(scalars.size(), core::MemSpace::Cuda),
        dScans(scans.size(), core::MemSpace::Cuda), dTscan(tscan.size(), core::MemSpace::Cuda);
    std::copy(in.begin(), in.end(), dIn.host().begin());
    dIn.toDevice();
    ls::launch(core::Cuda{}, ls::config(blocks), CollectivesKernel{}, dIn.device(), dScalars.device(), dScans.device());
    runThreadedSum(core::Cuda{}, dIn.device(), dTscan.device(), blocks);
    expect(same(scalars, dScalars) && same(scans, dScans) && same(tscan, dTscan),
           "block collectives (lockstep and threaded), domain 100, bit-identical to Serial");
}

// strata::math on the device: exp, log, pow with the model's exponents, sin and cos of each argument.
struct ElementaryFunctionsKernel {
    static constexpr uint32_t functions = 6;
    template <class W>
    STRATA_HD void operator()(W const& worker, double const* x, double* out, uint32_t n) const {
        constexpr uint32_t dom = W::blockDomSize();
        for (uint32_t b = worker.blockDomIdx(); b * dom < n; b += worker.gridDomSize()) {
            ls::makeForEach(worker)([&](uint32_t i) {
                uint32_t const g = b * dom + i;
                if (g < n) {
                    double const v = x[g];
                    double const a = math::sqrt(v * v); // |v|, positive arguments of log and pow
                    double* o = out + functions * g;
                    o[0] = math::exp(v);
                    o[1] = math::log(a);
                    o[2] = math::pow(a, 0.2857142857142857);
                    o[3] = math::pow(a, 0.1364);
                    o[4] = math::sin(v);
                    o[5] = math::cos(v);
                }
            });
        }
    }
};

void elementaryFunctions() {
    constexpr uint32_t n = 20000;
    std::vector<double> x(n), out(ElementaryFunctionsKernel::functions * n);
    for (uint32_t k = 0; k < n; ++k) { // [-745, 709] and a quarter of them in [-1, 1]
        double const u = static_cast<double>((k * 2654435761u) % 1000003u) / 1000003.0;
        x[k] = k % 4 == 0 ? 2.0 * u - 1.0 : -745.0 + 1454.0 * u;
    }
    x[0] = 0.0;
    x[1] = -0.0;
    x[2] = 4.9406564584124654e-324;
    ls::launch(core::Serial{}, ls::config<128>(16), ElementaryFunctionsKernel{}, x.data(), out.data(), n);
    core::Buffer<double> dX(n, core::MemSpace::Cuda), dOut(out.size(), core::MemSpace::Cuda);
    std::copy(x.begin(), x.end(), dX.host().begin());
    dX.toDevice();
    ls::launch(core::Cuda{}, ls::config<128>(16), ElementaryFunctionsKernel{}, dX.device(), dOut.device(), n);
    expect(same(out, dOut), "strata::math exp, log, pow, sin, cos: bit-identical to Serial");
}

// threaded over two independent axes and an interdependent one: each (i, j) column less its mean.
struct TwoAxesAnomaly {
    uint32_t ni;
    double const* in;
    double* out;
    struct Shared {
        double column[30];
        double mean;
    };
    template <class Ctx>
    STRATA_HD void operator()(Ctx& ctx, uint32_t i, uint32_t j) const {
        auto column = ctx.sharedArray(&Shared::column);
        auto mean = ctx.sharedVar(&Shared::mean);
        uint32_t const base = (j * ni + i) * 30;
        ctx.syncInterdependent([&](uint32_t r) { column[r] = in[base + r]; });
        ctx.syncInterdependent([&](uint32_t r) {
            if (r == 0) {
                double s = 0;
                for (uint32_t q = 0; q < 30; ++q)
                    s += column[q];
                mean[0] = s / 30;
            }
        });
        ctx.syncInterdependent([&](uint32_t r) { out[base + r] = in[base + r] - mean[0]; });
    }
};

template <class Backend>
void runTwoAxes(Backend const& backend, double const* in, double* out, uint32_t coarsen = 1) {
    threaded::threaded(backend, threaded::independent(6, 7), threaded::interdependent<30>(), threaded::coarsen(coarsen),
                       TwoAxesAnomaly{6, in, out});
}

// A plain loop with the knobs: 64 indices per block, 3 runs per block.
struct Square {
    double const* in;
    double* out;
    STRATA_HD void operator()(uint32_t i) const { out[i] = in[i] * in[i]; }
};

void threadedTwoAxes() {
    std::vector<double> in(6 * 7 * 30), out(in.size());
    for (uint32_t k = 0; k < in.size(); ++k)
        in[k] = static_cast<double>((k * 2654435761u) % 1001u) * 1e-3;
    runTwoAxes(core::Serial{}, in.data(), out.data());
    core::Buffer<double> dIn(in.size(), core::MemSpace::Cuda), dOut(out.size(), core::MemSpace::Cuda);
    std::copy(in.begin(), in.end(), dIn.host().begin());
    dIn.toDevice();
    runTwoAxes(core::Cuda{}, dIn.device(), dOut.device());
    expect(same(out, dOut), "threaded over independent(6, 7) with an interdependent axis: bit-identical to Serial");
    runTwoAxes(core::Cuda{}, dIn.device(), dOut.device(), 4);
    expect(same(out, dOut), "the same with coarsen(4): bit-identical to Serial");

    std::vector<double> squares(in.size());
    threaded::threaded(core::Serial{}, threaded::independent(uint32_t(in.size())), Square{in.data(), squares.data()});
    threaded::threaded(core::Cuda{}, threaded::independent(uint32_t(in.size())), threaded::blockSize<64>().coarsen(3),
                       Square{dIn.device(), dOut.device()});
    expect(same(squares, dOut), "a plain loop with blockSize<64>().coarsen(3): every index, bit-identical to Serial");
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
    collectives();
    elementaryFunctions();
    threadedTwoAxes();
    return failures == 0 ? 0 : 1;
}
