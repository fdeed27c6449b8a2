// Operator matrices: a stencil expression that is affine in one field x, as the band matrix M and vector b of
// f(x) = M x + b, per column.
//
//   BandMatrix<T, RowS, ColS> m = matrixOf(backend, x, f, engine = Engine::Auto, options = {});
//
// f is a callable that builds the expression from a field of x's kind: `[&](auto const& v) { return div(interp(K) *
// grad(v)); }` (v a Field<T, ColS>; the other fields of the expression are captured as usual). The result's rows are
// the expression's levels (RowS, its staggering) and its columns x's levels (ColS). Entry (k, k + d) of column c is
// m.diagonal(d).at(c, k) for d = m.lo .. m.hi; entries whose column k + d lies outside 0 .. x.levels() - 1 are 0. The
// affine part b (boundary values of SetValue and the like, and any term without x) is m.affine, f evaluated at x = 0.
//
// The band. m.lo .. m.hi are the outermost diagonals with an entry that is not 0 in some column (diagonal 0 alone for
// a matrix of zeros; with MatrixOptions{.trim = false}, the read band below, untrimmed): GradientC2F gives -1 .. 0,
// div(interp(K) grad(.)) with SetValue fluxes -1 .. 1 (-2 .. 2 with Extrapolate, whose boundary rows copy their
// neighbour's), the divergence of the third-order upwind product at least -2 .. 2: pentadiagonal. They lie within
// readBandOf<expression>: the levels the expression reads around its output level, as its operators' footprints
// (boundary stencils included) add up along every path from the root to a field leaf.
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
#include <optional>
#include <type_traits>
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

// The diagonal of each row that probe j gives, row after row from row 0: the offset d - lo of the column l in
// k + lo .. k + hi with l = j (mod w), and whether l lies in the field's columnLevels levels. Stepped (the offset falls
// by 1 mod w from one row to the next), not divided: an integer division per entry costs more than the entry.
class ProbedRows {
public:
    STRATA_HD ProbedRows(int lo, uint32_t w, uint32_t j, uint32_t columnLevels)
        : m_first(lo), m_offset(static_cast<uint32_t>(((int64_t(j) - lo) % int64_t(w) + int64_t(w)) % int64_t(w))),
          m_w(w), m_columnLevels(columnLevels) {}
    STRATA_HD uint32_t offset() const { return m_offset; } // d - lo: the index into the diagonals
    STRATA_HD bool inside() const {
        int64_t const l = m_first + m_offset;
        return l >= 0 && l < int64_t(m_columnLevels);
    }
    STRATA_HD void next() {
        ++m_first;
        m_offset = m_offset == 0 ? m_w - 1 : m_offset - 1;
    }

private:
    int64_t m_first; // k + lo
    uint32_t m_offset;
    uint32_t m_w;
    uint32_t m_columnLevels;
};

// Whether level l, l = 0, 1, ..., is one of probe j's (l = j mod w), stepped as ProbedRows is.
class ProbeLevels {
public:
    STRATA_HD ProbeLevels(uint32_t w, uint32_t j) : m_w(w), m_j(j) {}
    STRATA_HD bool probed() const { return m_residue == m_j; }
    STRATA_HD void next() { m_residue = m_residue + 1 == m_w ? 0 : m_residue + 1; }

private:
    uint32_t m_w, m_j, m_residue = 0;
};

// Probe j: 1 at the levels l with l mod w = j.
template <class T, class S>
struct ProbeBody {
    FieldView<T, S> probe;
    uint32_t w;
    uint32_t j;
    STRATA_HD void operator()(uint32_t col) const {
        ProbeLevels levels(w, j);
        for (uint32_t l = 0; l < probe.levels; ++l, levels.next())
            probe(col, l) = levels.probed() ? T(1) : T(0);
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
        ProbedRows rows(lo, w, j, columnLevels);
        for (uint32_t k = 0; k < probed.levels; ++k, rows.next())
            diag[rows.offset()](col, k) = rows.inside() ? probed(col, k) - affine(col, k) : T(0);
    }
};

