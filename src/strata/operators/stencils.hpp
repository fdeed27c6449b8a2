// The built-in vertical stencil operators, named as in ClimaCore by what they map (C2F: centers to faces, F2C: faces
// to centers).
//
// Each is a rule (namespace rules: staggering, footprint, accepted boundary conditions, apply) under a name, defined
// with operator.hpp's mechanism, which is also how a user defines an operator in their own code. Applying an
// operator to operands builds a StencilNode: `GradientC2F{SetValue{0.0}, SetGradient{0.0}}(theta)`.
// Indexing: center k lies between faces k and k + 1; face 0 is the bottom, face n the top (see grid.hpp for the
// spacings dzCenter and dzFace). No operator divides: spacings enter through the grid's reciprocals (rdzCenter,
// rdzFace) and interpolation weights, computed once per grid, and constant divisors are multiplications by their
// reciprocal (exact for / 2; docs/operators.md). Stencils, boundary conditions and measured orders are listed in
// docs/operators.md. Applying an operator to the wrong staggering, or with a boundary condition it does not support,
// fails to compile with a message that names the operator and what it accepts.
#pragma once

#include <strata/operators/bcs.hpp>
#include <strata/operators/operator.hpp>
#include <strata/operators/stencil_node.hpp>

#include <string_view>
#include <type_traits>

namespace strata::ops {

namespace detail {
// A grid spacing or constant factor as it multiplies a value of type V: V itself, except where V carries derivatives
// (ops::Jet, jet.hpp), whose product with a plain number scales them without the product rule's zero term.
template <class V>
struct CoefficientOf {
    using type = V;
};
template <class V>
STRATA_HD typename CoefficientOf<V>::type coefficient(double x) {
    return typename CoefficientOf<V>::type(x);
}
template <class V>
STRATA_HD V absVal(V x) {
    return x < V(0) ? -x : x;
}
// ((w + |w|) xL + (w - |w|) xR) / 2: w xL where w > 0, w xR where w < 0.
template <class V>
STRATA_HD V upwindProduct(V w, V xL, V xR) {
    V const aw = absVal(w);
    return ((w + aw) * xL + (w - aw) * xR) * detail::coefficient<V>(0.5);
}
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
    V const m = minVal(minVal(adp, (adm + detail::coefficient<V>(2) * adp) * detail::coefficient<V>(1.0 / 6.0)), adm);
    V const s = dm > V(0) ? m : -m;
    return dm * dp > V(0) ? s : V(0);
}
} // namespace detail

// The stencils. Each rule states what operator.hpp asks of one; `op` is the operator with its boundary conditions.
namespace rules {

// ---------------------------------------------------------------------------------------------------------------
// Interpolation

// Face value by linear interpolation between the two neighbouring centers (exact for linear profiles on any grid, to
// rounding): a[k-1] interpBelow[k] + a[k] interpAbove[k], the weights dzCenter[k] / (dzCenter[k-1] + dzCenter[k]) and
// dzCenter[k-1] / (the same) precomputed by the grid.
struct InterpolateC2F {
    using Out = Face;
    using Operands = ops::Operands<Center>;
    static constexpr Footprint footprint[] = {{-1, 0}};
    static constexpr BCSet bottom = bc::setValue | bc::setGradient | bc::extrapolate;
    static constexpr BCSet top = bottom;

