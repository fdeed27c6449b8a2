// compareFiles: `strata compare A.nc B.nc`, a cprnc for Strata's output; see output.hpp for the criterion.
#include <strata/app/io/output.hpp>

#include <strata/app/io/detail/classic_size.hpp>
#include <strata/app/io/detail/netcdf_support.hpp>
#include <strata/app/io/isolated.hpp>
#include <strata/core/error.hpp>

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <map>
#include <optional>
#include <ostream>
#include <set>
#include <sstream>

namespace strata::app {

namespace {

using netCDF::NcFile;
using netCDF::NcType;
using netCDF::NcVar;

struct Dimension {
    std::string name;
    std::size_t size = 0;
    bool operator==(Dimension const&) const = default;
};

struct OpenFile {
    std::string path;
    NcFile file;
    std::vector<NcVar> variables; // in definition order
    std::map<std::string, NcVar> byName;
    std::map<std::string, std::vector<double>> coordinateCache;

    std::optional<NcVar> find(std::string const& name) const {
        auto const it = byName.find(name);
        return it == byName.end() ? std::nullopt : std::optional<NcVar>(it->second);
    }
};

std::vector<Dimension> dimensionsOf(NcVar const& var) {
    std::vector<Dimension> dims;
    for (netCDF::NcDim const& d : var.getDims())
        dims.push_back({d.getName(), d.getSize()});
    return dims;
}

std::optional<std::string> textAttribute(NcVar const& var, std::string const& name) {
    auto const atts = var.getAtts();
    auto const it = atts.find(name);
    if (it == atts.end()) return std::nullopt;
    std::string value;
    it->second.getValues(value);
    return value;
}

std::optional<std::string> globalTextAttribute(NcFile const& file, std::string const& name) {
    auto const atts = file.getAtts();
    auto const it = atts.find(name);
    if (it == atts.end()) return std::nullopt;
    std::string value;
    it->second.getValues(value);
    return value;
}

std::vector<std::string> words(std::string const& text) {
    std::istringstream in(text);
    std::vector<std::string> out;
    for (std::string w; in >> w;)
        out.push_back(w);
    return out;
}

bool isNumeric(NcType const& type) {
    switch (type.getTypeClass()) {
    case NcType::nc_BYTE:
    case NcType::nc_UBYTE:
    case NcType::nc_SHORT:
    case NcType::nc_USHORT:
    case NcType::nc_INT:
    case NcType::nc_UINT:
    case NcType::nc_INT64:
    case NcType::nc_UINT64:
    case NcType::nc_FLOAT:
    case NcType::nc_DOUBLE: return true;
    default: return false;
    }
}

// One slab (fixed first index) of a variable as doubles, plus the bits of each value in the variable's own type
// (float bits for float variables: float -> double conversion would hide nothing, but keep NaN payloads honest).
struct Slab {
    std::vector<double> values;
    std::vector<uint64_t> bits;
};

void readSlab(NcVar const& var, std::vector<std::size_t> const& start, std::vector<std::size_t> const& count,
              std::size_t n, Slab& slab) {
    slab.values.resize(n);
    slab.bits.resize(n);
    if (var.getType().getTypeClass() == NcType::nc_FLOAT) {
        std::vector<float> raw(n);
        start.empty() ? var.getVar(raw.data()) : var.getVar(start, count, raw.data());
        for (std::size_t i = 0; i < n; ++i) {
            slab.values[i] = raw[i];
            slab.bits[i] = std::bit_cast<uint32_t>(raw[i]);
        }
        return;
    }
    start.empty() ? var.getVar(slab.values.data()) : var.getVar(start, count, slab.values.data());
    for (std::size_t i = 0; i < n; ++i)
        slab.bits[i] = std::bit_cast<uint64_t>(slab.values[i]);
}

struct Extreme {
    double value = 0.0;
    std::optional<std::size_t> at; // flat index
    void offer(double x, std::size_t i) {
        if (x > value) value = x, at = i;
    }
};

struct Result {
    std::string name, status, note;
    bool coordinate = false, failed = false, valuesCompared = false;
    Extreme abs, rel;
    std::string whereAbs = "-", whereRel = "-";
    uint64_t nDiffering = 0, nFailing = 0;
};

std::string number(double x) {
    if (x == 0.0) return "0";
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.3e", x);
    return buffer;
}

std::string shortNumber(double x) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%g", x);
    return buffer;
}

std::string describe(std::vector<Dimension> const& dims) {
    std::string out = "(";
    for (std::size_t i = 0; i < dims.size(); ++i)
        out += (i ? ", " : "") + dims[i].name + "=" + std::to_string(dims[i].size);
    return out + ")";
}

// Pairs of record indices (in A, in B) whose times are equal: what --common-times compares.
using RecordPairs = std::vector<std::pair<std::size_t, std::size_t>>;

class Comparator {
public:
    Comparator(OpenFile& a, OpenFile& b, CompareOptions const& options, std::string recordDim,
               std::optional<RecordPairs> records)
        : m_a(a), m_b(b), m_options(options), m_recordDim(std::move(recordDim)), m_records(std::move(records)) {}

