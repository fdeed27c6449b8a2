// column/: the column algorithms of operators/column/ on about 2^23 points (64 MiB per field, twice the 32 MiB L3;
// columns = 2^23 / levels).
//   column/<backend>/thomas/<levels>             solveTridiagonal(..., Tridiag::Thomas)
//   column/<backend>/cyclic_reduction/<levels>   solveTridiagonal(..., Tridiag::CyclicReduction). On the CPU
//                                                backends a block has ONE worker, so the O(n log n) parallel
//                                                algorithm runs sequentially: this measures its cost, not its
//                                                parallelism. Above 768 levels (48 KiB of shared memory) it falls
//                                                back to Thomas; the label says which ran.
//   column/<backend>/thomas_hand/<levels>        a hand-written Thomas loop, the same arithmetic as the library's
//                                                (checked bit for bit) but with its c' scratch in a per-thread
//                                                array of n values instead of a field-sized buffer allocated per call
//   column/<backend>/integral/<levels>           columnIntegral: one value per column
//   column/<backend>/integral_from_bottom/<levels>  columnIntegralFromBottom: Center -> Face running integral
//   column/<backend>/hydrostatic_pressure/<levels>  hydrostaticPressure: two exp per level
// A level update is one cell of one column (n per column). Minimum bytes per column of n cells: tridiagonal
// 40 n (a, b, c, d read, x written), integral 8 n + 8, integral_from_bottom 8 (2n + 1), hydrostatic_pressure
// 8 (3n + 1) (T read, pFace and pCenter written); the per-column surface pressure and boundary values are scalars.
#include <strata/app/bench/bench_common.hpp>
#include <strata/operators/column/integrals.hpp>
#include <strata/operators/column/tridiagonal.hpp>

#include <benchmark/benchmark.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace {

using namespace strata;
using namespace strata::ops;

constexpr uint32_t targetPoints = 1u << 23;

enum class Case { Thomas, CyclicReduction, ThomasHand, Integral, IntegralFromBottom, HydrostaticPressure };

char const* caseName(Case c) {
    switch (c) {
    case Case::Thomas: return "thomas";
    case Case::CyclicReduction: return "cyclic_reduction";
    case Case::ThomasHand: return "thomas_hand";
    case Case::Integral: return "integral";
    case Case::IntegralFromBottom: return "integral_from_bottom";
    case Case::HydrostaticPressure: return "hydrostatic_pressure";
    }
    return "?";
}

using CenterField = Field<double, Center>;
using FaceField = Field<double, Face>;

struct Data {
    uint32_t levels, columns;
    std::shared_ptr<Grid const> grid;
    CenterField a, b, c, d, x, ref, T, pCenter;
    FaceField integral, pFace;
    core::Buffer<double> perColumn;
    Data(uint32_t n, uint32_t cols)
        : levels(n), columns(cols), grid(std::make_shared<Grid const>(Grid::uniform(n, 30000.0))),
          a(grid, cols, core::MemSpace::Host), b(grid, cols, core::MemSpace::Host), c(grid, cols, core::MemSpace::Host),
          d(grid, cols, core::MemSpace::Host), x(grid, cols, core::MemSpace::Host),
          ref(grid, cols, core::MemSpace::Host), T(grid, cols, core::MemSpace::Host),
          pCenter(grid, cols, core::MemSpace::Host), integral(grid, cols, core::MemSpace::Host),
          pFace(grid, cols, core::MemSpace::Host), perColumn(cols, core::MemSpace::Host) {
        for (uint32_t col = 0; col < cols; ++col) {
            double const phase = 0.001 * (col % 997);
            for (uint32_t k = 0; k < n; ++k) {
                double const z = static_cast<double>(k) / n;
                double const r = 0.5 + std::exp(-3.0 * z) + phase; // implicit diffusion: diagonally dominant rows
                a.at(col, k) = -r;
                c.at(col, k) = -0.9 * r;
                b.at(col, k) = 1.0 + 1.9 * r + 0.1;
                d.at(col, k) = 280.0 + 10.0 * std::sin(5.0 * z + phase);
                T.at(col, k) = 288.0 - 60.0 * z + phase;
            }
        }
    }
};

Data& dataFor(uint32_t levels) { return bench::dataForLevels<Data>(levels, targetPoints); }

