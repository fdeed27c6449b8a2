// Vertical stencil operators, named as in ClimaCore by what they map (C2F: centers to faces, F2C: faces to centers).
//
// An operator is a small struct holding its boundary conditions (bottom, top); applying it to operands builds a
// StencilNode: `GradientC2F{SetValue{0.0}, SetGradient{0.0}}(theta)`. Each operator states
//   Out             the staggering of its result
//   footprint<I>()  the levels k + lo .. k + hi of argument I it reads for result level k (boundaries included)
//   apply(ctx, k, a...)   the result at level k, where a(kk) is the value of an argument at level kk
//                   Boundary branches sit inside `if constexpr (!Ctx::interior)` (or `Ctx::interior ||` in a test):
//                   the engines evaluate levels far from the boundaries (StencilNode::reach) with an interior context,
//                   where those branches vanish and the level loop vectorises; the formula itself is the same.
// Indexing: center k lies between faces k and k + 1; face 0 is the bottom, face n the top (see grid.hpp for the
// spacings dzCenter and dzFace). No operator divides: spacings enter through the grid's reciprocals (rdzCenter,
// rdzFace) and interpolation weights, computed once per grid, and constant divisors are multiplications by their
// reciprocal (exact for / 2; docs/operators.md). Stencils, boundary conditions and measured orders are listed in
// docs/operators.md. Applying an operator to the wrong staggering, or with a boundary condition it does not support,
// fails to compile with a message that names the operator.
#pragma once

#include "operators/bcs.hpp"
#include "operators/stencil_node.hpp"

#include <type_traits>

namespace strata::ops {

namespace detail {
template <class X, class S>
inline constexpr bool operandOn = std::is_same_v<typename ExprOf<X>::Stagger, S>;

template <class V>
STRATA_HD V absVal(V x) {
    return x < V(0) ? -x : x;
}
// ((w + |w|) xL + (w - |w|) xR) / 2: w xL where w > 0, w xR where w < 0.
template <class V>
STRATA_HD V upwindProduct(V w, V xL, V xR) {
    V const aw = absVal(w);
    return ((w + aw) * xL + (w - aw) * xR) * V(0.5);
}
} // namespace detail

// ---------------------------------------------------------------------------------------------------------------
// Interpolation

// Face value by linear interpolation between the two neighbouring centers (exact for linear profiles on any grid, to
// rounding): a[k-1] interpBelow[k] + a[k] interpAbove[k], the weights dzCenter[k] / (dzCenter[k-1] + dzCenter[k]) and
// dzCenter[k-1] / (the same) precomputed by the grid.
template <class Bottom = NoBC, class Top = NoBC>
struct InterpolateC2F {
    using Out = Face;
    Bottom bottom{};
    Top top{};
    template <std::size_t I>
    static constexpr Footprint footprint() {
        return {-1, 0};
    }

    template <class X>
    auto operator()(X const& x) const {
        static_assert(detail::operandOn<X, Center>, "InterpolateC2F: the operand must be on cell centers (Center)");
        static_assert(isSetValue<Bottom> || isSetGradient<Bottom> || isExtrapolate<Bottom>,
                      "InterpolateC2F: the bottom boundary condition must be SetValue, SetGradient or Extrapolate");
        static_assert(isSetValue<Top> || isSetGradient<Top> || isExtrapolate<Top>,
                      "InterpolateC2F: the top boundary condition must be SetValue, SetGradient or Extrapolate");
        return makeStencil(*this, asExpr(x));
    }

