// Backend tags: which machine a kernel runs on, chosen at compile time by type and at run time by value.
//
//  Serial   one host thread runs every block, one worker per block.
//  OpenMP   blocks are spread over OpenMP threads, one worker per block (falls back to Serial's behaviour when
//           Strata is built without OpenMP).
//  Threads  the checking backend: each block runs `numWorkers` real threads that meet at a real (blocking) barrier;
//           block shared memory is poisoned at block start and, with `checkShared`, every shared-memory access is
//           checked for reads of values another worker wrote since the last sync, uninitialised reads and
//           out-of-range indices. Slow on purpose; use it in tests.
//  Cuda     one CUDA thread per worker, compiled by nvcc when STRATA_ENABLE_CUDA=ON.
//
// What kernels may assume of a backend are traits of its tag (not tests of which tag it is), so that a new backend is
// one tag with its traits, one launch specialisation (lockstep::detail::Launcher<Tag>, core/lockstep/detail/launch_*)
// and one entry in the list of compiled backends (core/backends.hpp):
//   Tag                the tag itself: launches dispatch on it, so that a type made from a tag (GridLimited)
//                      launches as the tag does
//   memSpace           where its kernels' data live (Host, Cuda)
//   isGpu              a device of many threads per block and a launch cost of microseconds: the planners stage
//                      every argument and pick CyclicReduction over Thomas; a block is whole warps (a compile-time
//                      count, BlockCfg's cudaNumWorkers), sync() is the device's block barrier, launches return before
//                      the work is done (synchronize below waits), and the tag carries the `device` it runs on
//   oneWorkerPerBlock  a block is one worker: kernels walk their work in plain loops (which the compiler vectorises)
//                      and need not stage stencil-free arguments; sync() does nothing
//   checked            shared-memory accesses and syncs are checked (the Threads backend)
//   hostParallel       blocks run on several host threads at once (OpenMP): host-side figures (a thread count, the
//                      reference bandwidth of the benchmarks) count them
//   maxGridBlocks      the most blocks one launch asks for; kernels walk further work grid-stride (CUDA's 65535 is
//                      used on every backend, so that plans are alike)
// Every tag states all of them (a tag is an aggregate: `Threads{3}` must stay its worker count). Besides traits, a tag
// holds what is chosen at run time: Threads its workers per block, Cuda its device.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <type_traits>

namespace strata::core {

enum class MemSpace { Host, Cuda };

// Defaults of the engines and column kernels, the same on every backend: the grid limit (the maxGridBlocks trait
// below) and the work items of the block domain that engines and column kernels use (not a trait: no backend differs;
// a Shmem block on a GPU spreads 1024 (column, level) pairs over these 256 workers, operators/engine/planner.hpp).
inline constexpr uint32_t defaultMaxGridBlocks = 65535;
inline constexpr uint32_t defaultBlockItems = 256;
// The shared memory a block may use unless a device says more: CUDA's static per-block limit, which every backend
// plans with, so that plans are alike (the engines' planner and the tridiagonal solver; sharedMemoryPerBlock below).
inline constexpr std::size_t defaultSharedLimitBytes = 48 * 1024;

struct Serial {
    using Tag = Serial;
    static constexpr std::string_view name = "serial";
    static constexpr MemSpace memSpace = MemSpace::Host;
    static constexpr bool isGpu = false;
    static constexpr bool oneWorkerPerBlock = true;
    static constexpr bool checked = false;
    static constexpr bool hostParallel = false;
    static constexpr uint32_t maxGridBlocks = defaultMaxGridBlocks;
};

struct OpenMP {
    using Tag = OpenMP;
    static constexpr std::string_view name = "openmp";
    static constexpr MemSpace memSpace = MemSpace::Host;
    static constexpr bool isGpu = false;
    static constexpr bool oneWorkerPerBlock = true;
    static constexpr bool checked = false;
    static constexpr bool hostParallel = true;
    static constexpr uint32_t maxGridBlocks = defaultMaxGridBlocks;
};

struct Threads {
    using Tag = Threads;
    static constexpr std::string_view name = "threads";
    static constexpr MemSpace memSpace = MemSpace::Host;
    static constexpr bool isGpu = false;
    static constexpr bool oneWorkerPerBlock = false;
    static constexpr bool checked = true;
    static constexpr bool hostParallel = false;
    static constexpr uint32_t maxGridBlocks = defaultMaxGridBlocks;
    uint32_t numWorkers = 4; // workers (threads) per block
    bool checkShared = true; // shadow-check every shared-memory access
};

struct Cuda {
    using Tag = Cuda;
    static constexpr std::string_view name = "cuda";
    static constexpr MemSpace memSpace = MemSpace::Cuda;
    static constexpr bool isGpu = true;
    static constexpr bool oneWorkerPerBlock = false;
    static constexpr bool checked = false;
    static constexpr bool hostParallel = false;
    static constexpr uint32_t maxGridBlocks = defaultMaxGridBlocks;
    int device = 0;
};

// A backend whose launches ask for at most MaxBlocks blocks: the kernels walk the rest of their work grid-stride, as
// they do past 65535 blocks. For tests: with the real limit, a kernel's grid-stride loop runs only at millions of
// points. It launches as its base (lockstep::launch dispatches on `Tag`, the base's) and keeps the base's other
// traits.
template <class Base, uint32_t MaxBlocks>
struct GridLimited : Base {
    static_assert(MaxBlocks > 0);
    static constexpr uint32_t maxGridBlocks = MaxBlocks;
};

// Whether this build can run the backend at all (Cuda needs STRATA_ENABLE_CUDA; a device is checked at launch).
bool cudaCompiled();
bool openmpCompiled();
int openmpThreads();   // the threads an OpenMP parallel region would use now (1 when not compiled)
int cudaDeviceCount(); // 0 when not compiled or no device is visible
// Shared memory one block may use on the device (the opt-in maximum); 48 KiB when it cannot be asked.
std::size_t sharedMemoryPerBlock(Cuda const& backend);
// Makes the backend's device the calling host thread's current one, on which Buffers are allocated; false when it
// cannot be selected (or Cuda is not compiled).
bool selectDevice(Cuda const& backend);

// Waits until the work launched so far on the backend has finished (Cuda: the work of the calling host thread's
// current device, which its launches on `backend` selected; a strata::Error names a kernel failure). Kernels on the
// CPU backends have finished when their launch returns: nothing to wait for. For timers: a host clock read after it
// counts the device's time.
void synchronize(Cuda const& backend);
template <class Backend>
requires(!Backend::isGpu) // a tag made from Cuda (GridLimited) takes the overload above
    void synchronize(Backend const&) {}

} // namespace strata::core
