// The kernels behind tridiagonal.hpp: Thomas (one worker per column) and parallel cyclic reduction (one block per
// column, workers over the levels, double-buffered in block shared memory).
#pragma once

#include "core/lockstep.hpp"
#include "operators/field.hpp"

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
template <class T>
struct TridiagThomasBody {
    TridiagViews<T> v;
    T* scratch; // c', one stride of x per column

    STRATA_HD void operator()(uint32_t col) const {
        uint32_t const n = v.x.levels;
        T* const cp = scratch + static_cast<std::size_t>(col) * v.x.stride;
        T pivot = v.b(col, 0);
        if (n > 1) cp[0] = v.c(col, 0) / pivot;
        v.x(col, 0) = v.d(col, 0) / pivot;
        for (uint32_t k = 1; k < n; ++k) {
            T const ak = v.a(col, k);
            pivot = v.b(col, k) - ak * cp[k - 1];
            if (k + 1 < n) cp[k] = v.c(col, k) / pivot; // c[n-1] is outside the matrix: never read
            v.x(col, k) = (v.d(col, k) - ak * v.x(col, k - 1)) / pivot;
        }
        for (uint32_t k = n - 1; k-- > 0;)
            v.x(col, k) = v.x(col, k) - cp[k] * v.x(col, k + 1);
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
