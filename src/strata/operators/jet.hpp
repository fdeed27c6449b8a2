// A row of an expression's Jacobian, and its value, at one point in one evaluation: for implicit steps that build
// their matrix where they solve it, with no matrix fields in between.
//
//   auto const e = div(rhoK * grad(ops::seeded<3>(x)));        // x: a Field or a stencil-free expression of fields
//   ops::TridiagonalRow<double> r = ops::tridiagonalRowAt(e, grid, col, k);   // in a kernel (STRATA_HD)
//   // r.lower, r.diagonal, r.upper: d e[k] / d x[k-1], d x[k], d x[k+1] in column col; r.value: e[k] at x
//   double v = ops::valueAt(div(rhoK * grad(x)), grid, col, k);               // the plain expression at one point
//
// seeded<W>(x) is a leaf whose values are Jet<T, W>: x's value and W derivative components. Evaluated for row k
// (tridiagonalRowAt), level l is seeded in component (l - k + W / 2) mod W: the row's own level in the middle, k - 1
// and k + 1 beside it; elsewhere (an engine evaluating the jets into a field) in component l mod W. Through the
// expression's own operations (the operators and + - * / take jets as they take Dual, matrix.hpp), the row carries,
// in each component, the sum of the derivatives with respect to the levels of that class it reads. Where those levels
// span at most W (every row reads x only at k - 1 .. k + 1 for W = 3), each component is one entry of the row, and
// tridiagonalRowAt reads the row's three. This is the caller's claim, not the type's: the static read band
// (matrix.hpp, readBandOf) counts boundary stencils a given choice of boundary conditions never takes (div(K grad x)
// with SetValue fluxes reads -1 .. 1, its read band says -2 .. 2), and a W narrower than what a row reads sums two
// entries into one component. tests/operators/test_jet.cpp checks the rows against matrixOf's (which probes the whole
// read band), and shows a narrow W on a pentadiagonal expression failing. Seeded relative to the row, the seeds are
// constants once the operators are inlined, and the row's entries are fixed components: no selects at run time.
//
// The value part is the plain evaluation's: every operation on a jet does the plain operation on the values, so
// r.value has the bits of valueAt at the same x. The derivatives are the chain rule's, not differences of two
// evaluations: exact where the operations are (a linear expression's matrix), and for a nonlinear expression the
// Jacobian at x (at a kink, the branch taken; matrix.hpp's Dual).
//
// The points are evaluated as the Direct engine does (its context, boundary branches included), on any backend, in
// any kernel: the expression is built on the host from fields (or views: FieldLeaf) and copied into the kernel.
#pragma once

#include <strata/core/config.hpp>
#include <strata/operators/engine/direct.hpp>
#include <strata/operators/expr.hpp>
#include <strata/operators/grid.hpp>
#include <strata/operators/matrix.hpp>
#include <strata/operators/stencils.hpp>

#include <cstdint>
#include <type_traits>

