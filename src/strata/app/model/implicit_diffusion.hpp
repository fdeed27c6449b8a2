// Implicit vertical diffusion of five prognostic variables (theta, q, tracer, u, v; each may be left out) in one
// kernel: per column, the backward-Euler matrix is built and factored once, and each variable's right-hand side is
// swept through the factors while its column is in fast memory.
//
// The system of one variable psi (M = rho0 dzCenter per cell, D_f = rho0_face K_f / dzFace_f per face):
//
//   a[k] psi[k-1] + b[k] psi[k] + c[k] psi[k+1] = d[k]
//   a[k] = -dt D_k / M_k,  c[k] = -dt D_{k+1} / M_k,  b[k] = 1 - a[k] - c[k] (+ dt D_0 / M_0 at k = 0 for winds over a
//   no-slip ground),  d[k] = psi[k] (+ dt rho0_face F / M_0 at k = 0: the surface flux)
//
// The matrix depends on the ground condition only, not on the variable: the scalars share one, the winds another
// (the same one over a free-slip ground). Thomas's elimination of a matrix -- the pivots' reciprocals and the
// modified super-diagonal c' -- is therefore the same for every variable that shares it, and is computed once. Every
// operation is the one the separate passes did (coefficients, then ops::solveTridiagonal's Thomas per variable, with
// theta = T / exner0 staged around the heat solve), in the same order: the same bits, without the passes over the
// a, b, c, d fields and the theta conversion in between (docs/performance.md, "Implicit diffusion in one kernel").
#pragma once

#include <strata/app/model/kernels.hpp>
#include <strata/core/threaded.hpp>
#include <strata/operators/grid.hpp>

#include <cstdint>

namespace strata::app {

struct ImplicitDiffusionColumns {
    // Diffused in place: T (through theta = T / exner0), q, tracer, u, v.
    CenterView T, q, tracer, u, v;
    CenterConst rho, exner;
    FaceConst rhoK;
    // rho_face F at the surface per column (heat, moisture, tracer), and zeros for the winds.
    double const *heatFlux, *moistureFlux, *tracerFlux, *noFlux;
    // Per-column scratch, one Center field each: a[k], the pivots' reciprocals 1 / (b[k] - a[k] c'[k-1]), and c'.
    CenterView a, inverse, cPrime;
    ops::GridView grid;
    double dt;
    bool noSlip; // psi = 0 on the bottom face for the winds: the half cell below center 0 conducts
    // The variables diffused, bit i for variable i (0-4: T, q, tracer, u, v); the others are left as they are.
    uint32_t diffused = 31u;

    STRATA_HD bool diffuses(uint32_t variable) const { return ((diffused >> variable) & 1u) != 0; }
    STRATA_HD bool windsOwnMatrix() const { return noSlip && (diffuses(3) || diffuses(4)); }

    // Columns [col0, col0 + G): G independent dependency chains interleaved level by level (a division per level in
    // the elimination, a multiply-add chain in each sweep), which a CPU core overlaps; G = 1 on the GPU.
    template <uint32_t G>
    STRATA_HD void columns(uint32_t col0) const {
        double perMass0[G] = {}; // 1 / M_0, for the surface flux in d[0]
        factor<G>(col0, false, perMass0);
        if (diffuses(0)) sweep<G>(col0, T, heatFlux, perMass0, true);
        if (diffuses(1)) sweep<G>(col0, q, moistureFlux, perMass0, false);
        if (diffuses(2)) sweep<G>(col0, tracer, tracerFlux, perMass0, false);
        if (windsOwnMatrix()) factor<G>(col0, true, perMass0);
        if (diffuses(3)) sweep<G>(col0, u, noFlux, perMass0, false);
        if (diffuses(4)) sweep<G>(col0, v, noFlux, perMass0, false);
    }

