// Convergence of every stencil operator on analytic profiles: uniform and smoothly stretched grids of 16, 32, 64, 128
// and 256 cells, the error against the analytic result at the output staggering in the discrete L2 norm weighted by
// the cell size, sqrt(sum_k err_k^2 dz_k / columns) (dzCenter on centers, dzFace on faces, so the weights of either
// staggering add up to the column height), and the observed order from the last two refinements (asserted) and from a
// least-squares fit over all five (printed), plus the max-norm order of the last two (printed). Every case also checks
// that Engine::Shmem gives the bits of Engine::Direct on Serial and on Threads{4, true}. A second test checks exactness
// on linear profiles.
//
// Expected orders, from the truncation errors (h: the cell size):
//   * interior stencils of the centered operators are O(h^2) on both grids (the faces of a smooth stretched grid are
//     mid-points of the centers to O(h^2));
//   * a boundary closure that is O(h) at a single level (InterpolateC2F/Extrapolate: zeroth-order extrapolation;
//     GradientC2F and DivergenceC2F with SetValue: a one-sided difference over the half cell, centered at dz/4 from
//     the face; Extrapolate on F2C differences; AdvectionC2C at its end centers) adds sqrt(h^2 * h) = h^1.5 to the
//     weighted L2 norm: those cases expect 1.5 over all levels and 2 over the interior levels (both are printed);
//   * Upwind3rdOrderBiasedProductC2F is the Wicker-Skamarock flux, 7/12 (x[k] + x[k-1]) - 1/12 (x[k+1] + x[k-2]) plus
//     an O(h^3) upwind term: as an interpolation of POINT values its face value is x(z) - h^2 x''(z) / 24 + O(h^3)
//     (second order; the exactness test checks that identity on a parabola), and it is third order (a) as the face
//     value reconstructed from CELL AVERAGES and (b) in the divergence of the flux, which is how the scheme is meant
//     to be used. All three are measured on the uniform grid.
#include <strata/operators/operators.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

using namespace strata;
using namespace strata::ops;

