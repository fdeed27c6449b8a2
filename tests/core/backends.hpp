// The CPU backends every core test runs on, as types for Catch2's TEMPLATE_TEST_CASE.
// Threads runs with 1, 7 and 32 workers: 1 behaves like a CPU backend, 7 divides no domain evenly, 32 is a warp.
#pragma once

#include <strata/core/backend.hpp>

#include <cstdint>

namespace strata::test {

struct SerialBackend {
    static core::Serial make() { return {}; }
};
struct OpenMPBackend {
    static core::OpenMP make() { return {}; }
};
template <uint32_t W>
struct ThreadsBackend {
    static core::Threads make() { return {W, true}; }
};

// Grid-limited variants (core::GridLimited): at most 3 blocks a launch, so that every kernel's grid-stride loop wraps
// at test sizes (the real limit, 65535 blocks, takes millions of points).
inline constexpr uint32_t smallGridBlocks = 3;
#define STRATA_SMALL_GRID_BACKENDS strata::test::SmallGridSerialBackend, strata::test::SmallGridThreadsBackend<7>
struct SmallGridSerialBackend {
    static core::GridLimited<core::Serial, smallGridBlocks> make() { return {}; }
};
template <uint32_t W>
struct SmallGridThreadsBackend {
    static core::GridLimited<core::Threads, smallGridBlocks> make() {
        core::GridLimited<core::Threads, smallGridBlocks> b;
        b.numWorkers = W;
        b.checkShared = true;
        return b;
    }
};

} // namespace strata::test

#define STRATA_CPU_BACKENDS                                                                                            \
    strata::test::SerialBackend, strata::test::OpenMPBackend, strata::test::ThreadsBackend<1>,                         \
        strata::test::ThreadsBackend<7>, strata::test::ThreadsBackend<32>
