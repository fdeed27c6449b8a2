// Column integrals and reductions: one value per column, or a running integral from Center values to Face values.
//
// With n the cells of the grid, dz[k] = dzCenter[k] the thickness of cell k (grid.hpp), f a Center field and g a
// Center or Face field:
//
//   columnIntegral(backend, f, out)              out[col] = f[0] dz[0] + f[1] dz[1] + ... + f[n-1] dz[n-1]
//   columnIntegralOf(backend, shape, expr, out)  the same of a Center expression, evaluated where it is summed (no
//                                                scratch field, one launch): the bits of evaluating it into a field
//                                                with Engine::Direct and integrating that; `shape` (a Center field of
//                                                the expression's columns and grid) gives the columns and dz
//   columnIntegralsOf(backend, shape, out, e0, e1, ...)   several of those in one launch: out[i columns + col] the
//                                                integral of e_i, each with the bits of its own columnIntegralOf
//   columnIntegralFromBottom(backend, f, F, F0)  F[0] = F0,    F[k+1] = F[k] + f[k] dz[k]   (k = 0, 1, ..., n-1)
//   columnIntegralFromTop(backend, f, F, Ftop)   F[n] = Ftop,  F[k]   = F[k+1] + f[k] dz[k] (k = n-1, ..., 0)
//   columnSum / columnMin / columnMax(backend, g, out)   out[col] = the sum / min / max over the levels of g
//   hydrostaticPressure(backend, T, ps, g, Rd, pFace, pCenter)   pressure of a hydrostatic ideal-gas column
//
// Sign convention. Both running integrals add f dz as they walk away from their start value:
//   from the bottom  F(z) = F0   + integral of f from the bottom face z_0 up to z     (dF/dz = +f)
//   from the top     F(z) = Ftop + integral of f from z up to the top face z_n        (dF/dz = -f)
// so one physical profile needs opposite signs of f from the two ends. Hydrostatic pressure from the density rho,
// dp/dz = -g rho: from the surface, columnIntegralFromBottom(f = -g rho, F0 = ps); from the model top,
// columnIntegralFromTop(f = +g rho, Ftop = ptop). Sums and the definite integral run k = 0, 1, ... (bottom up).
//
// Accuracy. f[k] stands for the whole cell (midpoint rule): the integrals are exact, to rounding, for profiles
// linear in z within each cell, on any grid (uniform or stretched); second order otherwise. The definite integral is
// the last face of the integral from the bottom started at 0, bit for bit.
//
// hydrostaticPressure solves dp/dz = -g p / (Rd T) upward from the surface pressure ps at the bottom face, with the
// temperature T[k] constant within cell k:
//   pFace[0]   = ps
//   pFace[k+1] = pFace[k] exp(-g dz[k] / (Rd T[k]))
//   pCenter[k] = pFace[k] exp(-g (dz[k] / 2) / (Rd T[k]))
// i.e. each center is reached from the face below it through the lower half of its own cell. It is exact, to
// rounding, for an isothermal atmosphere: p(z) = ps exp(-g (z - z_0) / (Rd T)), z_0 the bottom face. (Integrating
// -g / (Rd T) for log p with columnIntegralFromBottom and exponentiating gives the same profile to rounding; the
// product of exponentials keeps p positive and needs no separate pass.)
//
// Arguments.
//   Levels        Field<T, Center> / Field<T, Face>, T a floating-point type; all fields of a call have the same
//                 columns and grid size, and the grid of the first argument supplies dz. Arithmetic is done in T
//                 (dz converted to T).
//   Per-column    outputs are core::Buffer<T> of exactly columns() values; per-column inputs (F0, Ftop, ps) are
//                 PerColumn<T>: either a core::Buffer<T> of columns() values or one T for every column.
//   Memory        every field and buffer lives in Backend::memSpace (checked). Inputs are read on the device side and
//                 outputs written there: call toHost() on them to read results on Cuda (a no-op on CPU backends).
//   In place      no function writes an input; hydrostaticPressure's pCenter must not be T (checked).
// A mismatch throws strata::Error naming the function and the argument.
//
// Reproducibility. Each function is one lockstep kernel over all columns with one worker per column, which walks the
// levels in the order above. (On backends with many workers per block, columns of at most 1024 levels go in tiles of
// neighbouring columns in shared memory, its workers reading neighbouring addresses; one worker per column then walks
// its column from there in the same order: TiledColumnsBody for the definite integrals and the reductions --
// columnIntegral, columnIntegralOf(s), columnSum, columnMin, columnMax --, TiledScanBody for the running integrals
// and hydrostaticPressure, whose workers also compute each level's term side by side and write the results back in
// address order.) A column's result is the same sequence of IEEE operations on every
// backend and worker count, hence bit-identical on Serial, OpenMP, Threads and Cuda (the build forbids FMA contraction;
// tests/cuda/test_cuda_column.cu checks Cuda on a device) -- except hydrostaticPressure on Cuda, whose exp is accurate
// to 1 ulp but not always rounded as the host's is.
#pragma once

