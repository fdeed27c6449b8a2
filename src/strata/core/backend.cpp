#include <strata/core/backend.hpp>
#include <strata/core/error.hpp>
#include <strata/core/memory.hpp>

#if defined(_OPENMP)
#include <omp.h>
#endif

#if defined(STRATA_HAVE_CUDA)
#include <cuda_runtime_api.h>
#endif

namespace strata::core {

bool cudaCompiled() {
#if defined(STRATA_HAVE_CUDA)
    return true;
#else
    return false;
#endif
}

bool openmpCompiled() {
#if defined(_OPENMP)
    return true;
#else
    return false;
#endif
}

int openmpThreads() {
#if defined(_OPENMP)
    return omp_get_max_threads();
#else
    return 1;
#endif
}

int cudaDeviceCount() {
#if defined(STRATA_HAVE_CUDA)
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        cudaGetLastError(); // clear the sticky "no device" error
        return 0;
    }
    return n;
#else
    return 0;
#endif
}

std::size_t sharedMemoryPerBlock(Cuda const& backend) {
#if defined(STRATA_HAVE_CUDA)
    int bytes = 0;
    if (cudaDeviceGetAttribute(&bytes, cudaDevAttrMaxSharedMemoryPerBlockOptin, backend.device) == cudaSuccess &&
        bytes > 0)
        return static_cast<std::size_t>(bytes);
    cudaGetLastError();
#else
    (void)backend;
#endif
    return defaultSharedLimitBytes;
}

bool selectDevice(Cuda const& backend) {
#if defined(STRATA_HAVE_CUDA)
    return cudaSetDevice(backend.device) == cudaSuccess;
#else
    (void)backend;
    return false;
#endif
}

#if defined(STRATA_HAVE_CUDA)
void synchronize(Cuda const&) { // the host thread's current device: the one its launches selected
    cudaError_t const err = cudaDeviceSynchronize();
    if (err == cudaSuccess) return;
    (void)cudaGetLastError();
    throw Error(cudaGetErrorString(err), "a kernel on the Cuda backend (synchronize)");
}
#else
void synchronize(Cuda const&) {}
#endif

namespace detail {

#if defined(STRATA_HAVE_CUDA)
namespace {
void check(cudaError_t err, char const* what) {
    if (err == cudaSuccess) return;
    (void)cudaGetLastError(); // not left for the next kernel launch to report as its own
    throw Error(cudaGetErrorString(err), what);
}
} // namespace
void* cudaAllocate(std::size_t bytes) {
    void* p = nullptr;
    check(cudaMalloc(&p, bytes > 0 ? bytes : 1), "Buffer: cudaMalloc");
    return p;
}
// A failed cudaFree leaves its error as the "last error", which the next kernel launch would report as its own:
// cleared here (a release cannot throw, and a failed free leaks at worst).
void cudaRelease(void* p) noexcept {
    if (cudaFree(p) != cudaSuccess) (void)cudaGetLastError();
}
void cudaCopyToDevice(void* dst, void const* src, std::size_t bytes) {
    check(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice), "Buffer::toDevice");
}
void cudaCopyToHost(void* dst, void const* src, std::size_t bytes) {
    check(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost), "Buffer::toHost");
}
#else
[[noreturn]] static void noCuda() {
    throw Error("this build has no CUDA support", "Buffer", "a build configured with STRATA_ENABLE_CUDA=ON");
}
void* cudaAllocate(std::size_t) { noCuda(); }
void cudaRelease(void*) noexcept {}
void cudaCopyToDevice(void*, void const*, std::size_t) { noCuda(); }
void cudaCopyToHost(void*, void const*, std::size_t) { noCuda(); }
#endif

} // namespace detail
} // namespace strata::core