namespace {

constexpr double zBottom = 0.0;
constexpr double zTop = 1.0;
constexpr uint32_t kCols = 4;
constexpr std::array<uint32_t, 5> kCells = {16, 32, 64, 128, 256};

enum class GridKind { Uniform, Stretched };
constexpr std::array<GridKind, 2> kGrids = {GridKind::Uniform, GridKind::Stretched};

char const* gridName(GridKind g) { return g == GridKind::Uniform ? "uniform" : "stretched"; }

// z = H (s + 0.3 s (1 - s)): spacing from 1.3 h at the bottom to 0.7 h at the top.
std::shared_ptr<Grid const> makeGrid(GridKind g, uint32_t n, double bottom = zBottom, double top = zTop) {
    if (g == GridKind::Uniform) return std::make_shared<Grid const>(Grid::uniform(n, top, bottom));
    return std::make_shared<Grid const>(Grid::stretched(
        n, top, [](double s) { return s + 0.3 * s * (1.0 - s); }, bottom));
}

// ---------------------------------------------------------------------------------------------------------------
// Analytic profiles, different in every column; none has a vanishing derivative at either boundary.

// x_c(z) = sin(a z + p) + exp(b z) / 2
double xA(uint32_t c) { return 2.0 + 0.5 * c; }
double xP(uint32_t c) { return 0.4 + 0.3 * c; }
double xB(uint32_t c) { return 0.8 - 0.35 * c; }
double xVal(uint32_t c, double z) { return std::sin(xA(c) * z + xP(c)) + 0.5 * std::exp(xB(c) * z); }
double xDer(uint32_t c, double z) { return xA(c) * std::cos(xA(c) * z + xP(c)) + 0.5 * xB(c) * std::exp(xB(c) * z); }
double xInt(uint32_t c, double z) { return -std::cos(xA(c) * z + xP(c)) / xA(c) + 0.5 * std::exp(xB(c) * z) / xB(c); }

// A velocity that changes sign inside the column (at z = (pi/2 - 0.1 c) / 2.5, about 0.5 to 0.63).
double wVar(uint32_t c, double z) { return 0.8 * std::cos(2.5 * z + 0.1 * c); }
// Constant velocities of one sign, a different magnitude in every column.
double wPos(uint32_t c, double) { return 1.0 + 0.25 * c; }
double wNeg(uint32_t c, double) { return -(0.7 + 0.3 * c); }

template <class S>
std::vector<double> const& heights(Grid const& g) {
    if constexpr (std::is_same_v<S, Center>)
        return g.centers();
    else
        return g.faces();
}
template <class S>
std::vector<double> const& weights(Grid const& g) {
    if constexpr (std::is_same_v<S, Center>)
        return g.dzCenter();
    else
        return g.dzFace();
}

template <class S, class F>
Field<double, S> sample(std::shared_ptr<Grid const> const& grid, F const& f) {
    Field<double, S> out(grid, kCols, core::MemSpace::Host);
    auto const& z = heights<S>(*grid);
    for (uint32_t c = 0; c < kCols; ++c)
        for (uint32_t k = 0; k < out.levels(); ++k)
            out.at(c, k) = f(c, z[k]);
    return out;
}

// Cell averages of x over every cell (exact integrals).
Field<double, Center> cellAverages(std::shared_ptr<Grid const> const& grid) {
    Field<double, Center> out(grid, kCols, core::MemSpace::Host);
    auto const& zf = grid->faces();
    for (uint32_t c = 0; c < kCols; ++c)
        for (uint32_t k = 0; k < out.levels(); ++k)
            out.at(c, k) = (xInt(c, zf[k + 1]) - xInt(c, zf[k])) / grid->dzCenter()[k];
    return out;
}

// Per-column boundary values f(c, z).
template <class F>
std::vector<double> perColumn(F const& f, double z) {
    std::vector<double> v(kCols);
    for (uint32_t c = 0; c < kCols; ++c)
        v[c] = f(c, z);
    return v;
}
ColumnValues<double> cv(std::vector<double> const& v) { return {v.data()}; }

// ---------------------------------------------------------------------------------------------------------------
// Measurement

// The levels measured: skip `bottom` levels at the bottom and `top` at the top.
struct Levels {
    uint32_t bottom = 0, top = 0;
};
constexpr Levels allLevels{0, 0};

struct Spec {
    char const* op;
    char const* operands;
    GridKind grid;
    char const* bcs;
    Levels levels;
    double expected;
    double minimum; // asserted: the last-two-refinements order >= minimum
    char const* note = "";
};
Spec withTolerance(Spec s) {
    s.minimum = s.expected - 0.2;
    return s;
}

template <class S>
std::string levelsName(Levels lv) {
    bool const center = std::is_same_v<S, Center>;
    if (lv.bottom == 0 && lv.top == 0) return center ? "all centers" : "all faces";
    std::string top = lv.top == 0 ? "n" : "n-" + std::to_string(lv.top);
    if (center) top = lv.top == 0 ? "n-1" : "n-" + std::to_string(lv.top + 1);
    return (center ? "centers " : "faces ") + std::to_string(lv.bottom) + ".." + top;
}

struct Norms {
    double l2 = 0.0, max = 0.0;
};
template <class S, class Exact>
Norms errorNorms(Field<double, S> const& f, Exact const& exact, Levels lv) {
    auto const& z = heights<S>(f.grid());
    auto const& dz = weights<S>(f.grid());
    double sum = 0.0, max = 0.0;
    for (uint32_t c = 0; c < f.columns(); ++c) {
        for (uint32_t k = lv.bottom; k + lv.top < f.levels(); ++k) {
            double const e = f.at(c, k) - exact(c, z[k]);
            sum += e * e * dz[k];
            max = std::max(max, std::fabs(e));
        }
    }
    return {std::sqrt(sum / f.columns()), max};
}

template <class S>
bool sameBits(Field<double, S> const& a, Field<double, S> const& b) {
    for (uint32_t c = 0; c < a.columns(); ++c)
        if (std::memcmp(a.column(c).data(), b.column(c).data(), a.levels() * sizeof(double)) != 0) return false;
    return true;
}

void printHeader() {
    static bool printed = false;
    if (printed) return;
    printed = true;
    std::printf("\n%-32s %-16s %-9s %-30s %-14s %-4s", "operator", "operands", "grid", "BCs", "levels", "norm");
    for (uint32_t n : kCells)
        std::printf("      e%-3u", n);
    std::printf(" %6s %6s %6s %6s %6s  %s\n", "order", "lsq", "expect", "assert", "maxnrm", "note");
}

// Evaluates `build`'s expression for every resolution, prints the table row and checks the order.
// build(grid, run) makes the operands on `grid` and calls run(expression, exact(col, z)).
template <class Out, class Build>
void convergence(Spec const& spec, Build const& build) {
    INFO(spec.op << " (" << spec.operands << ") on the " << gridName(spec.grid) << " grid, " << spec.bcs << ", "
                 << levelsName<Out>(spec.levels));
    std::array<double, kCells.size()> err{}, errMax{};
    for (std::size_t r = 0; r < kCells.size(); ++r) {
        uint32_t const n = kCells[r];
        INFO(n << " cells");
        auto const grid = makeGrid(spec.grid, n);
        build(grid, [&](auto const& expr, auto const& exact) {
            Field<double, Out> direct(grid, kCols, core::MemSpace::Host);
            Field<double, Out> shmemSerial(grid, kCols, core::MemSpace::Host);
            Field<double, Out> shmemThreads(grid, kCols, core::MemSpace::Host);
            REQUIRE(evaluate(core::Serial{}, direct, expr, Engine::Direct).engine == Engine::Direct);
            REQUIRE(evaluate(core::Serial{}, shmemSerial, expr, Engine::Shmem).engine == Engine::Shmem);
            REQUIRE(evaluate(core::Threads{4, true}, shmemThreads, expr, Engine::Shmem).engine == Engine::Shmem);
            CHECK(sameBits(direct, shmemSerial));
            CHECK(sameBits(direct, shmemThreads));
            Norms const e = errorNorms(direct, exact, spec.levels);
            err[r] = e.l2;
            errMax[r] = e.max;
        });
    }
    std::size_t const m = err.size();
    double const last = std::log2(err[m - 2] / err[m - 1]);
    double const lastMax = std::log2(errMax[m - 2] / errMax[m - 1]);
    // Least squares of log(err) against log(h), h = H / n.
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (std::size_t r = 0; r < m; ++r) {
        double const x = std::log(1.0 / kCells[r]), y = std::log(err[r]);
        sx += x;
        sy += y;
        sxx += x * x;
        sxy += x * y;
    }
    double const lsq = (m * sxy - sx * sy) / (m * sxx - sx * sx);

    printHeader();
    std::printf("%-32s %-16s %-9s %-30s %-14s %-4s", spec.op, spec.operands, gridName(spec.grid), spec.bcs,
                levelsName<Out>(spec.levels).c_str(), "L2");
    for (double e : err)
        std::printf(" %9.3e", e);
    std::printf(" %6.2f %6.2f", last, lsq);
    if (std::isnan(spec.expected))
        std::printf(" %6s", "n/a");
    else
        std::printf(" %6.1f", spec.expected);
    std::printf(" %6.2f %6.2f  %s\n", spec.minimum, lastMax, spec.note);
    std::fflush(stdout);

    INFO("errors " << err[0] << " " << err[1] << " " << err[2] << " " << err[3] << " " << err[4] << "; order " << last
                   << " (least squares " << lsq << "), expected " << spec.expected);
    for (double e : err)
        REQUIRE(std::isfinite(e));
    REQUIRE(last >= spec.minimum);
}

// The analytic results.
auto const exactX = [](uint32_t c, double z) { return xVal(c, z); };
auto const exactDx = [](uint32_t c, double z) { return xDer(c, z); };

} // namespace

// ---------------------------------------------------------------------------------------------------------------

