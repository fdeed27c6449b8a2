// The time loop on Serial, compiled here once (app/model/run_impl.hpp declares it extern), and what else needs a
// Model<core::Serial>: the memory estimate and the pre-run checks that `strata run` and `strata validate` make. Each
// CPU backend's loop has a file of its own so that a build compiles them in parallel.
#include <strata/app/model/instantiate.hpp>
#include <strata/app/model/run_impl.hpp>

#include <strata/core/memory.hpp>

#include <algorithm>
#include <fstream>
#include <sys/resource.h>
#include <unistd.h>

namespace strata::app {

STRATA_INSTANTIATE_MODEL(core::Serial)

MemoryEstimate estimateMemory(Config const& config, core::Context const& comm) {
    MemoryEstimate m;
    // Probe models on 2 and 4 columns (a column list: never a column on the equator, which an Ekman start avoids).
    auto probe = [&](uint32_t columns) {
        Config c = config;
        c.horizontal.type = HorizontalGridType::Columns;
        c.horizontal.ncol = columns;
        c.horizontal.lat.clear(); // spread evenly: the probe's columns, not the configured ones
        c.horizontal.lon.clear();
        HorizontalCoords const h = makeHorizontal(c.horizontal);
        Decomposition const d = Decomposition::balanced(columns, 0, 1);
        std::size_t const before = core::detail::liveBufferBytes();
        Model<core::Serial> model(c, core::Serial{}, comm, h, d);
        return static_cast<uint64_t>(core::detail::liveBufferBytes() - before);
    };
    uint64_t const two = probe(2), four = probe(4);
    m.modelPerColumn = (four - two) / 2;
    m.modelFixed = two - 2 * m.modelPerColumn;
    uint64_t const columns = makeHorizontal(config.horizontal).columns();
    auto const ranks = static_cast<uint64_t>(comm.size());
    m.localColumns = (columns + ranks - 1) / ranks;
    uint64_t const levels = config.vertical.cells() + 1ull; // faces: the larger staggering
    uint64_t const variables = config.output.variables.size();
    uint64_t const staging = variables * m.localColumns * levels * sizeof(double); // one record of this rank's columns
    m.perRank = m.modelFixed + m.localColumns * m.modelPerColumn + staging;
    // Rank 0 receives one rank's share of a variable at a time, transposes it and (single precision) converts it.
    m.rank0 = m.perRank + m.localColumns * levels * (2 * sizeof(double) + sizeof(float));
    // netCDF-4: HDF5's chunk cache, at most 4 chunks of at most 1 MiB per data variable (output.cpp, chunkShape).
    // A chunk holds at most one record of a variable.
    if (config.output.format == OutputFormat::Netcdf4)
        m.rank0 += variables * 4 * std::min<uint64_t>(uint64_t{1} << 20, columns * levels * sizeof(double));

    uint64_t available = 0;
    if (std::ifstream meminfo("/proc/meminfo"); meminfo) {
        std::string key;
        uint64_t kib = 0;
        std::string unit;
        while (meminfo >> key >> kib >> unit)
            if (key == "MemAvailable:") {
                available = kib * 1024 / static_cast<uint64_t>(std::max(1, comm.localSize()));
                m.availableFrom = "MemAvailable / " + std::to_string(comm.localSize()) + " rank(s) on this node";
                break;
            }
    }
    if (rlimit limit{}; ::getrlimit(RLIMIT_AS, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) {
        // What the address space still allows: the limit less what this process has mapped already.
        uint64_t mapped = 0;
        if (std::ifstream statm("/proc/self/statm"); statm) statm >> mapped;
        mapped *= static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
        uint64_t const room = limit.rlim_cur > mapped ? limit.rlim_cur - mapped : 0;
        if (available == 0 || room < available) {
            available = room;
            m.availableFrom = "the address-space limit (ulimit -v) less what is mapped";
        }
    }
    m.available = available;
    return m;
}

void checkRunnable(Config const& cfg, core::Context const& comm) {
    checkMemory(estimateMemory(cfg, comm), comm);
    checkRunPaths(cfg, RunOptions{}, comm);
    HorizontalCoords const horizontal = makeHorizontal(cfg.horizontal);
    Decomposition const decomp = Decomposition::balanced(horizontal.columns(), comm.rank(), comm.size());
    Model<core::Serial> model(cfg, core::Serial{}, comm, horizontal, decomp);
    model.checkStability();
    detail::checkInitialState(model, horizontal);
}

} // namespace strata::app
