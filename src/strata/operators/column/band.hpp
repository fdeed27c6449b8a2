// Batched band solves, one system per column for every column of a set of Center fields at once: tridiagonal with many
// right-hand sides, pentadiagonal, and 2x2 block tridiagonal (two coupled unknowns a level, as u and v).
//
//   Tridiag solveTridiagonalBatch(backend, a, b, c, d, x, variant = Tridiag::Auto, options = {})
//       a[k] x[k-1] + b[k] x[k] + c[k] x[k+1] = d[k] for every pair (d[j], x[j]) of the spans d and x (as many
//       right-hand sides as wanted, one factorisation for all). The matrix fields a, b, c have x's columns (one matrix
//       a column, as solveTridiagonal) or a single column (one matrix for every column: EKAT's "one matrix, many
//       right-hand sides"). a[0] and c[n-1] are never read.
//   Tridiag solvePentadiagonal(backend, e, a, b, c, f, d, x, variant = Tridiag::Auto, options = {})
//       e[k] x[k-2] + a[k] x[k-1] + b[k] x[k] + c[k] x[k+1] + f[k] x[k+2] = d[k]. The coefficients that reach outside
//       the matrix, e[0], e[1], a[0], c[n-1], f[n-2] and f[n-1], are never read.
//   Tridiag solveBlockTridiagonal(backend, A, B, C, du, dv, xu, xv, variant = Tridiag::Auto, options = {})
//       A[k] X[k-1] + B[k] X[k] + C[k] X[k+1] = D[k] with X = (xu, xv), D = (du, dv) and each of A, B, C a Block2x2 of
//       four fields (row u: uu xu + uv xv; row v: vu xu + vv xv). A[0] and C[n-1] are never read.
//
// All fields are Field<T, Center> on grids of n cells with the same columns, in Backend::memSpace, T a floating-point
// type (checked: a mismatch throws strata::Error). Each call returns the variant that ran (Thomas or CyclicReduction).
//
// In place or not: either. A solution may be its own right-hand side (x[j] = d[j]; x = d; xu = du, xv = dv, or even
// crossed), and the solution then overwrites it; otherwise every input is only read. A solution must not be a matrix
// field, another solution, or (in the batch) another right-hand side d[i], i != j.
//
// Variants, the Tridiag enum of tridiagonal.hpp, behind each signature. The pentadiagonal system is solved as a
// block tridiagonal one of 2x2 blocks, levels (2k, 2k+1) a block (an odd n gets an identity padding row); so all three
// share one engine (detail/band_kernels.hpp), on scalars or 2x2 blocks:
//   Thomas           block LU without pivoting. One worker per matrix factors it (its pivots' inverses and
//                    C' = P^-1 C into a global scratch kept from call to call, as tridiagonal.hpp's), then one worker
//                    per (column, right-hand side) solves up and down in a fixed order: one factorisation serves every
//                    right-hand side. On the CPU backends a matrix per column is factored and solved by one worker per
//                    column in one launch (the same operations). On the backends with many workers a block
//                    (Threads, Cuda), a batch with a matrix per column is factored and solved in tiles of
//                    neighbouring columns in shared memory, loaded and stored in address order (the same operations;
//                    detail::BandThomasTridiagTiles; where one column does not fit options.sharedLimitBytes, the
//                    two launches above). O(n) work, no syncs on the CPU backends: the CPU choice. On scalars, the
//                    operations of solveTridiagonal's Thomas in the same order: the batch gives its bits for every
//                    right-hand side.
//   CyclicReduction  parallel cyclic reduction of the block rows in block shared memory, one block per column, every
//                    right-hand side of the column reduced with the matrix; ceil(log2 nb) steps of one sync each (nb =
//                    n block rows, ceil(n/2) for the pentadiagonal system). The GPU choice. Shared bytes a block:
//                    tridiagonalBatchCyclicReductionBytes<T>(n, m) = (2 (3 + m) + 1) n sizeof(T) (m right-hand sides,
//                    at most 16 a launch: more are reduced in turns of 16), pentadiagonalCyclicReductionBytes<T>(n) =
//                    29 ceil(n/2) sizeof(T), blockTridiagonalCyclicReductionBytes<T>(n) = 29 n sizeof(T). A system that
//                    needs more than options.sharedLimitBytes (48 KiB by default; on Cuda also the device's per-block
//                    limit) is solved with Thomas instead, and the call returns Tridiag::Thomas. On scalars, the
//                    operations of solveTridiagonal's cyclic reduction: its bits.
//   Bfb              Thomas, always: pins the algorithm (as in tridiagonal.hpp) wherever results must be bit-for-bit
//                    reproducible across backends, worker and rank counts.
//   Auto             CyclicReduction on Cuda (with the fallback above), Thomas on the CPU backends.
//
// Reproducibility. Each variant does the same IEEE operations in the same order whatever the backend and the number
// of workers (and the build forbids FMA contraction): Thomas (= Bfb) and CyclicReduction results are each bit-identical
// on Serial, OpenMP, Threads with any worker count (test_band_solvers), and Cuda (IEEE division, --fmad=false;
// tests/cuda/test_cuda_column.cu compares it with Serial where a device is present). Columns are independent, so the
// rank decomposition changes no bit. Thomas and CyclicReduction are different algorithms and agree to rounding only.
//
// Stability. No variant pivots. Thomas and CyclicReduction are stable for matrices strictly diagonally dominant by rows
// (block rows for the 2x2 systems: |B| dominant over |A| + |C| row by row), as implicit diffusion, (1 - dt L) x = d,
// and implicit Coriolis with mixing are. Singular systems: with options.check (off by default: it costs a test a
// pivot and, on Cuda, a copy to the host), a pivot that is exactly zero or not finite -- a scalar pivot, or a 2x2
// pivot's determinant -- throws strata::Error naming the first column that has one and the level of its first bad
// pivot (the earliest in the algorithm that ran: Thomas walks up the column; cyclic reduction reports the lowest row
// at its earliest step; for the pentadiagonal system, the two levels of the 2x2 pivot). The error comes after the
// solve, whose solution then holds inf or NaN. A nearly singular matrix whose pivots round to tiny non-zero values is
// not caught. Without options.check nothing is tested: a zero pivot gives inf or NaN without an error.
#pragma once