    template <class Ctx, class A>
    STRATA_HD auto apply(Ctx const& ctx, Level k, A const& a) const {
        using V = decltype(a(0));
        if constexpr (!Ctx::interior) {
            uint32_t const n = ctx.grid.n();
            if (k == 0) {
                if constexpr (isSetValue<Bottom>)
                    return bcValue<V>(bottom.value, ctx.col);
                else if constexpr (isSetGradient<Bottom>)
                    return a(0) - bcValue<V>(bottom.value, ctx.col) * V(ctx.grid.dzFace[0]);
                else
                    return a(0);
            }
            if (k == n) {
                if constexpr (isSetValue<Top>)
                    return bcValue<V>(top.value, ctx.col);
                else if constexpr (isSetGradient<Top>)
                    return a(n - 1) + bcValue<V>(top.value, ctx.col) * V(ctx.grid.dzFace[n]);
                else
                    return a(n - 1);
            }
        }
        return a(k - 1) * V(ctx.grid.interpBelow[k]) + a(k) * V(ctx.grid.interpAbove[k]);
    }
};
template <class B, class T>
InterpolateC2F(B, T) -> InterpolateC2F<B, T>;

// Center value as the mean of its two faces (the center is their mid-point).
struct InterpolateF2C {
    using Out = Center;
    template <std::size_t I>
    static constexpr Footprint footprint() {
        return {0, 1};
    }
    template <class X>
    auto operator()(X const& x) const {
        static_assert(detail::operandOn<X, Face>, "InterpolateF2C: the operand must be on cell faces (Face)");
        return makeStencil(*this, asExpr(x));
    }
    template <class Ctx, class A>
    STRATA_HD auto apply(Ctx const&, Level k, A const& a) const {
        using V = decltype(a(0));
        return (a(k) + a(k + 1)) * V(0.5);
    }
};

// ---------------------------------------------------------------------------------------------------------------
// Biased interpolation

// Face k takes the center below it; the bottom face needs SetValue.
template <class Bottom = NoBC, class Top = NoBC>
struct LeftBiasedC2F {
    using Out = Face;
    Bottom bottom{};
    Top top{};
    template <std::size_t I>
    static constexpr Footprint footprint() {
        return {-1, -1};
    }
    template <class X>
    auto operator()(X const& x) const {
        static_assert(detail::operandOn<X, Center>, "LeftBiasedC2F: the operand must be on cell centers (Center)");
        static_assert(isSetValue<Bottom>, "LeftBiasedC2F: the bottom boundary condition must be SetValue");
        static_assert(isNoBC<Top>, "LeftBiasedC2F: takes no top boundary condition (the top face uses the center "
                                   "below it)");
        return makeStencil(*this, asExpr(x));
    }
    template <class Ctx, class A>
    STRATA_HD auto apply(Ctx const& ctx, Level k, A const& a) const {
        using V = decltype(a(0));
        if constexpr (!Ctx::interior) {
            if (k == 0) return bcValue<V>(bottom.value, ctx.col);
        }
        return a(k - 1);
    }
};
template <class B>
LeftBiasedC2F(B) -> LeftBiasedC2F<B, NoBC>;

// Face k takes the center above it; the top face needs SetValue.
template <class Bottom = NoBC, class Top = NoBC>
struct RightBiasedC2F {
    using Out = Face;
    Bottom bottom{};
    Top top{};
    template <std::size_t I>
    static constexpr Footprint footprint() {
        return {0, 0};
    }
    template <class X>
    auto operator()(X const& x) const {
        static_assert(detail::operandOn<X, Center>, "RightBiasedC2F: the operand must be on cell centers (Center)");
        static_assert(isNoBC<Bottom>, "RightBiasedC2F: takes no bottom boundary condition (the bottom face uses the "
                                      "center above it)");
        static_assert(isSetValue<Top>, "RightBiasedC2F: the top boundary condition must be SetValue");
        return makeStencil(*this, asExpr(x));
    }
    template <class Ctx, class A>
    STRATA_HD auto apply(Ctx const& ctx, Level k, A const& a) const {
        using V = decltype(a(0));
        if constexpr (!Ctx::interior) {
            if (k == ctx.grid.n()) return bcValue<V>(top.value, ctx.col);
        }
        return a(k);
    }
};

// Center k takes the face below it.
struct LeftBiasedF2C {
    using Out = Center;
    template <std::size_t I>
    static constexpr Footprint footprint() {
        return {0, 0};
    }
    template <class X>
    auto operator()(X const& x) const {
        static_assert(detail::operandOn<X, Face>, "LeftBiasedF2C: the operand must be on cell faces (Face)");
        return makeStencil(*this, asExpr(x));
    }
    template <class Ctx, class A>
    STRATA_HD auto apply(Ctx const&, Level k, A const& a) const {
        return a(k);
    }
};

// Center k takes the face above it.
struct RightBiasedF2C {
    using Out = Center;
    template <std::size_t I>
    static constexpr Footprint footprint() {
        return {1, 1};
    }
    template <class X>
    auto operator()(X const& x) const {
        static_assert(detail::operandOn<X, Face>, "RightBiasedF2C: the operand must be on cell faces (Face)");
        return makeStencil(*this, asExpr(x));
    }
    template <class Ctx, class A>
    STRATA_HD auto apply(Ctx const&, Level k, A const& a) const {
        return a(k + 1);
    }
};

// ---------------------------------------------------------------------------------------------------------------
// Gradients and divergences (height coordinate: the metric is 1)

namespace detail {
// The C2F difference (a[k] - a[k-1]) / dzFace[k], computed as (a[k] - a[k-1]) * rdzFace[k]. At a boundary face,
// SetValue gives the operand there (a half-cell difference to the first center); SetGradient / SetDivergence give the
// result itself. Shared by GradientC2F and DivergenceC2F, which coincide in a height coordinate.
template <class Bottom, class Top, class Ctx, class A>
STRATA_HD auto differenceC2F(Bottom const& bottom, Top const& top, Ctx const& ctx, Level k, A const& a) {
    using V = decltype(a(0));
    if constexpr (!Ctx::interior) {
        uint32_t const n = ctx.grid.n();
        if (k == 0) {
            if constexpr (isSetValue<Bottom>)
                return (a(0) - bcValue<V>(bottom.value, ctx.col)) * V(ctx.grid.rdzFace[0]);
            else
                return bcValue<V>(bottom.value, ctx.col);
        }
        if (k == n) {
            if constexpr (isSetValue<Top>)
                return (bcValue<V>(top.value, ctx.col) - a(n - 1)) * V(ctx.grid.rdzFace[n]);
            else
                return bcValue<V>(top.value, ctx.col);
        }
    }
    return (a(k) - a(k - 1)) * V(ctx.grid.rdzFace[k]);
}
} // namespace detail

// Face gradient of a center field: (a[k] - a[k-1]) / dzFace[k]. At a boundary, SetValue uses the half cell between
// the boundary face and the first center, SetGradient gives the gradient itself.
template <class Bottom = NoBC, class Top = NoBC>
struct GradientC2F {
    using Out = Face;
    Bottom bottom{};
    Top top{};
    template <std::size_t I>
    static constexpr Footprint footprint() {
        return {-1, 0};
    }
    template <class X>
    auto operator()(X const& x) const {
        static_assert(detail::operandOn<X, Center>, "GradientC2F: the operand must be on cell centers (Center)");
        static_assert(isSetValue<Bottom> || isSetGradient<Bottom>,
                      "GradientC2F: the bottom boundary condition must be SetValue or SetGradient");
        static_assert(isSetValue<Top> || isSetGradient<Top>,
                      "GradientC2F: the top boundary condition must be SetValue or SetGradient");
        return makeStencil(*this, asExpr(x));
    }
    template <class Ctx, class A>
    STRATA_HD auto apply(Ctx const& ctx, Level k, A const& a) const {
        return detail::differenceC2F(bottom, top, ctx, k, a);
    }
};
template <class B, class T>
GradientC2F(B, T) -> GradientC2F<B, T>;

namespace detail {
// The F2C difference (a[k+1] - a[k]) / dzCenter[k] (times rdzCenter[k]) with optional boundary conditions: SetValue
// replaces the boundary face value, Extrapolate copies the result of the neighbouring center. Shared by GradientF2C and
// DivergenceF2C.
template <class Bottom, class Top, class Ctx, class A>
STRATA_HD auto differenceF2C(Bottom const& bottom, Top const& top, Ctx const& ctx, Level k, A const& a) {
    using V = decltype(a(0));
    auto interior = [&](Level c) { return (a(c + 1) - a(c)) * V(ctx.grid.rdzCenter[c]); };
    if constexpr (!Ctx::interior) {
        uint32_t const n = ctx.grid.n();
        if (k == 0) {
            if constexpr (isSetValue<Bottom>) {
                V upper = a(1);
                if constexpr (isSetValue<Top>) {
                    if (n == 1) upper = bcValue<V>(top.value, ctx.col);
                }
                return (upper - bcValue<V>(bottom.value, ctx.col)) * V(ctx.grid.rdzCenter[0]);
            } else if constexpr (isExtrapolate<Bottom>) {
                if (n > 1) return interior(1);
            }
        }
        if (k == n - 1) {
            if constexpr (isSetValue<Top>)
                return (bcValue<V>(top.value, ctx.col) - a(n - 1)) * V(ctx.grid.rdzCenter[k]);
            else if constexpr (isExtrapolate<Top>) {
                if (n > 1) return interior(n - 2);
            }
        }
    }
    return interior(k);
}
template <class B>
inline constexpr bool optionalValueBC = isNoBC<B> || isSetValue<B> || isExtrapolate<B>;
} // namespace detail

// Center gradient of a face field: (a[k+1] - a[k]) / dzCenter[k]; optional SetValue or Extrapolate boundaries.
template <class Bottom = NoBC, class Top = NoBC>
struct GradientF2C {
    using Out = Center;
    Bottom bottom{};
    Top top{};
    template <std::size_t I>
    static constexpr Footprint footprint() {
        return {-1, 2};
    }
    template <class X>
    auto operator()(X const& x) const {
        static_assert(detail::operandOn<X, Face>, "GradientF2C: the operand must be on cell faces (Face)");
        static_assert(detail::optionalValueBC<Bottom>,
                      "GradientF2C: the bottom boundary condition must be SetValue or Extrapolate (or none)");
        static_assert(detail::optionalValueBC<Top>,
                      "GradientF2C: the top boundary condition must be SetValue or Extrapolate (or none)");
        return makeStencil(*this, asExpr(x));
    }
    template <class Ctx, class A>
    STRATA_HD auto apply(Ctx const& ctx, Level k, A const& a) const {
        return detail::differenceF2C(bottom, top, ctx, k, a);
    }
};
template <class B, class T>
GradientF2C(B, T) -> GradientF2C<B, T>;

// Center divergence of a face flux: (F[k+1] - F[k]) / dzCenter[k]; SetValue sets the boundary flux (e.g. a surface
// flux, or 0 for a closed lid), Extrapolate copies the neighbouring divergence.
template <class Bottom = NoBC, class Top = NoBC>
struct DivergenceF2C {
    using Out = Center;
    Bottom bottom{};
    Top top{};
    template <std::size_t I>
    static constexpr Footprint footprint() {
        return {-1, 2};
    }
    template <class X>
    auto operator()(X const& x) const {
        static_assert(detail::operandOn<X, Face>, "DivergenceF2C: the operand must be on cell faces (Face)");
        static_assert(detail::optionalValueBC<Bottom>,
                      "DivergenceF2C: the bottom boundary condition must be SetValue or Extrapolate (or none)");
        static_assert(detail::optionalValueBC<Top>,
                      "DivergenceF2C: the top boundary condition must be SetValue or Extrapolate (or none)");
        return makeStencil(*this, asExpr(x));
    }
    template <class Ctx, class A>
    STRATA_HD auto apply(Ctx const& ctx, Level k, A const& a) const {
        return detail::differenceF2C(bottom, top, ctx, k, a);
    }
};
template <class B, class T>
DivergenceF2C(B, T) -> DivergenceF2C<B, T>;

// Face divergence of a center field: (a[k] - a[k-1]) / dzFace[k]; SetValue gives the operand at the boundary face,
// SetDivergence the result.
template <class Bottom = NoBC, class Top = NoBC>
struct DivergenceC2F {
    using Out = Face;
    Bottom bottom{};
    Top top{};
    template <std::size_t I>
    static constexpr Footprint footprint() {
        return {-1, 0};
    }
    template <class X>
    auto operator()(X const& x) const {
        static_assert(detail::operandOn<X, Center>, "DivergenceC2F: the operand must be on cell centers (Center)");
        static_assert(isSetValue<Bottom> || isSetDivergence<Bottom>,
                      "DivergenceC2F: the bottom boundary condition must be SetValue or SetDivergence");
        static_assert(isSetValue<Top> || isSetDivergence<Top>,
                      "DivergenceC2F: the top boundary condition must be SetValue or SetDivergence");
        return makeStencil(*this, asExpr(x));
    }
    template <class Ctx, class A>
    STRATA_HD auto apply(Ctx const& ctx, Level k, A const& a) const {
        return detail::differenceC2F(bottom, top, ctx, k, a);
    }
};
template <class B, class T>
DivergenceC2F(B, T) -> DivergenceC2F<B, T>;

// ---------------------------------------------------------------------------------------------------------------
// Upwind products (w on faces, x on centers, result on faces)

// First-order upwind: w x[k-1] where w > 0, w x[k] where w < 0. SetValue gives x at the boundary face,
// Extrapolate uses the first (last) center.
template <class Bottom = NoBC, class Top = NoBC>
struct UpwindBiasedProductC2F {
    using Out = Face;
    Bottom bottom{};
    Top top{};
    template <std::size_t I>
    static constexpr Footprint footprint() {
        if constexpr (I == 0)
            return {0, 0};
        else
            return {-1, 0};
    }
    template <class W, class X>
    auto operator()(W const& w, X const& x) const {
        static_assert(detail::operandOn<W, Face>, "UpwindBiasedProductC2F: the velocity w must be on faces (Face)");
        static_assert(detail::operandOn<X, Center>,
                      "UpwindBiasedProductC2F: the operand x must be on centers (Center)");
        static_assert(isSetValue<Bottom> || isExtrapolate<Bottom>,
                      "UpwindBiasedProductC2F: the bottom boundary condition must be SetValue or Extrapolate");
        static_assert(isSetValue<Top> || isExtrapolate<Top>,
                      "UpwindBiasedProductC2F: the top boundary condition must be SetValue or Extrapolate");
        return makeStencil(*this, asExpr(w), asExpr(x));
    }
    template <class Ctx, class Wa, class Xa>
    STRATA_HD auto apply(Ctx const& ctx, Level k, Wa const& w, Xa const& x) const {
        using V = std::common_type_t<decltype(w(0)), decltype(x(0))>;
        V const wk = w(k);
        if constexpr (!Ctx::interior) {
            uint32_t const n = ctx.grid.n();
            if (k == 0) {
                V const outside = isSetValue<Bottom> ? bcValue<V>(valueOf(bottom), ctx.col) : V(x(0));
                return detail::upwindProduct<V>(wk, outside, x(0));
            }
            if (k == n) {
                V const outside = isSetValue<Top> ? bcValue<V>(valueOf(top), ctx.col) : V(x(n - 1));
                return detail::upwindProduct<V>(wk, x(n - 1), outside);
            }
        }
        return detail::upwindProduct<V>(wk, x(k - 1), x(k));
    }

private:
    template <class B>
    STRATA_HD static auto valueOf(B const& b) {
        if constexpr (isSetValue<B>)
            return b.value;
        else
            return 0.0;
    }
};
template <class B, class T>
UpwindBiasedProductC2F(B, T) -> UpwindBiasedProductC2F<B, T>;

// Third-order upwind-biased product (ClimaCore's form, uniform-grid weights) on faces 2 .. n-2:
//   (w (7 (x[k] + x[k-1]) - (x[k+1] + x[k-2])) - |w| (3 (x[k] - x[k-1]) - (x[k+1] - x[k-2]))) / 12,
// the Wicker-Skamarock flux: the face value of the reconstruction from CELL AVERAGES x (fourth-order centered part,
// third-order upwind term).
// Faces 0, 1, n-1 and n lack a point and use the boundary condition: FirstOrderOneSided is the first-order upwind
// product (w x[0] at the boundary face itself); ThirdOrderOneSided (needs n >= 3, first order otherwise) is the
// face value of the quadratic whose averages over the three cells next to the boundary are x[0], x[1], x[2], as the
// interior is (third order on cell averages, for both signs of w: there is no cell beyond the boundary to upwind
// from): face 0 w (11 x[0] - 7 x[1] + 2 x[2]) / 6, face 1 w (2 x[0] + 5 x[1] - x[2]) / 6, faces n and n-1 the mirror
// image (x counted down from x[n-1]).
template <class Bottom = NoBC, class Top = NoBC>
struct Upwind3rdOrderBiasedProductC2F {
    using Out = Face;
    Bottom bottom{};
    Top top{};
    template <std::size_t I>
    static constexpr Footprint footprint() {
        if constexpr (I == 0)
            return {0, 0};
        else
            return {-3, 2};
    }
    template <class W, class X>
    auto operator()(W const& w, X const& x) const {
        static_assert(detail::operandOn<W, Face>,
                      "Upwind3rdOrderBiasedProductC2F: the velocity w must be on faces (Face)");
        static_assert(detail::operandOn<X, Center>,
                      "Upwind3rdOrderBiasedProductC2F: the operand x must be on centers (Center)");
        static_assert(isFirstOrderOneSided<Bottom> || isThirdOrderOneSided<Bottom>,
                      "Upwind3rdOrderBiasedProductC2F: the bottom boundary condition must be FirstOrderOneSided or "
                      "ThirdOrderOneSided");
        static_assert(isFirstOrderOneSided<Top> || isThirdOrderOneSided<Top>,
                      "Upwind3rdOrderBiasedProductC2F: the top boundary condition must be FirstOrderOneSided or "
                      "ThirdOrderOneSided");
        return makeStencil(*this, asExpr(w), asExpr(x));
    }
    template <class Ctx, class Wa, class Xa>
    STRATA_HD auto apply(Ctx const& ctx, Level k, Wa const& w, Xa const& x) const {
        using V = std::common_type_t<decltype(w(0)), decltype(x(0))>;
        uint32_t const n = ctx.grid.n();
        V const wk = w(k);
        if (Ctx::interior || (k >= 2 && k + 2 <= n)) {
            V const xm = x(k - 2), x0 = x(k - 1), xp = x(k), xpp = x(k + 1);
            return (wk * (V(7) * (xp + x0) - (xpp + xm)) - detail::absVal(wk) * (V(3) * (xp - x0) - (xpp - xm))) *
                   V(1.0 / 12.0);
        }
        auto const fromTop = [&](uint32_t j) { return x(n - 1 - j); };
        if (k == 0) return boundary<Bottom>(wk, 0, n, x, false);
        if (k == n) return boundary<Top>(wk, 0, n, fromTop, true);
        if (k == 1) return boundary<Bottom>(wk, 1, n, x, false);
        return boundary<Top>(wk, 1, n, fromTop, true); // k == n - 1
    }

private:
    // The one-sided stencil at distance d (0: the boundary face, 1: the next face) from a boundary, with x indexed
    // from that boundary inwards; `mirrored` says the inward direction is downwards (the top), which flips which
    // side is upwind for the first-order closure.
    // ThirdOrderOneSided: with P the primitive of the reconstruction, P(0) = 0, P(h) = x0 h, P(2h) = (x0 + x1) h,
    // P(3h) = (x0 + x1 + x2) h (cells of width h from the boundary face), the cubic through these four points has
    // P'(0) = (11 x0 - 7 x1 + 2 x2) / 6 and P'(h) = (2 x0 + 5 x1 - x2) / 6: exact when x holds the cell averages of
    // a quadratic, so third order on cell averages (the sums of the weights are 1: constants are reproduced).
    template <class B, class V, class Xa>
    STRATA_HD static V boundary(V wk, uint32_t d, uint32_t n, Xa const& x, bool mirrored) {
        if (d == 0) {
            if constexpr (isThirdOrderOneSided<B>) {
                if (n >= 3) return wk * ((V(11) * x(0) - V(7) * x(1) + V(2) * x(2)) * V(1.0 / 6.0));
            }
            return wk * V(x(0));
        }
        if constexpr (isThirdOrderOneSided<B>) {
            if (n >= 3) return wk * ((V(2) * x(0) + V(5) * x(1) - x(2)) * V(1.0 / 6.0));
        }
        V const xOut = x(0), xIn = x(1);
        return mirrored ? detail::upwindProduct<V>(wk, xIn, xOut) : detail::upwindProduct<V>(wk, xOut, xIn);
    }
};
template <class B, class T>
Upwind3rdOrderBiasedProductC2F(B, T) -> Upwind3rdOrderBiasedProductC2F<B, T>;

namespace detail {
template <class V>
STRATA_HD V minVal(V a, V b) {
    return b < a ? b : a;
}
// Half of Koren's limited slope, without dividing: phi(r) dm / 2 with r = dp / dm and
// phi(r) = max(0, min(2 r, (1 + 2 r) / 3, 2)), where dm = x[u] - x[uu] is the difference behind the upwind cell u
// (away from the face) and dp = x[d] - x[u] the difference across the face. Where dm and dp have one sign,
// phi(r) dm / 2 = sign(dm) min(|dp|, (|dm| + 2 |dp|) / 6, |dm|); elsewhere (r <= 0: an extremum, or a zero
// difference, where r is 0, infinite or undefined) it is 0. The test is on the sign of dm dp: an underflow to 0 only
// drops to first order, an overflow to infinity still has the right sign; NaN differences give 0.
// The half is taken inside the minimum, not after the selections: a multiplication after them is moved into their
// arms by GCC, which then keeps the branches (it does not evaluate a floating-point operation that might trap on a
// path that did not ask for it) and the loop over faces is not vectorised, which makes it over twice as slow.
// Halving is exact, so the result has the bits of min(2 |dp|, (|dm| + 2 |dp|) / 3, 2 |dm|) / 2
// (1/6 is 1/3 halved, exactly) wherever no term overflows or falls below the normal range.
template <class V>
STRATA_HD V korenHalfSlope(V dm, V dp) {
    V const adm = absVal(dm), adp = absVal(dp);
    V const m = minVal(minVal(adp, (adm + V(2) * adp) * V(1.0 / 6.0)), adm);
    V const s = dm > V(0) ? m : -m;
    return dm * dp > V(0) ? s : V(0);
}
} // namespace detail

// Flux-limited upwind product (positivity preserving): w times the upwind face value x[u] + phi(r) (x[u] - x[uu]) / 2,
// with u the upwind cell (k-1 where w > 0, k where w <= 0), uu the cell beyond it and Koren's limiter phi
// (detail::korenHalfSlope). Unlimited, phi(r) = (1 + 2 r) / 3, this is the third-order upwind-biased face value of
// Upwind3rdOrderBiasedProductC2F, (-x[uu] + 5 x[u] + 2 x[d]) / 6; phi = 0 at extrema gives first-order upwind. With
// 0 <= phi <= 2 and phi <= 2 r, a forward-Euler step of the flux divergence is a convex combination (positive and
// within the neighbouring values) for Courant numbers up to 1/2 (docs/operators.md). Faces 0, 1, n-1 and n, where
// the stencil would leave the column, take the first-order upwind product, as Upwind3rdOrderBiasedProductC2F does
// with FirstOrderOneSided (the only boundary condition accepted): w x[0] at face 0, w x[n-1] at face n.
template <class Bottom = NoBC, class Top = NoBC>
struct UpwindLimitedProductC2F {
    using Out = Face;
    Bottom bottom{};
    Top top{};
    template <std::size_t I>
    static constexpr Footprint footprint() {
        if constexpr (I == 0)
            return {0, 0};
        else
            return {-2, 1};
    }
    template <class W, class X>
    auto operator()(W const& w, X const& x) const {
        static_assert(detail::operandOn<W, Face>, "UpwindLimitedProductC2F: the velocity w must be on faces (Face)");
        static_assert(detail::operandOn<X, Center>,
                      "UpwindLimitedProductC2F: the operand x must be on centers (Center)");
        static_assert(isFirstOrderOneSided<Bottom>,
                      "UpwindLimitedProductC2F: the bottom boundary condition must be FirstOrderOneSided");
        static_assert(isFirstOrderOneSided<Top>,
                      "UpwindLimitedProductC2F: the top boundary condition must be FirstOrderOneSided");
        return makeStencil(*this, asExpr(w), asExpr(x));
    }
    template <class Ctx, class Wa, class Xa>
    STRATA_HD auto apply(Ctx const& ctx, Level k, Wa const& w, Xa const& x) const {
        using V = std::common_type_t<decltype(w(0)), decltype(x(0))>;
        V const wk = w(k);
        if constexpr (!Ctx::interior) {
            uint32_t const n = ctx.grid.n();
            if (k == 0) return wk * V(x(0));
            if (k == n) return wk * V(x(n - 1));
            if (k < 2 || k + 2 > n) return detail::upwindProduct<V>(wk, x(k - 1), x(k)); // faces 1 and n-1
        }
        V const xm = x(k - 2), x0 = x(k - 1), xp = x(k), xpp = x(k + 1);
        bool const up = wk > V(0);
        V const xu = up ? x0 : xp, xuu = up ? xm : xpp, xd = up ? xp : x0;
        return wk * (xu + detail::korenHalfSlope<V>(xu - xuu, xd - xu));
    }
};
template <class B, class T>
UpwindLimitedProductC2F(B, T) -> UpwindLimitedProductC2F<B, T>;

// Advective tendency w dx/dz at centers from face velocities:
//   (w[k+1] (x[k+1] - x[k]) / dzFace[k+1] + w[k] (x[k] - x[k-1]) / dzFace[k]) / 2.
// SetValue gives x at the boundary face; Extrapolate drops the missing half and uses the other one alone.
template <class Bottom = NoBC, class Top = NoBC>
struct AdvectionC2C {
    using Out = Center;
    Bottom bottom{};
    Top top{};
    template <std::size_t I>
    static constexpr Footprint footprint() {
        if constexpr (I == 0)
            return {0, 1};
        else
            return {-1, 1};
    }
    template <class W, class X>
    auto operator()(W const& w, X const& x) const {
        static_assert(detail::operandOn<W, Face>, "AdvectionC2C: the velocity w must be on faces (Face)");
        static_assert(detail::operandOn<X, Center>, "AdvectionC2C: the operand x must be on centers (Center)");
        static_assert(isSetValue<Bottom> || isExtrapolate<Bottom>,
                      "AdvectionC2C: the bottom boundary condition must be SetValue or Extrapolate");
        static_assert(isSetValue<Top> || isExtrapolate<Top>,
                      "AdvectionC2C: the top boundary condition must be SetValue or Extrapolate");
        return makeStencil(*this, asExpr(w), asExpr(x));
    }
    template <class Ctx, class Wa, class Xa>
    STRATA_HD auto apply(Ctx const& ctx, Level k, Wa const& w, Xa const& x) const {
        using V = std::common_type_t<decltype(w(0)), decltype(x(0))>;
        uint32_t const n = ctx.grid.n();
        V const xk = x(k);
        bool haveLower = true, haveUpper = true;
        V lower = V(0), upper = V(0);
        if (Ctx::interior || k > 0) {
            lower = w(k) * (xk - x(k - 1)) * V(ctx.grid.rdzFace[k]);
        } else if constexpr (isSetValue<Bottom>) {
            lower = w(0) * (xk - bcValue<V>(bottom.value, ctx.col)) * V(ctx.grid.rdzFace[0]);
        } else {
            haveLower = false;
        }
        if (Ctx::interior || k + 1 < n) {
            upper = w(k + 1) * (x(k + 1) - xk) * V(ctx.grid.rdzFace[k + 1]);
        } else if constexpr (isSetValue<Top>) {
            upper = w(n) * (bcValue<V>(top.value, ctx.col) - xk) * V(ctx.grid.rdzFace[n]);
        } else {
            haveUpper = false;
        }
        if (haveLower && haveUpper) return (lower + upper) * V(0.5);
        if (haveLower) return lower;
        return upper; // 0 when neither side exists (one cell, Extrapolate at both ends)
    }
};
template <class B, class T>
AdvectionC2C(B, T) -> AdvectionC2C<B, T>;

} // namespace strata::ops
