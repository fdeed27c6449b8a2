// Times a sequence of evaluate calls of div(grad(theta)) at 256 levels (TREE=diffusion: div(interp(K) grad(theta)),
// K = 1.5), one line per call, so that an engine's time
// can be seen to depend on what ran before it (docs/performance.md, "Streaming stores", "What Auto sees").
// The argument is the sequence: S Shmem, D Direct, A Auto; a second argument runs OpenMP instead of Serial.
// Environment: E=<exponent> for 2^E points (default 23), NOSTREAM=1 for plain stores. Built against build/:
//   g++ -O3 -DNDEBUG -ffp-contract=off -fopenmp -std=c++20 -DSTRATA_HAVE_OPENMP=1 -Isrc
//       docs/experiments/evaluate_sequence.cpp build/lib/libstrata_operators.a build/lib/libstrata_core.a
//       -o /tmp/evaluate_sequence   (one command)
//   /tmp/evaluate_sequence SSSSSSDDDDDDSSSSSS omp
#include <strata/operators/operators.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

using namespace strata;
using namespace strata::ops;

int main(int argc, char** argv) {
    char const* exponent = std::getenv("E");
    uint32_t const levels = 256, columns = (1u << (exponent ? std::atoi(exponent) : 23)) / levels;
    auto const grid = std::make_shared<Grid const>(Grid::uniform(levels, 10000.0));
    Field<double, Center> theta(grid, columns, core::MemSpace::Host), out(grid, columns, core::MemSpace::Host),
        kappa(grid, columns, core::MemSpace::Host, 1.5);
    for (uint32_t c = 0; c < columns; ++c)
        for (uint32_t k = 0; k < levels; ++k)
            theta.at(c, k) = 300.0 + 0.1 * k + std::sin(0.01 * c);
    auto const interp = InterpolateC2F{Extrapolate{}, Extrapolate{}};
    auto const grad = GradientC2F{SetValue{300.0}, SetGradient{0.0}};
    auto const div = DivergenceF2C{SetValue{0.0}, SetValue{0.0}};
    EngineOptions options;
    if (char const* v = std::getenv("NOSTREAM"); v != nullptr && v[0] == '1') options.streamingStoreBytes = SIZE_MAX;
    bool const openmp = argc > 2;
    char const* tree = std::getenv("TREE");
    bool const diffusion = tree != nullptr && std::string(tree) == "diffusion";
    auto const run = [&](auto const& backend, Engine engine) {
        return diffusion ? evaluate(backend, out, div(interp(kappa) * grad(theta)), engine, options)
                         : evaluate(backend, out, div(grad(theta)), engine, options);
    };
    for (char const* p = argc > 1 ? argv[1] : "AAAAAAAAAAAA"; *p != '\0'; ++p) {
        Engine const engine = *p == 'S' ? Engine::Shmem : *p == 'D' ? Engine::Direct : Engine::Auto;
        auto const t0 = std::chrono::steady_clock::now();
        EvalPlan const plan = openmp ? run(core::OpenMP{}, engine) : run(core::Serial{}, engine);
        double const ms = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() * 1e3;
        std::printf("%c %-6s %.2f ms  %s\n", *p, engineName(plan.engine), ms, plan.describe().c_str());
    }
}
