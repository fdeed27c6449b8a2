// Grid: a vertical grid of n cells given by its n + 1 face heights, shared by every column.
//
// Centers are the mid-points of the faces. Spacings:
//   dzCenter[k] = zf[k+1] - zf[k]          (n values: the thickness of cell k, used by F2C operators)
//   dzFace[k]   = zc[k] - zc[k-1]          (interior faces 1..n-1: the distance between the centers around face k)
//   dzFace[0]   = zc[0] - zf[0], dzFace[n] = zf[n] - zc[n-1]   (half cells at the boundaries)
// Metric terms, computed once here so that the operators multiply where they would divide (a division costs 4-20
// times a multiplication and does not pipeline; docs/performance.md):
//   rdzCenter[k] = 1 / dzCenter[k],  rdzFace[k] = 1 / dzFace[k]
//   interpBelow[k] = dzCenter[k] / (dzCenter[k-1] + dzCenter[k]),  interpAbove[k] = dzCenter[k-1] / (same)
//                  the weights of the centers below and above interior face k in linear interpolation (1 <= k <= n-1;
//                  faces 0 and n hold 0.5, unused). Both are exactly 0.5 on a uniform grid.
// Make one with Grid::uniform, Grid::stretched (a monotone map of [0, 1] onto itself) or Grid::fromFaces.
// Kernels see a GridView: device pointers to the same arrays.
#pragma once

#include <strata/core/backend.hpp>
#include <strata/core/config.hpp>
#include <strata/core/memory.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

namespace strata::ops {

struct GridView {
    double const* zf;          // n + 1 face heights
    double const* zc;          // n center heights
    double const* dzCenter;    // n cell thicknesses
    double const* dzFace;      // n + 1 face spacings
    double const* rdzCenter;   // n: 1 / dzCenter
    double const* rdzFace;     // n + 1: 1 / dzFace
    double const* interpBelow; // n + 1: weight of center k-1 at face k
    double const* interpAbove; // n + 1: weight of center k at face k
    uint32_t cells;

    STRATA_HD uint32_t n() const { return cells; }
};

class Grid {
public:
    static Grid uniform(uint32_t cells, double zTop, double zBottom = 0.0);
    // Faces at zBottom + (zTop - zBottom) * map(k / n); `map` must be strictly increasing with map(0) = 0, map(1) = 1.
    static Grid stretched(uint32_t cells, double zTop, std::function<double(double)> const& map, double zBottom = 0.0);
    static Grid fromFaces(std::vector<double> faces);

    uint32_t cells() const { return m_cells; }
    std::vector<double> const& faces() const { return m_zf; }
    std::vector<double> const& centers() const { return m_zc; }
    std::vector<double> const& dzCenter() const { return m_dzc; }
    std::vector<double> const& dzFace() const { return m_dzf; }
    std::vector<double> const& rdzCenter() const { return m_rdzc; }
    std::vector<double> const& rdzFace() const { return m_rdzf; }
    std::vector<double> const& interpBelow() const { return m_wBelow; }
    std::vector<double> const& interpAbove() const { return m_wAbove; }

    // The grid's arrays in the memory of `space` (copied there once, on first use; valid while the Grid lives).
    GridView view(core::MemSpace space) const;

private:
    explicit Grid(std::vector<double> faces);
    uint32_t m_cells = 0;
    std::vector<double> m_zf, m_zc, m_dzc, m_dzf, m_rdzc, m_rdzf, m_wBelow, m_wAbove;
    // zf | zc | dzc | dzf | rdzc | rdzf | wBelow | wAbove in one buffer per memory space, made on first use and kept
    // while the grid lives, so a GridView stays valid as long as its Grid.
    mutable std::shared_ptr<core::Buffer<double>> m_host, m_cuda;
};

} // namespace strata::ops
