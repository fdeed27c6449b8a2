// strata-bench's GPU suites, in the CUDA configuration only (they register themselves when a device is seen):
//   roofline/cuda/triad                 a[i] = b[i] + s c[i] as a plain CUDA kernel (grid-stride loop): the ceiling
//   roofline/cuda/triad_lockstep        the same loop through the lockstep layer, threaded(Cuda, independent(n), body)
//   operators/cuda/<expression>/<engine>/<levels>
//                                       the operators suite's expressions (bench_expressions.hpp) on Cuda, engines
//                                       direct, shmem and auto, levels 16, 64, 128, 256, 1024; and shmem_items<N>:
//                                       Shmem with N = 256, 512, 1024, 2048 column levels per block of 256 workers
//                                       (EngineOptions::shmemBlockItems), levels 16, 64, 256
//   column/cuda/implicit_diffusion_{model,matrix,assembly}/<levels>
//                                       the implicit diffusion step from the model's fused kernel and from the
//                                       operator's matrix (bench_implicit.hpp), levels 30 and 64; the two paths agree
//                                       to 1e-12 relative on the device (checked before timing)
// Sizes: the triad 3 arrays of 2^25 doubles (256 MiB each), the operators 2^24 points a field (128 MiB, over twice
// the 50-60 MB L2 of an H100 or H200; columns = 2^24 / levels), so that no field stays in L2 between passes.
// Timing: CUDA events around each iteration's call (Google Benchmark's manual time): the device's time plus what
// the call does on the host before its launch (planning; Nsight Compute's kernel times leave it out). The
// byte model is the CPU suites' (minimum bytes, 8 per value), and pct_of_triad is against the plain triad kernel's
// best of 20 passes, measured once in the same process (deviceTriad).
// Every operator result is compared bit for bit with Serial Direct on the host after the timed loop: an error if
// any bit differs.
#include <strata/app/bench/bench_common.hpp>
#include <strata/app/bench/bench_expressions.hpp>
#include <strata/app/bench/bench_implicit.hpp>
#include <strata/core/threaded.hpp>

#include <benchmark/benchmark.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>

namespace {

using namespace strata;
using namespace strata::ops;
using bench::Expr;

constexpr uint32_t gpuPoints = 1u << 24;
constexpr std::size_t gpuTriadElements = std::size_t{1} << 25;

void check(cudaError_t err, char const* what) {
    if (err != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(err));
}

struct DeviceArray {
    double* p = nullptr;
    explicit DeviceArray(std::size_t n) { check(cudaMalloc(&p, n * sizeof(double)), "cudaMalloc"); }
    ~DeviceArray() { cudaFree(p); }
    DeviceArray(DeviceArray const&) = delete;
    DeviceArray& operator=(DeviceArray const&) = delete;
};

// Device time of what is launched between start() and seconds().
struct EventTimer {
    cudaEvent_t begin{}, end{};
    EventTimer() {
        check(cudaEventCreate(&begin), "cudaEventCreate");
        check(cudaEventCreate(&end), "cudaEventCreate");
    }
    ~EventTimer() {
        cudaEventDestroy(begin);
        cudaEventDestroy(end);
    }
    void start() { check(cudaEventRecord(begin), "cudaEventRecord"); }
    double seconds() {
        check(cudaEventRecord(end), "cudaEventRecord");
        check(cudaEventSynchronize(end), "cudaEventSynchronize");
        float ms = 0;
        check(cudaEventElapsedTime(&ms, begin, end), "cudaEventElapsedTime");
        return 1e-3 * ms;
    }
};

__global__ void triadInitKernel(double* a, double* b, double* c, std::size_t n) {
    for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n;
         i += std::size_t{gridDim.x} * blockDim.x) {
        a[i] = 0.0;
        b[i] = 1.0 + 1e-9 * static_cast<double>(i);
        c[i] = 2.0 - 1e-9 * static_cast<double>(i);
    }
}
__global__ void triadKernel(double* __restrict__ a, double const* __restrict__ b, double const* __restrict__ c,
                            double s, std::size_t n) {
    for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n;
         i += std::size_t{gridDim.x} * blockDim.x)
        a[i] = b[i] + s * c[i];
}
using bench::TriadBody;

