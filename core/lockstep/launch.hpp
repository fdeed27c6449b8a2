// Launching a lockstep kernel: `launch(backend, config, kernel, args...)`.
//
// A kernel is a functor with `template <class Worker> STRATA_HD void operator()(Worker const&, Args...) const`.
// It may declare its block domain (`blockDomSize` or `BlockDomSizeND`, see block_cfg.hpp) and its static shared memory
// as a nested `struct Shared`. The configuration gives the number of blocks and, with configSMem, the bytes of
// dynamic shared memory:
//
//     launch(backend, config(gridSize), kernel, args...)               // kernel declares its domain
//     launch(backend, config<128>(gridSize), kernel, args...)           // domain given at launch
//     launch(backend, config<CtUint32<8, 4>>(gridSize), kernel, ...)    // N-dimensional domain
//     launch(backend, configSMem<23>(gridSize, bytes), kernel, ...)     // plus dynamic shared memory
//     launch(backend, configFor(dataObject, gridSize), kernel, ...)     // domain from MakeBlockCfg<DataObject>
//
// Arguments are copied to every block (pass views and pointers, not containers). Launches are synchronous on every
// backend. Errors (a race found by Threads, a CUDA launch failure) throw strata::Error naming the kernel.
#pragma once

#include "core/backend.hpp"
#include "core/error.hpp"
#include "core/lockstep/block_cfg.hpp"
#include "core/lockstep/worker.hpp"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <typeinfo>

namespace strata::lockstep {

// Kernel launches this process has made, every backend together (launches of an empty grid not counted): the
// benchmarks' launch counts per model step and per process. One relaxed atomic increment per launch.
inline std::atomic<uint64_t>& launchCounter() {
    static std::atomic<uint64_t> count{0};
    return count;
}

template <class DomSizeND>
struct LaunchCfg {
    uint32_t gridSize;
    std::size_t dynSharedBytes = 0;
};

inline LaunchCfg<void> config(uint32_t gridSize) { return {gridSize, 0}; }
template <uint32_t N>
LaunchCfg<CtUint32<N>> config(uint32_t gridSize) {
    return {gridSize, 0};
}
template <class DomSizeND>
requires isCtUint32<DomSizeND> LaunchCfg<DomSizeND> config(uint32_t gridSize) { return {gridSize, 0}; }
inline LaunchCfg<void> configSMem(uint32_t gridSize, std::size_t dynBytes) { return {gridSize, dynBytes}; }
template <uint32_t N>
LaunchCfg<CtUint32<N>> configSMem(uint32_t gridSize, std::size_t dynBytes) {
    return {gridSize, dynBytes};
}
template <class DomSizeND>
requires isCtUint32<DomSizeND> LaunchCfg<DomSizeND> configSMem(uint32_t gridSize, std::size_t dynBytes) {
    return {gridSize, dynBytes};
}
template <class DataObject>
auto configFor(DataObject const&, uint32_t gridSize, std::size_t dynBytes = 0) {
    return LaunchCfg<typename MakeBlockCfg<DataObject>::type::DomSizeNDType>{gridSize, dynBytes};
}

namespace detail {
template <class K>
concept HasShared = requires {
    typename K::Shared;
};

template <class K>
STRATA_HD constexpr std::size_t staticSharedBytes() {
    if constexpr (HasShared<K>)
        return sizeof(typename K::Shared);
    else
        return 0;
}

// Dynamic shared memory starts at this offset after the static part.
constexpr std::size_t sharedAlign = 16;
STRATA_HD constexpr std::size_t alignUp(std::size_t n) { return (n + sharedAlign - 1) / sharedAlign * sharedAlign; }

template <class Kernel>
std::string kernelName() {
    return typeid(Kernel).name();
}
} // namespace detail

} // namespace strata::lockstep

#include "core/detail/launch_cpu.hpp"
#if defined(__CUDACC__)
#include "core/detail/launch_cuda.cuh"
#endif

namespace strata::lockstep {

template <class Backend, class Dom, class Kernel, class... Args>
void launch(Backend const& backend, LaunchCfg<Dom> const& cfg, Kernel const& kernel, Args const&... args) {
    using Cfg = typename detail::ResolveBlockCfg<Kernel, Dom>::type;
    if (cfg.gridSize == 0) return;
    launchCounter().fetch_add(1, std::memory_order_relaxed);
    if constexpr (std::is_same_v<Backend, core::Cuda>) {
#if defined(__CUDACC__)
        detail::launchCuda<Cfg>(backend, cfg, kernel, args...);
#else
        static_assert(sizeof(Backend) == 0, "launching on Cuda needs nvcc: compile this translation unit as CUDA");
#endif
    } else {
        detail::launchCpu<Cfg>(backend, cfg, kernel, args...);
    }
}

} // namespace strata::lockstep
