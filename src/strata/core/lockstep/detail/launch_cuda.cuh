// The CUDA backend's launch specialisation, Launcher<Cuda> (detail/launcher.hpp says what one provides; included by
// core/lockstep/launch.hpp when compiled by nvcc; compiles on its own).
//
// One CUDA block per lockstep block, Cfg::cudaNumWorkers() threads each. Static shared memory is a __shared__ array
// of the kernel's `Shared` size (so `-Xptxas -v` reports it as static), dynamic shared memory is the launch's extern
// shared array.
#pragma once

#include <strata/core/backend.hpp>
#include <strata/core/error.hpp>
#include <strata/core/lockstep/detail/launcher.hpp>
#include <strata/core/lockstep/launch_cfg.hpp>
#include <strata/core/lockstep/worker.hpp>

#include <cuda_runtime.h>

#include <cstdlib>
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

// The kernel's name is built only when there is an error to report (for expression kernels it is kilobytes long).
template <class Kernel>
void checkCuda(cudaError_t err) {
    if (err != cudaSuccess) throw Error(cudaGetErrorString(err), "kernel " + kernelName<Kernel>() + " (Cuda backend)");
}

// STRATA_CUDA_SYNC=1: wait for every kernel and report a failure as that kernel's (debugging). Otherwise launches
// are asynchronous on the default stream, in order; the host waits only where it needs a result (the copies of
// Buffer::toHost), and a kernel that fails is reported there.
inline bool syncEveryLaunch() {
    static bool const sync = [] {
        char const* v = std::getenv("STRATA_CUDA_SYNC");
        return v != nullptr && v[0] == '1';
    }();
    return sync;
}

template <>
struct Launcher<core::Cuda> {
    template <class Cfg, class Dom, class Kernel, class... Args>
    static void launch(core::Cuda const& backend, LaunchCfg<Dom> const& cfg, Kernel const& kernel,
                       Args const&... args) {
        // Select the device only when it changes (a host thread keeps its current device).
        thread_local int current = -1;
        if (current != backend.device) {
            checkCuda<Kernel>(cudaSetDevice(backend.device));
            current = backend.device;
        }
        auto entry = lockstepEntry<Cfg, Kernel, Args...>;
        // Above 48 KiB of shared memory a kernel must opt in, for its static and dynamic shared memory together; the
        // attribute is set once per kernel and size.
        constexpr std::size_t staticBytes = staticSharedBytes<Kernel>();
        if (staticBytes + cfg.dynSharedBytes > 48 * 1024) {
            static thread_local std::size_t optedIn = 0;
            if (cfg.dynSharedBytes > optedIn) {
                checkCuda<Kernel>(cudaFuncSetAttribute(entry, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                       static_cast<int>(cfg.dynSharedBytes)));
                optedIn = cfg.dynSharedBytes;
            }
        }
        entry<<<cfg.gridSize, Cfg::cudaNumWorkers(), cfg.dynSharedBytes>>>(kernel, cfg.dynSharedBytes, args...);
        checkCuda<Kernel>(cudaGetLastError()); // launch errors (configuration, resources): no wait
        if (syncEveryLaunch()) checkCuda<Kernel>(cudaDeviceSynchronize());
    }
};

} // namespace strata::lockstep::detail
