#include "operators/grid.hpp"

#include "core/error.hpp"

#include <cmath>
#include <sstream>

namespace strata::ops {

Grid Grid::uniform(uint32_t cells, double zTop, double zBottom) {
    return stretched(
        cells, zTop, [](double s) { return s; }, zBottom);
}

Grid Grid::stretched(uint32_t cells, double zTop, std::function<double(double)> const& map, double zBottom) {
    if (cells == 0) throw Error("a grid needs at least one cell", "Grid", "cells >= 1");
    std::vector<double> faces(cells + 1);
    for (uint32_t k = 0; k <= cells; ++k)
        faces[k] = zBottom + (zTop - zBottom) * map(static_cast<double>(k) / static_cast<double>(cells));
    faces[0] = zBottom;
    faces[cells] = zTop;
    return Grid(std::move(faces));
}

Grid Grid::fromFaces(std::vector<double> faces) { return Grid(std::move(faces)); }

Grid::Grid(std::vector<double> faces) : m_zf(std::move(faces)) {
    if (m_zf.size() < 2) throw Error("a grid needs at least two faces", "Grid", "n + 1 >= 2 face heights");
    for (std::size_t k = 0; k + 1 < m_zf.size(); ++k) {
        if (!(m_zf[k + 1] > m_zf[k]) || !std::isfinite(m_zf[k + 1])) {
            std::ostringstream msg;
            msg << "face heights must increase strictly: face " << k << " = " << m_zf[k] << ", face " << k + 1 << " = "
                << m_zf[k + 1];
            throw Error(msg.str(), "Grid", "strictly increasing finite heights");
        }
    }
    m_cells = static_cast<uint32_t>(m_zf.size() - 1);
    m_zc.resize(m_cells);
    m_dzc.resize(m_cells);
    m_dzf.resize(m_cells + 1);
    for (uint32_t k = 0; k < m_cells; ++k) {
        m_zc[k] = (m_zf[k] + m_zf[k + 1]) / 2;
        m_dzc[k] = m_zf[k + 1] - m_zf[k];
    }
    m_dzf[0] = m_zc[0] - m_zf[0];
    for (uint32_t k = 1; k < m_cells; ++k)
        m_dzf[k] = m_zc[k] - m_zc[k - 1];
    m_dzf[m_cells] = m_zf[m_cells] - m_zc[m_cells - 1];
}

GridView Grid::view(core::MemSpace space) const {
    uint32_t const n = m_cells;
    auto& slot = space == core::MemSpace::Cuda ? m_cuda : m_host;
    if (!slot) {
        auto buf = std::make_shared<core::Buffer<double>>(4 * n + 2, space);
        auto h = buf->host();
        std::copy(m_zf.begin(), m_zf.end(), h.begin());
        std::copy(m_zc.begin(), m_zc.end(), h.begin() + (n + 1));
        std::copy(m_dzc.begin(), m_dzc.end(), h.begin() + (2 * n + 1));
        std::copy(m_dzf.begin(), m_dzf.end(), h.begin() + (3 * n + 1));
        buf->toDevice();
        slot = std::move(buf);
    }
    double const* base = slot->device();
    return GridView{base, base + (n + 1), base + (2 * n + 1), base + (3 * n + 1), n};
}

} // namespace strata::ops