    Result compare(std::string const& name) {
        Result r;
        r.name = name;
        std::optional<NcVar> const va = m_a.find(name), vb = m_b.find(name);
        r.coordinate = isCoordinate(va ? m_a : m_b, name);
        if (!va || !vb) return fail(r, va ? "ONLY IN A" : "ONLY IN B");
        auto const it = m_options.perVariable.find(name);
        Tolerance const own = it == m_options.perVariable.end() ? Tolerance{} : it->second;
        m_rtol = own.rtol.value_or(m_options.rtol);
        m_atol = own.atol.value_or(m_options.atol);
        std::vector<Dimension> const dims = dimensionsOf(*va), dimsB = dimensionsOf(*vb);
        if (!sameShape(dims, dimsB)) {
            r.note = "A " + describe(dims) + " vs B " + describe(dimsB);
            if (!m_options.commonTimes && !dims.empty() && !dimsB.empty() && dims[0].name == m_recordDim &&
                dimsB[0].name == m_recordDim)
                r.note += " (--common-times compares the records of the times both hold)";
            return fail(r, "DIMS DIFFER");
        }
        NcType const ta = va->getType(), tb = vb->getType();
        if (!isNumeric(ta) || !isNumeric(tb)) {
            r.status = "not compared";
            r.note = "type " + ta.getName() + " vs " + tb.getName() + ": only numeric types are compared";
            return r;
        }
        if (ta != tb) {
            r.note = "type " + ta.getName() + " vs " + tb.getName();
            if (m_options.bfb) return fail(r, "TYPES DIFFER");
        }
        compareValues(*va, *vb, dims, r);
        r.valuesCompared = true;
        if (r.abs.at) r.whereAbs = where(name, dims, *r.abs.at);
        if (r.rel.at) r.whereRel = where(name, dims, *r.rel.at);
        r.failed = r.nFailing > 0;
        r.status = r.failed ? "DIFFERENT" : r.nDiffering > 0 ? "within tolerance" : "identical";
        return r;
    }

private:
    bool byRecordPairs(std::vector<Dimension> const& dims) const {
        return m_records && !dims.empty() && dims[0].name == m_recordDim;
    }

    // The same dimensions, but for the record count when the records are compared at common times.
    bool sameShape(std::vector<Dimension> const& a, std::vector<Dimension> const& b) const {
        if (!byRecordPairs(a) || a.size() != b.size() || b[0].name != m_recordDim) return a == b;
        return std::equal(a.begin() + 1, a.end(), b.begin() + 1);
    }

    static Result fail(Result& r, std::string status) {
        r.status = std::move(status);
        r.failed = true;
        return r;
    }

    // A coordinate variable (1-D, named as its dimension) or an auxiliary coordinate (named by a `coordinates`).
    static bool isCoordinate(OpenFile const& f, std::string const& name) {
        NcVar const var = *f.find(name);
        if (var.getDimCount() == 1 && var.getDims()[0].getName() == name) return true;
        for (NcVar const& other : f.variables)
            if (auto const coords = textAttribute(other, "coordinates"))
                for (std::string const& w : words(*coords))
                    if (w == name) return true;
        return false;
    }

