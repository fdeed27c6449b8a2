// Implicit vertical diffusion of five prognostic variables (theta, q, tracer, u, v; each may be left out) in one
// kernel whose matrices and right-hand sides come from the diffusion operator's expression, the one the explicit mode
// evaluates:
//
//   D(psi) = d/dz(rho0 K dpsi/dz),  discretely div(rho0K * grad(psi)) (mixing, below)
//
// with rho0 K dpsi/dz = -rho_face F on the ground face (F the upward surface flux; for the winds over a no-slip ground,
// psi = 0 on that face instead) and 0 on the top face. Backward Euler, rho0 (psi1 - psi0) = dt D(psi1), is solved for
// the increment:
//
//   (rho0 - dt J) dpsi = dt D(psi0),   psi1 = psi0 + dpsi
//
// J the Jacobian of D (its matrix: D is affine in psi). The right-hand side is the operator at the current state, so
// a state D leaves alone (a uniform scalar with no surface flux: D(psi0) is 0 exactly) has dpsi = 0 exactly and stays
// bit for bit as it is; solving for psi1 itself instead, the rounding of the solve moved a uniform 288 K by about 9
// ulps a step. Heat is diffused as theta = T / exner0 (T1 = (T0 / exner0 + dtheta) exner0).
//
// Per point the kernel evaluates, with the Direct engine's code (ops::tridiagonalRowAt, ops::valueAt: operators/
// jet.hpp): D at the seeded theta in three-component jets, which gives the row of J and D(theta) in one evaluation,
// and D at each other variable's state. The scalars share that matrix (their boundary conditions differ only in the
// flux, which is not in J); the winds have another over a no-slip ground (with D(u) from its evaluation), else they
// share the scalars'. A matrix is factored once (Thomas: the pivots' reciprocals and c') and every variable that
// shares it is swept through the factors.
//
// A block takes a tile of neighbouring columns with its arrays in shared memory (on the CPU backends, a buffer per
// thread that stays in L1): the rows and right-hand sides (value a worker, side by side in address order; a walk
// over the tile per expression), the elimination (a worker per column and matrix), the sweeps (a worker per column
// and variable), and psi0 + dpsi back to the fields (value a worker). With one worker per block (CPU) a tile holds at
// least four columns; the elimination and each variable's sweeps take four columns side by side, their dependency
// chains interleaved level by level (a chain at a time waits on its division and multiplications), and the update a
// column at a time. Every value is computed by the same operations on every backend: the same bits.
#pragma once

#include <strata/app/model/kernels.hpp>
#include <strata/core/error.hpp>
#include <strata/core/threaded.hpp>
#include <strata/operators/grid.hpp>
#include <strata/operators/jet.hpp>
#include <strata/operators/stencils.hpp>

#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>

namespace strata::app {

// D(x) = div(rho0K * grad(x)) with rho0 K dx/dz = `bottom` on the ground face (a scalar, or ColumnValues: -rho_face F
// per column) and 0 on the top face: the scalars, and the winds over a free-slip ground (bottom 0).
template <class RhoK, class X, class Bottom>
auto fluxMixing(RhoK const& rhoK, X const& x, Bottom const& bottom) {
    auto const grad = ops::GradientC2F{ops::SetGradient{0.0}, ops::SetGradient{0.0}};
    auto const div = ops::DivergenceF2C{ops::SetValue{bottom}, ops::SetValue{0.0}};
    return div(rhoK * grad(x));
}
// D(x) with x = 0 on the ground face (the flux there from the gradient over the half cell below center 0) and no
// stress through the top: the winds over a no-slip ground.
template <class RhoK, class X>
auto noSlipMixing(RhoK const& rhoK, X const& x) {
    auto const grad = ops::GradientC2F{ops::SetValue{0.0}, ops::SetGradient{0.0}};
    auto const div = ops::DivergenceF2C{ops::NoBC{}, ops::SetValue{0.0}};
    return div(rhoK * grad(x));
}

struct ImplicitDiffusionFields {
    // Diffused in place: T (through theta = T / exner0), q, tracer, u, v.
    CenterView T, q, tracer, u, v;
    CenterConst rho, exner;
    FaceConst rhoK;
    // -rho_face F per column (heat, moisture, tracer): rho0 K dpsi/dz on the ground face; zeros for the winds.
    double const *negHeatFlux, *negMoistureFlux, *negTracerFlux, *noFlux;
    ops::GridView grid;
    double dt;
    bool noSlip; // psi = 0 on the ground face for the winds
    // The variables diffused, bit i for variable i (0-4: T, q, tracer, u, v); the others are left as they are.
    uint32_t diffused = 31u;

