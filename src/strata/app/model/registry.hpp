// The process registry: every process the configuration can name, with the factory that makes it on each backend.
//
// Strata's own processes are listed once, in app/processes/builtin.hpp. A program adds its own before it reads its
// configuration:
//
//     strata::app::registerProcess<MyProcess>();   // MyProcess<Backend>: a class template, one file
//     (examples/own_process)
//
// which records the process's schema (its settings, rules and output variables: app/process_settings.hpp) and a
// factory for every CPU backend of core/backends.hpp (and Cuda, when the calling file is compiled by nvcc; a process
// registered from host code only is refused on Cuda with a ConfigError naming it). The model makes its processes
// through makeProcess, in the order of the configuration's list: it asks the process for its declarations, checks
// them against the variable catalogue, and hands the process a ProcessEnv that gives out the declared fields alone.
#pragma once

#include <strata/app/config.hpp>
#include <strata/app/model/process.hpp>
#include <strata/core/backends.hpp>

#include <functional>
#include <map>
#include <memory>
#include <string>

namespace strata::app {

template <class Backend>
using ProcessFactory = std::function<std::unique_ptr<Process<Backend>>(Config const&, State&, Backend const&)>;
template <class Backend>
using ProcessRegistry = std::map<std::string, ProcessFactory<Backend>, std::less<>>;

// A process class template P<Backend> as the registry expects it: P<Backend>::Settings (a ProcessSettingsStruct),
// a static declarations(Config const&) and a constructor P(Config const&, ProcessEnv<Backend>&).
template <template <class> class P, class Backend>
std::unique_ptr<Process<Backend>> makeProcess(Config const& cfg, State& state, Backend const& backend) {
    std::string const name(P<Backend>::Settings::process);
    auto declared = P<Backend>::declarations(cfg);
    checkDeclarations(name, declared);
    ProcessEnv<Backend> env(name, std::move(declared), state, backend);
    return std::make_unique<P<Backend>>(cfg, env);
}

// Strata's own processes and those registered, for one backend (instantiated once per backend, next to its time
// loop: app/model/instantiate.hpp).
template <class Backend>
ProcessRegistry<Backend>& processRegistry();

template <template <class> class P, class Backend>
void addFactory() {
    processRegistry<Backend>()[std::string(P<Backend>::Settings::process)] = &makeProcess<P, Backend>;
}

template <template <class> class P>
void registerProcess() {
    using Settings = typename P<core::Serial>::Settings;
    // The same process may register from several files (host code and nvcc); another under its name is an Error.
    if (ProcessSchema const* known = findProcessSchema(Settings::process)) {
        if (*known->settingsType != typeid(Settings))
            throw Error("a process named '" + std::string(Settings::process) + "' is already registered",
                        "registerProcess", "a name no other process has");
    } else {
        addProcessSchema(schemaOf<Settings>());
    }
#define STRATA_ADD_FACTORY(Tag) addFactory<P, Tag>();
    STRATA_FOR_EACH_HOST_BACKEND(STRATA_ADD_FACTORY)
#if defined(__CUDACC__) && defined(STRATA_HAVE_CUDA)
    STRATA_ADD_FACTORY(core::Cuda)
#endif
#undef STRATA_ADD_FACTORY
}

} // namespace strata::app
