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
// Arguments are copied to every block (pass views and pointers, not containers). Launches are synchronous on the CPU
// backends; on Cuda they are queued in order on the default stream (STRATA_CUDA_SYNC=1 waits for each, see
// detail/launch_cuda.cuh). Errors (a race found by Threads, a CUDA launch failure) throw strata::Error naming the
// kernel. The configuration types are in launch_cfg.hpp, each backend's launch specialisation in detail/ (one
// `Launcher<Tag>` per backend, detail/launcher.hpp).
#pragma once

#include <strata/core/backend.hpp>
#include <strata/core/error.hpp>
#include <strata/core/lockstep/block_cfg.hpp>
#include <strata/core/lockstep/launch_cfg.hpp>
#include <strata/core/lockstep/worker.hpp>

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

} // namespace strata::lockstep

#include <strata/core/lockstep/detail/launch_cpu.hpp>
#include <strata/core/lockstep/detail/launcher.hpp>
#if defined(__CUDACC__)
#include <strata/core/lockstep/detail/launch_cuda.cuh>
#endif

namespace strata::lockstep {

template <class Backend, class Dom, class Kernel, class... Args>
void launch(Backend const& backend, LaunchCfg<Dom> const& cfg, Kernel const& kernel, Args const&... args) {
    using Cfg = typename detail::ResolveBlockCfg<Kernel, Dom>::type;
    if (cfg.gridSize == 0) return;
    launchCounter().fetch_add(1, std::memory_order_relaxed);
    // One specialisation per backend, chosen by its tag (a type made from a tag, GridLimited, launches as the tag).
    detail::Launcher<typename Backend::Tag>::template launch<Cfg>(backend, cfg, kernel, args...);
}

} // namespace strata::lockstep
