// The Shmem engine on the one-worker backends (Serial, OpenMP) takes a block's columns one at a time through every
// depth and its root, in one column's buffers (operators/engine/shmem.hpp): the planner allots one column's bytes,
// however many columns a block takes, and the shared-memory limit then bounds a column, not a block. The bits must be
// those of the checking backend (Threads, which stages a block's columns side by side) and of Direct.
#include "tests/core/backends.hpp"
#include <strata/operators/operators.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <memory>

using namespace strata;
using namespace strata::ops;

namespace {

bool sameBits(Field<double, Center> const& a, Field<double, Center> const& b) {
    for (uint32_t c = 0; c < a.columns(); ++c)
        if (std::memcmp(a.column(c).data(), b.column(c).data(), a.levels() * sizeof(double)) != 0) return false;
    return true;
}

} // namespace

TEST_CASE("one-worker Shmem blocks take many columns in one column's buffers, with the bits of every engine",
          "[operators][engine]") {
    uint32_t const n = 48, columns = 300;
    auto grid =
        std::make_shared<Grid const>(Grid::stretched(n, 9000.0, [](double s) { return s + 0.3 * s * (1 - s); }));
    Field<double, Center> theta(grid, columns, core::MemSpace::Host), kappa(grid, columns, core::MemSpace::Host);
    for (uint32_t c = 0; c < columns; ++c)
        for (uint32_t k = 0; k < n; ++k) {
            theta.at(c, k) = 285.0 + 0.4 * k + std::sin(0.3 * k + c);
            kappa.at(c, k) = 1.0 + 0.1 * ((2 * k + c) % 7);
        }
    auto const grad = GradientC2F{SetValue{300.0}, SetGradient{0.0}};
    auto const interp = InterpolateC2F{Extrapolate{}, Extrapolate{}};
    auto const div = DivergenceF2C{SetValue{0.0}, SetValue{0.0}};
    auto const tree = div(interp(kappa) * grad(div(interp(kappa) * grad(theta)))); // depth 4: two staged depths

    Field<double, Center> reference(grid, columns, core::MemSpace::Host);
    evaluate(core::Threads{4}, reference, tree, Engine::Shmem);

    // A limit that holds one column's buffers but not two: the one-worker blocks still take many columns.
    EngineOptions oneColumn;
    oneColumn.sharedLimitBytes = detail::sharedBytesPerColumn(tree, false, n) + 16;
    for (EngineOptions const& options : {EngineOptions{}, oneColumn}) {
        Field<double, Center> serial(grid, columns, core::MemSpace::Host), openmp(grid, columns, core::MemSpace::Host),
            direct(grid, columns, core::MemSpace::Host);
        EvalPlan const plan = evaluate(core::Serial{}, serial, tree, Engine::Shmem, options);
        CHECK(plan.engine == Engine::Shmem);
        CHECK(plan.tiles == 1);
        CHECK(plan.columnsPerBlock == detail::oneWorkerBlockItems / n);
        CHECK(plan.sharedBytes == plan.sharedBytesPerColumn);
        CHECK(plan.sharedBytes <= options.sharedLimitBytes);
        evaluate(core::OpenMP{}, openmp, tree, Engine::Shmem, options);
        evaluate(core::Serial{}, direct, tree, Engine::Direct, options);
        CHECK(sameBits(serial, reference));
        CHECK(sameBits(openmp, reference));
        CHECK(sameBits(direct, reference));
    }
    // Grid-stride: three blocks a launch walk the rest.
    Field<double, Center> limited(grid, columns, core::MemSpace::Host);
    EngineOptions small;
    small.shmemBlockItems = 2 * n; // two columns a block: 150 blocks over a grid of 3
    evaluate(core::GridLimited<core::Serial, 3>{}, limited, tree, Engine::Shmem, small);
    CHECK(sameBits(limited, reference));
}