#include <strata/core/error.hpp>
#include <strata/core/lockstep.hpp>
#include <strata/core/memory.hpp>
#include <strata/core/threaded.hpp>
#include <strata/operators/column/detail/band_kernels.hpp>
#include <strata/operators/column/detail/checks.hpp>
#include <strata/operators/column/tridiagonal.hpp>
#include <strata/operators/field.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace strata::ops {

struct BandOptions {
    std::size_t sharedLimitBytes = core::defaultSharedLimitBytes; // per block, for CyclicReduction
    bool check = false; // a zero or non-finite pivot throws strata::Error (see the top of this file)
};

// One band of a 2x2 block tridiagonal matrix: four fields, row u reads uu xu + uv xv, row v reads vu xu + vv xv.
template <class T>
struct Block2x2 {
    Field<T, Center> const& uu;
    Field<T, Center> const& uv;
    Field<T, Center> const& vu;
    Field<T, Center> const& vv;
};

template <class T>
constexpr std::size_t tridiagonalBatchCyclicReductionBytes(uint32_t n, uint32_t rhs) {
    uint32_t const m = std::min(rhs, detail::bandRhsPerLaunch);
    return detail::BandSharedLayout<detail::TridiagBatchSystem<T>>{n, m}.total() * sizeof(T);
}
template <class T>
constexpr std::size_t pentadiagonalCyclicReductionBytes(uint32_t n) {
    return detail::BandSharedLayout<detail::PentaSystem<T>>{(n + 1) / 2, 1}.total() * sizeof(T);
}
template <class T>
constexpr std::size_t blockTridiagonalCyclicReductionBytes(uint32_t n) {
    return detail::BandSharedLayout<detail::Block2System<T>>{n, 1}.total() * sizeof(T);
}