struct Triad {
    DeviceArray a{gpuTriadElements}, b{gpuTriadElements}, c{gpuTriadElements};
    Triad() {
        triadInitKernel<<<4096, 256>>>(a.p, b.p, c.p, gpuTriadElements);
        check(cudaDeviceSynchronize(), "triad init");
    }
    void run(bool lockstep) const {
        if (lockstep)
            threaded::threaded(core::Cuda{}, threaded::independent(static_cast<uint32_t>(gpuTriadElements)),
                               TriadBody{a.p, b.p, c.p, bench::triadScalar});
        else
            triadKernel<<<4096, 256>>>(a.p, b.p, c.p, bench::triadScalar, gpuTriadElements);
    }
};

// The device's triad bandwidth, bytes/s: the best of 20 plain-kernel passes, measured once.
double deviceTriad() {
    static double const bw = [] {
        Triad t;
        EventTimer timer;
        double best = 0;
        for (int pass = 0; pass < 20; ++pass) {
            timer.start();
            t.run(false);
            best = std::max(best, bench::triadBytesPerElement * gpuTriadElements / timer.seconds());
        }
        return best;
    }();
    return bw;
}

void report(benchmark::State& state, double points, double bytes) {
    using benchmark::Counter;
    double const triad = deviceTriad();
    state.counters["level_updates_per_second"] = Counter(points, Counter::kIsIterationInvariantRate);
    state.counters["bytes_per_second"] = Counter(bytes, Counter::kIsIterationInvariantRate);
    state.counters["pct_of_triad"] = Counter(100.0 * bytes / triad, Counter::kIsIterationInvariantRate);
    state.counters["triad_bytes_per_second"] = triad;
    state.counters["min_bytes_per_point"] = points > 0 ? bytes / points : 0.0;
}

void bmTriad(benchmark::State& state, bool lockstep) {
    Triad t;
    EventTimer timer;
    for (auto _ : state) {
        timer.start();
        t.run(lockstep);
        state.SetIterationTime(timer.seconds());
    }
    report(state, static_cast<double>(gpuTriadElements), bench::triadBytesPerElement * gpuTriadElements);
}

// The operators suite's fields, in one memory space.
template <core::MemSpace Space>
struct FieldSet {
    Field<double, Center> theta, kappa, q, outC;
    Field<double, Face> w, outF;
    FieldSet(std::shared_ptr<Grid const> const& grid, uint32_t cols)
        : theta(grid, cols, Space), kappa(grid, cols, Space), q(grid, cols, Space), outC(grid, cols, Space),
          w(grid, cols, Space), outF(grid, cols, Space) {}
};

template <class T, class S>
void copyColumns(Field<T, S>& to, Field<T, S> const& from) {
    for (uint32_t c = 0; c < from.columns(); ++c)
        std::memcpy(&to.at(c, 0), from.column(c).data(), from.levels() * sizeof(T));
}
template <class T, class S>
bool sameBits(Field<T, S> const& a, Field<T, S> const& b) {
    for (uint32_t c = 0; c < a.columns(); ++c)
        if (std::memcmp(a.column(c).data(), b.column(c).data(), a.levels() * sizeof(T)) != 0) return false;
    return true;
}

// One level count's fields on the host (the Serial reference) and on the device, with the same values; kept while
// consecutive benchmarks use the same level count, with the reference of the last expression evaluated.
struct GpuData {
    uint32_t levels, columns;
    std::shared_ptr<Grid const> grid;
    FieldSet<core::MemSpace::Host> host;
    FieldSet<core::MemSpace::Cuda> dev;
    bool haveReference = false;
    Expr reference = Expr::Grad;
    GpuData(uint32_t n, uint32_t cols)
        : levels(n), columns(cols), grid(std::make_shared<Grid const>(Grid::uniform(n, 20000.0))), host(grid, cols),
          dev(grid, cols) {
#pragma omp parallel for schedule(static)
        for (int64_t c = 0; c < static_cast<int64_t>(cols); ++c)
            bench::fillColumn(static_cast<uint32_t>(c), n, host.theta, host.kappa, host.q, host.w);
        copyColumns(dev.theta, host.theta);
        copyColumns(dev.kappa, host.kappa);
        copyColumns(dev.q, host.q);
        copyColumns(dev.w, host.w);
        dev.theta.toDevice();
        dev.kappa.toDevice();
        dev.q.toDevice();
        dev.w.toDevice();
    }
};

GpuData& gpuDataFor(uint32_t levels) { return bench::dataForLevels<GpuData>(levels, gpuPoints); }

