// The kernels behind integrals.hpp: one functor per operation, run by `threaded(backend, independent(columns), ...)`
// so that one worker takes a whole column and walks its levels in the order the header documents.
#pragma once

#include "core/config.hpp"
#include "operators/field.hpp"
#include "operators/grid.hpp"

#include <cmath>
#include <cstdint>

namespace strata::ops::detail {

// A per-column input as kernels see it: `values[col]`, or `scalar` in every column when `values` is null.
template <class T>
struct PerColumnView {
    T const* values;
    T scalar;
    STRATA_HD T operator()(uint32_t col) const { return values != nullptr ? values[col] : scalar; }
};

template <class T>
struct ColumnIntegralBody {
    FieldView<T const, Center> f;
    GridView grid;
    T* out;

    STRATA_HD void operator()(uint32_t col) const {
        T sum = T(0);
        for (uint32_t k = 0; k < f.levels; ++k)
            sum += f(col, k) * static_cast<T>(grid.dzCenter[k]);
        out[col] = sum;
    }
    // The integrand at (col, k), for TiledIntegralsBody.
    STRATA_HD T value(uint32_t col, uint32_t k) const { return f(col, k); }
};

// Definite column integrals in tiles, for backends with many workers per block (Cuda; the checking Threads backend
// runs the same code on the CPU). With one worker per column, neighbouring GPU threads read addresses a column
// apart on level-contiguous storage, so each warp load touches a sector per thread. Here a block takes `tileColumns`
// neighbouring columns: its workers evaluate the integrand of the tile's (column, level) points in address order
// into shared memory (neighbouring workers, neighbouring levels: coalesced loads), sync, and one worker per column
// then sums its column from shared memory in the per-column body's order, k = 0, 1, ...: the same bits. `Chain` is
// a BodyChain of bodies with `value(col, k)` and `out` (several integrals take turns with the one buffer).
inline constexpr uint32_t integralTileItems = 256;

// Columns per tile: as many whole columns as fit in the tile's items; 0 (no tiles) for deeper columns.
STRATA_HD inline uint32_t integralTileColumns(uint32_t levels) {
    return levels == 0 || levels > integralTileItems ? 0u : integralTileItems / levels;
}

template <class T, class Chain>
struct TiledIntegralsBody {
    Chain chain;
    GridView grid;
    uint32_t columns;
    uint32_t tileColumns;

    template <class Ctx>
    STRATA_HD void operator()(Ctx& ctx, uint32_t tile) const {
        auto values = ctx.template staticSharedArray<T, integralTileItems>();
        uint32_t const n = grid.n();
        uint32_t const col0 = tile * tileColumns;
        uint32_t const ncols = columns - col0 < tileColumns ? columns - col0 : tileColumns;
        chain.each([&](auto const& body) {
            ctx.syncInterdependent([&](uint32_t i) {
                if (i < ncols * n) values[i] = body.value(col0 + i / n, i % n);
            });
            ctx.syncInterdependent([&](uint32_t c) {
                if (c < ncols) {
                    T sum = T(0);
                    for (uint32_t k = 0; k < n; ++k)
                        sum += values[c * n + k] * static_cast<T>(grid.dzCenter[k]);
                    body.out[col0 + c] = sum;
                }
            });
        });
    }
};

template <class T>
struct IntegralFromBottomBody {
    FieldView<T const, Center> f;
    FieldView<T, Face> integral;
    GridView grid;
    PerColumnView<T> bottom;

    STRATA_HD void operator()(uint32_t col) const {
        T sum = bottom(col);
        integral(col, 0) = sum;
        for (uint32_t k = 0; k < f.levels; ++k) {
            sum += f(col, k) * static_cast<T>(grid.dzCenter[k]);
            integral(col, k + 1) = sum;
        }
    }
};

template <class T>
struct IntegralFromTopBody {
    FieldView<T const, Center> f;
    FieldView<T, Face> integral;
    GridView grid;
    PerColumnView<T> top;

    STRATA_HD void operator()(uint32_t col) const {
        T sum = top(col);
        integral(col, f.levels) = sum;
        for (uint32_t k = f.levels; k-- > 0;) {
            sum += f(col, k) * static_cast<T>(grid.dzCenter[k]);
            integral(col, k) = sum;
        }
    }
};

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

    STRATA_HD void operator()(uint32_t col) const {
        T acc = g(col, 0);
        for (uint32_t k = 1; k < g.levels; ++k)
            acc = combine(acc, g(col, k));
        out[col] = acc;
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
            pCenter(col, k) = p * std::exp(-(gravity * (dz / T(2))) / rt);
            p = p * std::exp(-(gravity * dz) / rt);
            pFace(col, k + 1) = p;
        }
    }
};

} // namespace strata::ops::detail
