// Shared by test_output (Catch2) and test_output_mpi (mpiexec): a small output spec, the formula every value comes
// from, a writer that fills a rank's columns with it, and a reader that checks a file against it with the NetCDF-C++
// API directly (independently of the comparator).
#pragma once

#include <strata/app/io/output.hpp>

#include <netcdf>

#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <vector>

namespace strata::test {

constexpr uint32_t nlat = 3, nlon = 4, ncolumns = 12, nlev = 5, records = 3;

// The value of variable v at a global column, level and record; exact in float (a multiple of 1/64 below 2^14).
inline double valueAt(std::size_t v, uint64_t column, std::size_t level, std::size_t record) {
    return 1000.0 * static_cast<double>(v) + 100.0 * static_cast<double>(record) + static_cast<double>(column) +
           static_cast<double>(level) / 8.0 + 1.0 / 64.0;
}
inline double seriesAt(std::size_t s, std::size_t record) { return 10.0 * static_cast<double>(s) + 0.5 * record; }
inline double timeAt(std::size_t record) { return 3600.0 * static_cast<double>(record + 1); }

inline app::OutputFileSpec smallSpec(std::string const& path, bool latlon, bool doublePrecision) {
    app::OutputFileSpec spec;
    spec.path = path;
    spec.title = "output test";
    spec.source = "strata tests";
    spec.history = "written by the output tests";
    spec.configYaml = "model:\n  levels: 5\n";
    spec.timeUnits = "seconds since 2000-01-01 00:00:00";
    spec.doublePrecision = doublePrecision;
    spec.horizontal.latlon = latlon;
    if (latlon) {
        spec.horizontal.nlat = nlat;
        spec.horizontal.nlon = nlon;
        spec.horizontal.lat = {-30.0, 0.0, 30.0};
        spec.horizontal.lon = {0.0, 90.0, 180.0, 270.0};
    } else {
        spec.horizontal.ncol = ncolumns;
        for (uint32_t c = 0; c < ncolumns; ++c) {
            spec.horizontal.lat.push_back(-55.0 + 10.0 * c);
            spec.horizontal.lon.push_back(30.0 * c);
        }
    }
    for (uint32_t k = 0; k < nlev; ++k)
        spec.lev.push_back(100.0 * k + 50.0);
    for (uint32_t k = 0; k <= nlev; ++k)
        spec.ilev.push_back(100.0 * k);
    spec.variables = {{"T", "K", "air temperature", "air_temperature", false, false, ""},
                      {"wflux", "W m-2", "upward energy flux at faces", "", true, false, ""}};
    spec.series = {{"total_energy", "J m-2", "column-integrated energy", ""},
                   {"mass_residual", "1", "mass residual", ""}};
    return spec;
}

inline std::size_t levelsOf(app::OutputFileSpec const& spec, std::size_t v) {
    if (spec.variables[v].surface) return 1;
    return spec.variables[v].onFaces ? spec.ilev.size() : spec.lev.size();
}

// This rank's columns of record r, column after column, bottom up. `tweak` may change a value (global column, level,
// record, variable, value&).
using Tweak = std::function<void(std::size_t v, uint64_t column, std::size_t level, std::size_t record, double&)>;

inline std::vector<std::vector<double>> localRecord(app::OutputFileSpec const& spec, uint64_t first, uint32_t count,
                                                    std::size_t record, Tweak const& tweak = {}) {
    std::vector<std::vector<double>> data(spec.variables.size());
    for (std::size_t v = 0; v < data.size(); ++v)
        for (uint64_t c = first; c < first + count; ++c)
            for (std::size_t k = 0; k < levelsOf(spec, v); ++k) {
                double x = valueAt(v, c, k, record);
                if (tweak) tweak(v, c, k, record, x);
                data[v].push_back(x);
            }
    return data;
}

inline void writeRecord(app::OutputFile& out, app::OutputFileSpec const& spec, uint64_t first, uint32_t count,
                        std::size_t record, Tweak const& tweak = {}) {
    std::vector<std::vector<double>> const data = localRecord(spec, first, count, record, tweak);
    std::vector<std::span<double const>> spans(data.begin(), data.end());
    std::vector<double> series;
    for (std::size_t s = 0; s < spec.series.size(); ++s)
        series.push_back(seriesAt(s, record));
    out.write(timeAt(record), spans, series);
}

// Writes and closes a whole file: every rank of ctx holds its share of columns.
inline void writeFile(core::Context const& ctx, app::OutputFileSpec const& spec, uint64_t first, uint32_t count,
                      Tweak const& tweak = {}) {
    app::OutputFile out(ctx, spec, first, count);
    for (std::size_t r = 0; r < records; ++r)
        writeRecord(out, spec, first, count, r, tweak);
    out.close();
}

// Contiguous balanced share of `columns` for `rank` of `size`: [first, first + count).
inline std::pair<uint64_t, uint32_t> shareOf(uint64_t columns, int rank, int size) {
    uint64_t const first = columns * static_cast<uint64_t>(rank) / static_cast<uint64_t>(size);
    uint64_t const next = columns * static_cast<uint64_t>(rank + 1) / static_cast<uint64_t>(size);
    return {first, static_cast<uint32_t>(next - first)};
}

// --- Reading back with the NetCDF-C++ API.

inline std::string attribute(netCDF::NcVar const& var, std::string const& name) {
    auto const atts = var.getAtts();
    auto const it = atts.find(name);
    if (it == atts.end()) return "<missing>";
    std::string value;
    it->second.getValues(value);
    return value;
}

inline std::string globalAttribute(netCDF::NcFile const& file, std::string const& name) {
    auto const atts = file.getAtts();
    auto const it = atts.find(name);
    if (it == atts.end()) return "<missing>";
    std::string value;
    it->second.getValues(value);
    return value;
}

inline std::vector<std::string> dimensionNames(netCDF::NcVar const& var) {
    std::vector<std::string> names;
    for (netCDF::NcDim const& d : var.getDims())
        names.push_back(d.getName());
    return names;
}

inline std::vector<double> readAll(netCDF::NcVar const& var) {
    std::size_t n = 1;
    for (netCDF::NcDim const& d : var.getDims())
        n *= d.getSize();
    std::vector<double> values(n);
    if (n > 0) var.getVar(values.data());
    return values;
}

// The first mismatch between a file's data and the formula in CF order, or "" when all values match: data (time,
// lev|ilev, lat, lon) or (time, lev|ilev, ncol) with lon fastest, time and the series per record.
inline std::string checkValues(netCDF::NcFile const& file, app::OutputFileSpec const& spec) {
    std::size_t const columns = spec.horizontal.columns();
    for (std::size_t v = 0; v < spec.variables.size(); ++v) {
        std::vector<double> const values = readAll(file.getVar(spec.variables[v].name));
        std::size_t const levels = levelsOf(spec, v);
        if (values.size() != records * levels * columns) return spec.variables[v].name + ": wrong size";
        for (std::size_t r = 0; r < records; ++r)
            for (std::size_t k = 0; k < levels; ++k)
                for (std::size_t c = 0; c < columns; ++c) {
                    double expected = valueAt(v, c, k, r);
                    if (!spec.doublePrecision) expected = static_cast<float>(expected);
                    double const got = values[(r * levels + k) * columns + c];
                    if (got != expected)
                        return spec.variables[v].name + " record " + std::to_string(r) + " level " + std::to_string(k) +
                               " column " + std::to_string(c) + ": " + std::to_string(got) +
                               " != " + std::to_string(expected);
                }
    }
    std::vector<double> const time = readAll(file.getVar("time"));
    for (std::size_t r = 0; r < records; ++r)
        if (time.size() != records || time[r] != timeAt(r)) return "time record " + std::to_string(r);
    for (std::size_t s = 0; s < spec.series.size(); ++s) {
        std::vector<double> const series = readAll(file.getVar(spec.series[s].name));
        for (std::size_t r = 0; r < records; ++r)
            if (series.size() != records || series[r] != seriesAt(s, r))
                return spec.series[s].name + " record " + std::to_string(r);
    }
    return {};
}

} // namespace strata::test
