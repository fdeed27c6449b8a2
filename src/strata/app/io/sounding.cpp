// Reading a sounding (app/io/sounding.hpp): find the coordinate and the variables by their CF standard_name, check
// their units and values, and put the profile on heights above the model's surface.
#include <strata/app/io/sounding.hpp>

#include <strata/app/config.hpp>
#include <strata/app/detail/config_rules.hpp>
#include <strata/app/io/detail/netcdf_support.hpp>
#include <strata/app/model/state.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>

namespace strata::app {
namespace {

using detail::formatNumber;

constexpr char const* key = "initial_conditions.sounding";

[[noreturn]] void refuse(std::string const& path, std::string const& variable, std::string what, std::string expected) {
    std::string where = key;
    where.append(" (").append(path);
    if (!variable.empty()) where.append(", variable ").append(variable);
    where.append(")");
    throw ConfigError(std::move(what), where, std::move(expected));
}

std::string textAttribute(netCDF::NcVar const& var, std::string const& name) {
    auto const atts = var.getAtts();
    auto const it = atts.find(name);
    if (it == atts.end() || it->second.getType() != netCDF::ncChar) return "";
    std::string value;
    it->second.getValues(value);
    while (!value.empty() && (value.back() == '\0' || value.back() == ' '))
        value.pop_back();
    return value;
}

struct Units {
    std::vector<std::string> spellings; // accepted spellings, the first one in messages
    double factor = 1.0;                // to the SI unit
};

// The spellings of each quantity's units that a sounding may use.
Units const metres{{"m", "meter", "meters", "metre", "metres"}};
Units const pascals{{"Pa"}};
Units const hectopascals{{"hPa"}, 100.0};
Units const kelvin{{"K"}};
Units const massFraction{{"kg kg-1", "kg/kg", "1", "kg kg**-1"}};
Units const speed{{"m s-1", "m/s", "m s**-1"}};
Units const dimensionless{{"1", "kg kg-1", "kg/kg"}};

// The variable's values as a vector of `n` (its other dimensions of length 1), in SI units.
class Reader {
public:
    explicit Reader(std::string path) : m_path(std::move(path)) {}

    void open() {
        std::error_code ec;
        if (!std::filesystem::is_regular_file(m_path, ec))
            refuse(m_path, "", "no such file",
                   "a NetCDF file holding one profile (a relative path is relative to "
                   "the configuration file's folder)");
        try {
            m_file.open(m_path, netCDF::NcFile::read);
        } catch (netCDF::exceptions::NcException const& e) {
            refuse(m_path, "", "cannot be read as NetCDF: " + detail::netcdfMessage(e), "a NetCDF file");
        }
        for (auto const& [name, var] : m_file.getVars())
            if (std::string const standard = textAttribute(var, "standard_name"); !standard.empty())
                m_byStandardName.emplace(standard, var);
    }

    std::optional<netCDF::NcVar> find(std::string const& standardName) const {
        auto const range = m_byStandardName.equal_range(standardName);
        if (range.first == range.second) return std::nullopt;
        if (std::next(range.first) != range.second)
            refuse(m_path, range.first->second.getName(),
                   "is one of several variables with standard_name " + standardName, "one variable of each");
        return range.first->second;
    }

    std::optional<netCDF::NcVar> named(std::string const& name) const {
        netCDF::NcVar const var = m_file.getVar(name);
        if (var.isNull()) return std::nullopt;
        return var;
    }