TEST_CASE("interpolations converge at their orders", "[operators][convergence]") {
    for (GridKind g : kGrids) {
        convergence<Face>(withTolerance({"InterpolateC2F", "x", g, "SetValue/SetValue", allLevels, 2.0, 0, ""}),
                          [](auto const& grid, auto const& run) {
                              auto const x = sample<Center>(grid, xVal);
                              auto const bot = perColumn(xVal, zBottom), top = perColumn(xVal, zTop);
                              run(InterpolateC2F{SetValue{cv(bot)}, SetValue{cv(top)}}(x), exactX);
                          });
        convergence<Face>(withTolerance({"InterpolateC2F", "x", g, "SetGradient/SetGradient", allLevels, 2.0, 0, ""}),
                          [](auto const& grid, auto const& run) {
                              auto const x = sample<Center>(grid, xVal);
                              auto const bot = perColumn(xDer, zBottom), top = perColumn(xDer, zTop);
                              run(InterpolateC2F{SetGradient{cv(bot)}, SetGradient{cv(top)}}(x), exactX);
                          });
        auto const extrapolated = [](auto const& grid, auto const& run) {
            auto const x = sample<Center>(grid, xVal);
            run(InterpolateC2F{Extrapolate{}, Extrapolate{}}(x), exactX);
        };
        convergence<Face>(withTolerance({"InterpolateC2F", "x", g, "Extrapolate/Extrapolate", allLevels, 1.5, 0,
                                         "O(h) boundary face (brief: 2)"}),
                          extrapolated);
        convergence<Face>(
            withTolerance({"InterpolateC2F", "x", g, "Extrapolate/Extrapolate", Levels{1, 1}, 2.0, 0, ""}),
            extrapolated);

        convergence<Center>(withTolerance({"InterpolateF2C", "x", g, "-", allLevels, 2.0, 0, ""}),
                            [](auto const& grid, auto const& run) {
                                auto const x = sample<Face>(grid, xVal);
                                run(InterpolateF2C{}(x), exactX);
                            });
    }
}

TEST_CASE("biased interpolations converge at first order", "[operators][convergence]") {
    for (GridKind g : kGrids) {
        convergence<Face>(withTolerance({"LeftBiasedC2F", "x", g, "SetValue/-", allLevels, 1.0, 0, ""}),
                          [](auto const& grid, auto const& run) {
                              auto const x = sample<Center>(grid, xVal);
                              auto const bot = perColumn(xVal, zBottom);
                              run(LeftBiasedC2F{SetValue{cv(bot)}}(x), exactX);
                          });
        convergence<Face>(withTolerance({"RightBiasedC2F", "x", g, "-/SetValue", allLevels, 1.0, 0, ""}),
                          [](auto const& grid, auto const& run) {
                              auto const x = sample<Center>(grid, xVal);
                              auto const top = perColumn(xVal, zTop);
                              run(RightBiasedC2F{NoBC{}, SetValue{cv(top)}}(x), exactX);
                          });
        convergence<Center>(withTolerance({"LeftBiasedF2C", "x", g, "-", allLevels, 1.0, 0, ""}),
                            [](auto const& grid, auto const& run) {
                                auto const x = sample<Face>(grid, xVal);
                                run(LeftBiasedF2C{}(x), exactX);
                            });
        convergence<Center>(withTolerance({"RightBiasedF2C", "x", g, "-", allLevels, 1.0, 0, ""}),
                            [](auto const& grid, auto const& run) {
                                auto const x = sample<Face>(grid, xVal);
                                run(RightBiasedF2C{}(x), exactX);
                            });
    }
}

TEST_CASE("gradients and divergences converge at their orders", "[operators][convergence]") {
    for (GridKind g : kGrids) {
        // C2F: gradient and divergence share the stencil; SetGradient / SetDivergence give the result at the boundary.
        convergence<Face>(withTolerance({"GradientC2F", "x", g, "SetGradient/SetGradient", allLevels, 2.0, 0, ""}),
                          [](auto const& grid, auto const& run) {
                              auto const x = sample<Center>(grid, xVal);
                              auto const bot = perColumn(xDer, zBottom), top = perColumn(xDer, zTop);
                              run(GradientC2F{SetGradient{cv(bot)}, SetGradient{cv(top)}}(x), exactDx);
                          });
        auto const gradientSetValue = [](auto const& grid, auto const& run) {
            auto const x = sample<Center>(grid, xVal);
            auto const bot = perColumn(xVal, zBottom), top = perColumn(xVal, zTop);
            run(GradientC2F{SetValue{cv(bot)}, SetValue{cv(top)}}(x), exactDx);
        };
        convergence<Face>(withTolerance({"GradientC2F", "x", g, "SetValue/SetValue", allLevels, 1.5, 0,
                                         "half-cell difference, O(h) at boundary faces"}),
                          gradientSetValue);
        convergence<Face>(withTolerance({"GradientC2F", "x", g, "SetValue/SetValue", Levels{1, 1}, 2.0, 0, ""}),
                          gradientSetValue);

        convergence<Face>(
            withTolerance({"DivergenceC2F", "x", g, "SetDivergence/SetDivergence", allLevels, 2.0, 0, ""}),
            [](auto const& grid, auto const& run) {
                auto const x = sample<Center>(grid, xVal);
                auto const bot = perColumn(xDer, zBottom), top = perColumn(xDer, zTop);
                run(DivergenceC2F{SetDivergence{cv(bot)}, SetDivergence{cv(top)}}(x), exactDx);
            });
        auto const divergenceSetValue = [](auto const& grid, auto const& run) {
            auto const x = sample<Center>(grid, xVal);
            auto const bot = perColumn(xVal, zBottom), top = perColumn(xVal, zTop);
            run(DivergenceC2F{SetValue{cv(bot)}, SetValue{cv(top)}}(x), exactDx);
        };
        convergence<Face>(withTolerance({"DivergenceC2F", "x", g, "SetValue/SetValue", allLevels, 1.5, 0,
                                         "as GradientC2F/SetValue (brief: 2)"}),
                          divergenceSetValue);
        convergence<Face>(withTolerance({"DivergenceC2F", "x", g, "SetValue/SetValue", Levels{1, 1}, 2.0, 0, ""}),
                          divergenceSetValue);

        // F2C: gradient and divergence share the difference.
        convergence<Center>(withTolerance({"GradientF2C", "x", g, "none", allLevels, 2.0, 0, ""}),
                            [](auto const& grid, auto const& run) {
                                auto const x = sample<Face>(grid, xVal);
                                run(GradientF2C{}(x), exactDx);
                            });
        convergence<Center>(withTolerance({"GradientF2C", "x", g, "SetValue/SetValue", allLevels, 2.0, 0, ""}),
                            [](auto const& grid, auto const& run) {
                                auto const x = sample<Face>(grid, xVal);
                                auto const bot = perColumn(xVal, zBottom), top = perColumn(xVal, zTop);
                                run(GradientF2C{SetValue{cv(bot)}, SetValue{cv(top)}}(x), exactDx);
                            });
        convergence<Center>(withTolerance({"GradientF2C", "x", g, "Extrapolate/Extrapolate", allLevels, 1.5, 0,
                                           "copies the next center: O(h)"}),
                            [](auto const& grid, auto const& run) {
                                auto const x = sample<Face>(grid, xVal);
                                run(GradientF2C{Extrapolate{}, Extrapolate{}}(x), exactDx);
                            });
        convergence<Center>(withTolerance({"DivergenceF2C", "F", g, "none", allLevels, 2.0, 0, ""}),
                            [](auto const& grid, auto const& run) {
                                auto const flux = sample<Face>(grid, xVal);
                                run(DivergenceF2C{}(flux), exactDx);
                            });
        convergence<Center>(withTolerance({"DivergenceF2C", "F", g, "SetValue/SetValue", allLevels, 2.0, 0, ""}),
                            [](auto const& grid, auto const& run) {
                                auto const flux = sample<Face>(grid, xVal);
                                auto const bot = perColumn(xVal, zBottom), top = perColumn(xVal, zTop);
                                run(DivergenceF2C{SetValue{cv(bot)}, SetValue{cv(top)}}(flux), exactDx);
                            });
        convergence<Center>(withTolerance({"DivergenceF2C", "F", g, "Extrapolate/Extrapolate", allLevels, 1.5, 0,
                                           "copies the next center: O(h)"}),
                            [](auto const& grid, auto const& run) {
                                auto const flux = sample<Face>(grid, xVal);
                                run(DivergenceF2C{Extrapolate{}, Extrapolate{}}(flux), exactDx);
                            });
    }
}

