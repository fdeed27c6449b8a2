// Implicit vertical diffusion of all five prognostic variables (theta, q, tracer, u, v) in one kernel: per column,
// the backward-Euler matrix is built and factored once, and each variable's right-hand side is swept through the
// factors while its column is in fast memory.
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

#include "app/model/kernels.hpp"
#include "core/threaded.hpp"
#include "operators/grid.hpp"

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

    // Columns [col0, col0 + G): G independent dependency chains interleaved level by level (a division per level in
    // the elimination, a multiply-add chain in each sweep), which a CPU core overlaps; G = 1 on the GPU.
    template <uint32_t G>
    STRATA_HD void columns(uint32_t col0) const {
        double perMass0[G] = {}; // 1 / M_0, for the surface flux in d[0]
        factor<G>(col0, false, perMass0);
        sweep<G>(col0, T, heatFlux, perMass0, true);
        sweep<G>(col0, q, moistureFlux, perMass0, false);
        sweep<G>(col0, tracer, tracerFlux, perMass0, false);
        if (noSlip) factor<G>(col0, true, perMass0);
        sweep<G>(col0, u, noFlux, perMass0, false);
        sweep<G>(col0, v, noFlux, perMass0, false);
    }

private:
    // Builds the matrix of the columns (ground: the no-slip term at k = 0) and eliminates: a, 1/pivot and c' in the
    // scratch fields.
    template <uint32_t G>
    STRATA_HD void factor(uint32_t col0, bool ground, double* perMass0) const {
        uint32_t const n = grid.n();
        double cPrev[G] = {};
        for (uint32_t k = 0; k < n; ++k)
            for (uint32_t j = 0; j < G; ++j) {
                uint32_t const col = col0 + j;
                double const perMass = 1.0 / (rho(col, k) * grid.dzCenter[k]); // the one division: 1 / m
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

// One worker per column on the GPU and the checking backend; on the one-worker CPU backends a worker takes
// `group` neighbouring columns at a time (the last, partial group column by column).
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

template <class Backend>
void diffuseImplicitly(Backend const& backend, uint32_t columnCount, ImplicitDiffusionColumns const& cols) {
    if constexpr (Backend::oneWorkerPerBlock) {
        constexpr uint32_t group = 4;
        threaded::threaded(backend, threaded::independent((columnCount + group - 1) / group),
                           ImplicitDiffusionBody<group>{cols, columnCount});
    } else {
        threaded::threaded(backend, threaded::independent(columnCount), ImplicitDiffusionBody<1>{cols, columnCount});
    }
}

} // namespace strata::app
