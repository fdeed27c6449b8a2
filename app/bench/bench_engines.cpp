// Direct vs Shmem vs Auto on column-stencil expressions of growing depth, on the CPU backends.
// Counter: level_updates_per_second = output points (columns x levels) per second.
//   depth1  grad(theta)                                  (GradientC2F, faces)
//   depth2  div(interp(K) * grad(theta))                 (vertical diffusion flux divergence)
//   depth4  div(grad(div(grad(theta))))                  (a biharmonic: nested stencils)
//   advect  div(w * upwind3(w, q)) - q * div(w)           (flux-form advection with a correction, depth 2)
#include "operators/operators.hpp"

#include <benchmark/benchmark.h>

#include <cmath>
#include <memory>

namespace {

using namespace strata;
using namespace strata::ops;

enum class Tree { Depth1, Depth2, Depth4, Advect };

struct Data {
    std::shared_ptr<Grid const> grid;
    Field<double, Center> theta, kappa, outC;
    Field<double, Face> w, outF;
    Data(uint32_t levels, uint32_t columns)
        : grid(std::make_shared<Grid const>(Grid::uniform(levels, 20000.0))),
          theta(grid, columns, core::MemSpace::Host), kappa(grid, columns, core::MemSpace::Host),
          outC(grid, columns, core::MemSpace::Host), w(grid, columns, core::MemSpace::Host),
          outF(grid, columns, core::MemSpace::Host) {
        for (uint32_t c = 0; c < columns; ++c) {
            for (uint32_t k = 0; k < levels; ++k) {
                theta.at(c, k) = 300.0 + std::sin(0.01 * k + c);
                kappa.at(c, k) = 1.0 + 0.001 * k;
            }
            for (uint32_t k = 0; k <= levels; ++k)
                w.at(c, k) = std::sin(0.02 * k - 0.1 * c);
        }
    }
};

template <class Backend>
void bmEngine(benchmark::State& state, Backend backend, Tree tree, Engine engine) {
    auto const levels = static_cast<uint32_t>(state.range(0));
    uint32_t const columns = std::max<uint32_t>(16, (1u << 18) / levels); // about 2^18 points per evaluation
    Data d(levels, columns);
    auto const grad = GradientC2F{SetValue{300.0}, SetGradient{0.0}};
    auto const interp = InterpolateC2F{Extrapolate{}, Extrapolate{}};
    auto const div = DivergenceF2C{SetValue{0.0}, SetValue{0.0}};
    auto const upwind3 = Upwind3rdOrderBiasedProductC2F{ThirdOrderOneSided{}, ThirdOrderOneSided{}};
    EvalPlan plan;
    for (auto _ : state) {
        switch (tree) {
        case Tree::Depth1: plan = evaluate(backend, d.outF, grad(d.theta), engine); break;
        case Tree::Depth2: plan = evaluate(backend, d.outC, div(interp(d.kappa) * grad(d.theta)), engine); break;
        case Tree::Depth4: plan = evaluate(backend, d.outC, div(grad(div(grad(d.theta)))), engine); break;
        case Tree::Advect:
            plan = evaluate(backend, d.outC, div(d.w * upwind3(d.w, d.theta)) - d.theta * div(d.w), engine);
            break;
        }
        benchmark::ClobberMemory();
    }
    uint32_t const outLevels = tree == Tree::Depth1 ? levels + 1 : levels;
    state.counters["level_updates_per_second"] =
        benchmark::Counter(static_cast<double>(columns) * outLevels, benchmark::Counter::kIsIterationInvariantRate);
    state.SetLabel(plan.describe());
}

void levelArgs(benchmark::internal::Benchmark* b) {
    for (int levels : {16, 64, 256, 1024})
        b->Arg(levels);
    b->Unit(benchmark::kMillisecond);
}

#define STRATA_ENGINE_BENCH(backendName, backend, treeName, tree)                                                      \
    BENCHMARK_CAPTURE(bmEngine, backendName##_##treeName##_direct, backend, tree, Engine::Direct)->Apply(levelArgs);   \
    BENCHMARK_CAPTURE(bmEngine, backendName##_##treeName##_shmem, backend, tree, Engine::Shmem)->Apply(levelArgs);     \
    BENCHMARK_CAPTURE(bmEngine, backendName##_##treeName##_auto, backend, tree, Engine::Auto)->Apply(levelArgs)

STRATA_ENGINE_BENCH(serial, core::Serial{}, depth1, Tree::Depth1);
STRATA_ENGINE_BENCH(serial, core::Serial{}, depth2, Tree::Depth2);
STRATA_ENGINE_BENCH(serial, core::Serial{}, depth4, Tree::Depth4);
STRATA_ENGINE_BENCH(serial, core::Serial{}, advect, Tree::Advect);
STRATA_ENGINE_BENCH(openmp, core::OpenMP{}, depth2, Tree::Depth2);
STRATA_ENGINE_BENCH(openmp, core::OpenMP{}, depth4, Tree::Depth4);

} // namespace