TEST_CASE("first-order upwind product converges at first order", "[operators][convergence]") {
    auto const exactProduct = [](auto const& w) { return [w](uint32_t c, double z) { return w(c, z) * xVal(c, z); }; };
    for (GridKind g : kGrids) {
        convergence<Face>(
            withTolerance({"UpwindBiasedProductC2F", "w(z) +/-, x", g, "SetValue/SetValue", allLevels, 1.0, 0, ""}),
            [&](auto const& grid, auto const& run) {
                auto const w = sample<Face>(grid, wVar);
                auto const x = sample<Center>(grid, xVal);
                auto const bot = perColumn(xVal, zBottom), top = perColumn(xVal, zTop);
                run(UpwindBiasedProductC2F{SetValue{cv(bot)}, SetValue{cv(top)}}(w, x), exactProduct(wVar));
            });
        convergence<Face>(withTolerance({"UpwindBiasedProductC2F", "w(z) +/-, x", g, "Extrapolate/Extrapolate",
                                         allLevels, 1.0, 0, ""}),
                          [&](auto const& grid, auto const& run) {
                              auto const w = sample<Face>(grid, wVar);
                              auto const x = sample<Center>(grid, xVal);
                              run(UpwindBiasedProductC2F{Extrapolate{}, Extrapolate{}}(w, x), exactProduct(wVar));
                          });
        for (bool positive : {true, false}) {
            auto const wf = positive ? wPos : wNeg;
            char const* name = positive ? "w > 0 const, x" : "w < 0 const, x";
            convergence<Face>(
                withTolerance({"UpwindBiasedProductC2F", name, g, "SetValue/SetValue", allLevels, 1.0, 0, ""}),
                [&](auto const& grid, auto const& run) {
                    auto const w = sample<Face>(grid, wf);
                    auto const x = sample<Center>(grid, xVal);
                    auto const bot = perColumn(xVal, zBottom), top = perColumn(xVal, zTop);
                    run(UpwindBiasedProductC2F{SetValue{cv(bot)}, SetValue{cv(top)}}(w, x), exactProduct(wf));
                });
            convergence<Face>(
                withTolerance({"UpwindBiasedProductC2F", name, g, "Extrapolate/Extrapolate", allLevels, 1.0, 0, ""}),
                [&](auto const& grid, auto const& run) {
                    auto const w = sample<Face>(grid, wf);
                    auto const x = sample<Center>(grid, xVal);
                    run(UpwindBiasedProductC2F{Extrapolate{}, Extrapolate{}}(w, x), exactProduct(wf));
                });
        }
    }
}

TEST_CASE("third-order upwind product converges at its orders", "[operators][convergence]") {
    using Third = Upwind3rdOrderBiasedProductC2F<ThirdOrderOneSided, ThirdOrderOneSided>;
    using First = Upwind3rdOrderBiasedProductC2F<FirstOrderOneSided, FirstOrderOneSided>;
    auto const exactProduct = [](auto const& w) { return [w](uint32_t c, double z) { return w(c, z) * xVal(c, z); }; };
    Levels const interiorFaces{2, 2};   // faces 2..n-2: the interior stencil
    Levels const interiorCenters{2, 2}; // centers 2..n-3: both faces interior
    for (GridKind g : kGrids) {
        bool const uniform = g == GridKind::Uniform;
        // On the stretched grid the stencils keep their uniform-grid weights: print the order, assert only >= 1.
        auto const spec = [&](char const* op, char const* operands, char const* bcs, Levels lv, double expected,
                              char const* note) {
            if (uniform) return withTolerance({op, operands, g, bcs, lv, expected, 0, note});
            return Spec{op, operands, g, bcs, lv, expected, 1.0, "uniform-grid weights: asserted >= 1 only"};
        };
        for (bool positive : {true, false}) {
            auto const wf = positive ? wPos : wNeg;
            char const* pointName = positive ? "w > 0 const, x" : "w < 0 const, x";
            char const* averageName = positive ? "w > 0 const, <x>" : "w < 0 const, <x>";
            // Point values at the centers: x(z) - h^2 x''/24 on interior faces (brief: 3).
            convergence<Face>(spec("Upwind3rdOrderBiasedProductC2F", pointName, "ThirdOrderOneSided x2", interiorFaces,
                                   uniform ? 2.0 : NAN, "point values: -w h^2 x''/24 (brief: 3; 3 below)"),
                              [&](auto const& grid, auto const& run) {
                                  auto const w = sample<Face>(grid, wf);
                                  auto const x = sample<Center>(grid, xVal);
                                  run(Third{}(w, x), exactProduct(wf));
                              });
            // Cell averages: the face value of the reconstruction is third order.
            convergence<Face>(spec("Upwind3rdOrderBiasedProductC2F", averageName, "ThirdOrderOneSided x2",
                                   interiorFaces, uniform ? 3.0 : NAN, "cell-average input"),
                              [&](auto const& grid, auto const& run) {
                                  auto const w = sample<Face>(grid, wf);
                                  auto const x = cellAverages(grid);
                                  run(Third{}(w, x), exactProduct(wf));
                              });
            // The flux divergence from point values: d(w x)/dz = w x' (w constant) to third order.
            convergence<Center>(spec("DivergenceF2C(Upwind3rd...)", pointName, "ThirdOrderOneSided x2", interiorCenters,
                                     uniform ? 3.0 : NAN, "flux divergence"),
                                [&](auto const& grid, auto const& run) {
                                    auto const w = sample<Face>(grid, wf);
                                    auto const x = sample<Center>(grid, xVal);
                                    run(DivergenceF2C{}(Third{}(w, x)),
                                        [wf](uint32_t c, double z) { return wf(c, z) * xDer(c, z); });
                                });
            // All faces.
            convergence<Face>(spec("Upwind3rdOrderBiasedProductC2F", pointName, "ThirdOrderOneSided x2", allLevels,
                                   uniform ? 2.0 : NAN, ""),
                              [&](auto const& grid, auto const& run) {
                                  auto const w = sample<Face>(grid, wf);
                                  auto const x = sample<Center>(grid, xVal);
                                  run(Third{}(w, x), exactProduct(wf));
                              });
            convergence<Face>(spec("Upwind3rdOrderBiasedProductC2F", pointName, "FirstOrderOneSided x2", allLevels,
                                   uniform ? 1.5 : NAN, "O(h) at faces 0, 1, n-1, n"),
                              [&](auto const& grid, auto const& run) {
                                  auto const w = sample<Face>(grid, wf);
                                  auto const x = sample<Center>(grid, xVal);
                                  run(First{}(w, x), exactProduct(wf));
                              });
        }
        convergence<Face>(spec("Upwind3rdOrderBiasedProductC2F", "w(z) +/-, x", "ThirdOrderOneSided x2", allLevels,
                               uniform ? 2.0 : NAN, ""),
                          [&](auto const& grid, auto const& run) {
                              auto const w = sample<Face>(grid, wVar);
                              auto const x = sample<Center>(grid, xVal);
                              run(Third{}(w, x), exactProduct(wVar));
                          });
    }
}