namespace strata::ops {

template <class T, uint32_t W>
struct Jet {
    static_assert(W >= 1, "Jet<T, W>: at least one derivative component");
    T v{};
    T d[W]{};
    Jet() = default;
    STRATA_HD Jet(T value) : v(value) { // implicit: a constant in an expression of jets
        for (uint32_t i = 0; i < W; ++i)
            d[i] = T(0);
    }
};

// The arithmetic, the value's plain operation and the chain rule on each component. A constant (T) scales the
// components without the product rule's second term, which would add a zero (0 times the value) to each.
template <class T, uint32_t W>
STRATA_HD Jet<T, W> operator+(Jet<T, W> const& a, Jet<T, W> const& b) {
    Jet<T, W> r;
    r.v = a.v + b.v;
    for (uint32_t i = 0; i < W; ++i)
        r.d[i] = a.d[i] + b.d[i];
    return r;
}
template <class T, uint32_t W>
STRATA_HD Jet<T, W> operator-(Jet<T, W> const& a, Jet<T, W> const& b) {
    Jet<T, W> r;
    r.v = a.v - b.v;
    for (uint32_t i = 0; i < W; ++i)
        r.d[i] = a.d[i] - b.d[i];
    return r;
}
template <class T, uint32_t W>
STRATA_HD Jet<T, W> operator-(Jet<T, W> const& a) {
    Jet<T, W> r;
    r.v = -a.v;
    for (uint32_t i = 0; i < W; ++i)
        r.d[i] = -a.d[i];
    return r;
}
template <class T, uint32_t W>
STRATA_HD Jet<T, W> operator*(Jet<T, W> const& a, Jet<T, W> const& b) {
    Jet<T, W> r;
    r.v = a.v * b.v;
    for (uint32_t i = 0; i < W; ++i)
        r.d[i] = a.d[i] * b.v + a.v * b.d[i];
    return r;
}
template <class T, uint32_t W>
STRATA_HD Jet<T, W> operator/(Jet<T, W> const& a, Jet<T, W> const& b) {
    Jet<T, W> r;
    r.v = a.v / b.v;
    for (uint32_t i = 0; i < W; ++i)
        r.d[i] = (a.d[i] - r.v * b.d[i]) / b.v;
    return r;
}
template <class T, uint32_t W>
STRATA_HD Jet<T, W> operator+(Jet<T, W> const& a, T b) {
    Jet<T, W> r = a;
    r.v = a.v + b;
    return r;
}
template <class T, uint32_t W>
STRATA_HD Jet<T, W> operator+(T a, Jet<T, W> const& b) {
    Jet<T, W> r = b;
    r.v = a + b.v;
    return r;
}
template <class T, uint32_t W>
STRATA_HD Jet<T, W> operator-(Jet<T, W> const& a, T b) {
    Jet<T, W> r = a;
    r.v = a.v - b;
    return r;
}
template <class T, uint32_t W>
STRATA_HD Jet<T, W> operator-(T a, Jet<T, W> const& b) {
    Jet<T, W> r;
    r.v = a - b.v;
    for (uint32_t i = 0; i < W; ++i)
        r.d[i] = -b.d[i];
    return r;
}
template <class T, uint32_t W>
STRATA_HD Jet<T, W> operator*(Jet<T, W> const& a, T b) {
    Jet<T, W> r;
    r.v = a.v * b;
    for (uint32_t i = 0; i < W; ++i)
        r.d[i] = a.d[i] * b;
    return r;
}
template <class T, uint32_t W>
STRATA_HD Jet<T, W> operator*(T a, Jet<T, W> const& b) {
    Jet<T, W> r;
    r.v = a * b.v;
    for (uint32_t i = 0; i < W; ++i)
        r.d[i] = a * b.d[i];
    return r;
}
template <class T, uint32_t W>
STRATA_HD Jet<T, W> operator/(Jet<T, W> const& a, T b) {
    Jet<T, W> r;
    r.v = a.v / b;
    for (uint32_t i = 0; i < W; ++i)
        r.d[i] = a.d[i] / b;
    return r;
}
template <class T, uint32_t W>
STRATA_HD Jet<T, W> operator/(T a, Jet<T, W> const& b) {
    return Jet<T, W>(a) / b;
}
namespace detail {
template <class T, uint32_t W>
struct CoefficientOf<Jet<T, W>> {
    using type = T;
};
} // namespace detail

// Comparisons act on the values (the branch taken carries its derivative).
#define STRATA_JET_COMPARE(OP)                                                                                         \
    template <class T, uint32_t W>                                                                                     \
    STRATA_HD bool operator OP(Jet<T, W> const& a, Jet<T, W> const& b) {                                               \
        return a.v OP b.v;                                                                                             \
    }                                                                                                                  \
    template <class T, uint32_t W>                                                                                     \
    STRATA_HD bool operator OP(Jet<T, W> const& a, T b) {                                                              \
        return a.v OP b;                                                                                               \
    }                                                                                                                  \
    template <class T, uint32_t W>                                                                                     \
    STRATA_HD bool operator OP(T a, Jet<T, W> const& b) {                                                              \
        return a OP b.v;                                                                                               \
    }
STRATA_JET_COMPARE(<)
STRATA_JET_COMPARE(>)
STRATA_JET_COMPARE(<=)
STRATA_JET_COMPARE(>=)
STRATA_JET_COMPARE(==)
#undef STRATA_JET_COMPARE

// x's values, seeded: at level l, x's value and one derivative component set to 1 (the others 0; which one: above).
// X is a field leaf or stencil-free arithmetic of leaves (theta = T / exner: seeded<3>(T / exner)).
template <uint32_t W, class X>
struct SeededLeaf : LeafBase<SeededLeaf<W, X>> {
    static_assert(X::depth == 0 && X::slots == 0, "seeded<W>(x): x must be a field or stencil-free arithmetic");
    using Value = Jet<typename X::Value, W>;
    using Stagger = typename X::Stagger;
    X x;