#include <strata/core/error.hpp>
#include <strata/core/memory.hpp>
#include <strata/core/threaded.hpp>
#include <strata/operators/column/detail/checks.hpp>
#include <strata/operators/column/detail/integral_kernels.hpp>
#include <strata/operators/engine.hpp>
#include <strata/operators/field.hpp>

#include <cstdint>
#include <type_traits>

namespace strata::ops {

// A per-column input: one value for every column, or a buffer of one value per column. The constructors are implicit
// on purpose: pass `1e5` or a core::Buffer<double> where a PerColumn<double> is expected.
template <class T>
class PerColumn {
public:
    PerColumn(T value) : m_scalar(value) {}
    PerColumn(core::Buffer<T> const& values) : m_values(&values) {}

    core::Buffer<T> const* buffer() const { return m_values; }
    T scalar() const { return m_scalar; }

private:
    core::Buffer<T> const* m_values = nullptr;
    T m_scalar{};
};

namespace detail {

template <class Backend, class T>
PerColumnView<T> perColumnView(char const* where, char const* name, PerColumn<T> const& v, uint32_t columns) {
    if (v.buffer() == nullptr) return {nullptr, v.scalar()};
    requirePerColumn<Backend>(where, name, *v.buffer(), columns);
    return {v.buffer()->device(), T{}};
}

template <class Backend, class Body>
void launchColumns(Backend const& backend, uint32_t columns, Body const& body) {
    if (columns > 0) threaded::threaded(backend, threaded::independent(columns), body);
}

// In tiles where a block has many workers and a tile holds a column (Tile: TiledColumnsBody or TiledScanBody, with
// `Arrays` shared arrays of columnTileItems values: coalesced on a GPU), else one worker per column. The same bits
// either way.
template <class T, template <class, class> class Tile, uint32_t Arrays, class Backend, class Body>
void launchInTiles(Backend const& backend, uint32_t columns, uint32_t levels, Body const& body) {
    if constexpr (!Backend::oneWorkerPerBlock) {
        uint32_t const tileColumns = columnTileColumns(levels);
        if (tileColumns > 0 && columns > 0) {
            threaded::threaded(
                backend, threaded::independent((columns + tileColumns - 1) / tileColumns),
                threaded::interdependent<columnTileItems>(threaded::sharedBytesFor<T, columnTileItems>(Arrays)),
                Tile<T, Body>{body, columns, levels, tileColumns});
            return;
        }
    }
    launchColumns(backend, columns, body);
}

// Column-to-value kernels (a BodyChain of bodies over `levels` levels).
template <class T, class Backend, class Chain>
void launchTiledColumns(Backend const& backend, uint32_t columns, uint32_t levels, Chain const& chain) {
    launchInTiles<T, TiledColumnsBody, 1>(backend, columns, levels, chain);
}

// Running sums and products (a scan body, integral_kernels.hpp; in tiles, the exp of hydrostatic pressure runs off
// the column's chain).
template <class T, class Backend, class Body>
void launchTiledScan(Backend const& backend, uint32_t columns, uint32_t levels, Body const& body) {
    launchInTiles<T, TiledScanBody, 2>(backend, columns, levels, body);
}

template <Reduction R, class Backend, class T, class S>
void columnReduce(char const* where, Backend const& backend, Field<T, S> const& g, core::Buffer<T>& out) {
    static_assert(std::is_floating_point_v<T>, "column reductions: T must be a floating-point type");
    requireColumnField<Backend>(where, "g", g, g.columns(), g.grid().cells());
    requirePerColumn<Backend>(where, "out", out, g.columns());
    launchTiledColumns<T>(backend, g.columns(), g.levels(),
                          BodyChain<ColumnReduceBody<R, T, S>, NoBody>{{g.view(), out.device()}, {}});
}

} // namespace detail

namespace detail {
template <class T, class E>
struct ExprIntegralBody {
    E expr;
    GridView grid;
    T* out;
    // A function of its own with the expression inlined into its level loop (as the engines' targets): inlined into
    // a chain of several integrals (columnIntegralsOf), GCC leaves the expressions' evaluation as calls, which slows
    // advection's budget integrals markedly.
    STRATA_ENGINE_TARGET STRATA_HD void operator()(uint32_t col) const {
        DirectCtx<false> const ctx{grid, col};
        finish(col, [&](uint32_t k) { return static_cast<T>(expr.eval(ctx, Level{k})); });
    }
    // The integrand at (col, k), and the sum over k of get(k) dz[k] (integral_kernels.hpp: a column-to-value body).
    STRATA_HD T value(uint32_t col, uint32_t k) const {
        DirectCtx<false> const ctx{grid, col};
        return static_cast<T>(expr.eval(ctx, Level{k}));
    }
    template <class Get>
    STRATA_HD void finish(uint32_t col, Get const& get) const {
        out[col] = sumTimesDz<T>(grid, grid.n(), get);
    }
};
} // namespace detail

namespace detail {
// The ExprIntegralBody of each expression, chained (BodyChain, integral_kernels.hpp): in one column walk each integral
// in turn, its own sum in its own order, while the leaves they share are still in cache. Checks every expression's
// stagger and operands.
// `Tail` ends the chain: NoBody, or BodyChain<ThenBody<F>, NoBody> (columnIntegralsOfThen).
template <class T, class Backend, class Tail>
Tail integralBodies(Tail const& tail, T*, uint32_t, GridView const&, char const*, uint32_t) {
    return tail;
}
template <class T, class Backend, class Tail, class X, class... Xs>
auto integralBodies(Tail const& tail, T* out, uint32_t columns, GridView const& grid, char const* where, uint32_t cells,
                    X const& x, Xs const&... xs) {
    auto const expr = asExpr(x);
    using E = std::remove_cvref_t<decltype(expr)>;
    static_assert(std::is_same_v<typename E::Stagger, Center> || std::is_same_v<typename E::Stagger, AnyStagger>,
                  "columnIntegralOf(s): every expression must be on cell centers (Center)");
    checkLeaves(expr, columns, cells, nullptr, where);
    auto const rest = integralBodies<T, Backend>(tail, out + columns, columns, grid, where, cells, xs...);
    return BodyChain<ExprIntegralBody<T, E>, std::remove_cvref_t<decltype(rest)>>{
        ExprIntegralBody<T, E>{expr, grid, out}, rest};
}
} // namespace detail

namespace detail {
template <class Backend, class T, class Tail, class... X>
void columnIntegralsWithTail(Backend const& backend, Field<T, Center> const& shape, core::Buffer<T>& out,
                             Tail const& tail, X const&... xs) {
    static_assert(std::is_floating_point_v<T>, "columnIntegralsOf: T must be a floating-point type");
    static_assert(sizeof...(X) >= 1, "columnIntegralsOf: give at least one expression");
    char const* where = "columnIntegralsOf";
    uint32_t const columns = shape.columns();
    std::size_t const need = sizeof...(X) * std::size_t{columns};
    if (out.size() != need)
        throw Error("out holds " + std::to_string(out.size()) + " values", where,
                    std::to_string(sizeof...(X)) + " x " + std::to_string(columns) +
                        " values: one per expression and column");
    requireInBackendMemory<Backend>(where, "out", out);
    auto const grid = shape.grid().view(Backend::memSpace);
    launchTiledColumns<T>(
        backend, columns, grid.n(),
        integralBodies<T, Backend>(tail, out.device(), columns, grid, where, shape.grid().cells(), xs...));
}
} // namespace detail

// Several integrals of Center expressions in one launch: out[i * columns + col] = sum over k of expr_i[k] dz[k], for
// the expressions in the order given; `out` holds (number of expressions) x (columns) values in the backend's memory.
// Each integral has the bits of its own columnIntegralOf; a column's walk takes it through every expression in turn,
// so the operands the expressions share are read from cache after the first (one pass and one launch instead of one
// per expression; one copy when the host needs them).
template <class Backend, class T, class... X>
void columnIntegralsOf(Backend const& backend, Field<T, Center> const& shape, core::Buffer<T>& out, X const&... xs) {
    detail::columnIntegralsWithTail(backend, shape, out, detail::NoBody{}, xs...);
}

// columnIntegralsOf, then `then(col)` for every column in the same launch, on the worker that wrote the column's
// integrals, after it wrote them: `then` may read out[i * columns + col] (e.g. to add the integrals into running sums
// where they stay, with no second launch). A functor with STRATA_HD operator()(uint32_t col) const, for nvcc.
template <class Backend, class T, class Then, class... X>
void columnIntegralsOfThen(Backend const& backend, Field<T, Center> const& shape, core::Buffer<T>& out,
                           Then const& then, X const&... xs) {
    detail::columnIntegralsWithTail(backend, shape, out,
                                    detail::BodyChain<detail::ThenBody<Then>, detail::NoBody>{{then}, {}}, xs...);
}

// out[col] = sum over k of expr[k] dz[k], expr a Center expression over fields of shape's columns and grid: the one-
// expression case of columnIntegralsOf, with out checked as a per-column buffer.
template <class Backend, class T, class X>
void columnIntegralOf(Backend const& backend, Field<T, Center> const& shape, X const& x, core::Buffer<T>& out) {
    static_assert(std::is_floating_point_v<T>, "columnIntegralOf: T must be a floating-point type");
    char const* where = "columnIntegralOf";
    detail::requirePerColumn<Backend>(where, "out", out, shape.columns());
    auto const grid = shape.grid().view(Backend::memSpace);
    detail::launchTiledColumns<T>(backend, shape.columns(), grid.n(),
                                  detail::integralBodies<T, Backend>(detail::NoBody{}, out.device(), shape.columns(),
                                                                     grid, where, shape.grid().cells(), x));
}

// A column-to-value kernel of the caller's own, in one launch: `bodies` (integral_kernels.hpp's protocol: value(col,
// k), the column's k-th input; finish(col, get), which consumes get(k) = value(col, k); operator()(col) that does both
// from the column itself) each in turn for every column, tiled where the backend has many workers per block
// (coalesced reads of `levels`-deep columns), else one worker per column. A column's bodies run on one worker, in
// order, so a later body may read what an earlier one wrote for that column.
template <class T, class Backend, class... Bodies>
void columnKernel(Backend const& backend, uint32_t columns, uint32_t levels, Bodies const&... bodies) {
    static_assert(sizeof...(Bodies) >= 1, "columnKernel: give at least one body");
    detail::launchTiledColumns<T>(backend, columns, levels, detail::chainBodies(bodies...));
}

// out[col] = sum over k of f[k] dz[k].
template <class Backend, class T>
void columnIntegral(Backend const& backend, Field<T, Center> const& f, core::Buffer<T>& out) {
    static_assert(std::is_floating_point_v<T>, "columnIntegral: T must be a floating-point type");
    char const* where = "columnIntegral";
    detail::requireColumnField<Backend>(where, "f", f, f.columns(), f.grid().cells());
    detail::requirePerColumn<Backend>(where, "out", out, f.columns());
    auto const grid = f.grid().view(Backend::memSpace);
    detail::launchTiledColumns<T>(backend, f.columns(), f.levels(),
                                  detail::BodyChain<detail::ColumnIntegralBody<T>, detail::NoBody>{
                                      detail::ColumnIntegralBody<T>{f.view(), grid, out.device()}, {}});
}

// F[0] = bottom, F[k+1] = F[k] + f[k] dz[k].
template <class Backend, class T>
void columnIntegralFromBottom(Backend const& backend, Field<T, Center> const& f, Field<T, Face>& integral,
                              std::type_identity_t<PerColumn<T>> const& bottom) {
    static_assert(std::is_floating_point_v<T>, "columnIntegralFromBottom: T must be a floating-point type");
    char const* where = "columnIntegralFromBottom";
    uint32_t const columns = f.columns(), cells = f.grid().cells();
    detail::requireColumnField<Backend>(where, "f", f, columns, cells);
    detail::requireColumnField<Backend>(where, "integral", integral, columns, cells);
    auto const start = detail::perColumnView<Backend>(where, "bottom", bottom, columns);
    detail::launchTiledScan<T>(
        backend, columns, cells,
        detail::IntegralFromBottomBody<T>{f.view(), integral.view(), f.grid().view(Backend::memSpace), start});
}

// F[n] = top, F[k] = F[k+1] + f[k] dz[k].
template <class Backend, class T>
void columnIntegralFromTop(Backend const& backend, Field<T, Center> const& f, Field<T, Face>& integral,
                           std::type_identity_t<PerColumn<T>> const& top) {
    static_assert(std::is_floating_point_v<T>, "columnIntegralFromTop: T must be a floating-point type");
    char const* where = "columnIntegralFromTop";
    uint32_t const columns = f.columns(), cells = f.grid().cells();
    detail::requireColumnField<Backend>(where, "f", f, columns, cells);
    detail::requireColumnField<Backend>(where, "integral", integral, columns, cells);
    auto const start = detail::perColumnView<Backend>(where, "top", top, columns);
    detail::launchTiledScan<T>(
        backend, columns, cells,
        detail::IntegralFromTopBody<T>{f.view(), integral.view(), f.grid().view(Backend::memSpace), start});
}

// out[col] = ((g[0] + g[1]) + g[2]) + ... over the levels of g.
template <class Backend, class T, class S>
void columnSum(Backend const& backend, Field<T, S> const& g, core::Buffer<T>& out) {
    detail::columnReduce<detail::Reduction::Sum>("columnSum", backend, g, out);
}

// out[col] = the smallest value over the levels of g (NaN if the column holds a NaN).
template <class Backend, class T, class S>
void columnMin(Backend const& backend, Field<T, S> const& g, core::Buffer<T>& out) {
    detail::columnReduce<detail::Reduction::Min>("columnMin", backend, g, out);
}

// out[col] = the largest value over the levels of g (NaN if the column holds a NaN).
template <class Backend, class T, class S>
void columnMax(Backend const& backend, Field<T, S> const& g, core::Buffer<T>& out) {
    detail::columnReduce<detail::Reduction::Max>("columnMax", backend, g, out);
}

// Hydrostatic pressure of an ideal gas with temperature T on centers, from the surface pressure ps (bottom face):
// pFace[k+1] = pFace[k] exp(-g dz[k] / (Rd T[k])), pCenter[k] = pFace[k] exp(-g (dz[k]/2) / (Rd T[k])).
template <class Backend, class T>
void hydrostaticPressure(Backend const& backend, Field<T, Center> const& temperature,
                         std::type_identity_t<PerColumn<T>> const& surfacePressure, std::type_identity_t<T> gravity,
                         std::type_identity_t<T> gasConstant, Field<T, Face>& pFace, Field<T, Center>& pCenter) {
    static_assert(std::is_floating_point_v<T>, "hydrostaticPressure: T must be a floating-point type");
    char const* where = "hydrostaticPressure";
    uint32_t const columns = temperature.columns(), cells = temperature.grid().cells();
    detail::requireColumnField<Backend>(where, "temperature", temperature, columns, cells);
    detail::requireColumnField<Backend>(where, "pFace", pFace, columns, cells);
    detail::requireColumnField<Backend>(where, "pCenter", pCenter, columns, cells);
    detail::requireDistinct(where, "pCenter", pCenter, "temperature", temperature);
    auto const ps = detail::perColumnView<Backend>(where, "surfacePressure", surfacePressure, columns);
    detail::launchTiledScan<T>(backend, columns, cells,
                               detail::HydrostaticPressureBody<T>{temperature.view(), pFace.view(), pCenter.view(),
                                                                  temperature.grid().view(Backend::memSpace), ps,
                                                                  gravity, gasConstant});
}

} // namespace strata::ops
