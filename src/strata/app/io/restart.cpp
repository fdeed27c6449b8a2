// Restart files: see restart.hpp for the contract.
#include <strata/app/io/restart.hpp>

#include <strata/app/io/detail/netcdf_support.hpp>
#include <strata/app/io/seal.hpp>

#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <fcntl.h>
#include <filesystem>
#include <map>
#include <random>
#include <unistd.h>

namespace strata::app {
namespace {

namespace fs = std::filesystem;
using netCDF::NcDim;
using netCDF::NcFile;
using netCDF::NcVar;

constexpr int formatVersion = 1;

// Every rank passes its problem (empty: none); if any rank has one, every rank throws the first failing rank's.
template <class E = Error>
void agree(MPI_Comm comm, std::string problem, std::string const& where) {
    auto first = core::firstProblem(comm, std::move(problem));
    if (!first.problem.empty()) throw E(first.problem, where);
}

std::string describe(std::string const& doing) {
    try {
        throw;
    } catch (netCDF::exceptions::NcException const& e) {
        return doing + ": " + detail::netcdfMessage(e);
    } catch (std::exception const& e) {
        return doing + ": " + e.what();
    }
}

void fsyncPath(std::string const& path, bool directory) {
    int const fd = ::open(path.c_str(), directory ? O_RDONLY | O_DIRECTORY : O_RDONLY);
    if (fd < 0) throw Error("cannot open " + path + " to sync it");
    int const rc = ::fsync(fd);
    ::close(fd);
    if (rc != 0) throw Error("cannot sync " + path + " to disk");
}

std::string dimName(uint32_t perColumn) { return std::string("n").append(std::to_string(perColumn)); }

double numberAttribute(NcFile const& f, std::string const& name) {
    auto const att = f.getAtt(name);
    if (att.isNull() || att.getAttLength() != 1) throw RestartError("no attribute " + name);
    double value = 0;
    att.getValues(&value);
    return value;
}

// Before any library parses the file: libnetcdf reads a cut file's missing bytes as zeros, believes edited attributes
// and crashes on some flipped bits.
void checkSealed(std::string const& path) {
    if (auto const problem = sealProblem(path))
        throw RestartError(*problem, path, "a complete restart file written by strata run");
}

// Where the history is and which one it is (RestartMeta); the checksum as text: a double holds 53 of its 64 bits.
void putHistoryIdentity(NcFile& f, RestartMeta const& meta) {
    f.putAtt("history_final_path", meta.historyFinalPath);
    f.putAtt("history_run_id", meta.historyRunId);
    char checksum[24];
    std::snprintf(checksum, sizeof checksum, "%016llx", static_cast<unsigned long long>(meta.historyChecksum));
    f.putAtt("history_checksum", std::string(checksum));
}

// Rank 0: the whole file but the columns, under a temporary name next to `path` (returned).
std::string createRestart(std::string const& path, RestartMeta const& meta, std::vector<RestartEntry> const& entries,
                          uint64_t globalColumns) {
    fs::path const target(path);
    if (target.has_parent_path()) fs::create_directories(target.parent_path());
    std::random_device entropy;
    char nonce[16];
    std::snprintf(nonce, sizeof nonce, "%08x", static_cast<unsigned>(entropy()));
    std::string const temporary =
        path + "." + std::to_string(static_cast<long long>(::getpid())) + "-" + nonce + ".partial";
    NcFile f(temporary, NcFile::newFile, NcFile::classic64);
    f.putAtt("strata_restart_format", netCDF::ncInt, formatVersion);
    f.putAtt("strata_version", meta.version);
    f.putAtt("strata_git", meta.gitHash);
    f.putAtt("strata_config", meta.configYaml);
    f.putAtt("initial_sounding_digest", meta.soundingDigest.empty() ? "none" : meta.soundingDigest);
    f.putAtt("history_path", meta.historyPath);
    f.putAtt("step", netCDF::ncDouble, static_cast<double>(meta.step));
    f.putAtt("time", netCDF::ncDouble, meta.time);
    f.putAtt("last_output_time", netCDF::ncDouble, meta.lastOutput);
    f.putAtt("history_records", netCDF::ncDouble, static_cast<double>(meta.historyRecords));
    putHistoryIdentity(f, meta);
    NcDim const columns = f.addDim("column", globalColumns);
    std::map<uint32_t, NcDim> perColumn;
    std::vector<std::pair<NcVar, std::vector<double>>> scalars;
    for (auto const& e : entries) {
        if (e.perColumn == 0) {
            scalars.emplace_back(f.addVar(e.name, netCDF::ncDouble), e.get());
        } else if (e.perColumn == 1) {
            f.addVar(e.name, netCDF::ncDouble, columns);
        } else {
            if (!perColumn.contains(e.perColumn)) perColumn[e.perColumn] = f.addDim(dimName(e.perColumn), e.perColumn);
            f.addVar(e.name, netCDF::ncDouble, {columns, perColumn[e.perColumn]});
        }
    }
    for (auto const& [var, value] : scalars)
        var.putVar(value.data());
    return temporary;
}

// This rank's columns of every per-column array.
void writeColumns(std::string const& temporary, std::vector<RestartEntry> const& entries, uint64_t firstColumn,
                  uint32_t localColumns) {
    NcFile f(temporary, NcFile::write);
    for (auto const& e : entries) {
        if (e.perColumn == 0) continue;
        std::vector<double> const values = e.get();
        if (values.size() != std::size_t{localColumns} * e.perColumn)
            throw Error(std::string("'")
                            .append(e.name)
                            .append("' has ")
                            .append(std::to_string(values.size()))
                            .append(" values on this rank"));
        NcVar const var = f.getVar(e.name);
        if (e.perColumn == 1)
            var.putVar({firstColumn}, {localColumns}, values.data());
        else
            var.putVar({firstColumn, 0}, {localColumns, e.perColumn}, values.data());
    }
}

// In place only when complete (every rank has written and closed it) and on disk.
void finishRestart(std::string const& temporary, std::string const& path) {
    sealFile(temporary);
    fsyncPath(temporary, false);
    fs::rename(temporary, path);
    fs::path const dir = fs::path(path).has_parent_path() ? fs::path(path).parent_path() : fs::path(".");
    fsyncPath(dir.string(), true);
}

} // namespace

void writeRestart(core::Context const& comm, std::string const& path, RestartMeta const& meta,
                  std::vector<RestartEntry> const& entries, uint64_t firstColumn, uint32_t localColumns,
                  uint64_t globalColumns) {
    MPI_Comm const c = comm.comm();
    std::string temporary, problem;
    if (comm.isRoot()) {
        try {
            temporary = createRestart(path, meta, entries, globalColumns);
        } catch (...) {
            problem = describe("cannot create a restart file next to " + path);
        }
    }
    agree(c, problem, path);
    core::broadcast(c, temporary);
    for (int r = 0; r < comm.size(); ++r) { // the ranks in turn
        if (r == comm.rank() && problem.empty() && localColumns > 0) {
            try {
                writeColumns(temporary, entries, firstColumn, localColumns);
            } catch (...) {
                problem = describe("cannot write rank " + std::to_string(r) + "'s columns to " + temporary);
            }
        }
        comm.barrier();
    }
    agree(c, problem, path);
    if (comm.isRoot()) {
        try {
            finishRestart(temporary, path);
        } catch (...) {
            problem = describe("cannot finish the restart " + temporary);
        }
    }
    agree(c, problem, path);
}

namespace {

// checkSeal false: the caller has checked it (on rank 0, for every rank).
RestartMeta readMeta(std::string const& path, bool checkSeal) {
    std::error_code ec;
    fs::file_status const st = fs::status(path, ec);
    if (st.type() == fs::file_type::not_found)
        throw RestartError("no such file", path, "a restart file written by strata run");
    if (st.type() != fs::file_type::regular)
        throw RestartError(st.type() == fs::file_type::directory ? "is a directory"
                           : st.type() == fs::file_type::fifo    ? "is a FIFO"
                           : st.type() == fs::file_type::none    ? "cannot be examined: " + ec.message()
                                                                 : "is not a regular file (a device or socket)",
                           path, "a restart file written by strata run");
    if (checkSeal) checkSealed(path);
    try {
        NcFile f(path, NcFile::read);
        auto const format = f.getAtt("strata_restart_format");
        if (format.isNull())
            throw RestartError("not a Strata restart file (no strata_restart_format attribute)", path,
                               "a restart file written by strata run");
        int version = 0;
        format.getValues(&version);
        if (version != formatVersion)
            throw RestartError("restart format " + std::to_string(version), path,
                               "format " + std::to_string(formatVersion) + " (this Strata version)");
        RestartMeta m;
        m.version = detail::globalText(f, "strata_version");
        m.gitHash = detail::globalText(f, "strata_git");
        m.configYaml = detail::globalText(f, "strata_config");
        m.soundingDigest = detail::globalText(f, "initial_sounding_digest");
        if (m.soundingDigest == "none") m.soundingDigest.clear();
        m.historyPath = detail::globalText(f, "history_path");
        m.step = static_cast<uint64_t>(numberAttribute(f, "step"));
        m.time = numberAttribute(f, "time");
        m.lastOutput = numberAttribute(f, "last_output_time");
        m.historyRecords = static_cast<uint64_t>(numberAttribute(f, "history_records"));
        m.historyFinalPath = detail::globalText(f, "history_final_path");
        m.historyRunId = detail::globalText(f, "history_run_id");
        m.historyChecksum = std::strtoull(detail::globalText(f, "history_checksum").c_str(), nullptr, 16);
        return m;
    } catch (RestartError const&) {
        throw;
    } catch (netCDF::exceptions::NcException const& e) {
        throw RestartError("cannot be read: " + detail::netcdfMessage(e), path,
                           "a complete restart file written by strata run");
    }
}

} // namespace

RestartMeta readRestartMeta(std::string const& path) { return readMeta(path, true); }

RestartMeta readRestartMeta(core::Context const& comm, std::string const& path) {
    std::string problem;
    if (comm.isRoot()) {
        try {
            readMeta(path, true);
        } catch (RestartError const& e) {
            problem = e.what();
        }
    }
    agree<RestartError>(comm.comm(), problem, "");
    return readMeta(path, false);
}

void readRestart(core::Context const& comm, std::string const& path, std::vector<RestartEntry> const& entries,
                 uint64_t firstColumn, uint32_t localColumns, uint64_t globalColumns) {
    std::string problem;
    if (comm.isRoot()) {
        try {
            checkSealed(path);
        } catch (RestartError const& e) {
            problem = e.what();
        }
    }
    agree<RestartError>(comm.comm(), problem, "--restart"); // no rank parses a file that is not whole
    try {
        NcFile f(path, NcFile::read);
        NcDim const columns = f.getDim("column");
        if (columns.isNull() || columns.getSize() != globalColumns)
            throw RestartError("holds " + std::to_string(columns.isNull() ? 0 : columns.getSize()) + " columns", path,
                               "the " + std::to_string(globalColumns) + " columns of this grid");
        for (auto const& e : entries) {
            NcVar const var = f.getVar(e.name);
            if (var.isNull())
                throw RestartError("no variable '" + e.name + "'", path, "a restart of the same processes");
            std::vector<double> values(e.perColumn == 0 ? 1 : std::size_t{localColumns} * e.perColumn);
            if (e.perColumn == 0) {
                var.getVar(values.data());
            } else if (e.perColumn == 1) {
                if (var.getDimCount() != 1)
                    throw RestartError("'" + e.name + "' has another shape", path, "one value per column");
                if (localColumns > 0) var.getVar({firstColumn}, {localColumns}, values.data());
            } else {
                if (var.getDimCount() != 2 || var.getDim(1).getSize() != e.perColumn)
                    throw RestartError("'" + e.name + "' has another number of levels", path,
                                       std::to_string(e.perColumn) + " per column");
                if (localColumns > 0) var.getVar({firstColumn, 0}, {localColumns, e.perColumn}, values.data());
            }
            e.set(values);
        }
    } catch (RestartError const& e) {
        problem = e.what();
    } catch (netCDF::exceptions::NcException const& e) {
        problem = path + ": cannot be read: " + detail::netcdfMessage(e) +
                  " (expected a complete restart file written by strata run)";
    }
    agree<RestartError>(comm.comm(), problem, "--restart"); // every rank refuses, or none
}

} // namespace strata::app