// The library's Thomas (operators/column/detail/tridiagonal_kernels.hpp), operation for operation, with c' in a
// per-thread array of n values.
template <bool Parallel>
void thomasHand(Data& dt, CenterField& out) {
    auto const a = std::as_const(dt.a).view(), b = std::as_const(dt.b).view(), c = std::as_const(dt.c).view(),
               d = std::as_const(dt.d).view();
    auto const x = out.view();
    uint32_t const n = dt.levels;
    auto const columns = static_cast<int64_t>(dt.columns);
#pragma omp parallel if (Parallel)
    {
        std::vector<double> scratch(n);
        double* const cp = scratch.data();
#pragma omp for schedule(static)
        for (int64_t cc = 0; cc < columns; ++cc) {
            auto const col = static_cast<uint32_t>(cc);
            double const* ac = &a(col, 0);
            double const* bc = &b(col, 0);
            double const* ccol = &c(col, 0);
            double const* dc = &d(col, 0);
            double* xc = &x(col, 0);
            double inverse = 1.0 / bc[0];
            if (n > 1) cp[0] = ccol[0] * inverse;
            xc[0] = dc[0] * inverse;
            for (uint32_t k = 1; k < n; ++k) {
                double const ak = ac[k];
                inverse = 1.0 / (bc[k] - ak * cp[k - 1]);
                if (k + 1 < n) cp[k] = ccol[k] * inverse;
                xc[k] = (dc[k] - ak * xc[k - 1]) * inverse;
            }
            for (uint32_t k = n - 1; k-- > 0;)
                xc[k] = xc[k] - cp[k] * xc[k + 1];
        }
    }
}

bool sameBits(CenterField const& p, CenterField const& q) {
    for (uint32_t col = 0; col < p.columns(); ++col)
        if (std::memcmp(p.column(col).data(), q.column(col).data(), p.levels() * sizeof(double)) != 0) return false;
    return true;
}

bool close(CenterField const& p, CenterField const& q, double rtol) {
    for (uint32_t col = 0; col < p.columns(); ++col)
        for (uint32_t k = 0; k < p.levels(); ++k)
            if (std::fabs(p.at(col, k) - q.at(col, k)) > rtol * std::fabs(q.at(col, k))) return false;
    return true;
}

template <class Backend>
void bmColumn(benchmark::State& state, Case cs, uint32_t levels) {
    constexpr bool parallel = Backend::hostParallel;
    Backend const backend{};
    Data& dt = dataFor(levels);
    Tridiag ran = Tridiag::Thomas;
    for (auto _ : state) {
        switch (cs) {
        case Case::Thomas: ran = solveTridiagonal(backend, dt.a, dt.b, dt.c, dt.d, dt.x, Tridiag::Thomas); break;
        case Case::CyclicReduction:
            ran = solveTridiagonal(backend, dt.a, dt.b, dt.c, dt.d, dt.x, Tridiag::CyclicReduction);
            break;
        case Case::ThomasHand: thomasHand<parallel>(dt, dt.x); break;
        case Case::Integral: columnIntegral(backend, dt.d, dt.perColumn); break;
        case Case::IntegralFromBottom: columnIntegralFromBottom(backend, dt.d, dt.integral, 0.0); break;
        case Case::HydrostaticPressure:
            hydrostaticPressure(backend, dt.T, 1e5, 9.80616, 287.04, dt.pFace, dt.pCenter);
            break;
        }
        benchmark::ClobberMemory();
    }
    double const n = levels, cols = dt.columns;
    double bytesPerColumn = 0;
    std::string label;
    switch (cs) {
    case Case::Thomas:
    case Case::CyclicReduction:
    case Case::ThomasHand: {
        bytesPerColumn = 40 * n;
        label = cs == Case::ThomasHand ? "hand-written thomas" : std::string("ran ") + tridiagName(ran);
        // Thomas variants agree bit for bit; cyclic reduction agrees to rounding
        solveTridiagonal(core::Serial{}, dt.a, dt.b, dt.c, dt.d, dt.ref, Tridiag::Thomas);
        bool const ok = ran == Tridiag::CyclicReduction ? close(dt.x, dt.ref, 1e-10) : sameBits(dt.x, dt.ref);
        if (!ok) state.SkipWithError("solution differs from the library's Thomas");
        break;
    }
    case Case::Integral: bytesPerColumn = 8 * n + 8; break;
    case Case::IntegralFromBottom: bytesPerColumn = 8 * (2 * n + 1); break;
    case Case::HydrostaticPressure: bytesPerColumn = 8 * (3 * n + 1); break;
    }
    bench::reportThroughput<Backend>(state, n * cols, bytesPerColumn * cols);
    state.counters["levels"] = n;
    state.counters["columns"] = cols;
    if (!label.empty()) state.SetLabel(label);
}

int const registered = [] {
    for (uint32_t levels : {16u, 32u, 64u, 128u, 256u, 1024u}) {
        for (bool parallel : {false, true}) {
            for (Case cs : {Case::Thomas, Case::CyclicReduction, Case::ThomasHand, Case::Integral,
                            Case::IntegralFromBottom, Case::HydrostaticPressure}) {
                std::string const name = std::string("column/") + (parallel ? "openmp" : "serial") + "/" +
                                         caseName(cs) + "/" + std::to_string(levels);
                if (parallel)
                    bench::add(name, [=](benchmark::State& s) { bmColumn<core::OpenMP>(s, cs, levels); });
                else
                    bench::add(name, [=](benchmark::State& s) { bmColumn<core::Serial>(s, cs, levels); });
            }
        }
    }
    return 0;
}();

} // namespace
