// Band matrices as values: matrix.hpp's BandMatrix (f(x) = M x + b per column) applied, added and composed on the
// backend, without evaluating the expressions they came from.
//
//   applyMatrix(backend, m, x, y)             y = M x + b
//   BandMatrix s = addMatrices(backend, f, g)       (f + g)(x) = (Mf + Mg) x + (bf + bg), over both bands
//   BandMatrix p = composeMatrices(backend, f, g)   (f o g)(x) = f(g(x)) = Mf Mg x + (Mf bg + bf), band
//                                                  f.lo + g.lo .. f.hi + g.hi
//
// composeMatrices(matrixOf(div), matrixOf(interp(K) * grad(.))) is the matrix of div(interp(K) * grad(.)), to
// rounding: the product of an operator's matrices is the operator's. f's columns are g's rows (f's ColS is g's RowS,
// on the same grid and columns); a product wider than maxMatrixBand diagonals is refused, as are fields of different
// grids, columns or memory spaces (strata::Error naming them).
//
// Orders, hence the bits (each the same on every backend and worker count):
//   applyMatrix     y(k) = b(k), then + M(k, k + d) x(k + d) for d = lo .. hi in turn (columns k + d of the matrix)
//   addMatrices     a diagonal of both: f's + g's; of one: copied; b: bf + bg
//   composeMatrices entry (k, k + d): 0, then + Mf(k, k + e) Mg(k + e, k + d) for e = f.lo .. f.hi in turn (rows
//                   k + e of g, d - e in g's band); entries whose column k + d lies outside the matrix are 0. The
//                   affine part is applyMatrix(f, bg)'s bits.
// M x + b equals f(x) to rounding. Bit for bit where the expression computes that sum in that order from exact
// entries: an interpolation to the faces, x[k-1] wb + x[k] wa, against 0 + wb x[k-1] + wa x[k], on any grid (its
// entries are wb and wa exactly); a boundary value of SetValue; the first-order upwind product, w times the upwind
// value, whose other entry is 0. Not a difference such as the gradient's (x[k] - x[k-1]) / dz against
// -x[k-1] / dz + x[k] / dz (tests/operators/test_matrix_algebra.cpp).
//
// Each runs one kernel, a value a worker over (column, row) pairs, in the matrices' memory space.
#pragma once

#include <strata/core/error.hpp>
#include <strata/core/threaded.hpp>
#include <strata/operators/field.hpp>
#include <strata/operators/matrix.hpp>

#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace strata::ops {

namespace detail {

// A band's diagonals as views, diag[i] the diagonal lo + i.
template <class T, class RowS>
struct BandViews {
    FieldView<T const, RowS> diag[maxMatrixBand];
    FieldView<T const, RowS> affine;
    int lo;
    uint32_t w;
};

template <class T, class RowS, class ColS>
BandViews<T, RowS> bandViews(BandMatrix<T, RowS, ColS> const& m) {
    BandViews<T, RowS> v{{}, m.affine.view(), m.lo, static_cast<uint32_t>(m.hi - m.lo + 1)};
    for (uint32_t i = 0; i < v.w; ++i)
        v.diag[i] = m.diagonals[i].view();
    return v;
}

template <class T, class RowS, class ColS>
struct ApplyBody {
    BandViews<T, RowS> m;
    FieldView<T const, ColS> x;
    FieldView<T, RowS> y;
    STRATA_HD void operator()(uint32_t i) const {
        uint32_t const col = i / y.levels, k = i % y.levels;
        T sum = m.affine(col, k);
        for (uint32_t j = 0; j < m.w; ++j) {
            int64_t const l = int64_t(k) + m.lo + j;
            if (l >= 0 && l < int64_t(x.levels)) sum = sum + m.diag[j](col, k) * x(col, static_cast<uint32_t>(l));
        }
        y(col, k) = sum;
    }
};

template <class T, class RowS>
struct AddBody {
    BandViews<T, RowS> f, g;
    FieldView<T, RowS> diag[maxMatrixBand];
    FieldView<T, RowS> affine;
    int lo;
    uint32_t w;
    STRATA_HD void operator()(uint32_t i) const {
        uint32_t const col = i / affine.levels, k = i % affine.levels;
        for (uint32_t j = 0; j < w; ++j) {
            int const d = lo + int(j);
            bool const inF = d >= f.lo && d < f.lo + int(f.w), inG = d >= g.lo && d < g.lo + int(g.w);
            T const a = inF ? f.diag[d - f.lo](col, k) : T(0), b = inG ? g.diag[d - g.lo](col, k) : T(0);
            diag[j](col, k) = inF && inG ? a + b : inF ? a : b;
        }
        affine(col, k) = f.affine(col, k) + g.affine(col, k);
    }
};

template <class T, class RowS, class MidS>
struct ComposeBody {
    BandViews<T, RowS> f;
    BandViews<T, MidS> g;
    FieldView<T, RowS> diag[maxMatrixBand];
    FieldView<T, RowS> affine;
    int lo;
    uint32_t w;
    uint32_t midLevels, columnLevels;
    STRATA_HD void operator()(uint32_t i) const {
        uint32_t const col = i / affine.levels, k = i % affine.levels;
        for (uint32_t j = 0; j < w; ++j) {
            int const d = lo + int(j);
            int64_t const l = int64_t(k) + d;
            T sum = T(0);
            if (l >= 0 && l < int64_t(columnLevels))
                for (uint32_t a = 0; a < f.w; ++a) {
                    int const e = f.lo + int(a);
                    int64_t const m = int64_t(k) + e;
                    int const b = d - e - g.lo;
                    if (m >= 0 && m < int64_t(midLevels) && b >= 0 && b < int(g.w))
                        sum = sum + f.diag[a](col, k) * g.diag[b](col, static_cast<uint32_t>(m));
                }
            diag[j](col, k) = sum;
        }
        T b = f.affine(col, k);
        for (uint32_t a = 0; a < f.w; ++a) {
            int64_t const m = int64_t(k) + f.lo + int(a);
            if (m >= 0 && m < int64_t(midLevels)) b = b + f.diag[a](col, k) * g.affine(col, static_cast<uint32_t>(m));
        }
        affine(col, k) = b;
    }
};

template <class T, class S1, class S2>
void requireSameColumns(char const* where, char const* first, Field<T, S1> const& a, char const* second,
                        Field<T, S2> const& b) {
    if (a.gridPtr() != b.gridPtr() || a.columns() != b.columns() || a.space() != b.space())
        throw Error(std::string(first) + " and " + second + " lie on different grids, columns or memory spaces", where,
                    "fields of one grid, column count and memory space");
}

// A band of w diagonals from lo, of zeros, shaped as `like`.
template <class T, class RowS, class ColS>
BandMatrix<T, RowS, ColS> zeroBand(Field<T, RowS> const& like, int lo, uint32_t w) {
    BandMatrix<T, RowS, ColS> m{lo, lo + int(w) - 1, {}, Field<T, RowS>(like.gridPtr(), like.columns(), like.space())};
    for (uint32_t i = 0; i < w; ++i)
        m.diagonals.emplace_back(like.gridPtr(), like.columns(), like.space());
    return m;
}

} // namespace detail