namespace detail {

// The algorithm that will run, by tridiagonal.hpp's rules, for a system that needs `sharedBytes` for CyclicReduction.
template <class Backend>
Tridiag chooseBand(Backend const& backend, std::size_t sharedBytes, Tridiag variant, BandOptions const& options) {
    return chooseVariant(backend, sharedBytes, variant, options.sharedLimitBytes);
}

// The shared memory a block may take: the caller's limit, and on a GPU also the device's per block.
template <class Backend>
std::size_t sharedLimitOf(Backend const& backend, std::size_t sharedLimitBytes) {
    if constexpr (Backend::isGpu)
        return std::min(sharedLimitBytes, core::sharedMemoryPerBlock(backend));
    else
        return (void)backend, sharedLimitBytes;
}

// The pivot check's record, one entry per column (or matrix): 0, or the level + 1 of its first bad pivot.
class PivotCheck {
public:
    PivotCheck(bool enabled, uint32_t entries, core::MemSpace space) {
        if (enabled) m_status = core::Buffer<uint32_t>(entries, space);
    }
    uint32_t* status() { return m_status.size() == 0 ? nullptr : m_status.device(); }

    // Throws for the first column with a bad pivot; a pivot block spans `levelsPerBlock` levels of `levels`.
    void report(char const* where, uint32_t levelsPerBlock, uint32_t levels, char const* columnNote = "") {
        if (m_status.size() == 0) return;
        m_status.toHost();
        auto const entries = m_status.host();
        auto const bad = std::find_if(entries.begin(), entries.end(), [](uint32_t s) { return s != 0; });
        if (bad == entries.end()) return;
        uint32_t const level = (*bad - 1) * levelsPerBlock;
        std::string what = "a zero or non-finite pivot in column ";
        what += std::to_string(bad - entries.begin());
        what += columnNote;
        what += level + 1 < levels && levelsPerBlock == 2 ? " at levels " : " at level ";
        what += std::to_string(level);
        if (level + 1 < levels && levelsPerBlock == 2) {
            what += " and ";
            what += std::to_string(level + 1);
        }
        throw Error(what, where, "a nonsingular system (options.check tests every pivot)");
    }

private:
    core::Buffer<uint32_t> m_status;
};

template <uint32_t Dom, class Backend, class Sys>
void launchBandCyclicReduction(Backend const& backend, Sys const& sys, uint32_t* status) {
    using T = typename Sys::Value;
    std::size_t const bytes = BandSharedLayout<Sys>{sys.blocks(), sys.rhs}.total() * sizeof(T);
    uint32_t const blocks = std::min(sys.columns(), Backend::maxGridBlocks);
    lockstep::launch(backend, lockstep::configSMem(blocks, bytes), BandCyclicReductionKernel<Dom>{}, sys, status);
}

// The Thomas layout for a backend: on the CPU backends, a matrix per column is factored and solved by one worker per
// column, its right-hand sides in turn (BandThomasColumnBody); otherwise workers factor, then solve each (column,
// right-hand side).
template <class Backend, class Sys>
BandScratch<Sys> bandScratch(Tridiag chosen, uint32_t blocks, uint32_t columns, uint32_t matrixColumns, uint32_t rhs) {
    bool const perRhs = !(Backend::oneWorkerPerBlock && matrixColumns == columns);
    BandScratch<Sys> scratch{nullptr, blocks, columns, matrixColumns, perRhs};
    if (chosen == Tridiag::Thomas)
        scratch.base = thomasScratch<typename Sys::Value>(Backend::memSpace, scratch.size(rhs));
    return scratch;
}

// Runs the chosen algorithm on `sys` (at most bandRhsPerLaunch right-hand sides). Thomas factors the matrix first
// when `factor` is set, and otherwise reuses the factors already in `scratch`.
template <class Backend, class Sys>
void runBand(Backend const& backend, Sys const& sys, Tridiag chosen, BandScratch<Sys> const& scratch, bool factor,
             uint32_t* status) {
    if (chosen == Tridiag::Thomas && !scratch.perRhs) {
        threaded::threaded(backend, threaded::independent(sys.columns()),
                           BandThomasColumnBody<Sys>{sys, scratch, status, factor});
    } else if (chosen == Tridiag::Thomas) {
        if (factor)
            threaded::threaded(backend, threaded::independent(scratch.matrixColumns),
                               BandThomasFactorBody<Sys>{sys, scratch, status});
        threaded::threaded(backend, threaded::independent(sys.columns() * sys.rhs),
                           BandThomasSolveBody<Sys>{sys, scratch});
    } else {
        withCoveringDomain(sys.blocks(),
                           [&](auto dom) { launchBandCyclicReduction<decltype(dom)::value>(backend, sys, status); });
    }
}

// Runs a single-right-hand-side system (pentadiagonal, block): scratch, the pivot check, the launch.
template <class Backend, class Sys>
void solveOneBand(Backend const& backend, Sys const& sys, Tridiag chosen, BandOptions const& options, char const* where,
                  uint32_t levelsPerBlock, uint32_t levels) {
    uint32_t const columns = sys.columns(), nb = sys.blocks();
    PivotCheck check(options.check, columns, Backend::memSpace);
    auto const scratch = bandScratch<Backend, Sys>(chosen, nb, columns, columns, 1);
    runBand(backend, sys, chosen, scratch, true, check.status());
    check.report(where, levelsPerBlock, levels);
}

// A field of a system with the name its errors give.
template <class T>
struct NamedField {
    std::string name;
    Field<T, Center> const* field;
};

// The matrix fields have `matrixColumns` columns, the right-hand sides and solutions `columns`, all on grids of n
// cells in Backend's memory; no solution is a matrix field or another solution (it may be a right-hand side).
template <class Backend, class T>
void requireSystem(char const* where, std::span<NamedField<T> const> matrix, uint32_t matrixColumns,
                   std::span<NamedField<T> const> rhs, std::span<NamedField<T> const> solutions, uint32_t columns,
                   uint32_t n) {
    for (auto const& m : matrix)
        requireColumnField<Backend>(where, m.name.c_str(), *m.field, matrixColumns, n);
    for (auto const& group : {rhs, solutions})
        for (auto const& f : group)
            requireColumnField<Backend>(where, f.name.c_str(), *f.field, columns, n);
    for (std::size_t j = 0; j < solutions.size(); ++j) {
        auto const& x = solutions[j];
        for (auto const& m : matrix)
            requireDistinct(where, x.name.c_str(), *x.field, m.name.c_str(), *m.field);
        for (std::size_t i = 0; i < j; ++i)
            requireDistinct(where, x.name.c_str(), *x.field, solutions[i].name.c_str(), *solutions[i].field);
    }
}

inline std::string indexed(char const* name, std::size_t j) {
    std::string s = name;
    s += '[';
    s += std::to_string(j);
    s += ']';
    return s;
}

} // namespace detail

