// Strata's own processes, in the order the configuration's messages list them. A new process is
// its file in this folder and one entry here.
#pragma once

#include <strata/app/model/instantiate.hpp>
#include <strata/app/model/registry.hpp>
#include <strata/app/processes/coriolis.hpp>
#include <strata/app/processes/held_suarez.hpp>
#include <strata/app/processes/kessler.hpp>
#include <strata/app/processes/large_scale_condensation.hpp>
#include <strata/app/processes/surface_fluxes.hpp>
#include <strata/app/processes/vertical_advection.hpp>
#include <strata/app/processes/vertical_diffusion.hpp>

namespace strata::app {

template <template <class> class... P>
struct ProcessList {};

using BuiltinProcesses = ProcessList<VerticalDiffusion, VerticalAdvection, HeldSuarez, Coriolis, BulkSurfaceFluxes,
                                     LargeScaleCondensation, Kessler>;

// The schemas of a list's processes, in its order.
template <template <class> class... P>
std::vector<ProcessSchema> schemasOf(ProcessList<P...>) {
    return {schemaOf<typename P<core::Serial>::Settings>()...};
}

// The factories of a list's processes for one backend.
template <class Backend, template <class> class... P>
ProcessRegistry<Backend> factoriesOf(ProcessList<P...>) {
    ProcessRegistry<Backend> r;
    ((r[std::string(P<Backend>::Settings::process)] = &makeProcess<P, Backend>), ...);
    return r;
}

template <class Backend>
ProcessRegistry<Backend>& processRegistry() {
    static ProcessRegistry<Backend> registry = factoriesOf<Backend>(BuiltinProcesses{});
    return registry;
}

// Made once per backend, next to its time loop (app/model/instantiate.hpp): a file that only makes a Model (tests,
// the model benchmark) then compiles no process.
STRATA_FOR_EACH_BACKEND(STRATA_DECLARE_MODEL_REGISTRY)

} // namespace strata::app
