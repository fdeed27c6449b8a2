// Checks that the CUDA launch loop's header compiles on its own under nvcc (a template; nothing is defined here).
#include <strata/core/lockstep/detail/launch_cuda.cuh>
