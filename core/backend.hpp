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
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace strata::core {

enum class MemSpace { Host, Cuda };

struct Serial {
    static constexpr std::string_view name = "serial";
    static constexpr MemSpace memSpace = MemSpace::Host;
};

struct OpenMP {
    static constexpr std::string_view name = "openmp";
    static constexpr MemSpace memSpace = MemSpace::Host;
};

struct Threads {
    static constexpr std::string_view name = "threads";
    static constexpr MemSpace memSpace = MemSpace::Host;
    uint32_t numWorkers = 4; // workers (threads) per block
    bool checkShared = true; // shadow-check every shared-memory access
};

struct Cuda {
    static constexpr std::string_view name = "cuda";
    static constexpr MemSpace memSpace = MemSpace::Cuda;
    int device = 0;
};

// Whether this build can run the backend at all (Cuda needs STRATA_ENABLE_CUDA; a device is checked at launch).
bool cudaCompiled();
bool openmpCompiled();
int openmpThreads();   // the threads an OpenMP parallel region would use now (1 when not compiled)
int cudaDeviceCount(); // 0 when not compiled or no device is visible
// Shared memory one block may use on the device (the opt-in maximum); 48 KiB when it cannot be asked.
std::size_t sharedMemoryPerBlock(Cuda const& backend);

} // namespace strata::core