// The same steps a value per worker, for the backends whose blocks have many workers: workers side by side then take
// neighbouring levels of a column (on a GPU one worker per column would read a column's stride apart from its
// neighbour). Index i is level i mod levels of column i / levels; the same values as the column walks.
struct ProbedEntry {
    uint32_t offset; // d - lo: the index into the diagonals
    bool inside;     // whether the column l lies in the field
};
// Row k's entry for probe j: its column l = k + lo + offset with l mod w = j, offset = (j - k - lo) mod w.
STRATA_HD inline ProbedEntry probedEntry(int lo, uint32_t w, uint32_t j, uint32_t k, uint32_t columnLevels) {
    int64_t const width = w;
    auto const offset = static_cast<uint32_t>(((int64_t(j) - k - lo) % width + width) % width);
    int64_t const l = int64_t(k) + lo + offset;
    return {offset, l >= 0 && l < int64_t(columnLevels)};
}

// PointOf<Body>: a column body's work for one value.
template <class Body>
struct PointOf;

template <class T, class S>
struct PointOf<ProbeBody<T, S>> {
    ProbeBody<T, S> columns;
    STRATA_HD void operator()(uint32_t i) const {
        auto const& p = columns;
        uint32_t const col = i / p.probe.levels, l = i % p.probe.levels;
        p.probe(col, l) = l % p.w == p.j ? T(1) : T(0);
    }
};

template <class T, class RowS, uint32_t MaxW>
struct PointOf<ExtractKernelBody<T, RowS, MaxW>> {
    ExtractKernelBody<T, RowS, MaxW> columns;
    STRATA_HD void operator()(uint32_t i) const {
        auto const& e = columns;
        uint32_t const col = i / e.probed.levels, k = i % e.probed.levels;
        ProbedEntry const at = probedEntry(e.lo, e.w, e.j, k, e.columnLevels);
        e.diag[at.offset](col, k) = at.inside ? e.probed(col, k) - e.affine(col, k) : T(0);
    }
};

// A column walk, body(col), on the one-worker CPU backends; else the same work a value a worker, PointOf<Body>, over
// `levels` values a column.
template <class Backend, class Body>
void walkColumns(Backend const& backend, uint32_t columns, uint32_t levels, Body const& body) {
    if constexpr (Backend::oneWorkerPerBlock)
        threaded::threaded(backend, threaded::independent(columns), body);
    else
        threaded::threaded(backend, threaded::independent(columns * levels), PointOf<Body>{body});
}

} // namespace detail

namespace detail {

// Keeps the outermost diagonals with an entry that is not 0 in some column and those between (diagonal 0 alone, or
// the one nearest it, for a matrix of zeros). Reads the diagonals on the host.
template <class T, class RowS, class ColS>
void trimBand(BandMatrix<T, RowS, ColS>& m) {
    auto const nonzero = [](Field<T, RowS>& d) {
        d.toHost();
        for (uint32_t c = 0; c < d.columns(); ++c)
            for (T const v : d.column(c))
                if (v != T(0)) return true;
        return false;
    };
    int first = m.lo, last = m.hi;
    while (first < last && !nonzero(m.diagonal(first)))
        ++first;
    while (last > first && !nonzero(m.diagonal(last)))
        --last;
    if (first == last && !nonzero(m.diagonal(first))) first = last = std::clamp(0, m.lo, m.hi);
    std::vector<Field<T, RowS>> kept;
    for (int d = first; d <= last; ++d)
        kept.push_back(std::move(m.diagonal(d)));
    m.diagonals = std::move(kept);
    m.lo = first;
    m.hi = last;
}

} // namespace detail

// The most diagonals a matrix may have (a band of 16 levels; the built-in operators compose to far fewer).
inline constexpr uint32_t maxMatrixBand = 16;

struct MatrixOptions {
    // Trim the band to its outermost diagonals with an entry that is not 0, reading the diagonals on the host (a copy
    // from a GPU). false: keep every diagonal of readBandOf<expression>, those outside the matrix's true band 0, and
    // touch nothing on the host (for a matrix assembled every step on a device).
    bool trim = true;
};

namespace detail {

// A matrix of zeros over Expr's read band, its rows Expr's levels and its columns x's (what matrixOf and jacobianOf
// fill).
template <class Expr, class T, class ColS>
auto readBandMatrix(Field<T, ColS> const& x) {
    using RowS = typename Expr::Stagger;
    static_assert(!std::is_same_v<RowS, AnyStagger>,
                  "matrixOf, jacobianOf: f(x) must be an expression of fields, not a scalar");
    constexpr ReadBand band = ReadBandOf<Expr>::value;
    static_assert(band.any, "matrixOf, jacobianOf: f(x) reads no field");
    static_assert(band.hi - band.lo + 1 <= int(maxMatrixBand),
                  "matrixOf, jacobianOf: the expression's band is wider than maxMatrixBand levels");
    BandMatrix<T, RowS, ColS> m{band.lo, band.hi, {}, Field<T, RowS>(x.gridPtr(), x.columns(), x.space())};
    for (int d = band.lo; d <= band.hi; ++d)
        m.diagonals.emplace_back(x.gridPtr(), x.columns(), x.space());
    return m;
}

} // namespace detail

