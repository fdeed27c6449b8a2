// The kernels behind integrals.hpp: one functor per operation, run by `threaded(backend, independent(columns), ...)`
// so that one worker takes a whole column and walks its levels in the order the header documents.
#pragma once

#include <strata/core/config.hpp>
#include <strata/core/math.hpp>
#include <strata/operators/field.hpp>
#include <strata/operators/grid.hpp>

#include <cmath>
#include <cstdint>
#include <type_traits>

namespace strata::ops::detail {

// exp as the model computes it: strata::math's (the same bits on every backend) for double, the platform's otherwise.
template <class T>
STRATA_HD T exponential(T x) {
    if constexpr (std::is_same_v<T, double>) {
        return math::exp(x);
    } else {
        return std::exp(x);
    }
}

// A per-column input as kernels see it: `values[col]`, or `scalar` in every column when `values` is null.
template <class T>
struct PerColumnView {
    T const* values;
    T scalar;
    STRATA_HD T operator()(uint32_t col) const { return values != nullptr ? values[col] : scalar; }
};

// sum over k = 0, 1, ..., n-1 of get(k) dz[k]: the definite integral's order, whatever the values come from.
template <class T, class Get>
STRATA_HD T sumTimesDz(GridView const& grid, uint32_t n, Get const& get) {
    T sum = T(0);
    for (uint32_t k = 0; k < n; ++k)
        sum += get(k) * static_cast<T>(grid.dzCenter[k]);
    return sum;
}

// A body of a column-to-value kernel has value(col, k), the column's k-th input, and finish(col, get), which makes
// out[col] from get(k) = value(col, k) in a fixed order. Its operator()(col) reads the column directly (one worker
// per column); TiledColumnsBody stages the values in shared memory first and hands finish the staged ones.
template <class T>
struct ColumnIntegralBody {
    FieldView<T const, Center> f;
    GridView grid;
    T* out;

    STRATA_HD T value(uint32_t col, uint32_t k) const { return f(col, k); }
    template <class Get>
    STRATA_HD void finish(uint32_t col, Get const& get) const {
        out[col] = sumTimesDz<T>(grid, f.levels, get);
    }
    STRATA_HD void operator()(uint32_t col) const {
        finish(col, [&](uint32_t k) { return value(col, k); });
    }
};

// A running (scan) body: operator()(col) walks a whole column (one worker per column). TiledScanBody (below) runs the
// same arithmetic in three steps instead: stage(col, k, a, b, i) puts level k's terms in a[i] (and b[i]) -- any
// worker, so the inputs are read in address order --, scan(col, a, b, base) runs the column's recurrence over its
// terms a[base + k] in place (one worker per column, the levels in the body's order), and store(col, k, a, b, i)
// writes level k's results from a[i], b[i] (address order again); storeEdge(col) writes the face value the
// recurrence starts from. Each term is the product that operator() adds or multiplies by, so the bits are the same.
// The running integral from the bottom (F[0] = start, F[k+1] = F[k] + f[k] dz[k]) or, FromTop, from the top
// (F[n] = start, F[k] = F[k+1] + f[k] dz[k]).
template <class T, bool FromTop>
struct RunningIntegralBody {
    FieldView<T const, Center> f;
    FieldView<T, Face> integral;
    GridView grid;
    PerColumnView<T> start;

    STRATA_HD T term(uint32_t col, uint32_t k) const { return f(col, k) * static_cast<T>(grid.dzCenter[k]); }

    STRATA_HD void operator()(uint32_t col) const {
        T sum = start(col);
        storeEdge(col);
        forEachLevel([&](uint32_t k) {
            sum += term(col, k);
            integral(col, FromTop ? k : k + 1) = sum;
        });
    }

    template <class S>
    STRATA_HD void stage(uint32_t col, uint32_t k, S const& a, S const&, uint32_t i) const {
        a[i] = term(col, k);
    }
    template <class S>
    STRATA_HD void scan(uint32_t col, S const& a, S const&, uint32_t base) const {
        T sum = start(col);
        forEachLevel([&](uint32_t k) {
            sum += static_cast<T>(a[base + k]);
            a[base + k] = sum;
        });
    }
    template <class S>
    STRATA_HD void store(uint32_t col, uint32_t k, S const& a, S const&, uint32_t i) const {
        integral(col, FromTop ? k : k + 1) = static_cast<T>(a[i]);
    }
    STRATA_HD void storeEdge(uint32_t col) const { integral(col, FromTop ? f.levels : 0u) = start(col); }

private:
    // g(k) for the levels in the order of the integral: upward from the bottom, downward from the top.
    template <class G>
    STRATA_HD void forEachLevel(G const& g) const {
        if constexpr (FromTop) {
            for (uint32_t k = f.levels; k-- > 0;)
                g(k);
        } else {
            for (uint32_t k = 0; k < f.levels; ++k)
                g(k);
        }
    }
};
template <class T>
using IntegralFromBottomBody = RunningIntegralBody<T, false>;
template <class T>
using IntegralFromTopBody = RunningIntegralBody<T, true>;

enum class Reduction { Sum, Min, Max };

template <Reduction R, class T, class S>
struct ColumnReduceBody {
    FieldView<T const, S> g;
    T* out;