    void compareValues(NcVar const& va, NcVar const& vb, std::vector<Dimension> const& dims, Result& r) {
        // Slabs along the first dimension (records for record variables): memory for one record, not the file.
        std::size_t slabs = 1, slabSize = 1;
        for (std::size_t d = 0; d < dims.size(); ++d)
            (d == 0 ? slabs : slabSize) *= dims[d].size;
        if (dims.empty()) slabSize = 1;
        bool const sameType = va.getType() == vb.getType();
        RecordPairs pairs;
        if (byRecordPairs(dims))
            pairs = *m_records;
        else
            for (std::size_t s = 0; s < slabs; ++s)
                pairs.emplace_back(s, s);
        std::vector<std::size_t> startA(dims.size(), 0), startB(dims.size(), 0), count;
        for (std::size_t d = 0; d < dims.size(); ++d)
            count.push_back(d == 0 ? 1 : dims[d].size);
        Slab a, b;
        for (auto const& [sa, sb] : pairs) {
            if (!dims.empty()) startA[0] = sa, startB[0] = sb;
            readSlab(va, startA, count, slabSize, a);
            readSlab(vb, startB, count, slabSize, b);
            for (std::size_t i = 0; i < slabSize; ++i) {
                double const x = a.values[i], y = b.values[i];
                bool const sameBits =
                    sameType ? a.bits[i] == b.bits[i] : std::bit_cast<uint64_t>(x) == std::bit_cast<uint64_t>(y);
                compareValue(x, y, sameBits, sa * slabSize + i, r); // located in A
            }
        }
    }

    void compareValue(double x, double y, bool sameBits, std::size_t at, Result& r) const {
        constexpr double inf = std::numeric_limits<double>::infinity();
        if (!sameBits) ++r.nDiffering;
        double diff = 0.0, rel = 0.0;
        bool const bothNaN = std::isnan(x) && std::isnan(y);
        if (!(x == y || bothNaN)) {
            diff = std::isnan(x) || std::isnan(y) ? inf : std::fabs(x - y);
            rel = std::isinf(diff) ? inf : diff / std::max(std::fabs(x), std::fabs(y));
        }
        bool const fails =
            m_options.bfb ? !sameBits : diff != 0.0 && (std::isinf(diff) || diff > m_atol + m_rtol * std::fabs(y));
        if (fails) ++r.nFailing;
        r.abs.offer(diff, at);
        r.rel.offer(rel, at);
    }

    std::vector<double> const& coordinateValues(std::string const& name) {
        auto const it = m_a.coordinateCache.find(name);
        if (it != m_a.coordinateCache.end()) return it->second;
        std::vector<double>& values = m_a.coordinateCache[name];
        std::optional<NcVar> const var = m_a.find(name);
        if (var && var->getDimCount() == 1 && isNumeric(var->getType())) {
            values.resize(var->getDims()[0].getSize());
            if (!values.empty()) var->getVar(values.data());
        }
        return values;
    }

    // "time[2]=7200 lev[3]=450 lat[1]=-30 lon[2]=180", or for columns "... ncol[5] (lat=10 lon=20)": indices, and
    // the coordinate values of file A where it has them.
    std::string where(std::string const& name, std::vector<Dimension> const& dims, std::size_t flat) {
        std::vector<std::size_t> index(dims.size());
        for (std::size_t d = dims.size(); d-- > 0;) {
            index[d] = flat % dims[d].size;
            flat /= dims[d].size;
        }
        std::string out;
        for (std::size_t d = 0; d < dims.size(); ++d) {
            out += (d ? " " : "") + dims[d].name + "[" + std::to_string(index[d]) + "]";
            std::vector<double> const& coords = coordinateValues(dims[d].name);
            if (index[d] < coords.size()) out += "=" + shortNumber(coords[index[d]]);
        }
        std::optional<NcVar> const var = m_a.find(name);
        std::optional<std::string> const aux = var ? textAttribute(*var, "coordinates") : std::nullopt;
        std::string auxText;
        for (std::string const& c : aux ? words(*aux) : std::vector<std::string>{}) {
            std::optional<NcVar> const cv = m_a.find(c);
            if (!cv || cv->getDimCount() != 1) continue;
            std::string const dim = cv->getDims()[0].getName();
            for (std::size_t d = 0; d < dims.size(); ++d)
                if (dims[d].name == dim && index[d] < coordinateValues(c).size())
                    auxText += (auxText.empty() ? "" : " ") + c + "=" + shortNumber(coordinateValues(c)[index[d]]);
        }
        return auxText.empty() ? out : out + " (" + auxText + ")";
    }

