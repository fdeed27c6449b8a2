// The CPU backends every core test runs on, as types for Catch2's TEMPLATE_TEST_CASE: one test type per host
// backend of core/backends.hpp's list (checked below), made by `TestBackend<Tag, Workers>::make()`.
// Threads runs with 1, 7 and 32 workers: 1 behaves like a CPU backend, 7 divides no domain evenly, 32 is a warp.
#pragma once

#include <strata/core/backend.hpp>
#include <strata/core/backends.hpp>

#include <cstdint>
#include <type_traits>

namespace strata::test {

// A tag as the tests use it: a backend with a run-time worker count (Threads) gets `Workers` of them and checks
// every shared-memory access; the others take no parameters.
template <class Backend, uint32_t Workers = 0>
struct TestBackend {
    static Backend make() {
        Backend backend{};
        if constexpr (requires(Backend & b) { b.numWorkers; }) {
            static_assert(Workers > 0, "a backend with a run-time worker count needs a worker count in its tests");
            backend.numWorkers = Workers;
            backend.checkShared = true;
        }
        return backend;
    }
};

using SerialBackend = TestBackend<core::Serial>;
using OpenMPBackend = TestBackend<core::OpenMP>;
template <uint32_t W>
using ThreadsBackend = TestBackend<core::Threads, W>;

// Grid-limited variants (core::GridLimited): at most 3 blocks a launch, so that every kernel's grid-stride loop wraps
// at test sizes (the real limit, 65535 blocks, takes millions of points).
inline constexpr uint32_t smallGridBlocks = 3;
#define STRATA_SMALL_GRID_BACKENDS strata::test::SmallGridSerialBackend, strata::test::SmallGridThreadsBackend<7>
using SmallGridSerialBackend = TestBackend<core::GridLimited<core::Serial, smallGridBlocks>>;
template <uint32_t W>
using SmallGridThreadsBackend = TestBackend<core::GridLimited<core::Threads, smallGridBlocks>, W>;

} // namespace strata::test

#define STRATA_CPU_BACKENDS                                                                                            \
    strata::test::SerialBackend, strata::test::OpenMPBackend, strata::test::ThreadsBackend<1>,                         \
        strata::test::ThreadsBackend<7>, strata::test::ThreadsBackend<32>

namespace strata::test::detail {

template <class... TestBackends>
struct TestBackendList {};

template <class Tag, class... TestBackends>
constexpr bool tested(TestBackendList<TestBackends...>) {
    return ((decltype(TestBackends::make())::name == Tag::name) || ...);
}

// Every host backend this build compiles is in STRATA_CPU_BACKENDS (a new one fails here until it is added).
static_assert(
    [] {
        bool all = true;
        core::forEachBackend([&]<class Tag>(std::type_identity<Tag>) {
            if (Tag::memSpace == core::MemSpace::Host) all = all && tested<Tag>(TestBackendList<STRATA_CPU_BACKENDS>{});
        });
        return all;
    }(),
    "a host backend of core/backends.hpp is missing from STRATA_CPU_BACKENDS");

} // namespace strata::test::detail
