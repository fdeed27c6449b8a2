// The CPU backends every core test runs on, as types for Catch2's TEMPLATE_TEST_CASE.
// Threads runs with 1, 7 and 32 workers: 1 behaves like a CPU backend, 7 divides no domain evenly, 32 is a warp.
#pragma once

#include "core/backend.hpp"

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

} // namespace strata::test

#define STRATA_CPU_BACKENDS                                                                                            \
    strata::test::SerialBackend, strata::test::OpenMPBackend, strata::test::ThreadsBackend<1>,                         \
        strata::test::ThreadsBackend<7>, strata::test::ThreadsBackend<32>
