// The time loop on OpenMP, compiled here once (app/model/run_impl.hpp declares it extern; run_serial.cpp says why).
#include <strata/app/model/instantiate.hpp>
#include <strata/app/model/run_impl.hpp>

namespace strata::app {

STRATA_INSTANTIATE_MODEL(core::OpenMP)

} // namespace strata::app
