// The time loop on the Cuda backend: the same template as the CPU backends, compiled by nvcc. Each rank uses the
// GPU of its node-local rank.
#include <strata/app/model/run_impl.hpp>

#include <cuda_runtime.h>

namespace strata::app {

RunSummary runWithCuda(Config const& cfg, core::Context const& comm, RunOptions const& options, std::ostream& log) {
    core::Cuda backend;
    backend.device = comm.deviceFor(core::cudaDeviceCount());
    if (cudaSetDevice(backend.device) != cudaSuccess) // buffers are allocated on the current device
        throw Error("cannot select CUDA device " + std::to_string(backend.device), "backend.type: cuda");
    return runWith(backend, "cuda", cfg, comm, options, log);
}

} // namespace strata::app
