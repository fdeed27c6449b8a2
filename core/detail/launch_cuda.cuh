// The CUDA backend's launch (included by core/lockstep/launch.hpp when compiled by nvcc).
//
// One CUDA block per lockstep block, Cfg::cudaNumWorkers() threads each. Static shared memory is a __shared__ array
// of the kernel's `Shared` size (so `-Xptxas -v` reports it as static), dynamic shared memory is the launch's extern
// shared array.
#pragma once

#include "core/backend.hpp"
#include "core/error.hpp"
#include "core/lockstep/worker.hpp"

#include <cuda_runtime.h>

#include <string>

namespace strata::lockstep::detail {

template <class Cfg, class Kernel, class... Args>
__global__ void lockstepEntry(Kernel kernel, std::size_t dynBytes, Args... args) {
    constexpr std::size_t staticBytes = staticSharedBytes<Kernel>();
    __shared__ __align__(16) unsigned char staticSmem[staticBytes > 0 ? staticBytes : 1];
    extern __shared__ __align__(16) unsigned char dynSmem[];
    Worker<Cfg, core::Cuda> w(threadIdx.x, Cfg::cudaNumWorkers(), blockIdx.x, gridDim.x,
                              reinterpret_cast<std::byte*>(staticSmem), reinterpret_cast<std::byte*>(dynSmem),
                              dynBytes);
    kernel(w, args...);
}

inline void checkCuda(cudaError_t err, std::string const& where) {
    if (err != cudaSuccess) throw Error(cudaGetErrorString(err), where);
}

template <class Cfg, class Dom, class Kernel, class... Args>
void launchCuda(core::Cuda const& backend, LaunchCfg<Dom> const& cfg, Kernel const& kernel, Args const&... args) {
    std::string const where = "kernel " + kernelName<Kernel>() + " (Cuda backend)";
    checkCuda(cudaSetDevice(backend.device), where);
    auto entry = lockstepEntry<Cfg, Kernel, Args...>;
    if (cfg.dynSharedBytes > 48 * 1024) {
        checkCuda(cudaFuncSetAttribute(entry, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                       static_cast<int>(cfg.dynSharedBytes)),
                  where);
    }
    entry<<<cfg.gridSize, Cfg::cudaNumWorkers(), cfg.dynSharedBytes>>>(kernel, cfg.dynSharedBytes, args...);
    checkCuda(cudaGetLastError(), where);
    checkCuda(cudaDeviceSynchronize(), where);
}

} // namespace strata::lockstep::detail