    STRATA_HD bool diffuses(uint32_t variable) const { return ((diffused >> variable) & 1u) != 0; }
    STRATA_HD bool windsOwnMatrix() const { return noSlip && (diffuses(3) || diffuses(4)); }
};

// A tile: whole columns in diffusionTileItems values per array (at least one column; with one worker, at least
// diffusionTileGroup columns, solved side by side), its arrays diffusionTileArrayStride doubles apart. A column's
// values start an odd number of doubles apart and the arrays 8 doubles more than a multiple of 16 apart, so that the
// GPU workers of a half-warp, (variable, column) side by side in the sweeps, read different banks (at 30 levels: 16
// different pairs of banks).
inline constexpr uint32_t diffusionTileItems = 256;
inline constexpr uint32_t diffusionTileWorkers = 64; // a block's workers on the many-worker backends
STRATA_HD inline uint32_t diffusionTileColumnStride(uint32_t levels) { return levels | 1u; }
inline constexpr uint32_t diffusionTileGroup = 4;
STRATA_HD inline uint32_t diffusionTileColumns(uint32_t levels, bool oneWorker) {
    uint32_t const cs = diffusionTileColumnStride(levels);
    uint32_t const fit = cs > diffusionTileItems ? 1u : diffusionTileItems / cs;
    return oneWorker && fit < diffusionTileGroup ? diffusionTileGroup : fit;
}
STRATA_HD inline uint32_t diffusionTileArrayStride(uint32_t levels, bool oneWorker) {
    uint32_t const used = diffusionTileColumns(levels, oneWorker) * diffusionTileColumnStride(levels);
    return (used + 15u) / 16u * 16u + 8u;
}
// Arrays of a tile: a, b, c of the scalars' matrix (and of the winds' over a no-slip ground), and the five
// right-hand sides (the sweeps turn them into the increments in place).
STRATA_HD inline uint32_t diffusionTileArrays(bool noSlip) { return noSlip ? 11u : 8u; }

// The kernel body. HeatRows: D of the seeded theta, the scalars' rows of J and D(theta); WindRows: D of the seeded u
// over a no-slip ground, the winds' rows and D(u) (else unused); Scalar, Wind: D at a state.
template <class HeatRows, class WindRows, class Scalar, class Wind>
struct ImplicitDiffusionTiles {
    ImplicitDiffusionFields f;
    HeatRows heatRows;
    WindRows windRows;
    Scalar moisture, tracer;
    Wind u, v;
    uint32_t columnCount;

    static constexpr uint32_t maxReach =
        static_cast<uint32_t>(std::max({HeatRows::reach, WindRows::reach, Scalar::reach, Wind::reach}));

