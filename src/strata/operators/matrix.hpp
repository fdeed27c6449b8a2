// Operator matrices: a stencil expression that is affine in one field x, as the band matrix M and vector b of
// f(x) = M x + b, per column.
//
//   BandMatrix<T, RowS, ColS> m = matrixOf(backend, x, f, engine = Engine::Auto);
//
// f is a callable that builds the expression from a field of x's kind: `[&](auto const& v) { return div(interp(K) *
// grad(v)); }` (v a Field<T, ColS>; the other fields of the expression are captured as usual). The result's rows are
// the expression's levels (RowS, its staggering) and its columns x's levels (ColS). Entry (k, k + d) of column c is
// m.diagonal(d).at(c, k) for d = m.lo .. m.hi; entries whose column k + d lies outside 0 .. x.levels() - 1 are 0. The
// affine part b (boundary values of SetValue and the like, and any term without x) is m.affine, f evaluated at x = 0.
//
// The band. m.lo .. m.hi are the outermost diagonals with an entry that is not 0 in some column (diagonal 0 alone for
// a matrix of zeros): GradientC2F gives -1 .. 0, div(interp(K) grad(.)) with SetValue fluxes -1 .. 1 (-2 .. 2 with
// Extrapolate, whose boundary rows copy their neighbour's), the divergence of the third-order upwind product at least
// -2 .. 2: pentadiagonal. They lie within readBandOf<expression>: the levels the expression reads around its output
// level, as its operators' footprints (boundary stencils included) add up along every path from the root to a field
// leaf.
//
// How. f is evaluated at x = 0 and at W = hi - lo + 1 probe fields (lo, hi: the read band), probe j being 1 at the
// levels l with l mod W = j and 0 elsewhere: the W columns a row reads, l = k + lo .. k + hi, fall in W different
// probes, so row k of probe j holds the one entry (k, l) with l mod W = j, plus b. So entry = f(probe_j)[k] - f(0)[k],
// computed in T: exact where b is 0 at that row, and otherwise correct to the rounding of (entry + b) - b. W + 1
// evaluations of f through the engine, on the backend, in x's memory space; the band is then read on the host.
//
// Contract. f must be affine in x: if it is not (a product of two x, an upwind product whose velocity is x), the
// matrix is that of no function (the test of an affine expression: M x + b equals f(x), tests/operators/
// test_matrix.cpp). Expressions that divide by x are not affine. Engines: Direct and Shmem give the same bits of f,
// hence the same matrices, on every backend.
#pragma once

#include <strata/core/error.hpp>
#include <strata/core/threaded.hpp>
#include <strata/operators/engine.hpp>
#include <strata/operators/expr.hpp>
#include <strata/operators/field.hpp>
#include <strata/operators/stencil_node.hpp>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

namespace strata::ops {

// The levels k + lo .. k + hi an expression reads of its field leaves around its output level k (any: whether it
// reads a field at all).
struct ReadBand {
    bool any = false;
    int lo = 0;
    int hi = 0;
};

namespace detail {

constexpr ReadBand unite(ReadBand a, ReadBand b) {
    if (!a.any) return b;
    if (!b.any) return a;
    return {true, std::min(a.lo, b.lo), std::max(a.hi, b.hi)};
}

template <class E>
struct ReadBandOf {
    static constexpr ReadBand value{}; // scalars and coordinates read no field
};
template <class T, class S>
struct ReadBandOf<FieldLeaf<T, S>> {
    static constexpr ReadBand value{true, 0, 0};
};
template <class F, class... Args>
struct ReadBandOf<Pointwise<F, Args...>> {
    static constexpr ReadBand value = [] {
        ReadBand r{};
        ((r = unite(r, ReadBandOf<Args>::value)), ...);
        return r;
    }();
};
template <class Op, class... Args>
struct ReadBandOf<StencilNode<Op, Args...>> {
    template <std::size_t... I>
    static constexpr ReadBand of(std::index_sequence<I...>) {
        ReadBand r{};
        auto const widen = [](ReadBand arg, Footprint fp) {
            return arg.any ? ReadBand{true, arg.lo + fp.lo, arg.hi + fp.hi} : arg;
        };
        ((r = unite(r, widen(ReadBandOf<PackElement<I, Args...>>::value, Op::template footprint<I>()))), ...);
        return r;
    }
    static constexpr ReadBand value = of(std::index_sequence_for<Args...>{});
};

} // namespace detail

template <class E>
inline constexpr ReadBand readBandOf = detail::ReadBandOf<ExprOf<E>>::value;

template <class T, class RowS, class ColS>
struct BandMatrix {
    int lo = 0;
    int hi = 0;
    std::vector<Field<T, RowS>> diagonals; // diagonals[d - lo]: entry (k, k + d)
    Field<T, RowS> affine;                 // f(0)

