#include <strata/operators/grid.hpp>

#include <strata/core/error.hpp>

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
    m_rdzc.resize(m_cells);
    m_rdzf.resize(m_cells + 1);
    for (uint32_t k = 0; k < m_cells; ++k)
        m_rdzc[k] = 1.0 / m_dzc[k];
    for (uint32_t k = 0; k <= m_cells; ++k)
        m_rdzf[k] = 1.0 / m_dzf[k];
    m_wBelow.assign(m_cells + 1, 0.5);
    m_wAbove.assign(m_cells + 1, 0.5);
    for (uint32_t k = 1; k < m_cells; ++k) {
        double const below = m_dzc[k - 1], above = m_dzc[k], sum = below + above;
        m_wBelow[k] = above / sum;
        m_wAbove[k] = below / sum;
    }
}

GridView Grid::view(core::MemSpace space) const {
    uint32_t const n = m_cells;
    auto& slot = space == core::MemSpace::Cuda ? m_cuda : m_host;
    if (!slot) {
        std::vector<double> const* parts[] = {&m_zf, &m_zc, &m_dzc, &m_dzf, &m_rdzc, &m_rdzf, &m_wBelow, &m_wAbove};
        std::size_t total = 0;
        for (auto const* part : parts)
            total += part->size();
        auto buf = std::make_shared<core::Buffer<double>>(total, space);
        auto h = buf->host();
        std::size_t at = 0;
        for (auto const* part : parts) {
            std::copy(part->begin(), part->end(), h.begin() + static_cast<std::ptrdiff_t>(at));
            at += part->size();
        }
        buf->toDevice();
        slot = std::move(buf);
    }
    double const* p = slot->device();
    auto const take = [&p](std::size_t len) {
        double const* part = p;
        p += len;
        return part;
    };
    GridView v{};
    v.zf = take(n + 1);
    v.zc = take(n);
    v.dzCenter = take(n);
    v.dzFace = take(n + 1);
    v.rdzCenter = take(n);
    v.rdzFace = take(n + 1);
    v.interpBelow = take(n + 1);
    v.interpAbove = take(n + 1);
    v.cells = n;
    return v;
}

} // namespace strata::ops
