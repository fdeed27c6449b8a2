// Pointwise kernels of the model: small functors run over every (column, level) of a field with `forEachPoint`.
// They are functor structs, not lambdas, so that nvcc compiles the same code for the Cuda backend.
#pragma once

#include "core/lockstep.hpp"
#include "operators/engine.hpp"
#include "operators/field.hpp"

#include <cmath>
#include <cstdint>

namespace strata::app {

namespace detail {
// Whole columns per block, as in the engines' Direct kernel: no division per point to find (column, level), and on
// the one-worker CPU backends a plain loop over a column's levels, which the compiler vectorises.
struct PointKernel {
    static constexpr uint32_t blockDomSize = 256;
    static constexpr uint32_t maxGrid = 65535;
    STRATA_HD static uint32_t columnsPerBlock(uint32_t levels) { return (blockDomSize + levels - 1) / levels; }

    template <class W, class F>
    STRATA_HD void operator()(W const& worker, F const& f, uint32_t columns, uint32_t levels) const {
        uint32_t const perBlock = columnsPerBlock(levels);
        for (uint32_t b = worker.blockDomIdx(); b * perBlock < columns; b += worker.gridDomSize()) {
            uint32_t const col0 = b * perBlock;
            uint32_t const ncols = columns - col0 < perBlock ? columns - col0 : perBlock;
            // The engines' column walk (plain nested loops on one-worker backends); pointwise: no interior split.
            ops::detail::forEachColumnLevel<0>(worker, false, ncols, 0u, levels, levels,
                                               [&](uint32_t c, uint32_t k, auto) { f(col0 + c, k); });
        }
    }
};
} // namespace detail

// f(col, k) for every level of every column (levels of the staggering of the field it is given for).
template <class Backend, class F>
void forEachPoint(Backend const& backend, uint32_t columns, uint32_t levels, F const& f) {
    if (columns == 0 || levels == 0) return;
    uint32_t const perBlock = detail::PointKernel::columnsPerBlock(levels);
    uint32_t const blocks = (columns + perBlock - 1) / perBlock;
    lockstep::launch(backend,
                     lockstep::config(blocks < detail::PointKernel::maxGrid ? blocks : detail::PointKernel::maxGrid),
                     detail::PointKernel{}, f, columns, levels);
}

using CenterView = ops::FieldView<double, ops::Center>;
using FaceView = ops::FieldView<double, ops::Face>;
using CenterConst = ops::FieldView<double const, ops::Center>;
using FaceConst = ops::FieldView<double const, ops::Face>;

// One stage of SSP-RK3 in Shu-Osher form, u = (1 - b) u0 + b (u + dt f), written as an increment of the step's
// start value: u = u0 + b ((u - u0) + dt f). Equal in exact arithmetic; in floating point a field with no tendency
// stays exactly u0, and the rounding of the stored value is that of adding a small increment, not of recombining
// two large values (the budgets see it: app/model/budgets.hpp).
struct RkStage {
    CenterView u;
    CenterConst u0, f;
    double b, dt;
    STRATA_HD void operator()(uint32_t c, uint32_t k) const {
        u(c, k) = u0(c, k) + b * ((u(c, k) - u0(c, k)) + dt * f(c, k));
    }
};

struct Copy {
    CenterView dst;
    CenterConst src;
    STRATA_HD void operator()(uint32_t c, uint32_t k) const { dst(c, k) = src(c, k); }
};

struct AddInto {
    CenterView dst;
    CenterConst src;
    STRATA_HD void operator()(uint32_t c, uint32_t k) const { dst(c, k) = dst(c, k) + src(c, k); }
};

struct Fill {
    CenterView dst;
    double value;
    STRATA_HD void operator()(uint32_t c, uint32_t k) const { dst(c, k) = value; }
};

// Density and Exner function from the (frozen) pressure and temperature of a step.
struct Thermo {
    CenterConst p, T;
    CenterView rho, exner;
    double rd, kappa, p0;
    STRATA_HD void operator()(uint32_t c, uint32_t k) const {
        rho(c, k) = p(c, k) / (rd * T(c, k));
        exner(c, k) = pow(p(c, k) / p0, kappa);
    }
};

} // namespace strata::app