    Field<T, RowS>& diagonal(int d) { return diagonals.at(static_cast<std::size_t>(d - lo)); }
    Field<T, RowS> const& diagonal(int d) const { return diagonals.at(static_cast<std::size_t>(d - lo)); }
};

namespace detail {

// Probe j: 1 at the levels l with l mod w = j.
template <class T, class S>
struct ProbeBody {
    FieldView<T, S> probe;
    uint32_t w;
    uint32_t j;
    STRATA_HD void operator()(uint32_t col) const {
        for (uint32_t l = 0; l < probe.levels; ++l)
            probe(col, l) = l % w == j ? T(1) : T(0);
    }
};

// Row k of f(probe j) less f(0) into the diagonal of the column l (k + lo <= l <= k + hi) with l mod w = j; rows
// whose such column lies outside the field get 0 there.
template <class T, class RowS, uint32_t MaxW>
struct ExtractKernelBody {
    FieldView<T const, RowS> probed;
    FieldView<T const, RowS> affine;
    FieldView<T, RowS> diag[MaxW];
    int lo;
    uint32_t w;
    uint32_t j;
    uint32_t columnLevels;
    STRATA_HD void operator()(uint32_t col) const {
        for (uint32_t k = 0; k < probed.levels; ++k) {
            // the column l in k + lo .. k + hi with l = j (mod w)
            int64_t const first = int64_t(k) + lo;
            int64_t const shift = ((int64_t(j) - first) % int64_t(w) + int64_t(w)) % int64_t(w);
            int64_t const l = first + shift;
            T const entry = l >= 0 && l < int64_t(columnLevels) ? probed(col, k) - affine(col, k) : T(0);
            diag[l - first](col, k) = entry;
        }
    }
};

} // namespace detail

// The most diagonals a matrix may have (a band of 16 levels; the built-in operators compose to far fewer).
inline constexpr uint32_t maxMatrixBand = 16;

template <class Backend, class T, class ColS, class F>
auto matrixOf(Backend const& backend, Field<T, ColS> const& x, F const& f, Engine engine = Engine::Auto) {
    using Expr = ExprOf<decltype(f(x))>;
    using RowS = typename Expr::Stagger;
    static_assert(!std::is_same_v<RowS, AnyStagger>, "matrixOf: f(x) must be an expression of fields, not a scalar");
    constexpr ReadBand band = detail::ReadBandOf<Expr>::value;
    static_assert(band.any, "matrixOf: f(x) reads no field");
    constexpr uint32_t w = static_cast<uint32_t>(band.hi - band.lo + 1);
    static_assert(w <= maxMatrixBand, "matrixOf: the expression's band is wider than maxMatrixBand levels");

    auto const grid = x.gridPtr();
    uint32_t const columns = x.columns();
    BandMatrix<T, RowS, ColS> m{band.lo, band.hi, {}, Field<T, RowS>(grid, columns, x.space())};
    for (uint32_t d = 0; d < w; ++d)
        m.diagonals.emplace_back(grid, columns, x.space());
    if (columns == 0) return m;

    Field<T, ColS> probe(grid, columns, x.space());
    evaluate(backend, m.affine, f(probe), engine); // probe is 0: b
    Field<T, RowS> probed(grid, columns, x.space());
    detail::ExtractKernelBody<T, RowS, maxMatrixBand> extract{
        std::as_const(probed).view(), std::as_const(m.affine).view(), {}, band.lo, w, 0, x.levels()};
    for (uint32_t d = 0; d < w; ++d)
        extract.diag[d] = m.diagonals[d].view();
    for (uint32_t j = 0; j < w; ++j) {
        threaded::threaded(backend, threaded::independent(columns), detail::ProbeBody<T, ColS>{probe.view(), w, j});
        evaluate(backend, probed, f(probe), engine);
        extract.j = j;
        threaded::threaded(backend, threaded::independent(columns), extract);
    }
    // The band actually used: the outermost diagonals with an entry that is not 0.
    auto const nonzero = [](Field<T, RowS>& d) {
        d.toHost();
        for (uint32_t c = 0; c < d.columns(); ++c)
            for (T const v : d.column(c))
                if (v != T(0)) return true;
        return false;
    };
    int first = band.lo, last = band.hi;
    while (first < last && !nonzero(m.diagonal(first)))
        ++first;
    while (last > first && !nonzero(m.diagonal(last)))
        --last;
    if (first == last && !nonzero(m.diagonal(first))) first = last = std::clamp(0, band.lo, band.hi);
    std::vector<Field<T, RowS>> kept;
    for (int d = first; d <= last; ++d)
        kept.push_back(std::move(m.diagonal(d)));
    m.diagonals = std::move(kept);
    m.lo = first;
    m.hi = last;
    return m;
}

} // namespace strata::ops