    // The same work split in two steps for workers side by side (ImplicitDiffusionTiles): the elimination of one
    // column's matrix (`ground`: the winds' over a no-slip ground), then the solve of one of its variables
    // (0-4: T, q, tracer, u, v) through the factors this view holds. Each step does what `columns` does for it,
    // in the same order: the same bits.
    STRATA_HD void factorColumn(uint32_t col, bool ground) const {
        double perMass0 = 0;
        factor<1>(col, ground, &perMass0);
    }
    STRATA_HD void solveVariable(uint32_t col, uint32_t variable) const {
        double const perMass0 = perMass(col, 0); // as factor computes it
        // Selects, not arrays indexed by `variable`: on a GPU an array indexed at run time lives in local memory, and
        // every access would be a trip to DRAM.
        CenterView const psi = variable == 0 ? T : variable == 1 ? q : variable == 2 ? tracer : variable == 3 ? u : v;
        double const* const flux = variable == 0   ? heatFlux
                                   : variable == 1 ? moistureFlux
                                   : variable == 2 ? tracerFlux
                                                   : noFlux;
        sweep<1>(col, psi, flux, &perMass0, variable == 0);
    }

private:
    // 1 / M_k = 1 / (rho0 dzCenter) of cell k: the elimination's one division per level, and the surface flux's scale
    STRATA_HD double perMass(uint32_t col, uint32_t k) const { return 1.0 / (rho(col, k) * grid.dzCenter[k]); }

    // Builds the matrix of the columns (ground: the no-slip term at k = 0) and eliminates: a, 1/pivot and c' in the
    // scratch fields.
    template <uint32_t G>
    STRATA_HD void factor(uint32_t col0, bool ground, double* perMass0) const {
        uint32_t const n = grid.n();
        double cPrev[G] = {};
        for (uint32_t k = 0; k < n; ++k)
            for (uint32_t j = 0; j < G; ++j) {
                uint32_t const col = col0 + j;
                double const perMass = this->perMass(col, k);
                double const below = k > 0 ? rhoK(col, k) * grid.rdzFace[k] : 0.0;
                double const above = k + 1 < n ? rhoK(col, k + 1) * grid.rdzFace[k + 1] : 0.0;
                double const groundTerm = k == 0 && ground ? dt * rhoK(col, 0) * grid.rdzFace[0] * perMass : 0.0;
                double const ak = -dt * below * perMass;
                double const ck = -dt * above * perMass;
                double const bk = 1.0 - ak - ck + groundTerm;
                double const inv = k == 0 ? 1.0 / bk : 1.0 / (bk - ak * cPrev[j]);
                a(col, k) = ak;
                inverse(col, k) = inv;
                if (k + 1 < n) { // c[n-1] lies outside the matrix
                    cPrev[j] = ck * inv;
                    cPrime(col, k) = cPrev[j];
                }
                if (k == 0) perMass0[j] = perMass;
            }
    }

