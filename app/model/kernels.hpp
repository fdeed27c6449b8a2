// Pointwise kernels of the model: small functors run over every (column, level) of a field with `forEachPoint`.
// They are functor structs, not lambdas, so that nvcc compiles the same code for the Cuda backend.
#pragma once

#include "core/threaded.hpp"
#include "operators/field.hpp"

#include <cmath>
#include <cstdint>

namespace strata::app {

namespace detail {
template <class F>
struct PointBody {
    F f;
    uint32_t levels;
    STRATA_HD void operator()(uint32_t p) const { f(p / levels, p % levels); }
};
} // namespace detail

// f(col, k) for every level of every column (levels of the staggering of the field it is given for).
template <class Backend, class F>
void forEachPoint(Backend const& backend, uint32_t columns, uint32_t levels, F const& f) {
    threaded::threaded(backend, threaded::independent(columns * levels), detail::PointBody<F>{f, levels});
}

using CenterView = ops::FieldView<double, ops::Center>;
using FaceView = ops::FieldView<double, ops::Face>;
using CenterConst = ops::FieldView<double const, ops::Center>;
using FaceConst = ops::FieldView<double const, ops::Face>;

// u = a u0 + b (u + dt f): one stage of SSP-RK3 in Shu-Osher form.
struct RkStage {
    CenterView u;
    CenterConst u0, f;
    double a, b, dt;
    STRATA_HD void operator()(uint32_t c, uint32_t k) const { u(c, k) = a * u0(c, k) + b * (u(c, k) + dt * f(c, k)); }
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