    // The profile's coordinate: the variable with standard_name height or air_pressure (a CF coordinate variable,
    // named as its dimension, when there are several).
    netCDF::NcVar coordinate(bool& isPressure) const {
        std::vector<netCDF::NcVar> candidates;
        for (char const* name : {"height", "air_pressure"}) {
            auto const range = m_byStandardName.equal_range(name);
            for (auto it = range.first; it != range.second; ++it)
                if (it->second.getDimCount() == 1) candidates.push_back(it->second);
        }
        if (candidates.size() > 1)
            std::erase_if(candidates, [](netCDF::NcVar const& v) { return v.getName() != v.getDim(0).getName(); });
        if (candidates.size() != 1)
            refuse(m_path, "",
                   candidates.empty() ? "has no vertical coordinate"
                                      : "has " + std::to_string(candidates.size()) + " vertical coordinates",
                   "one 1-D variable with standard_name height (m) or air_pressure (Pa)");
        isPressure = textAttribute(candidates[0], "standard_name") == "air_pressure";
        return candidates[0];
    }

    std::vector<double> values(netCDF::NcVar const& var, netCDF::NcDim const& along,
                               std::vector<Units const*> const& units) const {
        std::string const name = var.getName();
        std::size_t size = 1;
        bool onAxis = false;
        for (netCDF::NcDim const& d : var.getDims()) {
            size *= d.getSize();
            onAxis = onAxis || d == along;
        }
        if (!onAxis || size != along.getSize())
            refuse(m_path, name, "does not lie on the dimension " + along.getName() + " of the coordinate",
                   "a profile on " + along.getName() + " (other dimensions of length 1)");
        std::string const u = textAttribute(var, "units");
        Units const* match = nullptr;
        for (Units const* candidate : units)
            for (auto const& spelling : candidate->spellings)
                if (u == spelling && !match) match = candidate;
        if (!match) {
            std::string allowed;
            for (Units const* candidate : units)
                for (auto const& spelling : candidate->spellings)
                    allowed.append(allowed.empty() ? "'" : ", '").append(spelling).append("'");
            refuse(m_path, name, u.empty() ? "has no units attribute" : "has units '" + u + "'", "units " + allowed);
        }
        std::vector<double> out(size);
        var.getVar(out.data());
        std::optional<double> fill;
        for (char const* attribute : {"_FillValue", "missing_value"}) {
            auto const atts = var.getAtts();
            if (auto it = atts.find(attribute); it != atts.end() && it->second.getAttLength() == 1) {
                double value = 0;
                it->second.getValues(&value);
                fill = value;
            }
        }
        for (std::size_t i = 0; i < out.size(); ++i) {
            if (!std::isfinite(out[i]) || (fill && out[i] == *fill))
                refuse(m_path, name, "has a missing or non-finite value at index " + std::to_string(i),
                       "a value at every level");
            out[i] *= match->factor;
        }
        return out;
    }