    // NaN propagates: once `acc` is NaN neither comparison replaces it, and a NaN `v` always does.
    STRATA_HD static T combine(T acc, T v) {
        if constexpr (R == Reduction::Sum) {
            return acc + v;
        } else if constexpr (R == Reduction::Min) {
            return (v < acc || v != v) ? v : acc;
        } else {
            return (v > acc || v != v) ? v : acc;
        }
    }

    STRATA_HD T value(uint32_t col, uint32_t k) const { return g(col, k); }
    template <class Get>
    STRATA_HD void finish(uint32_t col, Get const& get) const {
        T acc = get(0);
        for (uint32_t k = 1; k < g.levels; ++k)
            acc = combine(acc, get(k));
        out[col] = acc;
    }
    STRATA_HD void operator()(uint32_t col) const {
        finish(col, [&](uint32_t k) { return value(col, k); });
    }
};

// Several column-to-value bodies in one column walk, each in turn: BodyChain<B0, BodyChain<B1, NoBody>>.
struct NoBody {
    STRATA_HD void operator()(uint32_t) const {}
    template <class F>
    STRATA_HD void each(F const&) const {}
};
template <class First, class Rest>
struct BodyChain {
    First first;
    Rest rest;
    STRATA_HD void operator()(uint32_t col) const {
        first(col);
        rest(col);
    }
    // f(body) for every body of the chain, in order.
    template <class F>
    STRATA_HD void each(F const& f) const {
        f(first);
        rest.each(f);
    }
};

// A body that stages nothing: f(col), after the column's earlier bodies of the chain finished it, on the same worker
// (e.g. folding the integrals just written into running sums, in the same launch). TiledColumnsBody gives it no
// staging pass, only its turn after a sync.
template <class F>
struct ThenBody {
    static constexpr bool staged = false;
    F f;
    STRATA_HD void operator()(uint32_t col) const { f(col); }
};
template <class B>
constexpr bool stagedBody() {
    if constexpr (requires { B::staged; })
        return B::staged;
    else
        return true;
}
template <class B>
inline constexpr bool isStagedBody = stagedBody<B>();

// BodyChain<B0, BodyChain<B1, ... NoBody>> of the bodies given.
inline NoBody chainBodies() { return {}; }
template <class First, class... Rest>
auto chainBodies(First const& first, Rest const&... rest) {
    return BodyChain<First, decltype(chainBodies(rest...))>{first, chainBodies(rest...)};
}

// Column-to-value kernels (definite integrals, sums, min, max) in tiles, for backends with many workers per block
// (Cuda; the checking Threads backend runs the same code on the CPU). With one worker per column, neighbouring GPU
// threads read addresses a column apart on level-contiguous storage, so each warp load touches a sector per thread.
// Here a block takes `tileColumns` neighbouring columns: its workers read the tile's (column, level) values in
// address order into shared memory (neighbouring workers, neighbouring levels: coalesced loads), sync, and one
// worker per column then finishes its column from shared memory in the body's own order: the same bits. `Chain` is
// a BodyChain (above) of bodies over `levels` levels, which take turns with the one buffer.
//
// A tile holds 1024 values, four per worker of a 256-thread GPU block: the workers' loads are quick, and the time of
// a tile is mostly its one-worker-per-column walk, the same for 8 columns as for 34. A tile of 256 values (8 columns
// of 30 levels) would leave a block's loads idle while 8 of its 256 workers walk their columns.
inline constexpr uint32_t columnTileItems = 1024;

// Columns per tile: as many whole columns as fit in the tile's items; 0 (no tiles) for deeper columns.
STRATA_HD inline uint32_t columnTileColumns(uint32_t levels) {
    return levels == 0 || levels > columnTileItems ? 0u : columnTileItems / levels;
}

template <class T, class Chain>
struct TiledColumnsBody {
    Chain chain;
    uint32_t columns;
    uint32_t levels;
    uint32_t tileColumns;

