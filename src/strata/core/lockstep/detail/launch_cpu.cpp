// Checks that the CPU launch loops' header compiles on its own (the header is a template; nothing is defined here).
#include <strata/core/lockstep/detail/launch_cpu.hpp>