// Solves a[k] x[k-1] + b[k] x[k] + c[k] x[k+1] = d[j][k] into x[j] for every j, in every column (see the top of this
// file). a, b, c have x's columns or one (a matrix for every column); x[j] may be d[j].
template <class Backend, class T>
Tridiag solveTridiagonalBatch(Backend const& backend, Field<T, Center> const& a, Field<T, Center> const& b,
                              Field<T, Center> const& c,
                              std::type_identity_t<std::span<Field<T, Center> const* const>> d,
                              std::type_identity_t<std::span<Field<T, Center>* const>> x,
                              Tridiag variant = Tridiag::Auto, BandOptions const& options = {}) {
    static_assert(std::is_floating_point_v<T>, "solveTridiagonalBatch: T must be a floating-point type");
    char const* where = "solveTridiagonalBatch";
    if (x.empty() || d.size() != x.size())
        throw Error("d holds " + std::to_string(d.size()) + " right-hand sides and x " + std::to_string(x.size()) +
                        " solutions",
                    where, "one solution for each right-hand side, at least one");
    for (std::size_t j = 0; j < x.size(); ++j)
        if (d[j] == nullptr || x[j] == nullptr)
            throw Error(detail::indexed(d[j] == nullptr ? "d" : "x", j) + " is null", where, "a field");
    uint32_t const columns = x[0]->columns(), n = x[0]->grid().cells();
    uint32_t const matrixColumns = a.columns() == 1 ? 1 : columns;
    using Named = detail::NamedField<T>;
    std::vector<Named> const matrix{{"a", &a}, {"b", &b}, {"c", &c}};
    std::vector<Named> rhsFields, solutions;
    for (std::size_t j = 0; j < x.size(); ++j) {
        rhsFields.push_back({detail::indexed("d", j), d[j]});
        solutions.push_back({detail::indexed("x", j), x[j]});
    }
    detail::requireSystem<Backend, T>(where, matrix, matrixColumns, rhsFields, solutions, columns, n);
    for (std::size_t j = 0; j < x.size(); ++j) // the workers of different right-hand sides run at once
        for (std::size_t i = 0; i < x.size(); ++i)
            if (i != j)
                detail::requireDistinct(where, solutions[j].name.c_str(), *x[j], rhsFields[i].name.c_str(), *d[i]);

    auto const rhs = static_cast<uint32_t>(x.size());
    uint32_t const perLaunch = std::min(rhs, detail::bandRhsPerLaunch);
    Tridiag const chosen =
        detail::chooseBand(backend, tridiagonalBatchCyclicReductionBytes<T>(n, perLaunch), variant, options);
    if (columns == 0) return chosen;

    using Sys = detail::TridiagBatchSystem<T>;
    auto matrixView = [&](Field<T, Center> const& field) {
        auto view = field.view();
        if (matrixColumns == 1) { // every column reads the one matrix
            view.stride = 0;
            view.columns = columns;
        }
        return view;
    };
    detail::PivotCheck check(options.check, chosen == Tridiag::Thomas ? matrixColumns : columns, Backend::memSpace);
    // Thomas with a matrix per column on many workers a block: in tiles of columns through shared memory.
    uint32_t const tileColumns =
        !Backend::oneWorkerPerBlock && chosen == Tridiag::Thomas && matrixColumns == columns
            ? detail::bandTileColumns<T>(n, perLaunch, detail::sharedLimitOf(backend, options.sharedLimitBytes))
            : 0u;
    auto const scratch = tileColumns > 0
                             ? detail::BandScratch<Sys>{}
                             : detail::bandScratch<Backend, Sys>(chosen, n, columns, matrixColumns, perLaunch);
    for (uint32_t first = 0; first < rhs; first += perLaunch) {
        Sys sys{matrixView(a), matrixView(b), matrixView(c), {}, {}, std::min(perLaunch, rhs - first), matrixColumns};
        for (uint32_t j = 0; j < sys.rhs; ++j) {
            sys.d[j] = d[first + j]->view();
            sys.x[j] = x[first + j]->view();
        }
        uint32_t* const status = first == 0 ? check.status() : nullptr;
        if constexpr (!Backend::oneWorkerPerBlock) {
            if (tileColumns > 0) { // each turn of right-hand sides factors again: the same operations, the same bits
                threaded::threaded(backend, threaded::independent((columns + tileColumns - 1) / tileColumns),
                                   threaded::interdependent<detail::bandTileWorkers>(
                                       tileColumns * detail::bandTileBytesPerColumn<T>(n, sys.rhs)),
                                   detail::BandThomasTridiagTiles<T>{sys, tileColumns, status});
                continue;
            }
        }
        runBand(backend, sys, chosen, scratch, first == 0, status);
    }
    check.report(where, 1, n, matrixColumns == 1 && columns > 1 ? " (the matrix every column shares)" : "");
    return chosen;
}