    template <class Ctx, class Op, class A>
    STRATA_HD static auto apply(Ctx const& ctx, Level k, Op const& op, A const& a) {
        using V = decltype(a(0));
        using Bottom = typename Op::Bottom;
        using Top = typename Op::Top;
        if constexpr (!Ctx::interior) {
            uint32_t const n = ctx.grid.n();
            if (k == 0) {
                if constexpr (isSetValue<Bottom>)
                    return bcValue<V>(op.bottom.value, ctx.col);
                else if constexpr (isSetGradient<Bottom>)
                    return a(0) - bcValue<V>(op.bottom.value, ctx.col) * detail::coefficient<V>(ctx.grid.dzFace[0]);
                else
                    return a(0);
            }
            if (k == n) {
                if constexpr (isSetValue<Top>)
                    return bcValue<V>(op.top.value, ctx.col);
                else if constexpr (isSetGradient<Top>)
                    return a(n - 1) + bcValue<V>(op.top.value, ctx.col) * detail::coefficient<V>(ctx.grid.dzFace[n]);
                else
                    return a(n - 1);
            }
        }
        return a(k - 1) * detail::coefficient<V>(ctx.grid.interpBelow[k]) +
               a(k) * detail::coefficient<V>(ctx.grid.interpAbove[k]);
    }
};

// Center value as the mean of its two faces (the center is their mid-point).
struct InterpolateF2C {
    using Out = Center;
    using Operands = ops::Operands<Face>;
    static constexpr Footprint footprint[] = {{0, 1}};
    static constexpr BCSet bottom = bc::none;
    static constexpr BCSet top = bc::none;

    template <class Ctx, class Op, class A>
    STRATA_HD static auto apply(Ctx const&, Level k, Op const&, A const& a) {
        using V = decltype(a(0));
        return (a(k) + a(k + 1)) * detail::coefficient<V>(0.5);
    }
};

// ---------------------------------------------------------------------------------------------------------------
// Biased interpolation

// Face k takes the center below it; the bottom face needs SetValue (the top face uses the center below it).
struct LeftBiasedC2F {
    using Out = Face;
    using Operands = ops::Operands<Center>;
    static constexpr Footprint footprint[] = {{-1, -1}};
    static constexpr BCSet bottom = bc::setValue;
    static constexpr BCSet top = bc::none;

    template <class Ctx, class Op, class A>
    STRATA_HD static auto apply(Ctx const& ctx, Level k, Op const& op, A const& a) {
        using V = decltype(a(0));
        if constexpr (!Ctx::interior) {
            if (k == 0) return bcValue<V>(op.bottom.value, ctx.col);
        }
        return a(k - 1);
    }
};

// Face k takes the center above it; the top face needs SetValue (the bottom face uses the center above it).
struct RightBiasedC2F {
    using Out = Face;
    using Operands = ops::Operands<Center>;
    static constexpr Footprint footprint[] = {{0, 0}};
    static constexpr BCSet bottom = bc::none;
    static constexpr BCSet top = bc::setValue;

    template <class Ctx, class Op, class A>
    STRATA_HD static auto apply(Ctx const& ctx, Level k, Op const& op, A const& a) {
        using V = decltype(a(0));
        if constexpr (!Ctx::interior) {
            if (k == ctx.grid.n()) return bcValue<V>(op.top.value, ctx.col);
        }
        return a(k);
    }
};

// Center k takes the face below it.
struct LeftBiasedF2C {
    using Out = Center;
    using Operands = ops::Operands<Face>;
    static constexpr Footprint footprint[] = {{0, 0}};
    static constexpr BCSet bottom = bc::none;
    static constexpr BCSet top = bc::none;

    template <class Ctx, class Op, class A>
    STRATA_HD static auto apply(Ctx const&, Level k, Op const&, A const& a) {
        return a(k);
    }
};

// Center k takes the face above it.
struct RightBiasedF2C {
    using Out = Center;
    using Operands = ops::Operands<Face>;
    static constexpr Footprint footprint[] = {{1, 1}};
    static constexpr BCSet bottom = bc::none;
    static constexpr BCSet top = bc::none;

    template <class Ctx, class Op, class A>
    STRATA_HD static auto apply(Ctx const&, Level k, Op const&, A const& a) {
        return a(k + 1);
    }
};

// ---------------------------------------------------------------------------------------------------------------
// Differences (gradients and divergences in a height coordinate, where the metric is 1 and they coincide)

// The C2F difference (a[k] - a[k-1]) / dzFace[k], computed as (a[k] - a[k-1]) * rdzFace[k]. At a boundary face,
// SetValue gives the operand there (a half-cell difference to the first center); ResultBC (SetGradient for the
// gradient, SetDivergence for the divergence) gives the result itself.
template <template <class> class ResultBC>
struct DifferenceC2F {
    using Out = Face;
    using Operands = ops::Operands<Center>;
    static constexpr Footprint footprint[] = {{-1, 0}};
    static constexpr BCSet bottom = bc::setValue | ResultBC<double>::kind;
    static constexpr BCSet top = bottom;

