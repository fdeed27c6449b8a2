// The expressions of the operators suite (bench_operators.cpp on the CPU backends, bench_cuda.cu on the GPU): their
// names, depths, boundary conditions, byte model, the input fields' values, and their evaluation by an engine.
//   grad        grad(theta)                                           depth 1, Center -> Face
//   div_grad    div(grad(theta))                                      depth 2
//   diffusion   div(interp(K) * grad(theta))                          depth 2 (vertical diffusion)
//   advection   div(w * upwind3(w, q))                                depth 2 (flux-form advection)
//   depth4      div(interp(K) * grad0(div(interp(K) * grad(theta))))  depth 4 (nested diffusion)
// Boundary conditions: grad = GradientC2F{SetValue 300, SetGradient 0}, grad0 = GradientC2F{SetGradient 0,
// SetGradient 0}, interp = InterpolateC2F{Extrapolate, Extrapolate}, div = DivergenceF2C{SetValue 0, SetValue 0},
// upwind3 = Upwind3rdOrderBiasedProductC2F{ThirdOrderOneSided, ThirdOrderOneSided}.
// Minimum bytes per column of n levels (inputs read once, output written once, 8 bytes a value; the grid's spacing
// arrays are not counted): grad 8 (2n + 1), div_grad 16 n, diffusion 24 n, advection 8 (3n + 1) (w has n + 1 faces),
// depth4 24 n. A level update is one output value.
#pragma once

#include <strata/operators/operators.hpp>

#include <cmath>
#include <cstdint>

namespace strata::bench {

enum class Expr { Grad, DivGrad, Diffusion, Advection, Depth4 };
inline constexpr Expr allExprs[] = {Expr::Grad, Expr::DivGrad, Expr::Diffusion, Expr::Advection, Expr::Depth4};

inline char const* exprName(Expr e) {
    switch (e) {
    case Expr::Grad: return "grad";
    case Expr::DivGrad: return "div_grad";
    case Expr::Diffusion: return "diffusion";
    case Expr::Advection: return "advection";
    case Expr::Depth4: return "depth4";
    }
    return "?";
}
inline int exprDepth(Expr e) { return e == Expr::Grad ? 1 : e == Expr::Depth4 ? 4 : 2; }
// Output values per column (grad writes the n + 1 faces) and the minimum bytes per column (header comment).
inline double exprOutputLevels(Expr e, double n) { return e == Expr::Grad ? n + 1 : n; }
inline double exprBytesPerColumn(Expr e, double n) {
    switch (e) {
    case Expr::Grad: return 8 * (2 * n + 1);
    case Expr::DivGrad: return 16 * n;
    case Expr::Diffusion: return 24 * n;
    case Expr::Advection: return 8 * (3 * n + 1);
    case Expr::Depth4: return 24 * n;
    }
    return 0;
}

// The inputs of column c (n levels): theta, K and q at centers, w at faces (w changes sign inside the column, so
// both upwind branches run). Written through `at`, so device fields get the same values in their host copy.
template <class FC, class FF>
void fillColumn(uint32_t c, uint32_t n, FC& theta, FC& kappa, FC& q, FF& w) {
    double const phase = 0.001 * (c % 997);
    for (uint32_t k = 0; k < n; ++k) {
        double const z = static_cast<double>(k) / n;
        theta.at(c, k) = 300.0 + 30.0 * z + std::sin(6.0 * z + phase);
        kappa.at(c, k) = 1.0 + 4.0 * std::exp(-4.0 * z) + phase;
        q.at(c, k) = 0.01 * std::exp(-3.0 * z) + 0.001 * std::cos(9.0 * z + phase);
    }
    for (uint32_t k = 0; k <= n; ++k)
        w.at(c, k) = std::sin(3.0 * static_cast<double>(k) / n + phase) - 0.4;
}

inline auto const grad = ops::GradientC2F{ops::SetValue{300.0}, ops::SetGradient{0.0}};
inline auto const grad0 = ops::GradientC2F{ops::SetGradient{0.0}, ops::SetGradient{0.0}};
inline auto const interp = ops::InterpolateC2F{ops::Extrapolate{}, ops::Extrapolate{}};
inline auto const divergence = ops::DivergenceF2C{ops::SetValue{0.0}, ops::SetValue{0.0}};
inline auto const upwind3 = ops::Upwind3rdOrderBiasedProductC2F{ops::ThirdOrderOneSided{}, ops::ThirdOrderOneSided{}};

// Evaluates expression e of d's fields (theta, kappa, q, w) into d.outC (d.outF for grad).
template <class Backend, class D>
ops::EvalPlan evaluateExpr(Backend const& backend, D& d, Expr e, ops::Engine engine, ops::EngineOptions const& o = {}) {
    switch (e) {
    case Expr::Grad: return ops::evaluate(backend, d.outF, grad(d.theta), engine, o);
    case Expr::DivGrad: return ops::evaluate(backend, d.outC, divergence(grad(d.theta)), engine, o);
    case Expr::Diffusion: return ops::evaluate(backend, d.outC, divergence(interp(d.kappa) * grad(d.theta)), engine, o);
    case Expr::Advection: return ops::evaluate(backend, d.outC, divergence(d.w * upwind3(d.w, d.q)), engine, o);
    case Expr::Depth4:
        return ops::evaluate(backend, d.outC,
                             divergence(interp(d.kappa) * grad0(divergence(interp(d.kappa) * grad(d.theta)))), engine,
                             o);
    }
    return {};
}

} // namespace strata::bench