// Solves e[k] x[k-2] + a[k] x[k-1] + b[k] x[k] + c[k] x[k+1] + f[k] x[k+2] = d[k] in every column (see the top of
// this file). x may be d.
template <class Backend, class T>
Tridiag solvePentadiagonal(Backend const& backend, Field<T, Center> const& e, Field<T, Center> const& a,
                           Field<T, Center> const& b, Field<T, Center> const& c, Field<T, Center> const& f,
                           Field<T, Center> const& d, Field<T, Center>& x, Tridiag variant = Tridiag::Auto,
                           BandOptions const& options = {}) {
    static_assert(std::is_floating_point_v<T>, "solvePentadiagonal: T must be a floating-point type");
    char const* where = "solvePentadiagonal";
    uint32_t const columns = x.columns(), n = x.grid().cells();
    using Named = detail::NamedField<T>;
    Named const matrix[] = {{"e", &e}, {"a", &a}, {"b", &b}, {"c", &c}, {"f", &f}}, rhs[] = {{"d", &d}},
                solution[] = {{"x", &x}};
    detail::requireSystem<Backend, T>(where, matrix, columns, rhs, solution, columns, n);

    Tridiag const chosen = detail::chooseBand(backend, pentadiagonalCyclicReductionBytes<T>(n), variant, options);
    if (columns == 0) return chosen;
    detail::PentaSystem<T> const sys{e.view(), a.view(), b.view(), c.view(), f.view(), d.view(), x.view(), 1};
    detail::solveOneBand(backend, sys, chosen, options, where, 2, n);
    return chosen;
}