    // Solves one variable in place: forward substitution into psi, then back substitution. theta: psi holds T, the
    // system is solved for theta = T / exner0, and T = theta exner0 is written back.
    template <uint32_t G>
    STRATA_HD void sweep(uint32_t col0, CenterView psi, double const* surfaceFlux, double const* perMass0,
                         bool theta) const {
        uint32_t const n = grid.n();
        double x[G] = {}; // (a grid has at least one level: never read unset)
        for (uint32_t k = 0; k < n; ++k)
            for (uint32_t j = 0; j < G; ++j) {
                uint32_t const col = col0 + j;
                double const value = theta ? psi(col, k) / exner(col, k) : psi(col, k);
                double const d = value + (k == 0 ? dt * surfaceFlux[col] * perMass0[j] : 0.0);
                x[j] = k == 0 ? d * inverse(col, 0) : (d - a(col, k) * x[j]) * inverse(col, k);
                psi(col, k) = x[j];
            }
        for (uint32_t j = 0; j < G; ++j)
            if (theta) psi(col0 + j, n - 1) = x[j] * exner(col0 + j, n - 1);
        for (uint32_t k = n - 1; k-- > 0;)
            for (uint32_t j = 0; j < G; ++j) {
                uint32_t const col = col0 + j;
                x[j] = psi(col, k) - cPrime(col, k) * x[j];
                psi(col, k) = theta ? x[j] * exner(col, k) : x[j];
            }
    }
};

// On the one-worker CPU backends a worker takes `group` neighbouring columns at a time (the last, partial group
// column by column); one worker per column where the columns are deeper than a tile (below).
template <uint32_t Group>
struct ImplicitDiffusionBody {
    ImplicitDiffusionColumns cols;
    uint32_t columnCount;
    STRATA_HD void operator()(uint32_t i) const {
        uint32_t const col0 = i * Group;
        if (col0 + Group <= columnCount) {
            cols.template columns<Group>(col0);
        } else {
            for (uint32_t col = col0; col < columnCount; ++col)
                cols.template columns<1>(col);
        }
    }
};

// On backends with many workers per block (the GPU; the checking Threads backend runs the same code on the CPU) a
// block takes a tile of neighbouring columns. Its workers copy the tile's fields into shared memory in address order
// (neighbouring GPU threads, neighbouring addresses: coalesced, where one thread per column reads addresses a column
// apart); then, side by side, one worker per column and matrix eliminates (the scalars' matrix, and the winds' over a
// no-slip ground), and one worker per column and variable solves that variable -- the elimination's scratch (a, the
// pivots' reciprocals, c') never leaves shared memory --; and the workers copy the five diffused fields back in
// address order. The column code is ImplicitDiffusionColumns's on views of the shared arrays: the same bits.
//
// Side by side, a column's chain of dependent operations is one elimination and one solve long, not two
// eliminations and five solves: with one worker per column for everything, a block has only a few busy workers
// walking their columns while its loads wait, far from the memory bandwidth.
//
// A tile of 256 values has 64 workers, not 256: the solves keep at most 5 x 8 of them busy (30 levels), and with 256
// a block's other warps would mostly wait at its barriers while their registers and the block's shared memory limit
// how many blocks an SM holds. With 64 workers shared memory alone sets the blocks an SM holds. The shared arrays are
// laid out for the banks: a column's values start an odd number of doubles apart, and the arrays 8 doubles more than
// a multiple of 16 apart, so that at 30 levels the workers of a half-warp, (variable, column) side by side, read 16
// different pairs of banks (a column every 30 doubles with the arrays 256 apart gives bank conflicts on loads and
// stores; this layout leaves the loads without any). Other level counts can still meet 2-way conflicts (60 levels:
// variables 0 and 2).
inline constexpr uint32_t diffusionTileItems = 256;
inline constexpr uint32_t diffusionTileWorkers = 64;
inline constexpr uint32_t diffusionTileArrayStride = diffusionTileItems + 8; // doubles from one array to the next
// Shared arrays of a tile: T q tracer u v, rho exner, rho K on faces, and the elimination (a, inverse, c') of one
// matrix, or of two over a no-slip ground.
STRATA_HD inline uint32_t diffusionTileArrays(bool noSlip) { return noSlip ? 14u : 11u; }
// Doubles from one column of a tile's array to the next: odd (see above), at least the values of a column.
STRATA_HD inline uint32_t diffusionTileColumnStride(uint32_t values) { return values | 1u; }

// Columns per tile: whole columns whose faces (levels + 1 values, odd-strided) fit in the tile's items; 0 (no tiles)
// for deeper.
STRATA_HD inline uint32_t diffusionTileColumns(uint32_t levels) {
    uint32_t const faceStride = diffusionTileColumnStride(levels + 1);
    return faceStride > diffusionTileItems ? 0u : diffusionTileItems / faceStride;
}

struct ImplicitDiffusionTiles {
    ImplicitDiffusionColumns cols;
    uint32_t columnCount;
    uint32_t tileColumns;