namespace detail {

// Fills m (x's read-band matrix of f, readBandMatrix's shape) by probing, with `probe` and `probed` as scratch: the
// work of matrixOf.
template <class Backend, class T, class RowS, class ColS, class F>
void probeMatrix(Backend const& backend, Field<T, ColS> const& x, F const& f, Engine engine,
                 BandMatrix<T, RowS, ColS>& m, Field<T, ColS>& probe, Field<T, RowS>& probed) {
    uint32_t const w = static_cast<uint32_t>(m.hi - m.lo + 1);
    uint32_t const columns = x.columns();
    if (columns == 0) return;
    uint32_t const levels = probe.levels(), rows = probed.levels();
    // zeros (l mod 1 is never 1): the probe may hold an earlier call's
    walkColumns(backend, columns, levels, ProbeBody<T, ColS>{probe.view(), 1, 1});
    evaluate(backend, m.affine, f(std::as_const(probe)), engine); // probe is 0: b
    ExtractKernelBody<T, RowS, maxMatrixBand> extract{
        std::as_const(probed).view(), std::as_const(m.affine).view(), {}, m.lo, w, 0, x.levels()};
    for (uint32_t d = 0; d < w; ++d)
        extract.diag[d] = m.diagonals[d].view();
    for (uint32_t j = 0; j < w; ++j) {
        walkColumns(backend, columns, levels, ProbeBody<T, ColS>{probe.view(), w, j});
        evaluate(backend, probed, f(std::as_const(probe)), engine);
        extract.j = j;
        walkColumns(backend, columns, rows, extract);
    }
}

} // namespace detail

template <class Backend, class T, class ColS, class F>
auto matrixOf(Backend const& backend, Field<T, ColS> const& x, F const& f, Engine engine = Engine::Auto,
              MatrixOptions const& options = {}) {
    using Expr = ExprOf<decltype(f(x))>;
    using RowS = typename Expr::Stagger;
    auto m = detail::readBandMatrix<Expr>(x);
    Field<T, ColS> probe(x.gridPtr(), x.columns(), x.space());
    Field<T, RowS> probed(x.gridPtr(), x.columns(), x.space());
    detail::probeMatrix(backend, x, f, engine, m, probe, probed);
    if (options.trim) detail::trimBand(m);
    return m;
}

// A matrix assembled again and again (every time step, as the model's implicit processes do) into the same fields:
//
//   ops::MatrixAssembly<T, RowS, ColS> assembly;                       // a member of the process
//   BandMatrix<T, RowS, ColS> const& m = assembly(backend, x, f, engine);
//
// gives matrixOf(backend, x, f, engine, MatrixOptions{.trim = false})'s matrix, the same bits, in fields (and
// scratch) allocated on the first call and kept while x's grid, columns and memory space stay the same: a call then
// allocates and zeroes nothing (matrixOf's eight fields a call are about half of its time on the CPU). RowS is the
// expression's staggering (checked). The reference stays valid until the next call.
template <class T, class RowS, class ColS>
class MatrixAssembly {
public:
    template <class Backend, class F>
    BandMatrix<T, RowS, ColS> const& operator()(Backend const& backend, Field<T, ColS> const& x, F const& f,
                                                Engine engine = Engine::Auto) {
        using Expr = ExprOf<decltype(f(x))>;
        static_assert(std::is_same_v<typename Expr::Stagger, RowS>,
                      "MatrixAssembly<T, RowS, ColS>: RowS must be the staggering of f(x)");
        bool const fits = m_matrix && m_probe->gridPtr() == x.gridPtr() && m_probe->columns() == x.columns() &&
                          m_probe->space() == x.space() &&
                          m_matrix->diagonals.size() == std::size_t(readBandOf<Expr>.hi - readBandOf<Expr>.lo + 1);
        if (!fits) {
            m_matrix.reset();
            m_probe.reset();
            m_probed.reset();
            m_matrix.emplace(detail::readBandMatrix<Expr>(x));
            m_probe.emplace(x.gridPtr(), x.columns(), x.space());
            m_probed.emplace(x.gridPtr(), x.columns(), x.space());
        }
        detail::probeMatrix(backend, x, f, engine, *m_matrix, *m_probe, *m_probed);
        return *m_matrix;
    }

private:
    std::optional<BandMatrix<T, RowS, ColS>> m_matrix;
    std::optional<Field<T, ColS>> m_probe;
    std::optional<Field<T, RowS>> m_probed;
};

