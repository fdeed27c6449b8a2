// The horizontal grid and its split over MPI ranks.
//
// A lat-lon grid of nlat x nlon columns (cell centers, latitudes from south to north, longitudes from 0 east;
// global column = ilat * nlon + ilon) or a plain list of ncol columns (at grid.horizontal.lat and lon, or without
// them latitudes spread evenly between the poles, longitude 0). Ranks own balanced contiguous chunks: rank r of R holds
// [floor(N r / R), floor(N (r + 1) / R)).
#pragma once

#include <strata/app/config.hpp>
#include <strata/app/io/output.hpp>

#include <cstdint>
#include <vector>

namespace strata::app {

struct Decomposition {
    uint64_t globalColumns = 0;
    uint64_t first = 0; // first global column of this rank
    uint32_t local = 0; // columns on this rank

    static Decomposition balanced(uint64_t globalColumns, int rank, int ranks);
};

HorizontalCoords makeHorizontal(HorizontalGridConfig const& config);

// Latitude (degrees) and area weight (cos latitude; 1 for a column list) of each local column.
std::vector<double> localLatitudes(HorizontalCoords const& h, Decomposition const& d);
std::vector<double> localAreaWeights(HorizontalCoords const& h, Decomposition const& d);

} // namespace strata::app
