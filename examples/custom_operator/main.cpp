// examples/custom_operator: an operator defined in this project (second_difference.hpp), run by every engine on every
// backend this Strata has, and checked three ways:
//   1. bit for bit between the engines (Direct, Shmem, Auto) and the backends (Serial, OpenMP, Threads; Cuda when
//      there is a device): the promise Strata makes for its own operators holds for this one;
//   2. bit for bit against the same stencil written with built-in operators, div(grad x);
//   3. against calculus: the second derivative of z^2 is 2 (on a uniform grid the flux form is exact for a quadratic).
// Exit status 0 when all hold, 1 otherwise.
#include "second_difference.hpp"

#include <strata/core/backend.hpp>
#include <strata/operators/operators.hpp>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace {

namespace core = strata::core;
namespace ops = strata::ops;
using my_physics::SecondDifference;

constexpr uint32_t levels = 40;
constexpr uint32_t columns = 37;
constexpr double depth = 4000.0; // m

// x = (z / 1000 m)^2 + c in column c: its second derivative is 2 / (1000 m)^2, its slope 2 z / (1000 m)^2.
double profile(double z, uint32_t c) { return (z / 1000.0) * (z / 1000.0) + c; }
constexpr double curvature = 2.0 / 1.0e6;
double slope(double z) { return 2.0 * z / 1.0e6; }

struct Case {
    std::shared_ptr<ops::Grid const> grid = std::make_shared<ops::Grid const>(ops::Grid::uniform(levels, depth));
    ops::Field<double, ops::Center> x{grid, columns, core::MemSpace::Host};
    double bottomSlope = slope(grid->faces()[0]), topSlope = slope(grid->faces()[levels]);
    Case() {
        for (uint32_t c = 0; c < columns; ++c)
            for (uint32_t k = 0; k < levels; ++k)
                x.at(c, k) = profile(grid->centers()[k], c);
    }
};

std::vector<double> values(ops::Field<double, ops::Center> const& f) {
    std::vector<double> v;
    for (uint32_t c = 0; c < f.columns(); ++c)
        for (uint32_t k = 0; k < f.levels(); ++k)
            v.push_back(f.at(c, k));
    return v;
}

bool sameBits(std::vector<double> const& a, std::vector<double> const& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

// The operator and its built-in equivalent on one backend and engine, as host values.
template <class Backend>
std::vector<double> run(Backend const& backend, Case& in, ops::Engine engine, bool builtIn) {
    ops::Field<double, ops::Center> out(in.grid, columns, Backend::memSpace);
    in.x.toDevice();
    auto const bottom = ops::SetGradient{in.bottomSlope};
    auto const top = ops::SetGradient{in.topSlope};
    if (builtIn)
        ops::evaluate(backend, out, ops::DivergenceF2C{}(ops::GradientC2F{bottom, top}(in.x)), engine);
    else
        ops::evaluate(backend, out, SecondDifference{bottom, top}(in.x), engine);
    out.toHost();
    return values(out);
}

} // namespace

int main() {
    Case in;
    bool ok = true;
    std::vector<double> const reference = run(core::Serial{}, in, ops::Engine::Direct, false);

    auto check = [&](char const* what, std::vector<double> const& got) {
        bool const same = sameBits(got, reference);
        std::printf("%-40s %s\n", what, same ? "identical bits" : "DIFFERENT BITS");
        ok = ok && same;
    };
    for (ops::Engine engine : {ops::Engine::Direct, ops::Engine::Shmem, ops::Engine::Auto}) {
        std::string const name = ops::engineName(engine);
        check(("serial   " + name).c_str(), run(core::Serial{}, in, engine, false));
        check(("openmp   " + name).c_str(), run(core::OpenMP{}, in, engine, false));
        check(("threads  " + name).c_str(), run(core::Threads{4}, in, engine, false));
        check(("built-in div(grad x), serial " + name).c_str(), run(core::Serial{}, in, engine, true));
#if defined(__CUDACC__)
        if (core::cudaDeviceCount() > 0) check(("cuda     " + name).c_str(), run(core::Cuda{}, in, engine, false));
#endif
    }

    double worst = 0.0;
    for (uint32_t c = 0; c < columns; ++c)
        for (uint32_t k = 0; k < levels; ++k)
            worst = std::fmax(worst, std::fabs(reference[c * levels + k] / curvature - 1.0));
    bool const exact = worst < 1e-9;
    std::printf("d2(z^2)/dz2 = 2: largest relative error %.3g (%s)\n", worst, exact ? "ok" : "WRONG");
    ok = ok && exact;
    std::printf("%s\n", ok ? "custom_operator: all checks passed" : "custom_operator: FAILED");
    return ok ? 0 : 1;
}