// ---------------------------------------------------------------------------------------------------------------
// Jacobians: the band matrix of the derivative of any stencil expression with respect to one field, at a state.
//
//   Jacobian<T, RowS, ColS> jac = jacobianOf(backend, x, f, engine = Engine::Auto, options = {});
//
// jac.matrix.diagonal(d).at(c, k) is d f(x)[k] / d x[k + d] in column c, and jac.value holds f(x). f is called with a
// Field<Dual<T>, ColS> (forward-mode dual numbers: a value and a derivative), so it must be generic in the field it
// gets (`[&](auto const& v) { ... }`) and every pointwise function in it must take the dual type: the built-in + - * /
// and unary minus do, and so does every built-in operator (their comparisons, absolute values and minima act on the
// value and carry the derivative of the branch taken: at a kink, the one-sided derivative of that branch). The other
// fields of the expression stay Field<T>. The derivative seeds are the probes of matrixOf, so W evaluations give the
// band, each entry the derivative carried through the expression's own operations (no difference of two
// evaluations). jac.matrix.affine is 0: the Jacobian is linear.
template <class T>
struct Dual {
    T v{};
    T d{};
    Dual() = default;
    STRATA_HD Dual(T value) : v(value), d(T(0)) {} // implicit: a constant in an expression of duals
    STRATA_HD Dual(T value, T derivative) : v(value), d(derivative) {}
};
template <class T>
STRATA_HD Dual<T> operator+(Dual<T> a, Dual<T> b) {
    return {a.v + b.v, a.d + b.d};
}
template <class T>
STRATA_HD Dual<T> operator-(Dual<T> a, Dual<T> b) {
    return {a.v - b.v, a.d - b.d};
}
template <class T>
STRATA_HD Dual<T> operator-(Dual<T> a) {
    return {-a.v, -a.d};
}
template <class T>
STRATA_HD Dual<T> operator*(Dual<T> a, Dual<T> b) {
    return {a.v * b.v, a.d * b.v + a.v * b.d};
}
template <class T>
STRATA_HD Dual<T> operator/(Dual<T> a, Dual<T> b) {
    T const q = a.v / b.v;
    return {q, (a.d - q * b.d) / b.v};
}
template <class T>
STRATA_HD bool operator<(Dual<T> a, Dual<T> b) {
    return a.v < b.v;
}
template <class T>
STRATA_HD bool operator>(Dual<T> a, Dual<T> b) {
    return a.v > b.v;
}
template <class T>
STRATA_HD bool operator<=(Dual<T> a, Dual<T> b) {
    return a.v <= b.v;
}
template <class T>
STRATA_HD bool operator>=(Dual<T> a, Dual<T> b) {
    return a.v >= b.v;
}
template <class T>
STRATA_HD bool operator==(Dual<T> a, Dual<T> b) {
    return a.v == b.v;
}
// Mixed with T (a grid spacing, a scalar of the expression, a field of T): T is a constant.
#define STRATA_DUAL_MIXED(OP)                                                                                          \
    template <class T>                                                                                                 \
    STRATA_HD auto operator OP(Dual<T> a, T b) {                                                                       \
        return a OP Dual<T>(b);                                                                                        \
    }                                                                                                                  \
    template <class T>                                                                                                 \
    STRATA_HD auto operator OP(T a, Dual<T> b) {                                                                       \
        return Dual<T>(a) OP b;                                                                                        \
    }
STRATA_DUAL_MIXED(+)
STRATA_DUAL_MIXED(-)
STRATA_DUAL_MIXED(*)
STRATA_DUAL_MIXED(/)
STRATA_DUAL_MIXED(<)
STRATA_DUAL_MIXED(>)
STRATA_DUAL_MIXED(<=)
STRATA_DUAL_MIXED(>=)
STRATA_DUAL_MIXED(==)
#undef STRATA_DUAL_MIXED