    template <class Ctx>
    STRATA_HD void operator()(Ctx& ctx, uint32_t tile) const {
        constexpr uint32_t A = diffusionTileArrayStride, W = diffusionTileWorkers;
        double* const base = reinterpret_cast<double*>(ctx.worker().dynSharedBase());
        uint32_t const n = cols.grid.n();
        uint32_t const cs = diffusionTileColumnStride(n), fs = diffusionTileColumnStride(n + 1);
        uint32_t const col0 = tile * tileColumns;
        uint32_t const ncols = columnCount - col0 < tileColumns ? columnCount - col0 : tileColumns;
        // The tile's columns as fields of their own (column c of the tile = column col0 + c), in shared memory.
        auto center = [&](uint32_t array) { return CenterView{base + array * A, cs, n, ncols}; };
        ImplicitDiffusionColumns t = cols;
        t.T = center(0);
        t.q = center(1);
        t.tracer = center(2);
        t.u = center(3);
        t.v = center(4);
        CenterView const rho = center(5), exner = center(6);
        FaceView const rhoK{base + 7 * A, fs, n + 1, ncols};
        t.rho = CenterConst{rho.data, cs, n, ncols};
        t.exner = CenterConst{exner.data, cs, n, ncols};
        t.rhoK = FaceConst{rhoK.data, fs, n + 1, ncols};
        t.a = center(8);
        t.inverse = center(9);
        t.cPrime = center(10);
        t.heatFlux = cols.heatFlux + col0;
        t.moistureFlux = cols.moistureFlux + col0;
        t.tracerFlux = cols.tracerFlux + col0;
        t.noFlux = cols.noFlux + col0;
        // The winds' matrix has its own elimination over a no-slip ground, else the scalars'. A job takes a copy of
        // `t` with the scratch it uses (a view chosen at run time between two local structs would put both in local
        // memory on a GPU).
        auto matrix = [&](bool winds) {
            ImplicitDiffusionColumns m = t;
            if (winds && cols.noSlip) {
                m.a = center(11);
                m.inverse = center(12);
                m.cPrime = center(13);
            }
            return m;
        };
        // f(tile view, field view) for each diffused field
        auto diffused = [&](auto const& f) {
            f(t.T, cols.T);
            f(t.q, cols.q);
            f(t.tracer, cols.tracer);
            f(t.u, cols.u);
            f(t.v, cols.v);
        };
        // (column, level) pairs in address order: lockstep::forEachInRange2D, then syncInterdependent2D, whose sync
        // closes both loops before anything reads what they wrote
        lockstep::forEachInRange2D(ctx.worker(), ncols, n, [&](uint32_t c, uint32_t k) {
            uint32_t const col = col0 + c;
            diffused([&](CenterView in, CenterView field) { in(c, k) = field(col, k); });
            rho(c, k) = cols.rho(col, k);
            exner(c, k) = cols.exner(col, k);
        });
        ctx.syncInterdependent2D(ncols, n + 1, [&](uint32_t c, uint32_t k) { rhoK(c, k) = cols.rhoK(col0 + c, k); });
        uint32_t const matrices = cols.windsOwnMatrix() ? 2u : 1u;
        ctx.syncInterdependent([&](uint32_t i) {
            for (uint32_t job = i; job < matrices * ncols; job += W)
                matrix(job >= ncols).factorColumn(job % ncols, job >= ncols);
        });
        ctx.syncInterdependent([&](uint32_t i) {
            for (uint32_t job = i; job < 5 * ncols; job += W) {
                uint32_t const variable = job / ncols;
                if (cols.diffuses(variable)) matrix(variable >= 3).solveVariable(job % ncols, variable);
            }
        });
        ctx.syncInterdependent2D(ncols, n, [&](uint32_t c, uint32_t k) {
            diffused([&](CenterView in, CenterView field) { field(col0 + c, k) = in(c, k); });
        });
    }
};

template <class Backend>
void diffuseImplicitly(Backend const& backend, uint32_t columnCount, ImplicitDiffusionColumns const& cols) {
    if constexpr (Backend::oneWorkerPerBlock) {
        constexpr uint32_t group = 4;
        threaded::threaded(backend, threaded::independent((columnCount + group - 1) / group),
                           ImplicitDiffusionBody<group>{cols, columnCount});
    } else {
        uint32_t const tileColumns = diffusionTileColumns(cols.grid.n());
        if (tileColumns > 0) {
            threaded::threaded(
                backend, threaded::independent((columnCount + tileColumns - 1) / tileColumns),
                threaded::interdependent<diffusionTileWorkers>(
                    threaded::sharedBytesFor<double, diffusionTileArrayStride>(diffusionTileArrays(cols.noSlip))),
                ImplicitDiffusionTiles{cols, columnCount, tileColumns});
        } else {
            threaded::threaded(backend, threaded::independent(columnCount),
                               ImplicitDiffusionBody<1>{cols, columnCount});
        }
    }
}

} // namespace strata::app
