// The kernels behind tridiagonal.hpp: Thomas (one worker per column) and parallel cyclic reduction (one block per
// column, workers over the levels, double-buffered in block shared memory).
#pragma once

#include <strata/core/lockstep.hpp>
#include <strata/operators/field.hpp>

#include <cstddef>
#include <cstdint>

namespace strata::ops::detail {

template <class T>
struct TridiagViews {
    FieldView<T const, Center> a, b, c, d;
    FieldView<T, Center> x;
};

// Thomas: forward elimination keeps the modified super-diagonal c' in `scratch` and the modified right-hand side d'
// in x; back substitution then overwrites d' by the solution. x[k] is written only after d[k] was read, so x may be d.
// One division per level: the reciprocal of the pivot, which c' and d' then multiply.
template <class T>
struct TridiagThomasBody {
    TridiagViews<T> v;
    T* scratch; // c', one stride of x per column

    STRATA_HD void operator()(uint32_t col) const {
        uint32_t const n = v.x.levels;
        T* const cp = scratch + static_cast<std::size_t>(col) * v.x.stride;
        T inverse = T(1) / v.b(col, 0);
        if (n > 1) cp[0] = v.c(col, 0) * inverse;
        v.x(col, 0) = v.d(col, 0) * inverse;
        for (uint32_t k = 1; k < n; ++k) {
            T const ak = v.a(col, k);
            inverse = T(1) / (v.b(col, k) - ak * cp[k - 1]);
            if (k + 1 < n) cp[k] = v.c(col, k) * inverse; // c[n-1] is outside the matrix: never read
            v.x(col, k) = (v.d(col, k) - ak * v.x(col, k - 1)) * inverse;
        }
        for (uint32_t k = n - 1; k-- > 0;)
            v.x(col, k) = v.x(col, k) - cp[k] * v.x(col, k + 1);
    }
};

// The same Thomas over G neighbouring columns at a time, level by level: each column's sweep is a chain of dependent
// operations (a division, then the next level needs its result), so one column at a time leaves the CPU waiting on
// latency; G independent chains interleaved fill the pipeline. Every column does the operations of
// TridiagThomasBody in the same order: the same bits. The CPU backends use G = 8 (docs/performance.md).
template <class T, uint32_t G>
struct TridiagThomasGroupBody {
    TridiagViews<T> v;
    T* scratch;

    STRATA_HD void operator()(uint32_t group) const {
        uint32_t const col0 = group * G, columns = v.x.columns;
        if (col0 + G > columns) { // the last, partial group
            for (uint32_t col = col0; col < columns; ++col)
                TridiagThomasBody<T>{v, scratch}(col);
            return;
        }
        uint32_t const n = v.x.levels;
        T* cp[G];
        T inverse[G];
        for (uint32_t j = 0; j < G; ++j) {
            uint32_t const col = col0 + j;
            cp[j] = scratch + static_cast<std::size_t>(col) * v.x.stride;
            inverse[j] = T(1) / v.b(col, 0);
            if (n > 1) cp[j][0] = v.c(col, 0) * inverse[j];
            v.x(col, 0) = v.d(col, 0) * inverse[j];
        }
        for (uint32_t k = 1; k < n; ++k)
            for (uint32_t j = 0; j < G; ++j) {
                uint32_t const col = col0 + j;
                T const ak = v.a(col, k);
                inverse[j] = T(1) / (v.b(col, k) - ak * cp[j][k - 1]);
                if (k + 1 < n) cp[j][k] = v.c(col, k) * inverse[j];
                v.x(col, k) = (v.d(col, k) - ak * v.x(col, k - 1)) * inverse[j];
            }
        for (uint32_t k = n - 1; k-- > 0;)
            for (uint32_t j = 0; j < G; ++j) {
                uint32_t const col = col0 + j;
                v.x(col, k) = v.x(col, k) - cp[j][k] * v.x(col, k + 1);
            }
    }
};

// Parallel cyclic reduction. Step s (s = 1, 2, 4, ... < n) eliminates x[k-s] and x[k+s] from equation k using
// equations k-s and k+s of the previous step; equations beyond the ends count as identity rows (no coupling), so n
// need not be a power of two. After the step with 2s >= n every equation is b[k] x[k] = d[k].
// Shared layout: sh[(4 q + r) n + k], buffer q = 0, 1, array r = a, b, c, d. A step reads buffer q and writes
// buffer 1 - q at its own levels only, so one sync per step suffices.
template <uint32_t Dom>
struct TridiagCyclicReductionKernel {
    static constexpr uint32_t blockDomSize = Dom;
    enum : uint32_t { A = 0, B = 1, C = 2, D = 3 };

    template <class W, class T>
    STRATA_HD void operator()(W const& worker, TridiagViews<T> v) const {
        uint32_t const n = v.x.levels;
        auto const sh = lockstep::dynSharedArray<T>(worker);
        auto at = [n](uint32_t q, uint32_t r, uint32_t k) { return (4 * q + r) * n + k; };

        for (uint32_t col = worker.blockDomIdx(); col < v.x.columns; col += worker.gridDomSize()) {
            lockstep::forEachInRange(worker, n, [&](uint32_t k) {
                sh[at(0, A, k)] = k == 0 ? T(0) : v.a(col, k); // a[0] and c[n-1] are outside the matrix
                sh[at(0, B, k)] = v.b(col, k);
                sh[at(0, C, k)] = k + 1 == n ? T(0) : v.c(col, k);
                sh[at(0, D, k)] = v.d(col, k);
            });
            worker.sync();
            uint32_t q = 0;
            for (uint32_t s = 1; s < n; s *= 2, q = 1 - q) {
                lockstep::forEachInRange(worker, n, [&](uint32_t k) {
                    T an = T(0), cn = T(0);
                    T bn = lockstep::load(sh, at(q, B, k));
                    T dn = lockstep::load(sh, at(q, D, k));
                    if (k >= s) {
                        uint32_t const j = k - s;
                        T const alpha = -lockstep::load(sh, at(q, A, k)) / lockstep::load(sh, at(q, B, j));
                        an = alpha * lockstep::load(sh, at(q, A, j));
                        bn = bn + alpha * lockstep::load(sh, at(q, C, j));
                        dn = dn + alpha * lockstep::load(sh, at(q, D, j));
                    }
                    if (k + s < n) {
                        uint32_t const j = k + s;
                        T const gamma = -lockstep::load(sh, at(q, C, k)) / lockstep::load(sh, at(q, B, j));
                        cn = gamma * lockstep::load(sh, at(q, C, j));
                        bn = bn + gamma * lockstep::load(sh, at(q, A, j));
                        dn = dn + gamma * lockstep::load(sh, at(q, D, j));
                    }
                    sh[at(1 - q, A, k)] = an;
                    sh[at(1 - q, B, k)] = bn;
                    sh[at(1 - q, C, k)] = cn;
                    sh[at(1 - q, D, k)] = dn;
                });
                worker.sync();
            }
            lockstep::forEachInRange(worker, n, [&](uint32_t k) {
                v.x(col, k) = lockstep::load(sh, at(q, D, k)) / lockstep::load(sh, at(q, B, k));
            });
            if (col + worker.gridDomSize() < v.x.columns) worker.sync(); // the next column reuses the buffers
        }
    }
};

} // namespace strata::ops::detail