    // (Flattened on the host, as the engines' kernels are: the operators' apply functions inlined into the loops.)
    template <class Ctx>
    STRATA_ENGINE_FLATTEN STRATA_HD void operator()(Ctx& ctx, uint32_t tile) const {
        constexpr bool oneWorker = std::remove_cvref_t<decltype(ctx.worker())>::BackendType::oneWorkerPerBlock;
        constexpr uint32_t workers = oneWorker ? 1u : diffusionTileWorkers;
        double* const base = reinterpret_cast<double*>(ctx.worker().dynSharedBase());
        uint32_t const n = f.grid.n();
        uint32_t const cs = diffusionTileColumnStride(n), stride = diffusionTileArrayStride(n, oneWorker);
        uint32_t const tileColumns = diffusionTileColumns(n, oneWorker);
        uint32_t const col0 = tile * tileColumns;
        uint32_t const ncols = columnCount - col0 < tileColumns ? columnCount - col0 : tileColumns;
        auto array = [&](uint32_t i) { return CenterView{base + i * stride, cs, n, ncols}; };
        bool const windsOwn = f.windsOwnMatrix();
        uint32_t const rhs0 = windsOwn ? 6u : 3u; // the right-hand sides' first array
        uint32_t const matrices = windsOwn ? 2u : 1u;
        double const dt = f.dt;

        // Rows and right-hand sides, a walk over the tile per matrix and per variable of its own: with every
        // expression in one walk, the streams they read outnumber the registers and their addresses are reloaded.
        auto matrixRows = [&](uint32_t m, auto const& e) {
            return [&, m](uint32_t c, uint32_t k, auto interior) {
                uint32_t const col = col0 + c;
                double const rho = f.rho(col, k);
                ops::TridiagonalRow<double> const r =
                    ops::tridiagonalRowAt<decltype(interior)::value>(e, f.grid, col, k);
                array(3 * m)(c, k) = -dt * r.lower;
                array(3 * m + 1)(c, k) = rho - dt * r.diagonal;
                array(3 * m + 2)(c, k) = -dt * r.upper;
                // The value: D at theta (m = 0) or u (m = 1); stored even where that variable is not diffused (its
                // array is then not read), which keeps the loop free of branches.
                array(rhs0 + 3 * m)(c, k) = dt * r.value;
            };
        };
        auto rightHandSide = [&](uint32_t var, auto const& e) {
            return [&, var](uint32_t c, uint32_t k, auto interior) {
                array(rhs0 + var)(c, k) = dt * ops::valueAt<decltype(interior)::value>(e, f.grid, col0 + c, k);
            };
        };
        // Thomas, in place, on G neighbouring tile columns from c0 (g: std::integral_constant<uint32_t, G>), their
        // dependency chains interleaved level by level, each carrying its previous level in a register: the
        // elimination of matrix m (b -> 1 / pivot, c -> c'), and a variable's sweeps through its matrix, forward and
        // back to the increment.
        auto eliminate = [&](auto g, uint32_t m, uint32_t c0) {
            constexpr uint32_t G = decltype(g)::value;
            CenterView const a = array(3 * m), b = array(3 * m + 1), cc = array(3 * m + 2);
            double prev[G];
            for (uint32_t j = 0; j < G; ++j) {
                double const inv = 1.0 / b(c0 + j, 0);
                b(c0 + j, 0) = inv;
                prev[j] = cc(c0 + j, 0) = cc(c0 + j, 0) * inv;
            }
            for (uint32_t k = 1; k < n; ++k)
                for (uint32_t j = 0; j < G; ++j) {
                    uint32_t const c = c0 + j;
                    double const inv = 1.0 / (b(c, k) - a(c, k) * prev[j]);
                    b(c, k) = inv;
                    prev[j] = cc(c, k) = cc(c, k) * inv;
                }
        };
        auto matrixOf = [&](uint32_t var) { return var >= 3 && windsOwn ? 1u : 0u; };
        auto sweep = [&](auto g, uint32_t var, uint32_t c0) {
            constexpr uint32_t G = decltype(g)::value;
            uint32_t const m = matrixOf(var);
            CenterView const a = array(3 * m), inv = array(3 * m + 1), cp = array(3 * m + 2), x = array(rhs0 + var);
            double prev[G];
            for (uint32_t j = 0; j < G; ++j)
                prev[j] = x(c0 + j, 0) = x(c0 + j, 0) * inv(c0 + j, 0);
            for (uint32_t k = 1; k < n; ++k)
                for (uint32_t j = 0; j < G; ++j) {
                    uint32_t const c = c0 + j;
                    prev[j] = x(c, k) = (x(c, k) - a(c, k) * prev[j]) * inv(c, k);
                }
            for (uint32_t k = n - 1; k-- > 0;)
                for (uint32_t j = 0; j < G; ++j) {
                    uint32_t const c = c0 + j;
                    prev[j] = x(c, k) = x(c, k) - cp(c, k) * prev[j];
                }
        };
        // psi0 + dpsi of variable var (0-4: T, q, tracer, u, v) at levels [k0, k1) of tile column c, theta's through
        // T = (T / exner0 + dtheta) exner0. Over a whole column (one worker per block) the loop is a vector loop.
        auto update = [&](uint32_t var, uint32_t c, uint32_t k0, uint32_t k1) {
            CenterView const psi = var == 0 ? f.T : var == 1 ? f.q : var == 2 ? f.tracer : var == 3 ? f.u : f.v;
            double* const p = &psi(col0 + c, 0);
            double const* const d = &array(rhs0 + var)(c, 0);
            if (var == 0) {
                double const* const exner = &f.exner(col0 + c, 0);
                for (uint32_t k = k0; k < k1; ++k)
                    p[k] = (p[k] / exner[k] + d[k]) * exner[k];
            } else {
                for (uint32_t k = k0; k < k1; ++k)
                    p[k] = p[k] + d[k];
            }
        };
        auto walk = [&](auto const& body) {
            ops::detail::forEachColumnLevel<static_cast<int>(maxReach)>(ctx.worker(), true, ncols, 0u, n, n, body);
        };
        walk(matrixRows(0, heatRows));
        if (windsOwn) walk(matrixRows(1, windRows));
        if (f.diffuses(1)) walk(rightHandSide(1, moisture));
        if (f.diffuses(2)) walk(rightHandSide(2, tracer));
        if (f.diffuses(3) && !windsOwn) walk(rightHandSide(3, u));
        if (f.diffuses(4)) walk(rightHandSide(4, v));
        ctx.worker().sync();
        if constexpr (oneWorker) {
            // The tile's columns in groups of diffusionTileGroup (the rest one at a time): every matrix eliminated,
            // then every variable swept. Then psi0 + dpsi a variable and column at a time (contiguous in both).
            auto columns = [&](auto g, uint32_t c0) {
                for (uint32_t m = 0; m < matrices; ++m)
                    eliminate(g, m, c0);
                for (uint32_t var = 0; var < 5; ++var)
                    if (f.diffuses(var)) sweep(g, var, c0);
            };
            uint32_t c0 = 0;
            for (; c0 + diffusionTileGroup <= ncols; c0 += diffusionTileGroup)
                columns(std::integral_constant<uint32_t, diffusionTileGroup>{}, c0);
            for (; c0 < ncols; ++c0)
                columns(std::integral_constant<uint32_t, 1>{}, c0);
            for (uint32_t var = 0; var < 5; ++var)
                if (f.diffuses(var))
                    for (uint32_t c = 0; c < ncols; ++c)
                        update(var, c, 0, n);
            ctx.worker().sync();
        } else {
            ctx.syncInterdependent([&](uint32_t i) {
                for (uint32_t job = i; job < matrices * ncols; job += workers)
                    eliminate(std::integral_constant<uint32_t, 1>{}, job / ncols, job % ncols);
            });
            ctx.syncInterdependent([&](uint32_t i) {
                for (uint32_t job = i; job < 5 * ncols; job += workers) {
                    uint32_t const var = job / ncols, c = job % ncols;
                    if (f.diffuses(var)) sweep(std::integral_constant<uint32_t, 1>{}, var, c);
                }
            });
            ctx.syncInterdependent2D(ncols, n, [&](uint32_t c, uint32_t k) {
                for (uint32_t var = 0; var < 5; ++var)
                    if (f.diffuses(var)) update(var, c, k, k + 1);
            });
        }
    }
};

namespace detail {

template <class Backend, class HR, class WR, class S, class W>
void launchImplicitDiffusion(Backend const& backend, uint32_t columnCount, ImplicitDiffusionFields const& f,
                             HR const& heatRows, WR const& windRows, S const& moisture, S const& tracer, W const& u,
                             W const& v) {
    uint32_t const n = f.grid.n();
    uint32_t const tileColumns = diffusionTileColumns(n, Backend::oneWorkerPerBlock);
    std::size_t const bytes = std::size_t{diffusionTileArrays(f.noSlip)} *
                              diffusionTileArrayStride(n, Backend::oneWorkerPerBlock) * sizeof(double);
    if constexpr (Backend::isGpu) {
        std::size_t const limit = core::sharedMemoryPerBlock(backend);
        if (bytes > limit)
            throw Error("implicit diffusion: a column of " + std::to_string(n) + " levels needs " +
                        std::to_string(bytes) + " bytes of shared memory a block; the device gives " +
                        std::to_string(limit));
    }
    ImplicitDiffusionTiles<HR, WR, S, W> const body{f, heatRows, windRows, moisture, tracer, u, v, columnCount};
    auto const tiles = threaded::independent((columnCount + tileColumns - 1) / tileColumns);
    if constexpr (Backend::oneWorkerPerBlock)
        threaded::threaded(backend, tiles, threaded::interdependent<1>(bytes), body);
    else
        threaded::threaded(backend, tiles, threaded::interdependent<diffusionTileWorkers>(bytes), body);
}

} // namespace detail

// One backward-Euler step of the diffused variables of `f` over `columnCount` columns.
template <class Backend>
void diffuseImplicitly(Backend const& backend, uint32_t columnCount, ImplicitDiffusionFields const& f) {
    if (columnCount == 0 || f.grid.n() == 0) return;
    using Leaf = ops::FieldLeaf<double, ops::Center>;
    ops::FieldLeaf<double, ops::Face> const rhoK{{}, f.rhoK};
    Leaf const T{{}, CenterConst{f.T.data, f.T.stride, f.T.levels, f.T.columns}};
    Leaf const exner{{}, f.exner};
    auto leaf = [](CenterView v) { return Leaf{{}, CenterConst{v.data, v.stride, v.levels, v.columns}}; };
    auto flux = [](double const* negated) { return ops::ColumnValues<double>{negated}; };
    // The rows come with D at the seeded leaf's values: theta's (and u's over a no-slip ground) in the same evaluation.
    auto const heatRows = fluxMixing(rhoK, ops::seeded<3>(T / exner), flux(f.negHeatFlux));
    auto const moisture = fluxMixing(rhoK, leaf(f.q), flux(f.negMoistureFlux));
    auto const tracer = fluxMixing(rhoK, leaf(f.tracer), flux(f.negTracerFlux));
    if (f.noSlip)
        detail::launchImplicitDiffusion(backend, columnCount, f, heatRows,
                                        noSlipMixing(rhoK, ops::seeded<3>(leaf(f.u))), moisture, tracer,
                                        noSlipMixing(rhoK, leaf(f.u)), noSlipMixing(rhoK, leaf(f.v)));
    else
        detail::launchImplicitDiffusion(backend, columnCount, f, heatRows, heatRows, moisture, tracer,
                                        fluxMixing(rhoK, leaf(f.u), flux(f.noFlux)),
                                        fluxMixing(rhoK, leaf(f.v), flux(f.noFlux)));
}

} // namespace strata::app
