// The process registry: every process the configuration can name, with the factory that makes it. The model builds
// its processes from this table in the order of the configuration's list; a new process is its class, its config
// struct and schema entry (app/config.hpp, app/detail/config_schema.hpp), and one line here.
#pragma once

#include <strata/app/config.hpp>
#include <strata/app/model/kessler.hpp>
#include <strata/app/model/moist.hpp>
#include <strata/app/model/processes.hpp>

#include <functional>
#include <map>
#include <memory>
#include <string>

namespace strata::app {

template <class Backend>
using ProcessFactory = std::function<std::unique_ptr<Process<Backend>>(Config const&, State&, Backend const&)>;

template <class Backend>
std::map<std::string, ProcessFactory<Backend>> const& processRegistry() {
    using P = std::unique_ptr<Process<Backend>>;
    static std::map<std::string, ProcessFactory<Backend>> const registry = {
        {"vertical_diffusion",
         [](Config const& c, State& s, Backend const&) -> P {
             return std::make_unique<VerticalDiffusion<Backend>>(c.diffusion, c.surfaceFluxes, s);
         }},
        {"vertical_advection",
         [](Config const& c, State& s, Backend const&) -> P {
             return std::make_unique<VerticalAdvection<Backend>>(c.advection, s);
         }},
        {"held_suarez",
         [](Config const& c, State& s, Backend const& b) -> P {
             return std::make_unique<HeldSuarez<Backend>>(c.heldSuarez, s, b);
         }},
        {"coriolis",
         [](Config const& c, State& s, Backend const&) -> P {
             return std::make_unique<Coriolis<Backend>>(c.coriolis, s);
         }},
        {"surface_fluxes",
         [](Config const& c, State& s, Backend const&) -> P {
             return std::make_unique<BulkSurfaceFluxes<Backend>>(c.surfaceFluxes, s);
         }},
        {"large_scale_condensation",
         [](Config const&, State& s, Backend const&) -> P {
             return std::make_unique<LargeScaleCondensation<Backend>>(s);
         }},
        {"kessler", [](Config const&, State& s, Backend const&) -> P { return std::make_unique<Kessler<Backend>>(s); }},
    };
    return registry;
}

// Instantiated once per CPU backend, next to that backend's time loop (app/model/run_serial.cpp, run_openmp.cpp,
// run_threads.cpp): a file that only makes a Model (tests, the model benchmark) then compiles no process.
extern template std::map<std::string, ProcessFactory<core::Serial>> const& processRegistry<core::Serial>();
extern template std::map<std::string, ProcessFactory<core::OpenMP>> const& processRegistry<core::OpenMP>();
extern template std::map<std::string, ProcessFactory<core::Threads>> const& processRegistry<core::Threads>();

} // namespace strata::app