    std::string const& path() const { return m_path; }

private:
    std::string m_path;
    netCDF::NcFile m_file;
    std::multimap<std::string, netCDF::NcVar> m_byStandardName;
};

// The cumulative trapezoidal integral of f over x (x increasing), shifted to be 0 at x0 (within [x.front(),
// x.back()]; f linear in x between the points).
std::vector<double> integralFrom(std::vector<double> const& x, std::vector<double> const& f, double x0) {
    std::vector<double> I(x.size(), 0.0);
    for (std::size_t i = 1; i < x.size(); ++i)
        I[i] = I[i - 1] + 0.5 * (f[i - 1] + f[i]) * (x[i] - x[i - 1]);
    std::size_t j = 0;
    while (j + 2 < x.size() && x[j + 1] < x0)
        ++j;
    double const w = (x0 - x[j]) / (x[j + 1] - x[j]);
    double const f0 = f[j] + w * (f[j + 1] - f[j]);
    double const I0 = I[j] + 0.5 * (f[j] + f0) * (x0 - x[j]);
    for (double& v : I)
        v -= I0;
    return I;
}

std::string range(double lo, double hi, char const* unit) {
    std::string s = formatNumber(lo);
    s.append(" to ").append(formatNumber(hi)).append(" ").append(unit);
    return s;
}

} // namespace

SoundingValues Sounding::valuesAt(double height) const {
    std::size_t k = 0; // the level below height (the last interval at and above the top level)
    while (k + 2 < z.size() && z[k + 1] <= height)
        ++k;
    double const w = (height - z[k]) / (z[k + 1] - z[k]);
    SoundingValues const& a = values[k];
    SoundingValues const& b = values[k + 1];
    auto lerp = [w](double x, double y) { return x + w * (y - x); };
    return {lerp(a.T, b.T),   lerp(a.q, b.q),   lerp(a.u, b.u),          lerp(a.v, b.v),
            lerp(a.qc, b.qc), lerp(a.qr, b.qr), lerp(a.tracer, b.tracer)};
}

Sounding readSounding(std::string const& path, double surfacePressure) {
    Reader file(path);
    file.open();
    bool pressure = false;
    netCDF::NcVar const coordinate = file.coordinate(pressure);
    netCDF::NcDim const dim = coordinate.getDim(0);
    std::vector<double> const x =
        file.values(coordinate, dim, pressure ? std::vector{&pascals, &hectopascals} : std::vector{&metres});
    std::size_t const n = x.size();
    if (n < 2) refuse(path, coordinate.getName(), "has " + std::to_string(n) + " level(s)", "at least 2 levels");
    bool const increasing = x[1] > x[0];
    for (std::size_t i = 1; i < n; ++i)
        if (!(increasing ? x[i] > x[i - 1] : x[i] < x[i - 1]))
            refuse(path, coordinate.getName(),
                   "is not strictly monotone: " + formatNumber(x[i - 1]) + " at index " + std::to_string(i - 1) +
                       ", then " + formatNumber(x[i]),
                   "strictly increasing or strictly decreasing values");
    if (pressure && std::min(x.front(), x.back()) <= 0)
        refuse(path, coordinate.getName(), "has a pressure <= 0", "pressures > 0 Pa");

    auto required = [&](char const* standardName, std::vector<Units const*> const& units) {
        auto const var = file.find(standardName);
        if (!var)
            refuse(path, standardName, "is missing", std::string("a variable with standard_name ") + standardName);
        return file.values(*var, dim, units);
    };
    auto optional = [&](std::optional<netCDF::NcVar> const& var, std::vector<Units const*> const& units) {
        return var ? file.values(*var, dim, units) : std::vector<double>(n, 0.0);
    };
    auto const temperatureVar = file.find("air_temperature");
    auto const thetaVar = file.find("air_potential_temperature");
    if (!temperatureVar && !thetaVar)
        refuse(path, "air_temperature", "is missing (and so is air_potential_temperature)",
               "a variable with standard_name air_temperature or air_potential_temperature");
    bool const isTheta = !temperatureVar;
    std::vector<double> temperature = file.values(isTheta ? *thetaVar : *temperatureVar, dim, {&kelvin});
    std::vector<double> const q = required("specific_humidity", {&massFraction});
    std::vector<double> const u = required("eastward_wind", {&speed});
    std::vector<double> const v = required("northward_wind", {&speed});
    std::vector<double> const qc = optional(file.find("mass_fraction_of_cloud_liquid_water_in_air"), {&massFraction});
    std::vector<double> const qr = optional(file.find("mass_fraction_of_rain_in_air"), {&massFraction});
    auto const tracerVar = file.named("tracer");
    std::vector<double> const tracer = optional(tracerVar, {&dimensionless});
    std::string const temperatureName = isTheta ? "air_potential_temperature" : "air_temperature";
    for (std::size_t i = 0; i < n; ++i) {
        if (!(temperature[i] > 0))
            refuse(path, temperatureName, "is " + formatNumber(temperature[i]) + " at index " + std::to_string(i),
                   "values > 0 K");
        for (auto const& [values, name] :
             {std::pair{&q, "specific_humidity"}, std::pair{&qc, "mass_fraction_of_cloud_liquid_water_in_air"},
              std::pair{&qr, "mass_fraction_of_rain_in_air"}})
            if ((*values)[i] < 0)
                refuse(path, name, "is " + formatNumber((*values)[i]) + " at index " + std::to_string(i),
                       "values >= 0");
    }

    // Bottom to top: increasing height, or decreasing pressure.
    std::vector<std::size_t> order(n);
    for (std::size_t i = 0; i < n; ++i)
        order[i] = (increasing != pressure) ? i : n - 1 - i;
    auto sorted = [&](std::vector<double> const& a) {
        std::vector<double> out(n);
        for (std::size_t i = 0; i < n; ++i)
            out[i] = a[order[i]];
        return out;
    };
    std::vector<double> const xs = sorted(x), Ts = sorted(temperature), qs = sorted(q);
    double const virtualFactor = 1.0 / constants::epsilon - 1.0;

    Sounding s;
    s.path = path;
    s.coordinate = coordinate.getName();
    s.hasTracer = tracerVar.has_value();
    std::vector<double> T = Ts;
    if (pressure) {
        if (!(surfacePressure <= xs.front() && surfacePressure >= xs.back()))
            refuse(path, s.coordinate,
                   "spans " + range(xs.back(), xs.front(), "Pa") + ", which does not include the surface pressure " +
                       formatNumber(surfacePressure) + " Pa (initial_conditions.surface_pressure)",
                   "a sounding from at least the surface pressure up to the model top (no extrapolation)");
        std::vector<double> minusLogP(n), tvOverG(n);
        for (std::size_t i = 0; i < n; ++i) {
            if (isTheta) T[i] = Ts[i] * std::pow(xs[i] / constants::p0, constants::kappa);
            minusLogP[i] = -std::log(xs[i]);
            tvOverG[i] = constants::rd * T[i] * (1.0 + virtualFactor * qs[i]) / constants::g;
        }
        s.z = integralFrom(minusLogP, tvOverG, -std::log(surfacePressure));
    } else {
        s.z = xs;
        if (isTheta) { // exner from d(exner)/dz = -g / (cp theta_v), exner(0) = (p_s / p00)^kappa
            if (xs.front() > 0 || xs.back() < 0)
                refuse(path, s.coordinate,
                       "spans " + range(xs.front(), xs.back(), "m") + ", which does not include the ground, 0 m",
                       "a sounding from the ground up to the model top (no extrapolation)");
            std::vector<double> rate(n);
            for (std::size_t i = 0; i < n; ++i)
                rate[i] = -constants::g / (constants::cp * Ts[i] * (1.0 + virtualFactor * qs[i]));
            std::vector<double> const exner = integralFrom(xs, rate, 0.0);
            double const exner0 = std::pow(surfacePressure / constants::p0, constants::kappa);
            for (std::size_t i = 0; i < n; ++i)
                T[i] = Ts[i] * (exner0 + exner[i]);
        }
    }
    std::vector<double> const us = sorted(u), vs = sorted(v), qcs = sorted(qc), qrs = sorted(qr),
                              tracers = sorted(tracer);
    for (std::size_t i = 0; i < n; ++i)
        s.values.push_back({T[i], qs[i], us[i], vs[i], qcs[i], qrs[i], tracers[i]});
    return s;
}

void coversColumn(Sounding const& s, double top) {
    if (s.z.front() <= 0 && s.z.back() >= top) return;
    refuse(s.path, s.coordinate, "reaches from " + range(s.z.front(), s.z.back(), "m") + " above the surface",
           "a sounding covering the model column, 0 to " + formatNumber(top) +
               " m (grid.vertical's top; no extrapolation)");
}

std::string fileDigest(std::string const& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return "";
    uint64_t hash = 14695981039346656037ull;
    char buffer[65536];
    while (in.read(buffer, sizeof buffer) || in.gcount() > 0) {
        for (std::streamsize i = 0; i < in.gcount(); ++i) {
            hash ^= static_cast<unsigned char>(buffer[i]);
            hash *= 1099511628211ull;
        }
        if (!in) break;
    }
    char text[17];
    std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(hash));
    return text;
}

} // namespace strata::app
