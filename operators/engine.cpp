#include "operators/engine.hpp"

#if defined(STRATA_HAVE_CUDA)
#include <cuda_runtime_api.h>
#endif

namespace strata::ops::detail {

std::size_t deviceSharedLimit(core::Cuda const& backend) {
#if defined(STRATA_HAVE_CUDA)
    int bytes = 0;
    if (cudaDeviceGetAttribute(&bytes, cudaDevAttrMaxSharedMemoryPerBlockOptin, backend.device) == cudaSuccess &&
        bytes > 0)
        return static_cast<std::size_t>(bytes);
    cudaGetLastError();
#else
    (void)backend;
#endif
    return 48 * 1024;
}

} // namespace strata::ops::detail