namespace {
// Max-norm errors of a Face result (over all columns), at every face and split by position: the boundary faces 0, 1,
// n-1 and n one by one, the interior faces 2..n-2 together.
struct FaceErrors {
    double all = 0.0, interior = 0.0;
    std::array<double, 4> edge{}; // faces 0, 1, n-1, n
};
constexpr std::array<char const*, 4> edgeNames = {"face 0", "face 1", "face n-1", "face n"};

template <class Exact>
FaceErrors faceErrors(Field<double, Face> const& f, Exact const& exact) {
    auto const& z = f.grid().faces();
    uint32_t const n = f.levels() - 1;
    FaceErrors e;
    for (uint32_t c = 0; c < f.columns(); ++c) {
        for (uint32_t k = 0; k <= n; ++k) {
            double const err = std::fabs(f.at(c, k) - exact(c, z[k]));
            e.all = std::max(e.all, err);
            if (k >= 2 && k + 2 <= n) e.interior = std::max(e.interior, err);
            if (k == 0) e.edge[0] = std::max(e.edge[0], err);
            if (k == 1) e.edge[1] = std::max(e.edge[1], err);
            if (k == n - 1) e.edge[2] = std::max(e.edge[2], err);
            if (k == n) e.edge[3] = std::max(e.edge[3], err);
        }
    }
    return e;
}
} // namespace

// The order at every face, boundary faces included, of the third-order product of CELL AVERAGES (the form the
// interior stencil is built for), in the max norm over all faces and at each boundary face on its own.
// Expected on the uniform grid:
//   * faces 2..n-2: 3 (the Wicker-Skamarock face value: a fourth-order centered part plus the upwind term
//     |w| (3 (x[k] - x[k-1]) - (x[k+1] - x[k-2])) / 12 = O(h^3));
//   * faces 0, 1, n-1, n with ThirdOrderOneSided: 3 (the face values of the quadratic whose cell averages are the
//     three cells next to the boundary, (11, -7, 2) / 6 and (2, 5, -1) / 6, exact for the averages of a parabola).
//     The earlier point-value closures, (15, -10, 3) / 8 at faces 0 and n and (3, 6, -1) / 8 at faces 1 and n-1 with
//     the flow entering from the boundary side, are x + h^2 x'' / 24 + O(h^3) on cell averages (the averages are the
//     point values plus h^2 x'' / 24 and their weights add up to 1): second order, which this test catches;
//   * all faces (max norm): 3.
// On the stretched grid the weights stay the uniform ones: printed, asserted >= 1 only.
TEST_CASE("third-order upwind product of cell averages: the order at every face", "[operators][convergence]") {
    using Third = Upwind3rdOrderBiasedProductC2F<ThirdOrderOneSided, ThirdOrderOneSided>;
    struct Velocity {
        char const* name;
        double (*w)(uint32_t, double);
    };
    std::array<Velocity, 3> const velocities = {{{"w > 0 const", wPos}, {"w < 0 const", wNeg}, {"w(z) +/-", wVar}}};
    std::printf("\nUpwind3rdOrderBiasedProductC2F (ThirdOrderOneSided x2) of cell averages <x>: max-norm error and "
                "order (last refinement %u -> %u) at every face\n",
                kCells[kCells.size() - 2], kCells.back());
    std::printf("%-9s %-12s %-10s", "grid", "velocity", "faces");
    for (uint32_t n : kCells)
        std::printf("      e%-3u", n);
    std::printf(" %6s %6s\n", "order", "expect");
    for (GridKind g : kGrids) {
        bool const uniform = g == GridKind::Uniform;
        for (Velocity const& v : velocities) {
            std::vector<FaceErrors> errs;
            for (uint32_t n : kCells) {
                auto const grid = makeGrid(g, n);
                auto const w = sample<Face>(grid, v.w);
                auto const x = cellAverages(grid);
                auto const expr = Third{}(w, x);
                Field<double, Face> direct(grid, kCols, core::MemSpace::Host), shmem(grid, kCols, core::MemSpace::Host);
                evaluate(core::Serial{}, direct, expr, Engine::Direct);
                evaluate(core::Threads{4, true}, shmem, expr, Engine::Shmem);
                CHECK(sameBits(direct, shmem));
                errs.push_back(faceErrors(direct, [&](uint32_t c, double z) { return v.w(c, z) * xVal(c, z); }));
            }
            auto const report = [&](char const* faces, auto const& pick) {
                std::size_t const m = errs.size();
                for (FaceErrors const& e : errs)
                    REQUIRE(std::isfinite(pick(e)));
                double const order = std::log2(pick(errs[m - 2]) / pick(errs[m - 1]));
                std::printf("%-9s %-12s %-10s", gridName(g), v.name, faces);
                for (FaceErrors const& e : errs)
                    std::printf(" %9.3e", pick(e));
                std::printf(" %6.2f %6s\n", order, uniform ? "3.0" : ">= 1");
                INFO(gridName(g) << " grid, " << v.name << ", " << faces << ": order " << order);
                REQUIRE(order >= (uniform ? 3.0 - 0.2 : 1.0));
            };
            report("all", [](FaceErrors const& e) { return e.all; });
            report("2..n-2", [](FaceErrors const& e) { return e.interior; });
            for (std::size_t b = 0; b < 4; ++b)
                report(edgeNames[b], [b](FaceErrors const& e) { return e.edge[b]; });
        }
    }
    std::fflush(stdout);
}