    template <class Ctx, class Op, class A>
    STRATA_HD static auto apply(Ctx const& ctx, Level k, Op const& op, A const& a) {
        using V = decltype(a(0));
        if constexpr (!Ctx::interior) {
            uint32_t const n = ctx.grid.n();
            if (k == 0) {
                if constexpr (isSetValue<typename Op::Bottom>)
                    return (a(0) - bcValue<V>(op.bottom.value, ctx.col)) * detail::coefficient<V>(ctx.grid.rdzFace[0]);
                else
                    return bcValue<V>(op.bottom.value, ctx.col);
            }
            if (k == n) {
                if constexpr (isSetValue<typename Op::Top>)
                    return (bcValue<V>(op.top.value, ctx.col) - a(n - 1)) * detail::coefficient<V>(ctx.grid.rdzFace[n]);
                else
                    return bcValue<V>(op.top.value, ctx.col);
            }
        }
        return (a(k) - a(k - 1)) * detail::coefficient<V>(ctx.grid.rdzFace[k]);
    }
};

// The F2C difference (a[k+1] - a[k]) / dzCenter[k] (times rdzCenter[k]) with optional boundary conditions: SetValue
// replaces the boundary face value, Extrapolate copies the result of the neighbouring center.
struct DifferenceF2C {
    using Out = Center;
    using Operands = ops::Operands<Face>;
    static constexpr Footprint footprint[] = {{-1, 2}};
    static constexpr BCSet bottom = bc::none | bc::setValue | bc::extrapolate;
    static constexpr BCSet top = bottom;

    template <class Ctx, class Op, class A>
    STRATA_HD static auto apply(Ctx const& ctx, Level k, Op const& op, A const& a) {
        using V = decltype(a(0));
        using Bottom = typename Op::Bottom;
        using Top = typename Op::Top;
        auto interior = [&](Level c) { return (a(c + 1) - a(c)) * detail::coefficient<V>(ctx.grid.rdzCenter[c]); };
        if constexpr (!Ctx::interior) {
            uint32_t const n = ctx.grid.n();
            if (k == 0) {
                if constexpr (isSetValue<Bottom>) {
                    V upper = a(1);
                    if constexpr (isSetValue<Top>) {
                        if (n == 1) upper = bcValue<V>(op.top.value, ctx.col);
                    }
                    return (upper - bcValue<V>(op.bottom.value, ctx.col)) *
                           detail::coefficient<V>(ctx.grid.rdzCenter[0]);
                } else if constexpr (isExtrapolate<Bottom>) {
                    if (n > 1) return interior(1);
                }
            }
            if (k == n - 1) {
                if constexpr (isSetValue<Top>)
                    return (bcValue<V>(op.top.value, ctx.col) - a(n - 1)) *
                           detail::coefficient<V>(ctx.grid.rdzCenter[k]);
                else if constexpr (isExtrapolate<Top>) {
                    if (n > 1) return interior(n - 2);
                }
            }
        }
        return interior(k);
    }
};

// ---------------------------------------------------------------------------------------------------------------
// Upwind products (w on faces, x on centers, result on faces)

inline constexpr std::string_view velocityAndOperand[] = {"the velocity w", "the operand x"};

// First-order upwind: w x[k-1] where w > 0, w x[k] where w < 0. SetValue gives x at the boundary face,
// Extrapolate uses the first (last) center.
struct UpwindBiasedProductC2F {
    using Out = Face;
    using Operands = ops::Operands<Face, Center>;
    static constexpr std::string_view const* operandNames = velocityAndOperand;
    static constexpr Footprint footprint[] = {{0, 0}, {-1, 0}};
    static constexpr BCSet bottom = bc::setValue | bc::extrapolate;
    static constexpr BCSet top = bottom;

