// Compiler and target macros shared by every layer.
//
// STRATA_HD marks a function as callable from host and device code. Kernel bodies, functors passed to lockstep
// routines and everything they call carry it. STRATA_ON_DEVICE is 1 only in nvcc's device pass.
#pragma once

#if defined(__CUDACC__)
#define STRATA_HD __host__ __device__
#define STRATA_HOST __host__
#define STRATA_DEVICE __device__
#else
#define STRATA_HD
#define STRATA_HOST
#define STRATA_DEVICE
#endif

#if defined(__CUDA_ARCH__)
#define STRATA_ON_DEVICE 1
#else
#define STRATA_ON_DEVICE 0
#endif

// nvcc warns when a __host__ __device__ template calls host-only code even in instantiations that never run on the
// device (the Threads backend's checker, for example). The pragma silences it for the next function only.
#if defined(__CUDACC__)
#define STRATA_HD_TEMPLATE _Pragma("nv_exec_check_disable")
#else
#define STRATA_HD_TEMPLATE
#endif