namespace {
// A smooth profile for the limited product, with known extrema: y_c(z) = 2 + sin(A_c z + P_c), extrema where
// A_c z + P_c = pi/2 + j pi (two to three in the column).
double yA(uint32_t c) { return 2.0 * M_PI * (1.0 + 0.25 * c); }
double yP(uint32_t c) { return 0.3 + 0.2 * c; }
double yVal(uint32_t c, double z) { return 2.0 + std::sin(yA(c) * z + yP(c)); }
double yInt(uint32_t c, double z) { return 2.0 * z - std::cos(yA(c) * z + yP(c)) / yA(c); }
// Distance in z from z to the nearest extremum of y_c.
double yExtremumDistance(uint32_t c, double z) {
    double const phase = (yA(c) * z + yP(c) - M_PI / 2) / M_PI;
    return std::fabs(phase - std::round(phase)) * M_PI / yA(c);
}
} // namespace

// UpwindLimitedProductC2F on the cell averages of a smooth profile. The limiter keeps the third-order face value
// where the profile is monotone and smooth (Koren's phi(r) = (1 + 2 r) / 3 for 1/4 <= r <= 5/2, and r -> 1 as h -> 0
// there), and drops to first order (phi = 0) at the faces next to an extremum, where r <= 0; faces 0, 1, n-1 and n
// are first-order upwind. So: max norm over all faces order 1; L1 over all faces order 2 (O(h) errors at O(1) faces,
// times h); faces 2..n-2 at least 0.1 from an extremum: order 3 in both norms. Measured on the uniform grid (asserted
// with 0.2 of slack); on the stretched grid (uniform-grid weights) printed, asserted >= 1 (max) only.
TEST_CASE("flux-limited upwind product converges on a smooth profile", "[operators][convergence]") {
    using Limited = UpwindLimitedProductC2F<FirstOrderOneSided, FirstOrderOneSided>;
    struct Velocity {
        char const* name;
        double (*w)(uint32_t, double);
    };
    std::array<Velocity, 3> const velocities = {{{"w > 0 const", wPos}, {"w < 0 const", wNeg}, {"w(z) +/-", wVar}}};
    struct Errors {
        double maxAll = 0, l1All = 0, maxAway = 0, l1Away = 0;
    };
    std::printf("\nUpwindLimitedProductC2F (FirstOrderOneSided x2) of cell averages <2 + sin(A z + P)>: error and "
                "order (last refinement %u -> %u); 'away': faces 2..n-2 at least 0.1 from an extremum\n",
                kCells[kCells.size() - 2], kCells.back());
    std::printf("%-9s %-12s %-12s", "grid", "velocity", "norm");
    for (uint32_t n : kCells)
        std::printf("      e%-3u", n);
    std::printf(" %6s %6s\n", "order", "expect");
    for (GridKind g : kGrids) {
        bool const uniform = g == GridKind::Uniform;
        for (Velocity const& v : velocities) {
            std::vector<Errors> errs;
            for (uint32_t n : kCells) {
                auto const grid = makeGrid(g, n);
                auto const w = sample<Face>(grid, v.w);
                Field<double, Center> y(grid, kCols, core::MemSpace::Host);
                auto const& zf = grid->faces();
                for (uint32_t c = 0; c < kCols; ++c)
                    for (uint32_t k = 0; k < n; ++k)
                        y.at(c, k) = (yInt(c, zf[k + 1]) - yInt(c, zf[k])) / grid->dzCenter()[k];
                auto const expr = Limited{}(w, y);
                Field<double, Face> direct(grid, kCols, core::MemSpace::Host), shmem(grid, kCols, core::MemSpace::Host);
                evaluate(core::Serial{}, direct, expr, Engine::Direct);
                evaluate(core::Threads{4, true}, shmem, expr, Engine::Shmem);
                CHECK(sameBits(direct, shmem));
                Errors e;
                auto const& dz = grid->dzFace();
                for (uint32_t c = 0; c < kCols; ++c) {
                    for (uint32_t k = 0; k <= n; ++k) {
                        double const err = std::fabs(direct.at(c, k) - v.w(c, zf[k]) * yVal(c, zf[k]));
                        e.maxAll = std::max(e.maxAll, err);
                        e.l1All += err * dz[k] / kCols;
                        if (k >= 2 && k + 2 <= n && yExtremumDistance(c, zf[k]) >= 0.1) {
                            e.maxAway = std::max(e.maxAway, err);
                            e.l1Away += err * dz[k] / kCols;
                        }
                    }
                }
                errs.push_back(e);
            }
            auto const report = [&](char const* norm, double expected, auto const& pick) {
                std::size_t const m = errs.size();
                for (Errors const& e : errs)
                    REQUIRE(std::isfinite(pick(e)));
                double const order = std::log2(pick(errs[m - 2]) / pick(errs[m - 1]));
                std::printf("%-9s %-12s %-12s", gridName(g), v.name, norm);
                for (Errors const& e : errs)
                    std::printf(" %9.3e", pick(e));
                std::printf(" %6.2f %6.1f\n", order, expected);
                INFO(gridName(g) << " grid, " << v.name << ", " << norm << ": order " << order);
                if (uniform)
                    REQUIRE(order >= expected - 0.2);
                else if (expected == 1.0)
                    REQUIRE(order >= 0.8);
            };
            report("max, all", 1.0, [](Errors const& e) { return e.maxAll; });
            report("L1, all", 2.0, [](Errors const& e) { return e.l1All; });
            report("max, away", 3.0, [](Errors const& e) { return e.maxAway; });
            report("L1, away", 3.0, [](Errors const& e) { return e.l1Away; });
        }
    }
    std::fflush(stdout);
}

