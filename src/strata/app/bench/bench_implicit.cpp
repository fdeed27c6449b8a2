// column/<backend>/implicit_diffusion_{model,matrix,assembly}/<levels> on Serial and OpenMP (bench_implicit.hpp says
// what each path does; bench_cuda.cu has the Cuda suite), on about 2^21 points a field. The two steps agree to
// rounding (checked before timing: 1e-12 relative). A level update is one cell of one column for all five variables;
// min_bytes_per_point counts what the model's kernel must move: the five variables read and written, rho0, exner0 and
// rho0 K read (104 bytes).
#include <strata/app/bench/bench_common.hpp>
#include <strata/app/bench/bench_implicit.hpp>

#include <benchmark/benchmark.h>

#include <map>
#include <string>

namespace {

using namespace strata;
using namespace strata::bench::implicit;

constexpr uint32_t targetPoints = 1u << 21;

template <core::MemSpace Space>
Data<Space>& dataFor(uint32_t levels) {
    return bench::dataForLevels<Data<Space>>(levels, targetPoints);
}

template <class Backend>
void bmImplicit(benchmark::State& state, Path path, uint32_t levels) {
    Backend const backend{};
    auto& d = dataFor<Backend::memSpace>(levels);
    static std::map<uint32_t, bool> agree; // per backend and level count: the check resets the state three times
    if (!agree.contains(levels)) agree[levels] = pathsAgree(backend, d);
    if (!agree[levels]) {
        state.SkipWithError("the matrix path's step differs from the model kernel's beyond 1e-12");
        return;
    }
    for (auto _ : state) {
        step(backend, d, path);
        benchmark::ClobberMemory();
    }
    double const cols = d.columns;
    bench::reportThroughput<Backend>(state, levels * cols, bytesPerLevelUpdate * levels * cols);
    state.counters["levels"] = levels;
    state.counters["columns"] = cols;
}

int const registered = [] {
    for (uint32_t levels : {30u, 64u})
        for (bool parallel : {false, true})
            for (Path path : {Path::Model, Path::Matrix, Path::Assembly}) {
                std::string const name = std::string("column/") + (parallel ? "openmp" : "serial") + "/" +
                                         pathName(path) + "/" + std::to_string(levels);
                if (parallel)
                    bench::add(name, [=](benchmark::State& s) { bmImplicit<core::OpenMP>(s, path, levels); });
                else
                    bench::add(name, [=](benchmark::State& s) { bmImplicit<core::Serial>(s, path, levels); });
            }
    return 0;
}();

} // namespace
