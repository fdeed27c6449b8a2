// A stencil operator defined outside Strata: the second derivative d2x/dz2 of a center field, in flux form,
//   ((x[k+1] - x[k]) / dzFace[k+1] - (x[k] - x[k-1]) / dzFace[k]) / dzCenter[k],
// with the gradient given at the boundary faces (SetGradient: 0 for a closed boundary). It is the divergence of the
// face gradient in one operator, and takes the same operations in the same order as
// DivergenceF2C{}(GradientC2F{SetGradient{gb}, SetGradient{gt}}(x)), so the two agree bit for bit.
#pragma once

#include <strata/operators/operators.hpp>

#include <cstdint>
#include <string_view>

namespace my_physics {

namespace ops = strata::ops;

// The rule: what the stencil reads and computes (docs/operators.md, "Defining an operator").
struct SecondDifferenceRule {
    using Out = ops::Center;                                 // the result lives on cell centers
    using Operands = ops::Operands<ops::Center>;             // one operand, on cell centers
    static constexpr ops::Footprint footprint[] = {{-1, 1}}; // result level k reads levels k-1 .. k+1
    static constexpr ops::BCSet bottom = ops::bc::setGradient;
    static constexpr ops::BCSet top = ops::bc::setGradient;

    template <class Ctx, class Op, class A>
    STRATA_HD static auto apply(Ctx const& ctx, ops::Level k, Op const& op, A const& a) {
        using V = decltype(a(0));
        uint32_t const n = ctx.grid.n();
        // The gradients at the faces below and above center k. `Ctx::interior ||` removes the boundary branches
        // where the engine knows k is far from both ends, so that the interior loop vectorises.
        V below, above;
        if (Ctx::interior || k > 0)
            below = (a(k) - a(k - 1)) * V(ctx.grid.rdzFace[k]);
        else
            below = ops::bcValue<V>(op.bottom.value, ctx.col);
        if (Ctx::interior || k + 1 < n)
            above = (a(k + 1) - a(k)) * V(ctx.grid.rdzFace[k + 1]);
        else
            above = ops::bcValue<V>(op.top.value, ctx.col);
        return (above - below) * V(ctx.grid.rdzCenter[k]);
    }
};

// The operator: the rule under a name, holding its boundary conditions.
template <class B = ops::NoBC, class T = ops::NoBC>
struct SecondDifference : ops::Operator<SecondDifference<B, T>, SecondDifferenceRule, B, T> {
    static constexpr std::string_view name = "SecondDifference";
};
template <class B, class T>
SecondDifference(B, T) -> SecondDifference<B, T>;

} // namespace my_physics