TEST_CASE("advection converges at second order in the interior", "[operators][convergence]") {
    auto const exactAdvection = [](uint32_t c, double z) { return wVar(c, z) * xDer(c, z); };
    Levels const interior{1, 1}; // centers 1..n-2
    for (GridKind g : kGrids) {
        auto const setValue = [](auto const& grid, auto const& run) {
            auto const w = sample<Face>(grid, wVar);
            auto const x = sample<Center>(grid, xVal);
            auto const bot = perColumn(xVal, zBottom), top = perColumn(xVal, zTop);
            run(AdvectionC2C{SetValue{cv(bot)}, SetValue{cv(top)}}(w, x),
                [](uint32_t c, double z) { return wVar(c, z) * xDer(c, z); });
        };
        auto const extrapolate = [&](auto const& grid, auto const& run) {
            auto const w = sample<Face>(grid, wVar);
            auto const x = sample<Center>(grid, xVal);
            run(AdvectionC2C{Extrapolate{}, Extrapolate{}}(w, x), exactAdvection);
        };
        convergence<Center>(
            withTolerance({"AdvectionC2C", "w(z) +/-, x", g, "SetValue/SetValue", interior, 2.0, 0, ""}), setValue);
        convergence<Center>(withTolerance({"AdvectionC2C", "w(z) +/-, x", g, "SetValue/SetValue", allLevels, 1.5, 0,
                                           "half-cell difference at the end centers"}),
                            setValue);
        convergence<Center>(
            withTolerance({"AdvectionC2C", "w(z) +/-, x", g, "Extrapolate/Extrapolate", interior, 2.0, 0, ""}),
            extrapolate);
        convergence<Center>(withTolerance({"AdvectionC2C", "w(z) +/-, x", g, "Extrapolate/Extrapolate", allLevels, 1.5,
                                           0, "one-sided half at the end centers"}),
                            extrapolate);
    }
}

// ---------------------------------------------------------------------------------------------------------------
// Exactness: every stencil is exact where its formula is.

namespace {
template <class S, class Exact>
void requireExact(char const* what, Field<double, S> const& got, Exact const& exact, Levels lv = allLevels) {
    INFO(what);
    auto const& z = heights<S>(got.grid());
    double scale = 0.0;
    for (uint32_t c = 0; c < got.columns(); ++c)
        for (uint32_t k = 0; k < got.levels(); ++k)
            scale = std::max(scale, std::fabs(exact(c, z[k])));
    for (uint32_t c = 0; c < got.columns(); ++c) {
        for (uint32_t k = lv.bottom; k + lv.top < got.levels(); ++k) {
            INFO("column " << c << ", level " << k << ": " << got.at(c, k) << " vs " << exact(c, z[k]));
            REQUIRE(std::fabs(got.at(c, k) - exact(c, z[k])) <= 1e-12 * scale);
        }
    }
}
} // namespace