// Solves A[k] X[k-1] + B[k] X[k] + C[k] X[k+1] = (du, dv)[k] for X = (xu, xv) in every column (see the top of this
// file). xu and xv may be du and dv.
template <class Backend, class T>
Tridiag solveBlockTridiagonal(Backend const& backend, Block2x2<T> const& lower, Block2x2<T> const& diag,
                              Block2x2<T> const& upper, Field<T, Center> const& du, Field<T, Center> const& dv,
                              Field<T, Center>& xu, Field<T, Center>& xv, Tridiag variant = Tridiag::Auto,
                              BandOptions const& options = {}) {
    static_assert(std::is_floating_point_v<T>, "solveBlockTridiagonal: T must be a floating-point type");
    char const* where = "solveBlockTridiagonal";
    uint32_t const columns = xu.columns(), n = xu.grid().cells();
    std::vector<detail::NamedField<T>> matrix;
    for (auto const& [band, name] : {std::pair{&lower, "A."}, std::pair{&diag, "B."}, std::pair{&upper, "C."}}) {
        std::string const prefix = name;
        matrix.push_back({prefix + "uu", &band->uu});
        matrix.push_back({prefix + "uv", &band->uv});
        matrix.push_back({prefix + "vu", &band->vu});
        matrix.push_back({prefix + "vv", &band->vv});
    }
    detail::NamedField<T> const rhs[] = {{"du", &du}, {"dv", &dv}}, solutions[] = {{"xu", &xu}, {"xv", &xv}};
    detail::requireSystem<Backend, T>(where, matrix, columns, rhs, solutions, columns, n);

    Tridiag const chosen = detail::chooseBand(backend, blockTridiagonalCyclicReductionBytes<T>(n), variant, options);
    if (columns == 0) return chosen;
    auto views = [](Block2x2<T> const& band) {
        return detail::Block2Views<T>{band.uu.view(), band.uv.view(), band.vu.view(), band.vv.view()};
    };
    detail::Block2System<T> const sys{views(lower), views(diag), views(upper), du.view(),
                                      dv.view(),    xu.view(),   xv.view(),    1};
    detail::solveOneBand(backend, sys, chosen, options, where, 1, n);
    return chosen;
}

} // namespace strata::ops