    template <class Ctx>
    STRATA_HD void operator()(Ctx& ctx, uint32_t tile) const {
        auto values = ctx.template staticSharedArray<T, columnTileItems>();
        uint32_t const n = levels;
        uint32_t const col0 = tile * tileColumns;
        uint32_t const ncols = columns - col0 < tileColumns ? columns - col0 : tileColumns;
        chain.each([&](auto const& body) {
            if constexpr (isStagedBody<std::remove_cvref_t<decltype(body)>>) {
                ctx.syncInterdependent2D(ncols, n,
                                         [&](uint32_t c, uint32_t k) { values[c * n + k] = body.value(col0 + c, k); });
                ctx.syncInterdependent([&](uint32_t c) {
                    if (c < ncols) body.finish(col0 + c, [&](uint32_t k) { return T(values[c * n + k]); });
                });
            } else {
                ctx.syncInterdependent([&](uint32_t c) {
                    if (c < ncols) body(col0 + c);
                });
            }
        });
    }
};

template <class T>
struct HydrostaticPressureBody {
    FieldView<T const, Center> temperature;
    FieldView<T, Face> pFace;
    FieldView<T, Center> pCenter;
    GridView grid;
    PerColumnView<T> surfacePressure;
    T gravity;
    T gasConstant;

    STRATA_HD void operator()(uint32_t col) const {
        T p = surfacePressure(col);
        pFace(col, 0) = p;
        for (uint32_t k = 0; k < temperature.levels; ++k) {
            T const dz = static_cast<T>(grid.dzCenter[k]);
            T const rt = gasConstant * temperature(col, k);
            pCenter(col, k) = p * exponential(-(gravity * (dz / T(2))) / rt);
            p = p * exponential(-(gravity * dz) / rt);
            pFace(col, k + 1) = p;
        }
    }

    // Tiled (see IntegralFromBottomBody): the two exp factors of every level are computed side by side, off the
    // column's chain of multiplications; the chain then only multiplies.
    template <class S>
    STRATA_HD void stage(uint32_t col, uint32_t k, S const& a, S const& b, uint32_t i) const {
        T const dz = static_cast<T>(grid.dzCenter[k]);
        T const rt = gasConstant * temperature(col, k);
        a[i] = exponential(-(gravity * (dz / T(2))) / rt);
        b[i] = exponential(-(gravity * dz) / rt);
    }
    template <class S>
    STRATA_HD void scan(uint32_t col, S const& a, S const& b, uint32_t base) const {
        T p = surfacePressure(col);
        for (uint32_t k = 0; k < temperature.levels; ++k) {
            a[base + k] = p * static_cast<T>(a[base + k]); // pCenter
            p = p * static_cast<T>(b[base + k]);
            b[base + k] = p; // pFace at k + 1
        }
    }
    template <class S>
    STRATA_HD void store(uint32_t col, uint32_t k, S const& a, S const& b, uint32_t i) const {
        pCenter(col, k) = static_cast<T>(a[i]);
        pFace(col, k + 1) = static_cast<T>(b[i]);
    }
    STRATA_HD void storeEdge(uint32_t col) const { pFace(col, 0) = surfacePressure(col); }
};

// Running integrals and hydrostatic pressure in tiles, for backends with many workers per block, as TiledColumnsBody
// does for the definite integrals: a block takes `tileColumns` neighbouring columns, its workers stage every level's
// terms in address order (coalesced loads), one worker per column runs the recurrence in shared memory, and the
// workers write the results back in address order (coalesced stores). Two shared arrays of columnTileItems values.
template <class T, class Body>
struct TiledScanBody {
    Body body;
    uint32_t columns;
    uint32_t levels;
    uint32_t tileColumns;

    template <class Ctx>
    STRATA_HD void operator()(Ctx& ctx, uint32_t tile) const {
        auto a = ctx.template staticSharedArray<T, columnTileItems>();
        auto b = ctx.template staticSharedArray<T, columnTileItems>();
        uint32_t const n = levels;
        uint32_t const col0 = tile * tileColumns;
        uint32_t const ncols = columns - col0 < tileColumns ? columns - col0 : tileColumns;
        ctx.syncInterdependent2D(ncols, n, [&](uint32_t c, uint32_t k) { body.stage(col0 + c, k, a, b, c * n + k); });
        ctx.syncInterdependent([&](uint32_t c) {
            if (c < ncols) {
                body.scan(col0 + c, a, b, c * n);
                body.storeEdge(col0 + c);
            }
        });
        ctx.syncInterdependent2D(ncols, n, [&](uint32_t c, uint32_t k) { body.store(col0 + c, k, a, b, c * n + k); });
    }
};

} // namespace strata::ops::detail