    template <class Ctx, class Op, class Wa, class Xa>
    STRATA_HD static auto apply(Ctx const& ctx, Level k, Op const& op, Wa const& w, Xa const& x) {
        using V = std::common_type_t<decltype(w(0)), decltype(x(0))>;
        V const wk = w(k);
        if constexpr (!Ctx::interior) {
            uint32_t const n = ctx.grid.n();
            if (k == 0) {
                V const outside = isSetValue<typename Op::Bottom> ? bcValue<V>(valueOf(op.bottom), ctx.col) : V(x(0));
                return detail::upwindProduct<V>(wk, outside, x(0));
            }
            if (k == n) {
                V const outside = isSetValue<typename Op::Top> ? bcValue<V>(valueOf(op.top), ctx.col) : V(x(n - 1));
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
struct Upwind3rdOrderBiasedProductC2F {
    using Out = Face;
    using Operands = ops::Operands<Face, Center>;
    static constexpr std::string_view const* operandNames = velocityAndOperand;
    static constexpr Footprint footprint[] = {{0, 0}, {-3, 2}};
    static constexpr BCSet bottom = bc::firstOrderOneSided | bc::thirdOrderOneSided;
    static constexpr BCSet top = bottom;

    template <class Ctx, class Op, class Wa, class Xa>
    STRATA_HD static auto apply(Ctx const& ctx, Level k, Op const&, Wa const& w, Xa const& x) {
        using V = std::common_type_t<decltype(w(0)), decltype(x(0))>;
        using Bottom = typename Op::Bottom;
        using Top = typename Op::Top;
        uint32_t const n = ctx.grid.n();
        V const wk = w(k);
        if (Ctx::interior || (k >= 2 && k + 2 <= n)) {
            V const xm = x(k - 2), x0 = x(k - 1), xp = x(k), xpp = x(k + 1);
            return (wk * (detail::coefficient<V>(7) * (xp + x0) - (xpp + xm)) -
                    detail::absVal(wk) * (detail::coefficient<V>(3) * (xp - x0) - (xpp - xm))) *
                   detail::coefficient<V>(1.0 / 12.0);
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
                if (n >= 3)
                    return wk * ((detail::coefficient<V>(11) * x(0) - detail::coefficient<V>(7) * x(1) +
                                  detail::coefficient<V>(2) * x(2)) *
                                 detail::coefficient<V>(1.0 / 6.0));
            }
            return wk * V(x(0));
        }
        if constexpr (isThirdOrderOneSided<B>) {
            if (n >= 3)
                return wk * ((detail::coefficient<V>(2) * x(0) + detail::coefficient<V>(5) * x(1) - x(2)) *
                             detail::coefficient<V>(1.0 / 6.0));
        }
        V const xOut = x(0), xIn = x(1);
        return mirrored ? detail::upwindProduct<V>(wk, xIn, xOut) : detail::upwindProduct<V>(wk, xOut, xIn);
    }
};

// Flux-limited upwind product (positivity preserving): w times the upwind face value x[u] + phi(r) (x[u] - x[uu]) / 2,
// with u the upwind cell (k-1 where w > 0, k where w <= 0), uu the cell beyond it and Koren's limiter phi
// (detail::korenHalfSlope). Unlimited, phi(r) = (1 + 2 r) / 3, this is the third-order upwind-biased face value of
// Upwind3rdOrderBiasedProductC2F, (-x[uu] + 5 x[u] + 2 x[d]) / 6; phi = 0 at extrema gives first-order upwind. With
// 0 <= phi <= 2 and phi <= 2 r, a forward-Euler step of the flux divergence is a convex combination (positive and
// within the neighbouring values) for Courant numbers up to 1/2 (docs/operators.md). Faces 0, 1, n-1 and n, where
// the stencil would leave the column, take the first-order upwind product, as Upwind3rdOrderBiasedProductC2F does
// with FirstOrderOneSided (the only boundary condition accepted): w x[0] at face 0, w x[n-1] at face n.
struct UpwindLimitedProductC2F {
    using Out = Face;
    using Operands = ops::Operands<Face, Center>;
    static constexpr std::string_view const* operandNames = velocityAndOperand;
    static constexpr Footprint footprint[] = {{0, 0}, {-2, 1}};
    static constexpr BCSet bottom = bc::firstOrderOneSided;
    static constexpr BCSet top = bottom;

    template <class Ctx, class Op, class Wa, class Xa>
    STRATA_HD static auto apply(Ctx const& ctx, Level k, Op const&, Wa const& w, Xa const& x) {
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

// Advective tendency w dx/dz at centers from face velocities:
//   (w[k+1] (x[k+1] - x[k]) / dzFace[k+1] + w[k] (x[k] - x[k-1]) / dzFace[k]) / 2.
// SetValue gives x at the boundary face; Extrapolate drops the missing half and uses the other one alone.
struct AdvectionC2C {
    using Out = Center;
    using Operands = ops::Operands<Face, Center>;
    static constexpr std::string_view const* operandNames = velocityAndOperand;
    static constexpr Footprint footprint[] = {{0, 1}, {-1, 1}};
    static constexpr BCSet bottom = bc::setValue | bc::extrapolate;
    static constexpr BCSet top = bottom;

    template <class Ctx, class Op, class Wa, class Xa>
    STRATA_HD static auto apply(Ctx const& ctx, Level k, Op const& op, Wa const& w, Xa const& x) {
        using V = std::common_type_t<decltype(w(0)), decltype(x(0))>;
        uint32_t const n = ctx.grid.n();
        V const xk = x(k);
        bool haveLower = true, haveUpper = true;
        V lower = V(0), upper = V(0);
        if (Ctx::interior || k > 0) {
            lower = w(k) * (xk - x(k - 1)) * detail::coefficient<V>(ctx.grid.rdzFace[k]);
        } else if constexpr (isSetValue<typename Op::Bottom>) {
            lower = w(0) * (xk - bcValue<V>(op.bottom.value, ctx.col)) * detail::coefficient<V>(ctx.grid.rdzFace[0]);
        } else {
            haveLower = false;
        }
        if (Ctx::interior || k + 1 < n) {
            upper = w(k + 1) * (x(k + 1) - xk) * detail::coefficient<V>(ctx.grid.rdzFace[k + 1]);
        } else if constexpr (isSetValue<typename Op::Top>) {
            upper = w(n) * (bcValue<V>(op.top.value, ctx.col) - xk) * detail::coefficient<V>(ctx.grid.rdzFace[n]);
        } else {
            haveUpper = false;
        }
        if (haveLower && haveUpper) return (lower + upper) * detail::coefficient<V>(0.5);
        if (haveLower) return lower;
        return upper; // 0 when neither side exists (one cell, Extrapolate at both ends)
    }
};

} // namespace rules

// ---------------------------------------------------------------------------------------------------------------
// The operators: a rule under a name. `Name{bottom, top}(operands...)`; the boundary conditions each accepts are its
// rule's (docs/operators.md has the table).

template <class B = NoBC, class T = NoBC>
struct InterpolateC2F : Operator<InterpolateC2F<B, T>, rules::InterpolateC2F, B, T> {
    static constexpr std::string_view name = "InterpolateC2F";
};
template <class B, class T>
InterpolateC2F(B, T) -> InterpolateC2F<B, T>;

struct InterpolateF2C : Operator<InterpolateF2C, rules::InterpolateF2C> {
    static constexpr std::string_view name = "InterpolateF2C";
};

template <class B = NoBC, class T = NoBC>
struct LeftBiasedC2F : Operator<LeftBiasedC2F<B, T>, rules::LeftBiasedC2F, B, T> {
    static constexpr std::string_view name = "LeftBiasedC2F";
};
template <class B>
LeftBiasedC2F(B) -> LeftBiasedC2F<B, NoBC>;
template <class B, class T>
LeftBiasedC2F(B, T) -> LeftBiasedC2F<B, T>;

template <class B = NoBC, class T = NoBC>
struct RightBiasedC2F : Operator<RightBiasedC2F<B, T>, rules::RightBiasedC2F, B, T> {
    static constexpr std::string_view name = "RightBiasedC2F";
};
template <class B, class T>
RightBiasedC2F(B, T) -> RightBiasedC2F<B, T>;

struct LeftBiasedF2C : Operator<LeftBiasedF2C, rules::LeftBiasedF2C> {
    static constexpr std::string_view name = "LeftBiasedF2C";
};
struct RightBiasedF2C : Operator<RightBiasedF2C, rules::RightBiasedF2C> {
    static constexpr std::string_view name = "RightBiasedF2C";
};

// Face gradient of a center field: SetValue uses the half cell between the boundary face and the first center,
// SetGradient gives the gradient itself.
template <class B = NoBC, class T = NoBC>
struct GradientC2F : Operator<GradientC2F<B, T>, rules::DifferenceC2F<SetGradient>, B, T> {
    static constexpr std::string_view name = "GradientC2F";
};
template <class B, class T>
GradientC2F(B, T) -> GradientC2F<B, T>;

// Face divergence of a center field: SetValue gives the operand at the boundary face, SetDivergence the result.
template <class B = NoBC, class T = NoBC>
struct DivergenceC2F : Operator<DivergenceC2F<B, T>, rules::DifferenceC2F<SetDivergence>, B, T> {
    static constexpr std::string_view name = "DivergenceC2F";
};
template <class B, class T>
DivergenceC2F(B, T) -> DivergenceC2F<B, T>;

// Center gradient of a face field; optional SetValue (the boundary face's value) or Extrapolate.
template <class B = NoBC, class T = NoBC>
struct GradientF2C : Operator<GradientF2C<B, T>, rules::DifferenceF2C, B, T> {
    static constexpr std::string_view name = "GradientF2C";
};
template <class B, class T>
GradientF2C(B, T) -> GradientF2C<B, T>;

// Center divergence of a face flux; SetValue sets the boundary flux (e.g. a surface flux, or 0 for a closed lid),
// Extrapolate copies the neighbouring divergence.
template <class B = NoBC, class T = NoBC>
struct DivergenceF2C : Operator<DivergenceF2C<B, T>, rules::DifferenceF2C, B, T> {
    static constexpr std::string_view name = "DivergenceF2C";
};
template <class B, class T>
DivergenceF2C(B, T) -> DivergenceF2C<B, T>;

template <class B = NoBC, class T = NoBC>
struct UpwindBiasedProductC2F : Operator<UpwindBiasedProductC2F<B, T>, rules::UpwindBiasedProductC2F, B, T> {
    static constexpr std::string_view name = "UpwindBiasedProductC2F";
};
template <class B, class T>
UpwindBiasedProductC2F(B, T) -> UpwindBiasedProductC2F<B, T>;

template <class B = NoBC, class T = NoBC>
struct Upwind3rdOrderBiasedProductC2F
    : Operator<Upwind3rdOrderBiasedProductC2F<B, T>, rules::Upwind3rdOrderBiasedProductC2F, B, T> {
    static constexpr std::string_view name = "Upwind3rdOrderBiasedProductC2F";
};
template <class B, class T>
Upwind3rdOrderBiasedProductC2F(B, T) -> Upwind3rdOrderBiasedProductC2F<B, T>;

template <class B = NoBC, class T = NoBC>
struct UpwindLimitedProductC2F : Operator<UpwindLimitedProductC2F<B, T>, rules::UpwindLimitedProductC2F, B, T> {
    static constexpr std::string_view name = "UpwindLimitedProductC2F";
};
template <class B, class T>
UpwindLimitedProductC2F(B, T) -> UpwindLimitedProductC2F<B, T>;

template <class B = NoBC, class T = NoBC>
struct AdvectionC2C : Operator<AdvectionC2C<B, T>, rules::AdvectionC2C, B, T> {
    static constexpr std::string_view name = "AdvectionC2C";
};
template <class B, class T>
AdvectionC2C(B, T) -> AdvectionC2C<B, T>;

} // namespace strata::ops
