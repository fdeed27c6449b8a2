// Pointwise kernels of the model: small functors run over every (column, level) of a field with `ops::forEachPoint`.
// They are functor structs, not lambdas, so that nvcc compiles the same code for the Cuda backend.
#pragma once

#include <strata/core/lockstep.hpp>
#include <strata/core/math.hpp>
#include <strata/operators/engine.hpp>
#include <strata/operators/field.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>

namespace strata::app {

// The operator layer's pointwise column walk (operators/engine.hpp): f(col, k) for every level of every column.
using ops::forEachPoint;

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

// The step's own passes over all N prognostic fields in one kernel each (ops::forEachPointOfFields: one launch, not
// N; field i of a block at a time on the CPU):
//   StartStep   u0 = u (the step's start value)
//   StageAll    the RkStage update of every field, then its tendency zeroed for the next stage (read here anyway)
// The arithmetic of each field is RkStage's: the same bits as one kernel per field. The tendencies are zero when a
// step starts without a pass of its own: zero when allocated (core::Buffer), and zeroed by every stage's update, the
// only kernel besides the processes' explicit tendencies that touches them in a step that finishes, so StartStep
// does not spend a pass over every tendency zeroing it. After a step that threw, Model::step zeroes them first
// (Fill).
template <std::size_t N>
struct StartStep {
    CenterView u0[N];
    CenterConst u[N];
    STRATA_HD void operator()(uint32_t i, uint32_t c, uint32_t k) const { u0[i](c, k) = u[i](c, k); }
};
template <std::size_t N>
struct StageAll {
    CenterView u[N], f[N];
    CenterConst u0[N];
    double b, dt;
    STRATA_HD void operator()(uint32_t i, uint32_t c, uint32_t k) const {
        u[i](c, k) = u0[i](c, k) + b * ((u[i](c, k) - u0[i](c, k)) + dt * f[i](c, k));
        f[i](c, k) = 0.0;
    }
};

struct Copy {
    CenterView dst;
    CenterConst src;
    STRATA_HD void operator()(uint32_t c, uint32_t k) const { dst(c, k) = src(c, k); }
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
        exner(c, k) = math::pow(p(c, k) / p0, kappa);
    }
};

// The state check (Model::checkState), one body per variable of a ops::columnKernel: first[col] becomes the index
// of the first variable with a value v at any level of the column for which !(lo <= v <= hi) (NaN included), or
// +inf when none. The first body (index 0) starts the column's answer; a later one looks only if no earlier one found
// any.
struct RangeCheck {
    CenterConst field;
    double lo, hi, index;
    double* first;
    STRATA_HD double value(uint32_t c, uint32_t k) const { return field(c, k); }
    template <class Get>
    STRATA_HD void finish(uint32_t c, Get const& get) const {
        double found = index == 0 ? INFINITY : first[c];
        for (uint32_t k = 0; k < field.levels && found == INFINITY; ++k) {
            double const v = get(k);
            if (!(v >= lo && v <= hi)) found = index;
        }
        first[c] = found;
    }
    STRATA_HD void operator()(uint32_t c) const {
        finish(c, [&](uint32_t k) { return value(c, k); });
    }
};

} // namespace strata::app