    OpenFile& m_a;
    OpenFile& m_b;
    CompareOptions m_options;
    std::string m_recordDim;              // the unlimited dimension of A ("" when it has none)
    std::optional<RecordPairs> m_records; // with --common-times
    double m_rtol = 0.0, m_atol = 0.0;    // the tolerance of the variable being compared
};

// Opens a file and lists its variables in definition order; on failure reports and returns false.
bool open(std::string const& path, OpenFile& f, std::ostream& report) {
    f.path = path;
    // A cut classic file reads its missing bytes as zeros: found from the header's layout, before any value is read.
    std::error_code ec;
    uint64_t const size = std::filesystem::file_size(path, ec);
    if (auto const need = detail::ClassicHeader::expectedSize(path); !ec && need && size < *need) {
        report << "compare: cannot read " << path << ": truncated: " << size << " of the " << *need
               << " bytes its header describes\n";
        return false;
    }
    try {
        f.file.open(path, NcFile::read);
        int count = 0;
        netCDF::ncCheck(nc_inq_nvars(f.file.getId(), &count), __FILE__, __LINE__);
        for (int id = 0; id < count; ++id) {
            NcVar const var(f.file, id);
            f.variables.push_back(var);
            f.byName.emplace(var.getName(), var);
        }
        return true;
    } catch (netCDF::exceptions::NcException const& e) {
        report << "compare: cannot open " << path << ": " << detail::netcdfMessage(e) << "\n";
        return false;
    }
}

std::string summary(char label, OpenFile const& f) {
    std::size_t records = 0;
    bool hasRecords = false;
    for (auto const& [name, dim] : f.file.getDims())
        if (dim.isUnlimited()) records = dim.getSize(), hasRecords = true;
    std::string out = std::string(1, label) + ": " + f.path + " (" + std::to_string(f.variables.size()) + " variables";
    if (hasRecords) out += ", " + std::to_string(records) + " records";
    return out + ")";
}

// One row per variable; where its largest differences are goes on an indented line below it, so that rows stay
// within 100 columns (the widest name Strata writes, surface_upward_sensible_heat_flux, fits).
void printTable(std::vector<Result> const& results, std::ostream& report) {
    std::vector<std::string> const header{"variable", "status", "max abs diff", "max rel diff", "differing", "failing"};
    auto cells = [](Result const& r) {
        return std::vector<std::string>{r.name,
                                        r.status,
                                        number(r.abs.value),
                                        number(r.rel.value),
                                        std::to_string(r.nDiffering),
                                        std::to_string(r.nFailing)};
    };
    std::vector<std::size_t> width(header.size());
    for (std::size_t c = 0; c < header.size(); ++c)
        width[c] = header[c].size();
    for (Result const& r : results) {
        std::vector<std::string> const row = cells(r);
        for (std::size_t c = 0; c < row.size(); ++c)
            width[c] = std::max(width[c], row[c].size());
    }
    auto padded = [&](std::string cell, std::size_t c) {
        cell.resize(width[c] + 2, ' ');
        return cell;
    };
    auto print = [&](std::vector<std::string> const& row) {
        for (std::size_t c = 0; c + 1 < row.size(); ++c)
            report << padded(row[c], c);
        report << row.back() << "\n";
    };
    print(header);
    for (bool coordinates : {true, false}) {
        report << (coordinates ? "-- coordinates\n" : "-- variables\n");
        for (Result const& r : results) {
            if (r.coordinate != coordinates) continue;
            if (!r.valuesCompared) {
                report << padded(r.name, 0) << r.status << "\n";
                if (!r.note.empty()) report << "    " << r.note << "\n";
                continue;
            }
            print(cells(r));
            if (r.whereAbs == r.whereRel && r.whereAbs != "-")
                report << "    largest differences at " << r.whereAbs << "\n";
            else if (r.whereAbs != "-")
                report << "    largest abs diff at " << r.whereAbs << "\n    largest rel diff at " << r.whereRel
                       << "\n";
            if (!r.note.empty()) report << "    note: " << r.note << "\n";
        }
    }
}

double toleranceValue(std::string const& text, std::string const& where) {
    std::size_t used = 0;
    double value = 0.0;
    try {
        value = std::stod(text, &used);
    } catch (std::exception const&) {
        used = 0;
    }
    if (used == 0 || used != text.size() || !std::isfinite(value) || value < 0)
        throw Error("'" + text + "' is not a tolerance", where, "a finite number >= 0, e.g. 1e-12");
    return value;
}

void setTolerance(CompareOptions& options, std::string const& which, std::string const& variable, double value) {
    if (variable.empty()) {
        (which == "rtol" ? options.rtol : options.atol) = value;
        return;
    }
    Tolerance& t = options.perVariable[variable];
    (which == "rtol" ? t.rtol : t.atol) = value;
}

// Per-variable tolerances must name variables of the files: a misspelt name would otherwise leave its variable at
// the default tolerance without a word.
std::optional<std::string> unknownVariable(CompareOptions const& options, OpenFile const& a, OpenFile const& b) {
    for (auto const& [name, tolerance] : options.perVariable)
        if (!a.find(name) && !b.find(name)) return name;
    return std::nullopt;
}

// The records of the times both files hold, matched by value (each file's times increase).
std::optional<RecordPairs> commonRecords(OpenFile const& a, OpenFile const& b) {
    // The times of the records: `time` along the record dimension, or none (then nothing is paired).
    auto times = [](OpenFile const& f) {
        std::vector<double> t;
        if (auto const v = f.find("time"); v && v->getDimCount() == 1 && v->getDims()[0].isUnlimited()) {
            t.resize(v->getDims()[0].getSize());
            if (!t.empty()) v->getVar(t.data());
        }
        return t;
    };
    std::vector<double> const ta = times(a), tb = times(b);
    RecordPairs pairs;
    for (std::size_t i = 0, j = 0; i < ta.size() && j < tb.size();) {
        if (ta[i] == tb[j])
            pairs.emplace_back(i++, j++);
        else
            ta[i] < tb[j] ? ++i : ++j;
    }
    return pairs;
}

std::string recordDimension(OpenFile const& f) {
    for (auto const& [name, dim] : f.file.getDims())
        if (dim.isUnlimited()) return name;
    return {};
}

int compareHere(std::string const& a, std::string const& b, CompareOptions const& options, std::ostream& report) {
    OpenFile fa, fb;
    if (!open(a, fa, report) || !open(b, fb, report)) return 2;
    try {
        report << summary('A', fa) << "\n" << summary('B', fb) << "\n";
        if (auto const name = unknownVariable(options, fa, fb)) {
            report << "compare: a tolerance names the variable '" << *name << "', which neither file has\n";
            return 2;
        }
        if (options.bfb) {
            report << "criterion: bit for bit (a NaN equals a NaN with the same bits)\n";
        } else {
            report << "criterion: |a - b| <= atol + rtol * |b| (b from B; NaN equals NaN)\n"
                   << "  every variable: rtol = " << shortNumber(options.rtol)
                   << ", atol = " << shortNumber(options.atol) << "\n";
            for (auto const& [name, t] : options.perVariable)
                report << "  " << name << ": rtol = " << shortNumber(t.rtol.value_or(options.rtol))
                       << ", atol = " << shortNumber(t.atol.value_or(options.atol)) << "\n";
        }
        std::string const recordDim = recordDimension(fa);
        std::optional<RecordPairs> records;
        if (options.commonTimes) {
            records = commonRecords(fa, fb);
            report << "records: " << records->size() << " common times (--common-times)\n";
            if (records->empty()) {
                report << "compare: the files hold no common time\n";
                return 1;
            }
        }
        if (globalTextAttribute(fa.file, "strata_config") != globalTextAttribute(fb.file, "strata_config"))
            report << "note: the global attribute strata_config differs (not compared)\n";

        std::vector<std::string> names;
        std::set<std::string> seen;
        for (OpenFile const* f : {&fa, &fb})
            for (NcVar const& v : f->variables)
                if (seen.insert(v.getName()).second) names.push_back(v.getName());

        Comparator comparator(fa, fb, options, recordDim, records);
        std::vector<Result> results;
        for (std::string const& name : names)
            results.push_back(comparator.compare(name));
        report << "\n";
        printTable(results, report);

        auto const different = std::count_if(results.begin(), results.end(), [](Result const& r) { return r.failed; });
        report << "compare: " << results.size() << " variables, " << different << " different\n";
        return different > 0 ? 1 : 0;
    } catch (netCDF::exceptions::NcException const& e) {
        report << "compare: cannot read " << a << " or " << b << ": " << detail::netcdfMessage(e) << "\n";
        return 2;
    }
}

// Opens the file and inquires every dimension, variable and attribute: the header parse in which libnetcdf crashes
// on some damaged files. A NetCDF error is left for the comparison to report.
int probe(std::string const& path) {
    try {
        NcFile f(path, NcFile::read);
        f.getDims();
        f.getAtts();
        for (auto const& [name, var] : f.getVars())
            var.getAtts();
    } catch (netCDF::exceptions::NcException const&) {
    }
    return 0;
}

std::string signalText(int signal) {
    return signal > 0 ? "signal " + std::to_string(signal) + ", " + strsignal(signal) : "an unknown cause";
}

} // namespace

