// The precipitation flux, which Kessler and large-scale condensation both make: one catalogue entry for both.
#pragma once

#include <strata/app/model/variables.hpp>

namespace strata::app {

// Each process says what it is in a case (Process::outputLongName).
inline constexpr VariableInfo precipitationFluxVariable{"precipitation_flux",
                                                        "kg m-2 s-1",
                                                        "precipitation, mean since the previous output",
                                                        "precipitation_flux",
                                                        Staggering::Column,
                                                        Source::Process,
                                                        true,
                                                        "time: mean"};

} // namespace strata::app
