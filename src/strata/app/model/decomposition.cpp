#include <strata/app/model/decomposition.hpp>

#include <cmath>
#include <numbers>

namespace strata::app {

Decomposition Decomposition::balanced(uint64_t globalColumns, int rank, int ranks) {
    Decomposition d;
    d.globalColumns = globalColumns;
    auto const r = static_cast<uint64_t>(rank), n = static_cast<uint64_t>(ranks);
    d.first = globalColumns * r / n;
    d.local = static_cast<uint32_t>(globalColumns * (r + 1) / n - d.first);
    return d;
}

HorizontalCoords makeHorizontal(HorizontalGridConfig const& config) {
    HorizontalCoords h;
    h.latlon = config.type == HorizontalGridType::LatLon;
    if (h.latlon) {
        h.nlat = config.nlat;
        h.nlon = config.nlon;
        for (uint32_t i = 0; i < h.nlat; ++i)
            h.lat.push_back(-90.0 + 180.0 * (i + 0.5) / h.nlat);
        for (uint32_t i = 0; i < h.nlon; ++i)
            h.lon.push_back(360.0 * (i + 0.5) / h.nlon);
    } else {
        h.ncol = config.ncol;
        if (!config.lat.empty()) { // the columns' places, as given (config.cpp checked ncol against them)
            h.lat = config.lat;
            h.lon = config.lon;
            return h;
        }
        for (uint32_t i = 0; i < h.ncol; ++i) {
            h.lat.push_back(-90.0 + 180.0 * (i + 0.5) / h.ncol);
            h.lon.push_back(0.0);
        }
    }
    return h;
}

std::vector<double> localLatitudes(HorizontalCoords const& h, Decomposition const& d) {
    std::vector<double> lat(d.local);
    for (uint32_t c = 0; c < d.local; ++c) {
        uint64_t const g = d.first + c;
        lat[c] = h.latlon ? h.lat[g / h.nlon] : h.lat[g];
    }
    return lat;
}

std::vector<double> localAreaWeights(HorizontalCoords const& h, Decomposition const& d) {
    std::vector<double> w(d.local, 1.0);
    if (h.latlon) {
        auto const lat = localLatitudes(h, d);
        for (uint32_t c = 0; c < d.local; ++c)
            w[c] = std::cos(lat[c] * std::numbers::pi / 180.0);
    }
    return w;
}

} // namespace strata::app
