// The model's explicit instantiations for one backend: its process registry and its time loop. Each backend's are
// compiled once, in a translation unit of their own (run_serial.cpp, run_openmp.cpp, run_threads.cpp, run_cuda.cu: a
// parallel build compiles them side by side), by one line inside namespace strata::app after run_impl.hpp:
//
//     STRATA_INSTANTIATE_MODEL(core::Serial)
//
// and every other file that could instantiate them declares them instead, for every backend of core/backends.hpp:
//
//     STRATA_FOR_EACH_BACKEND(STRATA_DECLARE_MODEL)            // both (needs registry.hpp and run_impl.hpp)
//     STRATA_FOR_EACH_BACKEND(STRATA_DECLARE_MODEL_REGISTRY)   // after processRegistry (registry.hpp)
//     STRATA_FOR_EACH_BACKEND(STRATA_DECLARE_MODEL_RUN)        // after runWith (run_impl.hpp)
#pragma once

#include <strata/core/backends.hpp>

#define STRATA_MODEL_REGISTRY_INSTANTIATION(Kind, Backend)                                                             \
    Kind template ProcessRegistry<Backend>& processRegistry<Backend>();
#define STRATA_MODEL_RUN_INSTANTIATION(Kind, Backend)                                                                  \
    Kind template RunSummary runWith<Backend>(Backend const&, std::string const&, Config const&, core::Context const&, \
                                              RunOptions const&, std::ostream&);

#define STRATA_INSTANTIATE_MODEL(Backend)                                                                              \
    STRATA_MODEL_REGISTRY_INSTANTIATION(, Backend)                                                                     \
    STRATA_MODEL_RUN_INSTANTIATION(, Backend)
#define STRATA_DECLARE_MODEL_REGISTRY(Backend) STRATA_MODEL_REGISTRY_INSTANTIATION(extern, Backend)
#define STRATA_DECLARE_MODEL_RUN(Backend) STRATA_MODEL_RUN_INSTANTIATION(extern, Backend)
#define STRATA_DECLARE_MODEL(Backend)                                                                                  \
    STRATA_DECLARE_MODEL_REGISTRY(Backend)                                                                             \
    STRATA_DECLARE_MODEL_RUN(Backend)
