// Checks that the CUDA launch loop's header compiles on its own under nvcc (a template; nothing is defined here).
#include "core/lockstep/detail/launch_cuda.cuh"
