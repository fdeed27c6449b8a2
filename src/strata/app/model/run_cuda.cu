// The time loop on the Cuda backend: the same template as the CPU backends, compiled here once by nvcc (run.cpp
// declares it extern and dispatches to it; run_serial.cpp says why each backend has a file of its own).
#include <strata/app/model/instantiate.hpp>
#include <strata/app/model/run_impl.hpp>

namespace strata::app {

STRATA_INSTANTIATE_MODEL(core::Cuda)

} // namespace strata::app