// Each file is opened alone first, so that a crash names the file; the comparison reads both, so a crash there names
// both.
int compareFiles(std::string const& a, std::string const& b, CompareOptions const& options, std::ostream& report) {
    for (std::string const& path : {a, b})
        if (auto const r = runIsolated(report, [&](std::ostream&) { return probe(path); }); r.signal != 0) {
            report << "compare: cannot read " << path << ": the NetCDF library crashed opening it ("
                   << signalText(r.signal) << "): a damaged file\n";
            return 2;
        }
    auto const r = runIsolated(report, [&](std::ostream& out) { return compareHere(a, b, options, out); });
    if (r.signal == 0) return r.code;
    report << "compare: cannot read " << a << " or " << b << ": the comparison crashed reading them ("
           << signalText(r.signal) << ")\n";
    return 2;
}

void addToleranceArgument(CompareOptions& options, std::string const& which, std::string const& value) {
    std::string const where = "--" + which;
    auto const eq = value.find('=');
    if (eq == std::string::npos) {
        setTolerance(options, which, "", toleranceValue(value, where));
        return;
    }
    std::string const variable = value.substr(0, eq);
    if (variable.empty())
        throw Error("'" + value + "' names no variable", where, "VALUE for every variable, or VARIABLE=VALUE");
    setTolerance(options, which, variable, toleranceValue(value.substr(eq + 1), where + " " + variable));
}