TEST_CASE("operators are exact on linear profiles", "[operators][convergence]") {
    // A physical column, [200, 1200] m, 17 cells.
    double const bottom = 200.0, top = 1200.0;
    auto const lin = [](uint32_t c, double z) { return (2.0 + 0.5 * c) + (-0.015 + 0.007 * c) * z; };
    auto const slope = [](uint32_t c, double) { return -0.015 + 0.007 * c; };
    auto const wLin = [](uint32_t c, double z) { return 0.3 - 0.001 * (1.0 + 0.1 * c) * (z - 200.0); };
    // Uniform, smoothly stretched, and irregular (interior faces jittered by up to 0.35 cells: wrong grid weights
    // that stay O(h^2) on the smooth grid, and so pass the convergence tests, are O(1) errors here).
    std::vector<double> jittered(18);
    for (uint32_t k = 0; k <= 17; ++k)
        jittered[k] = bottom + (top - bottom) * (k + (k > 0 && k < 17 ? 0.35 * std::sin(1.7 * k) : 0.0)) / 17.0;
    for (int gi = 0; gi < 3; ++gi) {
        GridKind const g = gi == 0 ? GridKind::Uniform : GridKind::Stretched;
        INFO((gi == 2 ? "irregular" : gridName(g)) << " grid");
        auto const grid =
            gi == 2 ? std::make_shared<Grid const>(Grid::fromFaces(jittered)) : makeGrid(g, 17, bottom, top);
        auto const x = sample<Center>(grid, lin);
        auto const xf = sample<Face>(grid, lin);
        auto const wf = sample<Face>(grid, wLin);
        auto const vBot = perColumn(lin, bottom), vTop = perColumn(lin, top);
        auto const gBot = perColumn(slope, bottom), gTop = perColumn(slope, top);
        Field<double, Face> onFaces(grid, kCols, core::MemSpace::Host);
        Field<double, Center> onCenters(grid, kCols, core::MemSpace::Host);
        core::Serial const serial;

        evaluate(serial, onFaces, InterpolateC2F{SetValue{cv(vBot)}, SetValue{cv(vTop)}}(x), Engine::Direct);
        requireExact("InterpolateC2F SetValue", onFaces, lin);
        evaluate(serial, onFaces, InterpolateC2F{SetGradient{cv(gBot)}, SetGradient{cv(gTop)}}(x), Engine::Direct);
        requireExact("InterpolateC2F SetGradient", onFaces, lin);
        evaluate(serial, onFaces, InterpolateC2F{Extrapolate{}, Extrapolate{}}(x), Engine::Direct);
        requireExact("InterpolateC2F Extrapolate (interior faces)", onFaces, lin, Levels{1, 1});
        evaluate(serial, onCenters, InterpolateF2C{}(xf), Engine::Direct);
        requireExact("InterpolateF2C", onCenters, lin);

        evaluate(serial, onFaces, GradientC2F{SetValue{cv(vBot)}, SetValue{cv(vTop)}}(x), Engine::Direct);
        requireExact("GradientC2F SetValue", onFaces, slope);
        evaluate(serial, onFaces, GradientC2F{SetGradient{cv(gBot)}, SetGradient{cv(gTop)}}(x), Engine::Direct);
        requireExact("GradientC2F SetGradient", onFaces, slope);
        evaluate(serial, onFaces, DivergenceC2F{SetValue{cv(vBot)}, SetValue{cv(vTop)}}(x), Engine::Direct);
        requireExact("DivergenceC2F SetValue", onFaces, slope);
        evaluate(serial, onFaces, DivergenceC2F{SetDivergence{cv(gBot)}, SetDivergence{cv(gTop)}}(x), Engine::Direct);
        requireExact("DivergenceC2F SetDivergence", onFaces, slope);

        evaluate(serial, onCenters, GradientF2C{}(xf), Engine::Direct);
        requireExact("GradientF2C", onCenters, slope);
        evaluate(serial, onCenters, GradientF2C{SetValue{cv(vBot)}, SetValue{cv(vTop)}}(xf), Engine::Direct);
        requireExact("GradientF2C SetValue", onCenters, slope);
        evaluate(serial, onCenters, GradientF2C{Extrapolate{}, Extrapolate{}}(xf), Engine::Direct);
        requireExact("GradientF2C Extrapolate", onCenters, slope);
        evaluate(serial, onCenters, DivergenceF2C{}(xf), Engine::Direct);
        requireExact("DivergenceF2C", onCenters, slope);
        evaluate(serial, onCenters, DivergenceF2C{SetValue{cv(vBot)}, SetValue{cv(vTop)}}(xf), Engine::Direct);
        requireExact("DivergenceF2C SetValue", onCenters, slope);
        evaluate(serial, onCenters, DivergenceF2C{Extrapolate{}, Extrapolate{}}(xf), Engine::Direct);
        requireExact("DivergenceF2C Extrapolate", onCenters, slope);

        // w dx/dz with w and x linear: the face terms average to w(zc) x' exactly (the center is the faces'
        // mid-point); Extrapolate's one-sided end centers are exact only inside.
        auto const advection = [&](uint32_t c, double z) { return wLin(c, z) * slope(c, z); };
        evaluate(serial, onCenters, AdvectionC2C{SetValue{cv(vBot)}, SetValue{cv(vTop)}}(wf, x), Engine::Direct);
        requireExact("AdvectionC2C SetValue", onCenters, advection);
        evaluate(serial, onCenters, AdvectionC2C{Extrapolate{}, Extrapolate{}}(wf, x), Engine::Direct);
        requireExact("AdvectionC2C Extrapolate (interior centers)", onCenters, advection, Levels{1, 1});

        // Upwind products of a constant are w times the constant (the biased interpolations copy it).
        auto const one = sample<Center>(grid, [](uint32_t c, double) { return 1.0 + c; });
        auto const oneBot = perColumn([](uint32_t c, double) { return 1.0 + c; }, bottom);
        auto const wTimesOne = [&](uint32_t c, double z) { return wLin(c, z) * (1.0 + c); };
        evaluate(serial, onFaces, UpwindBiasedProductC2F{SetValue{cv(oneBot)}, SetValue{cv(oneBot)}}(wf, one),
                 Engine::Direct);
        requireExact("UpwindBiasedProductC2F of a constant", onFaces, wTimesOne);
        evaluate(serial, onFaces, Upwind3rdOrderBiasedProductC2F{ThirdOrderOneSided{}, ThirdOrderOneSided{}}(wf, one),
                 Engine::Direct);
        requireExact("Upwind3rdOrderBiasedProductC2F of a constant", onFaces, wTimesOne);
        evaluate(serial, onFaces, UpwindLimitedProductC2F{FirstOrderOneSided{}, FirstOrderOneSided{}}(wf, one),
                 Engine::Direct);
        requireExact("UpwindLimitedProductC2F of a constant", onFaces, wTimesOne);
        evaluate(serial, onFaces, LeftBiasedC2F{SetValue{cv(oneBot)}}(one), Engine::Direct);
        requireExact("LeftBiasedC2F of a constant", onFaces, [](uint32_t c, double) { return 1.0 + c; });

        if (gi == 0) {
            // Uniform grid: the third-order product is exact for linear x on every face with ThirdOrderOneSided (a
            // linear profile's cell averages are its center values, and every stencil reproduces the face values of
            // a quadratic from its cell averages), and for a parabola its interior faces give
            // w (z^2 - h^2 / 12) = w (x - h^2 x'' / 24): point values converge at second order (see the top).
            evaluate(serial, onFaces, Upwind3rdOrderBiasedProductC2F{ThirdOrderOneSided{}, ThirdOrderOneSided{}}(wf, x),
                     Engine::Direct);
            requireExact("Upwind3rdOrderBiasedProductC2F of a linear profile", onFaces,
                         [&](uint32_t c, double z) { return wLin(c, z) * lin(c, z); });
            double const h = (top - bottom) / 17.0;
            auto const parabola = sample<Center>(grid, [](uint32_t, double z) { return z * z; });
            evaluate(serial, onFaces,
                     Upwind3rdOrderBiasedProductC2F{ThirdOrderOneSided{}, ThirdOrderOneSided{}}(wf, parabola),
                     Engine::Direct);
            requireExact(
                "Upwind3rdOrderBiasedProductC2F of z^2 (interior faces)", onFaces,
                [&](uint32_t c, double z) { return wLin(c, z) * (z * z - h * h / 12.0); }, Levels{2, 2});
            // The cell averages of z^2, (zf[k+1]^3 - zf[k]^3) / (3 dz): every face, boundary closures included, gives
            // w z^2 exactly (the point-value closures (15, -10, 3) / 8 and (3, 6, -1) / 8 gave w (z^2 + h^2 / 12)).
            auto const& zf = grid->faces();
            Field<double, Center> parabolaAverages(grid, kCols, core::MemSpace::Host);
            for (uint32_t c = 0; c < kCols; ++c)
                for (uint32_t k = 0; k < 17; ++k)
                    parabolaAverages.at(c, k) =
                        (zf[k + 1] * zf[k + 1] * zf[k + 1] - zf[k] * zf[k] * zf[k]) / (3.0 * grid->dzCenter()[k]);
            evaluate(serial, onFaces,
                     Upwind3rdOrderBiasedProductC2F{ThirdOrderOneSided{}, ThirdOrderOneSided{}}(wf, parabolaAverages),
                     Engine::Direct);
            requireExact("Upwind3rdOrderBiasedProductC2F of the cell averages of z^2 (every face)", onFaces,
                         [&](uint32_t c, double z) { return wLin(c, z) * z * z; });
        }
    }
}