void bmOperator(benchmark::State& state, Expr e, Engine engine, uint32_t levels, uint32_t shmemBlockItems) {
    GpuData& d = gpuDataFor(levels);
    EngineOptions options;
    options.shmemBlockItems = shmemBlockItems;
    EvalPlan plan;
    EventTimer timer;
    for (auto _ : state) {
        timer.start();
        plan = bench::evaluateExpr(core::Cuda{}, d.dev, e, engine, options);
        state.SetIterationTime(timer.seconds());
    }
    if (!d.haveReference || d.reference != e) {
        bench::evaluateExpr(core::Serial{}, d.host, e, Engine::Direct);
        d.haveReference = true;
        d.reference = e;
    }
    bool same;
    if (e == Expr::Grad) {
        d.dev.outF.toHost();
        same = sameBits(d.dev.outF, d.host.outF);
    } else {
        d.dev.outC.toHost();
        same = sameBits(d.dev.outC, d.host.outC);
    }
    if (!same) state.SkipWithError("result differs from Serial Direct");
    double const n = levels, cols = d.columns;
    report(state, bench::exprOutputLevels(e, n) * cols, bench::exprBytesPerColumn(e, n) * cols);
    state.counters["levels"] = n;
    state.counters["columns"] = cols;
    state.counters["depth"] = bench::exprDepth(e);
    state.SetLabel(plan.describe());
}

void bmImplicit(benchmark::State& state, bench::implicit::Path path, uint32_t levels) {
    using Data = bench::implicit::Data<core::MemSpace::Cuda>;
    Data& d = bench::dataForLevels<Data>(levels, gpuPoints);
    core::Cuda const backend{};
    static std::map<uint32_t, bool> agree; // per level count: the check resets the state three times
    if (!agree.contains(levels)) agree[levels] = bench::implicit::pathsAgree(backend, d);
    if (!agree[levels]) {
        state.SkipWithError("the matrix path's step differs from the model kernel's beyond 1e-12");
        return;
    }
    EventTimer timer;
    for (auto _ : state) {
        timer.start();
        bench::implicit::step(backend, d, path);
        state.SetIterationTime(timer.seconds());
    }
    double const cols = d.columns;
    report(state, levels * cols, bench::implicit::bytesPerLevelUpdate * levels * cols);
    state.counters["levels"] = levels;
    state.counters["columns"] = cols;
}

benchmark::internal::Benchmark* addGpu(std::string const& name, std::function<void(benchmark::State&)> f) {
    return benchmark::RegisterBenchmark(name.c_str(), std::move(f))->UseManualTime()->Unit(benchmark::kMillisecond);
}

int const registered = [] {
    if (core::cudaDeviceCount() == 0) return 0; // no device: the GPU suites are not listed
    addGpu("roofline/cuda/triad", [](benchmark::State& s) { bmTriad(s, false); });
    addGpu("roofline/cuda/triad_lockstep", [](benchmark::State& s) { bmTriad(s, true); });
    for (uint32_t levels : {16u, 64u, 128u, 256u, 1024u})
        for (Expr e : bench::allExprs)
            for (Engine engine : {Engine::Direct, Engine::Shmem, Engine::Auto}) {
                std::string const name = std::string("operators/cuda/") + bench::exprName(e) + "/" +
                                         (engine == Engine::Direct  ? "direct"
                                          : engine == Engine::Shmem ? "shmem"
                                                                    : "auto") +
                                         "/" + std::to_string(levels);
                addGpu(name, [=](benchmark::State& s) { bmOperator(s, e, engine, levels, 0); });
            }
    // Shmem with more levels per block than workers (EngineOptions::shmemBlockItems): each worker stages several
    // values between two syncs.
    for (uint32_t levels : {16u, 64u, 256u})
        for (Expr e : {Expr::DivGrad, Expr::Diffusion, Expr::Advection, Expr::Depth4})
            for (uint32_t items : {256u, 512u, 1024u, 2048u}) {
                std::string const name = std::string("operators/cuda/") + bench::exprName(e) + "/shmem_items" +
                                         std::to_string(items) + "/" + std::to_string(levels);
                addGpu(name, [=](benchmark::State& s) { bmOperator(s, e, Engine::Shmem, levels, items); });
            }
    using bench::implicit::Path;
    for (uint32_t levels : {30u, 64u})
        for (Path path : {Path::Model, Path::Matrix, Path::Assembly})
            addGpu(std::string("column/cuda/") + bench::implicit::pathName(path) + "/" + std::to_string(levels),
                   [=](benchmark::State& s) { bmImplicit(s, path, levels); });
    return 0;
}();

} // namespace
