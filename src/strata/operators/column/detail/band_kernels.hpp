// The kernels behind band.hpp: one block-tridiagonal engine for every system there. A system is written as block rows
// k = 0 .. nb-1,  A[k] X[k-1] + B[k] X[k] + C[k] X[k+1] = D[k],  whose elements are scalars (tridiagonal) or 2x2
// blocks (pentadiagonal, two levels a block; 2x2 block tridiagonal). A system adapter (TridiagBatchSystem,
// PentaSystem, Block2System) reads those blocks from the fields, with zero blocks outside the matrix, so the two
// algorithms below are written once:
//   BandThomas*          block LU without pivoting: BandThomasFactorBody factors each matrix once (pivot inverses and
//                        C' into a global scratch), BandThomasSolveBody then solves each (column, right-hand side).
//   BandCyclicReduction  parallel cyclic reduction in block shared memory, one block per column, all the column's
//                        right-hand sides reduced together.
// On scalars the operations are exactly those of tridiagonal_kernels.hpp's Thomas and cyclic reduction, in the same
// order: the same bits.
#pragma once

#include <strata/core/lockstep.hpp>
#include <strata/operators/field.hpp>

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace strata::ops::detail {

// ---- element algebra: scalars, 2x2 matrices (row-major: v = {m00, m01, m10, m11}) and 2-vectors -------------------

template <class T>
struct Mat2 {
    T v[4] = {};
};
template <class T>
struct Vec2 {
    T v[2] = {};
};

template <class T>
STRATA_HD Mat2<T> operator*(Mat2<T> const& x, Mat2<T> const& y) {
    return {{x.v[0] * y.v[0] + x.v[1] * y.v[2], x.v[0] * y.v[1] + x.v[1] * y.v[3], x.v[2] * y.v[0] + x.v[3] * y.v[2],
             x.v[2] * y.v[1] + x.v[3] * y.v[3]}};
}
template <class T>
STRATA_HD Vec2<T> operator*(Mat2<T> const& x, Vec2<T> const& y) {
    return {{x.v[0] * y.v[0] + x.v[1] * y.v[1], x.v[2] * y.v[0] + x.v[3] * y.v[1]}};
}
template <class T>
STRATA_HD Mat2<T> operator+(Mat2<T> const& x, Mat2<T> const& y) {
    return {{x.v[0] + y.v[0], x.v[1] + y.v[1], x.v[2] + y.v[2], x.v[3] + y.v[3]}};
}
template <class T>
STRATA_HD Mat2<T> operator-(Mat2<T> const& x, Mat2<T> const& y) {
    return {{x.v[0] - y.v[0], x.v[1] - y.v[1], x.v[2] - y.v[2], x.v[3] - y.v[3]}};
}
template <class T>
STRATA_HD Mat2<T> operator-(Mat2<T> const& x) {
    return {{-x.v[0], -x.v[1], -x.v[2], -x.v[3]}};
}
template <class T>
STRATA_HD Vec2<T> operator+(Vec2<T> const& x, Vec2<T> const& y) {
    return {{x.v[0] + y.v[0], x.v[1] + y.v[1]}};
}
template <class T>
STRATA_HD Vec2<T> operator-(Vec2<T> const& x, Vec2<T> const& y) {
    return {{x.v[0] - y.v[0], x.v[1] - y.v[1]}};
}

// The pivot whose zero makes an element singular (a scalar itself, a 2x2 block its determinant), and the inverse.
template <class T>
STRATA_HD T pivotOf(T x) requires std::is_floating_point_v<T> {
    return x;
}
template <class T>
STRATA_HD T pivotOf(Mat2<T> const& x) {
    return x.v[0] * x.v[3] - x.v[1] * x.v[2];
}
template <class T>
STRATA_HD T inverseOf(T x) requires std::is_floating_point_v<T> {
    return T(1) / x;
}
template <class T>
STRATA_HD Mat2<T> inverseOf(Mat2<T> const& x) {
    T const r = T(1) / pivotOf(x);
    return {{x.v[3] * r, -x.v[1] * r, -x.v[2] * r, x.v[0] * r}};
}
// x y^-1 and y^-1 d: a division on scalars (so that scalars keep the bits of tridiagonal_kernels.hpp).
template <class T>
STRATA_HD T divideRight(T x, T y) requires std::is_floating_point_v<T> {
    return x / y;
}
template <class T>
STRATA_HD Mat2<T> divideRight(Mat2<T> const& x, Mat2<T> const& y) {
    return x * inverseOf(y);
}
template <class T>
STRATA_HD T solveWith(T y, T d) requires std::is_floating_point_v<T> {
    return d / y;
}
template <class T>
STRATA_HD Vec2<T> solveWith(Mat2<T> const& y, Vec2<T> const& d) {
    return inverseOf(y) * d;
}

// A pivot that is exactly zero or not finite (inf or NaN: p - p is NaN then). No library call, so the same on a device.
template <class T>
STRATA_HD bool badPivot(T p) {
    return p == T(0) || !(p - p == T(0));
}

// The values of an element, for storage in scratch and shared memory.
template <class X>
inline constexpr uint32_t partsOf = 1;
template <class T>
inline constexpr uint32_t partsOf<Mat2<T>> = 4;
template <class T>
inline constexpr uint32_t partsOf<Vec2<T>> = 2;

template <class T>
STRATA_HD T& part(T& x, uint32_t) requires std::is_floating_point_v<T> {
    return x;
}
template <class T>
STRATA_HD T& part(Mat2<T>& x, uint32_t i) {
    return x.v[i];
}
template <class T>
STRATA_HD T& part(Vec2<T>& x, uint32_t i) {
    return x.v[i];
}

// Scratch (a global array) and shared memory (a lockstep span, checked on Threads) read alike.
template <class T>
STRATA_HD T readAt(T* array, std::size_t i) {
    return array[i];
}
template <class Span>
STRATA_HD auto readAt(Span const& span, std::size_t i) {
    return lockstep::load(span, static_cast<uint32_t>(i));
}

template <class X, class Array>
STRATA_HD X loadParts(Array const& array, std::size_t at) {
    X x{};
    for (uint32_t i = 0; i < partsOf<X>; ++i)
        part(x, i) = readAt(array, at + i);
    return x;
}
template <class X, class Array>
STRATA_HD void storeParts(Array const& array, std::size_t at, X x) {
    for (uint32_t i = 0; i < partsOf<X>; ++i)
        array[static_cast<uint32_t>(at + i)] = part(x, i);
}

// ---- system adapters ------------------------------------------------------------------------------------------------

// The most right-hand sides one launch takes (their views travel in the kernel's arguments); more are taken in turns.
inline constexpr uint32_t bandRhsPerLaunch = 16;

// Scalar tridiagonal rows, one matrix per column or one for all (its views then have stride 0), m right-hand sides.
template <class T>
struct TridiagBatchSystem {
    using Value = T;
    using M = T;
    using V = T;
    FieldView<T const, Center> a, b, c; // a[0] and c[n-1] are never read
    FieldView<T const, Center> d[bandRhsPerLaunch];
    FieldView<T, Center> x[bandRhsPerLaunch];
    uint32_t rhs;
    uint32_t matrixColumns; // x's columns, or 1

    STRATA_HD uint32_t columns() const { return x[0].columns; }
    STRATA_HD uint32_t blocks() const { return x[0].levels; }
    STRATA_HD uint32_t matrixColumn(uint32_t col) const { return matrixColumns == 1 ? 0 : col; }
    STRATA_HD M lower(uint32_t col, uint32_t k) const { return k == 0 ? T(0) : a(col, k); }
    STRATA_HD M diag(uint32_t col, uint32_t k) const { return b(col, k); }
    STRATA_HD M upper(uint32_t col, uint32_t k) const { return k + 1 == blocks() ? T(0) : c(col, k); }
    STRATA_HD V load(uint32_t j, uint32_t col, uint32_t k) const { return d[j](col, k); }
    STRATA_HD void store(uint32_t j, uint32_t col, uint32_t k, V value) const { x[j](col, k) = value; }
};

// Pentadiagonal rows e x[k-2] + a x[k-1] + b x[k] + c x[k+1] + f x[k+2] = d as 2x2 blocks of levels (2k, 2k+1); an
// odd n gets a last block padded with the identity row x[n] = 0, which is never stored.
template <class T>
struct PentaSystem {
    using Value = T;
    using M = Mat2<T>;
    using V = Vec2<T>;
    FieldView<T const, Center> e, a, b, c, f, d;
    FieldView<T, Center> x;
    uint32_t rhs; // 1

    STRATA_HD uint32_t columns() const { return x.columns; }
    STRATA_HD uint32_t levels() const { return x.levels; }
    STRATA_HD uint32_t blocks() const { return (x.levels + 1) / 2; }
    STRATA_HD uint32_t matrixColumn(uint32_t col) const { return col; }
    // band(col, r, q): the coefficient of field `band` in row r when that row and the column it multiplies, r + q,
    // lie inside the matrix; zero otherwise (so e[0], e[1], a[0], c[n-1], f[n-2], f[n-1] are never read).
    STRATA_HD T in(FieldView<T const, Center> const& band, uint32_t col, uint32_t r, int q) const {
        long const to = static_cast<long>(r) + q;
        return r < levels() && to >= 0 && to < static_cast<long>(levels()) ? band(col, r) : T(0);
    }
    STRATA_HD M lower(uint32_t col, uint32_t k) const {
        uint32_t const r = 2 * k;
        if (k == 0) return M{};
        return {{in(e, col, r, -2), in(a, col, r, -1), T(0), in(e, col, r + 1, -2)}};
    }
    STRATA_HD M diag(uint32_t col, uint32_t k) const {
        uint32_t const r = 2 * k;
        if (r + 1 == levels()) return {{b(col, r), T(0), T(0), T(1)}}; // the padding row
        return {{b(col, r), in(c, col, r, 1), in(a, col, r + 1, -1), b(col, r + 1)}};
    }
    STRATA_HD M upper(uint32_t col, uint32_t k) const {
        uint32_t const r = 2 * k;
        if (k + 1 == blocks()) return M{};
        return {{in(f, col, r, 2), T(0), in(c, col, r + 1, 1), in(f, col, r + 1, 2)}};
    }
    STRATA_HD V load(uint32_t, uint32_t col, uint32_t k) const {
        uint32_t const r = 2 * k;
        return {{d(col, r), r + 1 < levels() ? d(col, r + 1) : T(0)}};
    }
    STRATA_HD void store(uint32_t, uint32_t col, uint32_t k, V value) const {
        uint32_t const r = 2 * k;
        x(col, r) = value.v[0];
        if (r + 1 < levels()) x(col, r + 1) = value.v[1];
    }
};

// The four bands of a 2x2 block band: row u reads uu u + uv v, row v reads vu u + vv v.
template <class T>
struct Block2Views {
    FieldView<T const, Center> uu, uv, vu, vv;
    STRATA_HD Mat2<T> operator()(uint32_t col, uint32_t k) const {
        return {{uu(col, k), uv(col, k), vu(col, k), vv(col, k)}};
    }
};

template <class T>
struct Block2System {
    using Value = T;
    using M = Mat2<T>;
    using V = Vec2<T>;
    Block2Views<T> a, b, c; // a[0] and c[n-1] are never read
    FieldView<T const, Center> du, dv;
    FieldView<T, Center> xu, xv;
    uint32_t rhs; // 1

    STRATA_HD uint32_t columns() const { return xu.columns; }
    STRATA_HD uint32_t blocks() const { return xu.levels; }
    STRATA_HD uint32_t matrixColumn(uint32_t col) const { return col; }
    STRATA_HD M lower(uint32_t col, uint32_t k) const { return k == 0 ? M{} : a(col, k); }
    STRATA_HD M diag(uint32_t col, uint32_t k) const { return b(col, k); }
    STRATA_HD M upper(uint32_t col, uint32_t k) const { return k + 1 == blocks() ? M{} : c(col, k); }
    STRATA_HD V load(uint32_t, uint32_t col, uint32_t k) const { return {{du(col, k), dv(col, k)}}; }
    STRATA_HD void store(uint32_t, uint32_t col, uint32_t k, V value) const {
        xu(col, k) = value.v[0];
        xv(col, k) = value.v[1];
    }
};

// ---- block Thomas ---------------------------------------------------------------------------------------------------

// Scratch layout: per matrix column and block row, the pivot's inverse P^-1 and C' = P^-1 C (2 elements); then the
// vectors Y = P^-1 (D - A Y[k-1]), one a block row, per column and right-hand side, or per column only when one
// worker solves all of a column's right-hand sides in turn (`perRhs` false: BandThomasColumnBody).
template <class Sys>
struct BandScratch {
    using T = typename Sys::Value;
    static constexpr uint32_t mParts = partsOf<typename Sys::M>, vParts = partsOf<typename Sys::V>;
    T* base;
    uint32_t blocks, columns, matrixColumns;
    bool perRhs;

    STRATA_HD std::size_t inverse(uint32_t matrixCol, uint32_t k) const {
        return (std::size_t{matrixCol} * blocks + k) * 2 * mParts;
    }
    STRATA_HD std::size_t reduced(uint32_t matrixCol, uint32_t k) const { return inverse(matrixCol, k) + mParts; }
    STRATA_HD std::size_t y(uint32_t j, uint32_t col, uint32_t k) const {
        std::size_t const slot = perRhs ? std::size_t{j} * columns + col : col;
        return std::size_t{matrixColumns} * blocks * 2 * mParts + (slot * blocks + k) * vParts;
    }
    // The scratch's size in values for `rhs` right-hand sides a launch.
    std::size_t size(uint32_t rhs) const {
        return std::size_t{blocks} *
               (std::size_t{matrixColumns} * 2 * mParts + std::size_t{columns} * (perRhs ? rhs : 1) * vParts);
    }
};

// Factors the matrix of one column: P[0] = B[0], P[k] = B[k] - A[k] C'[k-1], C'[k] = P[k]^-1 C[k]. With `status`,
// the first pivot that is zero or not finite is recorded there as level + 1 (the solve goes on: inf or NaN follow).
template <class Sys>
struct BandThomasFactorBody {
    using M = typename Sys::M;
    Sys sys;
    BandScratch<Sys> scratch;
    uint32_t* status;

    STRATA_HD void operator()(uint32_t matrixCol) const {
        uint32_t const nb = sys.blocks();
        M reduced{}; // C'[k-1]
        uint32_t bad = 0;
        for (uint32_t k = 0; k < nb; ++k) {
            M const pivot =
                k == 0 ? sys.diag(matrixCol, 0) : sys.diag(matrixCol, k) - sys.lower(matrixCol, k) * reduced;
            if (status != nullptr && bad == 0 && badPivot(pivotOf(pivot))) bad = k + 1;
            M const inverse = inverseOf(pivot);
            storeParts(scratch.base, scratch.inverse(matrixCol, k), inverse);
            if (k + 1 < nb) {
                reduced = inverse * sys.upper(matrixCol, k);
                storeParts(scratch.base, scratch.reduced(matrixCol, k), reduced);
            }
        }
        if (status != nullptr) status[matrixCol] = bad;
    }
};

// Solves one (right-hand side j, column) pair with the factors: up Y[k] = P^-1 (D[k] - A[k] Y[k-1]), down
// X[k] = Y[k] - C'[k] X[k+1]. Every D is read before any X is written, so X may be D.
template <class Sys>
struct BandThomasSolveBody {
    using M = typename Sys::M;
    using V = typename Sys::V;
    Sys sys;
    BandScratch<Sys> scratch;

    STRATA_HD void operator()(uint32_t index) const {
        uint32_t const j = index / sys.columns(), col = index % sys.columns();
        uint32_t const nb = sys.blocks(), matrixCol = sys.matrixColumn(col);
        auto const inverse = [&](uint32_t k) { return loadParts<M>(scratch.base, scratch.inverse(matrixCol, k)); };
        V y = inverse(0) * sys.load(j, col, 0);
        storeParts(scratch.base, scratch.y(j, col, 0), y);
        for (uint32_t k = 1; k < nb; ++k) {
            y = inverse(k) * (sys.load(j, col, k) - sys.lower(col, k) * y);
            storeParts(scratch.base, scratch.y(j, col, k), y);
        }
        V x = y;
        sys.store(j, col, nb - 1, x);
        for (uint32_t k = nb - 1; k-- > 0;) {
            M const reduced = loadParts<M>(scratch.base, scratch.reduced(matrixCol, k));
            x = loadParts<V>(scratch.base, scratch.y(j, col, k)) - reduced * x;
            sys.store(j, col, k, x);
        }
    }
};

// Both for one column, its matrix its own, the column's right-hand sides in turn (the factors are still in cache when
// they read them; one launch instead of two; Y a column, not a column and right-hand side): the CPU backends' path
// when every column has its matrix. The same operations: the bits of the two launches.
template <class Sys>
struct BandThomasColumnBody {
    Sys sys;
    BandScratch<Sys> scratch;
    uint32_t* status;
    bool factor; // false: the factors are in the scratch already (a later turn of right-hand sides)

    STRATA_HD void operator()(uint32_t col) const {
        if (factor) BandThomasFactorBody<Sys>{sys, scratch, status}(col);
        for (uint32_t j = 0; j < sys.rhs; ++j)
            BandThomasSolveBody<Sys>{sys, scratch}(j * sys.columns() + col);
    }
};

// ---- Thomas in tiles of columns
// ---------------------------------------------------------------------------------------

// Thomas for a batch of tridiagonal systems with a matrix per column, on the backends whose blocks have many workers:
// a block takes `tileColumns` neighbouring columns, loads their matrix and right-hand sides into shared memory with
// its workers side by side in address order, factors each column's matrix (a worker a column) and solves each (column,
// right-hand side) there (a worker a pair), and stores the solutions in address order. One worker per column walking
// its column in global memory reads a column's stride apart from its neighbour on a GPU: a warp's load touches 32
// sectors for 32 values, where a tile's touch 8. The operations are BandThomasFactorBody's and BandThomasSolveBody's
// in their order: the same bits.
//
// Shared arrays (tileColumns columns each, a column's values bandTileColumnStride(n) apart, odd so that workers side
// by side in different columns read different banks): 0 the lower band a; 1 the diagonal b, then the pivots'
// inverses; 2 the upper band c, then C'; 3 + j the right-hand side d[j], then Y, then the solution.
inline constexpr uint32_t bandTileWorkers = 64;

STRATA_HD inline uint32_t bandTileColumnStride(uint32_t levels) { return levels | 1u; }

template <class T>
constexpr std::size_t bandTileBytesPerColumn(uint32_t levels, uint32_t rhs) {
    return std::size_t{3 + rhs} * bandTileColumnStride(levels) * sizeof(T);
}

// Columns a tile takes within `limitBytes` of shared memory: at most one per worker; 0 where one column does not fit.
template <class T>
constexpr uint32_t bandTileColumns(uint32_t levels, uint32_t rhs, std::size_t limitBytes) {
    std::size_t const fit = limitBytes / bandTileBytesPerColumn<T>(levels, rhs);
    return static_cast<uint32_t>(fit < bandTileWorkers ? fit : bandTileWorkers);
}

template <class T>
struct BandThomasTridiagTiles {
    TridiagBatchSystem<T> sys;
    uint32_t tileColumns;
    uint32_t* status;

    template <class Ctx>
    STRATA_HD void operator()(Ctx& ctx, uint32_t tile) const {
        constexpr uint32_t W = bandTileWorkers;
        T* const sh = reinterpret_cast<T*>(ctx.worker().dynSharedBase());
        uint32_t const n = sys.blocks(), cs = bandTileColumnStride(n), as = tileColumns * cs, m = sys.rhs;
        uint32_t const col0 = tile * tileColumns;
        uint32_t const ncols = sys.columns() - col0 < tileColumns ? sys.columns() - col0 : tileColumns;
        auto const at = [&](uint32_t array, uint32_t c) { return sh + array * as + c * cs; };

        ctx.syncInterdependent2D(ncols, n, [&](uint32_t c, uint32_t k) {
            uint32_t const col = col0 + c;
            at(0, c)[k] = sys.lower(col, k);
            at(1, c)[k] = sys.diag(col, k);
            at(2, c)[k] = sys.upper(col, k);
            for (uint32_t j = 0; j < m; ++j)
                at(3 + j, c)[k] = sys.load(j, col, k);
        });
        ctx.syncInterdependent([&](uint32_t i) {
            for (uint32_t c = i; c < ncols; c += W) {
                T* const a = at(0, c);
                T* const inverse = at(1, c);
                T* const reduced = at(2, c);
                T previous{}; // C'[k-1]
                uint32_t bad = 0;
                for (uint32_t k = 0; k < n; ++k) {
                    T const pivot = k == 0 ? inverse[0] : inverse[k] - a[k] * previous;
                    if (status != nullptr && bad == 0 && badPivot(pivot)) bad = k + 1;
                    T const inv = inverseOf(pivot);
                    inverse[k] = inv;
                    if (k + 1 < n) {
                        previous = inv * reduced[k];
                        reduced[k] = previous;
                    }
                }
                if (status != nullptr) status[col0 + c] = bad;
            }
        });
        ctx.syncInterdependent([&](uint32_t i) {
            for (uint32_t job = i; job < m * ncols; job += W) {
                uint32_t const j = job / ncols, c = job % ncols;
                T const* const a = at(0, c);
                T const* const inverse = at(1, c);
                T const* const reduced = at(2, c);
                T* const d = at(3 + j, c);
                T y = inverse[0] * d[0];
                d[0] = y;
                for (uint32_t k = 1; k < n; ++k) {
                    y = inverse[k] * (d[k] - a[k] * y);
                    d[k] = y;
                }
                T x = y;
                for (uint32_t k = n - 1; k-- > 0;) {
                    x = d[k] - reduced[k] * x;
                    d[k] = x;
                }
            }
        });
        ctx.syncInterdependent2D(ncols, n, [&](uint32_t c, uint32_t k) {
            for (uint32_t j = 0; j < m; ++j)
                sys.store(j, col0 + c, k, at(3 + j, c)[k]);
        });
    }
};

// ---- parallel cyclic reduction --------------------------------------------------------------------------------------

// Shared layout, nb block rows: two buffers q of A, B, C (nb elements each) and D (rhs x nb vectors), then one flag
// per block row for the pivot check (the step at which its pivot went bad, 0 if none).
template <class Sys>
struct BandSharedLayout {
    static constexpr uint32_t mParts = partsOf<typename Sys::M>, vParts = partsOf<typename Sys::V>;
    uint32_t nb, rhs;

    STRATA_HD uint32_t bufferSize() const { return nb * (3 * mParts + rhs * vParts); }
    STRATA_HD uint32_t matrix(uint32_t q, uint32_t band, uint32_t k) const {
        return q * bufferSize() + (band * nb + k) * mParts;
    }
    STRATA_HD uint32_t vector(uint32_t q, uint32_t j, uint32_t k) const {
        return q * bufferSize() + 3 * nb * mParts + (j * nb + k) * vParts;
    }
    STRATA_HD uint32_t flag(uint32_t k) const { return 2 * bufferSize() + k; }
    STRATA_HD uint32_t total() const { return 2 * bufferSize() + nb; }
};

// Step s (1, 2, 4, ... < nb) eliminates X[k-s] and X[k+s] from block row k with rows k-s and k+s of the previous step
// (rows beyond the ends count as identity rows), so nb need not be a power of two; then X[k] = B[k]^-1 D[k]. A step
// reads buffer q and writes buffer 1 - q at its own rows only: one sync a step.
template <uint32_t Dom>
struct BandCyclicReductionKernel {
    static constexpr uint32_t blockDomSize = Dom;
    enum : uint32_t { A = 0, B = 1, C = 2 };

    template <class W, class Sys>
    STRATA_HD void operator()(W const& worker, Sys sys, uint32_t* status) const {
        using M = typename Sys::M;
        using V = typename Sys::V;
        using T = typename Sys::Value;
        uint32_t const nb = sys.blocks(), rhs = sys.rhs;
        BandSharedLayout<Sys> const at{nb, rhs};
        auto const sh = lockstep::dynSharedArray<T>(worker);
        auto const matrix = [&](uint32_t q, uint32_t band, uint32_t k) {
            return loadParts<M>(sh, at.matrix(q, band, k));
        };
        auto const vector = [&](uint32_t q, uint32_t j, uint32_t k) { return loadParts<V>(sh, at.vector(q, j, k)); };
        // Block row k's pivot B at `step` if a division uses it then (it is a neighbour's divisor, or the last one).
        auto const flagPivot = [&](uint32_t q, uint32_t k, uint32_t step) {
            if (lockstep::load(sh, at.flag(k)) == T(0) && badPivot(pivotOf(matrix(q, B, k))))
                sh[at.flag(k)] = static_cast<T>(step);
        };

        for (uint32_t col = worker.blockDomIdx(); col < sys.columns(); col += worker.gridDomSize()) {
            lockstep::forEachInRange(worker, nb, [&](uint32_t k) {
                storeParts(sh, at.matrix(0, A, k), sys.lower(col, k));
                storeParts(sh, at.matrix(0, B, k), sys.diag(col, k));
                storeParts(sh, at.matrix(0, C, k), sys.upper(col, k));
                for (uint32_t j = 0; j < rhs; ++j)
                    storeParts(sh, at.vector(0, j, k), sys.load(j, col, k));
                if (status != nullptr) sh[at.flag(k)] = T(0);
            });
            worker.sync();
            uint32_t q = 0, step = 1;
            for (uint32_t s = 1; s < nb; s *= 2, q = 1 - q, ++step) {
                lockstep::forEachInRange(worker, nb, [&](uint32_t k) {
                    if (status != nullptr && (k >= s || k + s < nb)) flagPivot(q, k, step);
                    M an{}, cn{}, alpha{}, gamma{};
                    M bn = matrix(q, B, k);
                    if (k >= s) {
                        uint32_t const i = k - s;
                        alpha = -divideRight(matrix(q, A, k), matrix(q, B, i));
                        an = alpha * matrix(q, A, i);
                        bn = bn + alpha * matrix(q, C, i);
                    }
                    if (k + s < nb) {
                        uint32_t const i = k + s;
                        gamma = -divideRight(matrix(q, C, k), matrix(q, B, i));
                        cn = gamma * matrix(q, C, i);
                        bn = bn + gamma * matrix(q, A, i);
                    }
                    for (uint32_t j = 0; j < rhs; ++j) {
                        V dn = vector(q, j, k);
                        if (k >= s) dn = dn + alpha * vector(q, j, k - s);
                        if (k + s < nb) dn = dn + gamma * vector(q, j, k + s);
                        storeParts(sh, at.vector(1 - q, j, k), dn);
                    }
                    storeParts(sh, at.matrix(1 - q, A, k), an);
                    storeParts(sh, at.matrix(1 - q, B, k), bn);
                    storeParts(sh, at.matrix(1 - q, C, k), cn);
                });
                worker.sync();
            }
            lockstep::forEachInRange(worker, nb, [&](uint32_t k) {
                if (status != nullptr) flagPivot(q, k, step);
                M const bk = matrix(q, B, k);
                for (uint32_t j = 0; j < rhs; ++j)
                    sys.store(j, col, k, solveWith(bk, vector(q, j, k)));
            });
            if (status != nullptr) { // the first bad pivot: the earliest step, then the lowest row
                worker.sync();
                lockstep::forEachInRange(worker, 1, [&](uint32_t) {
                    uint32_t bad = 0;
                    T first = T(0);
                    for (uint32_t k = 0; k < nb; ++k) {
                        T const flag = lockstep::load(sh, at.flag(k));
                        if (flag != T(0) && (first == T(0) || flag < first)) {
                            first = flag;
                            bad = k + 1;
                        }
                    }
                    status[col] = bad;
                });
            }
            if (col + worker.gridDomSize() < sys.columns()) worker.sync(); // the next column reuses the buffers
        }
    }
};

} // namespace strata::ops::detail