// y = M x + b (see the top of this file). y must not be x.
template <class Backend, class T, class RowS, class ColS>
void applyMatrix(Backend const& backend, BandMatrix<T, RowS, ColS> const& m, Field<T, ColS> const& x,
                 Field<T, RowS>& y) {
    char const* where = "applyMatrix";
    detail::requireSameColumns(where, "the matrix", m.affine, "x", x);
    detail::requireSameColumns(where, "the matrix", m.affine, "y", y);
    if (static_cast<void const*>(std::as_const(x).view().data) == static_cast<void const*>(y.view().data))
        throw Error("y is x", where, "a result field apart from x (M x reads x's neighbours)");
    threaded::threaded(backend, threaded::independent(y.columns() * y.levels()),
                       detail::ApplyBody<T, RowS, ColS>{detail::bandViews(m), std::as_const(x).view(), y.view()});
}

// The matrix of f + g (see the top of this file).
template <class Backend, class T, class RowS, class ColS>
BandMatrix<T, RowS, ColS> addMatrices(Backend const& backend, BandMatrix<T, RowS, ColS> const& f,
                                      BandMatrix<T, RowS, ColS> const& g) {
    detail::requireSameColumns("addMatrices", "f", f.affine, "g", g.affine);
    int const lo = std::min(f.lo, g.lo), hi = std::max(f.hi, g.hi);
    auto const w = static_cast<uint32_t>(hi - lo + 1);
    auto s = detail::zeroBand<T, RowS, ColS>(f.affine, lo, w);
    detail::AddBody<T, RowS> body{detail::bandViews(f), detail::bandViews(g), {}, s.affine.view(), lo, w};
    for (uint32_t i = 0; i < w; ++i)
        body.diag[i] = s.diagonals[i].view();
    threaded::threaded(backend, threaded::independent(s.affine.columns() * s.affine.levels()), body);
    return s;
}

// The matrix of f o g, x -> f(g(x)) (see the top of this file).
template <class Backend, class T, class RowS, class MidS, class ColS>
BandMatrix<T, RowS, ColS> composeMatrices(Backend const& backend, BandMatrix<T, RowS, MidS> const& f,
                                          BandMatrix<T, MidS, ColS> const& g) {
    char const* where = "composeMatrices";
    if (f.affine.gridPtr() != g.affine.gridPtr() || f.affine.columns() != g.affine.columns() ||
        f.affine.space() != g.affine.space())
        throw Error("f and g lie on different grids, columns or memory spaces", where,
                    "matrices of one grid, column count and memory space");
    int const lo = f.lo + g.lo, hi = f.hi + g.hi;
    auto const w = static_cast<uint32_t>(hi - lo + 1);
    if (w > maxMatrixBand)
        throw Error("the product has " + std::to_string(w) + " diagonals (" + std::to_string(lo) + " .. " +
                        std::to_string(hi) + ")",
                    where, "at most maxMatrixBand = " + std::to_string(maxMatrixBand) + " diagonals");
    auto p = detail::zeroBand<T, RowS, ColS>(f.affine, lo, w);
    uint32_t const cells = f.affine.grid().cells();
    detail::ComposeBody<T, RowS, MidS> body{detail::bandViews(f), detail::bandViews(g), {}, p.affine.view(), lo, w,
                                            MidS::levels(cells),  ColS::levels(cells)};
    for (uint32_t i = 0; i < w; ++i)
        body.diag[i] = p.diagonals[i].view();
    threaded::threaded(backend, threaded::independent(p.affine.columns() * p.affine.levels()), body);
    return p;
}

} // namespace strata::ops