    template <class Ctx>
    STRATA_HD Value eval(Ctx const& ctx, Level k) const {
        using T = typename X::Value;
        Value r;
        r.v = x.eval(ctx, k);
        // Selects, not r.d[j] = 1: an index known only at run time would keep the jet in memory, not registers.
        uint32_t const j = component(ctx, k);
        for (uint32_t i = 0; i < W; ++i)
            r.d[i] = i == j ? T(1) : T(0);
        return r;
    }

private:
    // Level k's component. Evaluated for one row (tridiagonalRowAt's context names it), relative to that row: the
    // row's own level in component W / 2, its neighbours beside it, levels further away wrapped modulo W (the same
    // classes as k mod W, so the same sums). The offset from the row is known where the operators are inlined, and the
    // seeds are constants there. Without a row: k mod W.
    template <class Ctx>
    STRATA_HD static uint32_t component(Ctx const& ctx, Level k) {
        if constexpr (requires { ctx.row; }) {
            // (k - row + W / 2) mod W in unsigned arithmetic, W 2^32 added so that it never wraps (row < 2^32): the
            // compiler folds k - row where k is the row's level plus a constant, and then the remainder.
            Level const shifted = k + Level{W / 2} + (Level{W} << 32) - Level{ctx.row};
            return static_cast<uint32_t>(shifted % W);
        } else {
            return static_cast<uint32_t>(k % W);
        }
    }
};

// A leaf of zeros on staggering S: seeded<W, S>() gives the Jacobian of an affine expression without reading a field.
template <class T, class S>
struct ZeroLeaf : LeafBase<ZeroLeaf<T, S>> {
    using Value = T;
    using Stagger = S;
    template <class Ctx>
    STRATA_HD Value eval(Ctx const&, Level) const {
        return T(0);
    }
};

template <uint32_t W, class X>
auto seeded(X const& x) {
    auto const e = asExpr(x);
    static_assert(!std::is_same_v<typename decltype(e)::Stagger, AnyStagger>,
                  "seeded<W>(x): x must be a field or an expression of fields, not a scalar");
    return SeededLeaf<W, std::remove_const_t<decltype(e)>>{{}, e};
}
template <uint32_t W, class S, class T = double>
SeededLeaf<W, ZeroLeaf<T, S>> seeded() {
    return {{}, {}};
}

namespace detail {
template <uint32_t W, class X>
struct ReadBandOf<SeededLeaf<W, X>> {
    static constexpr ReadBand value{true, 0, 0};
};
template <class T, class S>
struct ReadBandOf<ZeroLeaf<T, S>> {
    static constexpr ReadBand value{true, 0, 0};
};
} // namespace detail

template <class T>
struct TridiagonalRow {
    T lower;    // d e[k] / d x[k-1] (0 at k = 0)
    T diagonal; // d e[k] / d x[k]
    T upper;    // d e[k] / d x[k+1] (0 at the last level)
    T value;    // e[k]
};

// The expression at level k of column col, as the Direct engine evaluates it. Interior: k lies at least E::reach levels
// from both ends, and the operators' boundary branches are left out (expr.hpp, "Interior levels"): the same bits.
template <bool Interior = false, class E>
STRATA_HD auto valueAt(E const& e, GridView const& grid, uint32_t col, uint32_t k) {
    return e.eval(detail::DirectCtx<Interior>{grid, col}, Level{k});
}

namespace detail {
// The Direct engine's context for the evaluation of one row: seeded leaves seed relative to `row`.
template <bool Interior>
struct RowCtx : DirectCtx<Interior> {
    uint32_t row;
};
} // namespace detail

// Row k of column col of e's Jacobian with respect to its seeded leaf, and e's value there (see the top).
template <bool Interior = false, class E>
STRATA_HD auto tridiagonalRowAt(E const& e, GridView const& grid, uint32_t col, uint32_t k) {
    auto const r = e.eval(detail::RowCtx<Interior>{{grid, col}, k}, Level{k});
    using R = std::remove_cvref_t<decltype(r)>;
    using T = decltype(r.v);
    constexpr uint32_t w = sizeof(r.d) / sizeof(r.d[0]);
    static_assert(std::is_same_v<R, Jet<T, w>>, "tridiagonalRowAt: the expression must read a seeded<W> leaf");
    static_assert(w >= 3, "tridiagonalRowAt: a tridiagonal row needs seeded<W> with W >= 3");
    uint32_t const n = std::is_same_v<typename E::Stagger, Face> ? grid.n() + 1 : grid.n();
    // Seeded relative to row k (SeededLeaf): level k in component w / 2, k - 1 and k + 1 beside it.
    return TridiagonalRow<T>{Interior || k > 0 ? r.d[w / 2 - 1] : T(0), r.d[w / 2],
                             Interior || k + 1 < n ? r.d[w / 2 + 1] : T(0), r.v};
}

} // namespace strata::ops