void readToleranceFile(CompareOptions& options, std::string const& path) {
    YAML::Node root;
    try {
        root = YAML::LoadFile(path);
    } catch (YAML::Exception const& e) {
        throw Error("cannot read the tolerance file " + path + ": " + e.what(), "--tolerances",
                    "a YAML file: rtol, atol, variables: {NAME: {rtol, atol}}");
    }
    if (!root.IsMap()) throw Error(path + " is not a YAML map", "--tolerances", "rtol, atol, variables");
    auto number = [&](YAML::Node const& node, std::string const& key) {
        if (!node.IsScalar()) throw Error(path + ": not a number", key, "a finite number >= 0");
        return toleranceValue(node.as<std::string>(), path + ": " + key);
    };
    for (auto const& entry : root) {
        std::string const key = entry.first.as<std::string>();
        if (key == "rtol" || key == "atol") {
            setTolerance(options, key, "", number(entry.second, key));
        } else if (key == "variables") {
            if (!entry.second.IsMap()) throw Error(path + ": not a map", "variables", "NAME: {rtol: R, atol: A}");
            for (auto const& variable : entry.second) {
                std::string const name = variable.first.as<std::string>();
                if (!variable.second.IsMap())
                    throw Error(path + ": not a map", "variables." + name, "{rtol: R, atol: A}");
                for (auto const& t : variable.second) {
                    std::string const which = t.first.as<std::string>();
                    std::string const at = "variables." + name + "." + which;
                    if (which != "rtol" && which != "atol")
                        throw Error(path + ": unknown key '" + which + "'", at, "rtol or atol");
                    setTolerance(options, which, name, number(t.second, at));
                }
            }
        } else {
            throw Error(path + ": unknown key '" + key + "'", key, "rtol, atol or variables");
        }
    }
}

} // namespace strata::app
