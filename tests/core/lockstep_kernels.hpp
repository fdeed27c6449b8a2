// Lockstep kernels under test. Kept in a header so the CPU tests and the CUDA device test compile the same code.
#pragma once

#include <strata/core/lockstep.hpp>

#include <cstdint>

namespace strata::test {

namespace ls = strata::lockstep;

// Writes data[g] = g over n elements, walking the blocks grid-stride; counts the writes per element.
struct IotaKernel {
    template <class W>
    STRATA_HD void operator()(W const& worker, uint32_t* data, uint32_t* writes, uint32_t n) const {
        constexpr uint32_t dom = W::blockDomSize();
        for (uint32_t b = worker.blockDomIdx(); b * dom < n; b += worker.gridDomSize()) {
            ls::makeForEach(worker)([&](uint32_t i) {
                uint32_t const g = b * dom + i;
                if (g < n) {
                    data[g] = g;
                    writes[g] += 1;
                }
            });
        }
    }
};

// The same kernel with a hard-coded block domain.
struct DeclaredIotaKernel : IotaKernel {
    static constexpr uint32_t blockDomSize = 42;
};

// Dynamic shared memory sized at launch: each block stages its chunk and writes it back reversed.
struct ReverseChunkKernel {
    template <class W>
    STRATA_HD void operator()(W const& worker, uint32_t* out, uint32_t* writes, uint32_t n) const {
        constexpr uint32_t dom = W::blockDomSize();
        auto staged = ls::dynSharedArray<uint32_t>(worker);
        auto forEach = ls::makeForEach(worker);
        for (uint32_t b = worker.blockDomIdx(); b * dom < n; b += worker.gridDomSize()) {
            forEach([&](uint32_t i) { staged[i] = b * dom + i; });
            worker.sync();
            forEach([&](uint32_t i) {
                uint32_t const g = b * dom + i;
                if (g < n) {
                    out[g] = staged[dom - 1 - i];
                    writes[g] += 1;
                }
            });
            worker.sync();
        }
    }
};

// An N-dimensional block domain: records each element's N-D index.
struct NDKernel {
    using BlockDomSizeND = ls::CtUint32<8, 4, 3>;
    template <class W>
    STRATA_HD void operator()(W const& worker, uint32_t* x, uint32_t* y, uint32_t* z, uint32_t* writes) const {
        constexpr uint32_t dom = W::blockDomSize();
        ls::makeForEach(worker)([&](ls::Idx<3> const& idx) {
            uint32_t const g = worker.blockDomIdx() * dom + idx.lin();
            x[g] = idx.nd()[0];
            y[g] = idx.nd()[1];
            z[g] = idx.nd()[2];
            writes[g] += 1;
        });
    }
};

// Context variables carried over steps and syncs, a master that runs once, a value broadcast through shared memory.
struct ContextVarKernel {
    static constexpr uint32_t blockDomSize = 37;
    struct Shared {
        uint32_t token;
        uint32_t square[37];
    };
    template <class W>
    STRATA_HD void operator()(W const& worker, uint32_t* out, uint32_t* masterRuns) const {
        auto forEach = ls::makeForEach(worker);
        auto token = ls::sharedVar(worker, &Shared::token);
        auto square = ls::sharedArray(worker, &Shared::square);
        // Step 1: a returned value becomes a context variable.
        auto tripled = forEach([](uint32_t i) -> uint32_t { return 3 * i; });
        // Step 2: a variable initialised at creation, updated in place.
        auto counter = ls::makeVar<uint32_t>(forEach, 1000u);
        forEach([&](ls::Idx<1> const& idx, uint32_t& c) { c += tripled[idx]; }, counter);
        ls::makeMaster(worker)([&] {
            token[0] = 7 * worker.blockDomIdx() + 1;
            masterRuns[worker.blockDomIdx()] += 1;
        });
        forEach([&](uint32_t i) { square[i] = i * i; });
        worker.sync();
        // Step 3: variables read back after the sync, with the neighbour's shared value.
        forEach(
            [&](uint32_t i, uint32_t const c, uint32_t const t) {
                uint32_t const next = square[(i + 1) % blockDomSize];
                out[worker.blockDomIdx() * blockDomSize + i] = c + t + token[0] + next;
            },
            counter, tripled);
    }
};

// A block sum (tree reduction) and an inclusive scan (Hillis-Steele, double-buffered), both in shared memory, over a
// domain of 100: no worker count used in the tests divides it.
struct ReduceScanKernel {
    static constexpr uint32_t blockDomSize = 100;
    struct Shared {
        int64_t red[100];
        int64_t ping[100];
        int64_t pong[100];
    };
    template <class W>
    STRATA_HD void operator()(W const& worker, int64_t const* in, int64_t* sums, int64_t* scans) const {
        constexpr uint32_t n = blockDomSize;
        auto forEach = ls::makeForEach(worker);
        auto red = ls::sharedArray(worker, &Shared::red);
        auto ping = ls::sharedArray(worker, &Shared::ping);
        auto pong = ls::sharedArray(worker, &Shared::pong);
        int64_t const* block = in + worker.blockDomIdx() * n;
        forEach([&](uint32_t i) {
            red[i] = block[i];
            ping[i] = block[i];
        });
        worker.sync();
        uint32_t active = n;
        while (active > 1) {
            uint32_t const half = (active + 1) / 2;
            forEach([&](uint32_t i) {
                if (i + half < active) red[i] += red[i + half];
            });
            worker.sync();
            active = half;
        }
        ls::makeMaster(worker)([&] { sums[worker.blockDomIdx()] = red[0]; });
        bool inPing = true;
        for (uint32_t offset = 1; offset < n; offset *= 2) {
            auto const& src = inPing ? ping : pong;
            auto const& dst = inPing ? pong : ping;
            forEach([&](uint32_t i) {
                int64_t v = src[i];
                if (i >= offset) v += src[i - offset];
                dst[i] = v;
            });
            worker.sync();
            inPing = !inPing;
        }
        auto const& result = inPing ? ping : pong;
        forEach([&](uint32_t i) { scans[worker.blockDomIdx() * n + i] = result[i]; });
    }
};

// Deliberately wrong: reads the neighbour's shared value without a sync between the write and the read.
template <bool WithSync>
struct NeighbourReadKernel {
    static constexpr uint32_t blockDomSize = 64;
    struct Shared {
        double v[64];
    };
    template <class W>
    STRATA_HD void operator()(W const& worker, double* out) const {
        auto forEach = ls::makeForEach(worker);
        auto v = ls::sharedArray(worker, &Shared::v);
        forEach([&](uint32_t i) { v[i] = 1.0 + i; });
        if constexpr (WithSync) worker.sync();
        forEach([&](uint32_t i) { out[worker.blockDomIdx() * blockDomSize + i] = v[(i + 1) % blockDomSize]; });
    }
};

// Deliberately wrong: a sync() inside a branch that only worker 0 takes.
struct DivergentSyncKernel {
    static constexpr uint32_t blockDomSize = 64;
    template <class W>
    STRATA_HD void operator()(W const& worker, double* out) const {
        if (worker.workerIdx() == 0) worker.sync();
        ls::makeForEach(worker)([&](uint32_t i) { out[i] = i; });
    }
};

} // namespace strata::test