template <class T, class RowS, class ColS>
struct Jacobian {
    BandMatrix<T, RowS, ColS> matrix; // the derivative; affine 0
    Field<T, RowS> value;             // f(x)
};

namespace detail {

// x seeded with probe j: value x, derivative 1 at the levels l with l mod w = j.
template <class T, class S>
struct SeedBody {
    FieldView<T const, S> x;
    FieldView<Dual<T>, S> seeded;
    uint32_t w;
    uint32_t j;
    STRATA_HD void operator()(uint32_t col) const {
        ProbeLevels levels(w, j);
        for (uint32_t l = 0; l < seeded.levels; ++l, levels.next())
            seeded(col, l) = Dual<T>(x(col, l), levels.probed() ? T(1) : T(0));
    }
};

// The derivative parts of row k into the diagonal of its column l = j (mod w), as ExtractKernelBody; the values once.
template <class T, class RowS, uint32_t MaxW>
struct DualExtractBody {
    FieldView<Dual<T> const, RowS> probed;
    FieldView<T, RowS> value;
    FieldView<T, RowS> diag[MaxW];
    int lo;
    uint32_t w;
    uint32_t j;
    uint32_t columnLevels;
    STRATA_HD void operator()(uint32_t col) const {
        ProbedRows rows(lo, w, j, columnLevels);
        for (uint32_t k = 0; k < probed.levels; ++k, rows.next()) {
            Dual<T> const r = probed(col, k);
            diag[rows.offset()](col, k) = rows.inside() ? r.d : T(0);
            if (j == 0) value(col, k) = r.v;
        }
    }
};

template <class T, class S>
struct PointOf<SeedBody<T, S>> {
    SeedBody<T, S> columns;
    STRATA_HD void operator()(uint32_t i) const {
        auto const& s = columns;
        uint32_t const col = i / s.seeded.levels, l = i % s.seeded.levels;
        s.seeded(col, l) = Dual<T>(s.x(col, l), l % s.w == s.j ? T(1) : T(0));
    }
};

template <class T, class RowS, uint32_t MaxW>
struct PointOf<DualExtractBody<T, RowS, MaxW>> {
    DualExtractBody<T, RowS, MaxW> columns;
    STRATA_HD void operator()(uint32_t i) const {
        auto const& e = columns;
        uint32_t const col = i / e.probed.levels, k = i % e.probed.levels;
        ProbedEntry const at = probedEntry(e.lo, e.w, e.j, k, e.columnLevels);
        Dual<T> const r = e.probed(col, k);
        e.diag[at.offset](col, k) = at.inside ? r.d : T(0);
        if (e.j == 0) e.value(col, k) = r.v;
    }
};

} // namespace detail

template <class Backend, class T, class ColS, class F>
auto jacobianOf(Backend const& backend, Field<T, ColS> const& x, F const& f, Engine engine = Engine::Auto,
                MatrixOptions const& options = {}) {
    using Expr = ExprOf<decltype(f(std::declval<Field<Dual<T>, ColS> const&>()))>;
    using RowS = typename Expr::Stagger;
    constexpr ReadBand band = detail::ReadBandOf<Expr>::value;
    constexpr uint32_t w = static_cast<uint32_t>(band.hi - band.lo + 1);
    auto const grid = x.gridPtr();
    uint32_t const columns = x.columns();
    Jacobian<T, RowS, ColS> jac{detail::readBandMatrix<Expr>(x), Field<T, RowS>(grid, columns, x.space())};
    if (columns > 0) {
        Field<Dual<T>, ColS> seeded(grid, columns, x.space());
        Field<Dual<T>, RowS> probed(grid, columns, x.space());
        detail::DualExtractBody<T, RowS, maxMatrixBand> extract{
            std::as_const(probed).view(), jac.value.view(), {}, band.lo, w, 0, x.levels()};
        for (uint32_t d = 0; d < w; ++d)
            extract.diag[d] = jac.matrix.diagonals[d].view();
        for (uint32_t j = 0; j < w; ++j) {
            detail::walkColumns(backend, columns, seeded.levels(),
                                detail::SeedBody<T, ColS>{x.view(), seeded.view(), w, j});
            evaluate(backend, probed, f(std::as_const(seeded)), engine);
            extract.j = j;
            detail::walkColumns(backend, columns, probed.levels(), extract);
        }
    }
    if (options.trim) detail::trimBand(jac.matrix);
    return jac;
}

} // namespace strata::ops
