// The launch specialisation point: `Launcher<Tag>` runs a kernel's grid on the backend `Tag`, one specialisation per
// backend (the CPU backends' in launch_cpu.hpp, Cuda's in launch_cuda.cuh). lockstep::launch selects it by the
// backend's `Tag` (core/backend.hpp), so that a type made from a tag launches as the tag does. A specialisation
// provides
//
//     template <class Cfg, class Dom, class Kernel, class... Args>
//     static void launch(Tag const& backend, LaunchCfg<Dom> const& cfg, Kernel const& kernel, Args const&... args);
//
// running blocks 0 .. cfg.gridSize-1 (never 0 blocks: launch returns before) with Worker<Cfg, Tag> workers, and throws
// strata::Error naming the kernel on a failure.
#pragma once

#include <strata/core/lockstep/launch_cfg.hpp>

namespace strata::lockstep::detail {

// No specialisation in this translation unit: Cuda's is compiled by nvcc only.
template <class Tag>
struct Launcher {
    template <class Cfg, class Dom, class Kernel, class... Args>
    static void launch(Tag const&, LaunchCfg<Dom> const&, Kernel const&, Args const&...) {
        static_assert(sizeof(Tag) == 0, "no launch for this backend here: launching on Cuda needs nvcc (compile this "
                                        "translation unit as CUDA); a new backend needs its Launcher specialisation");
    }
};

} // namespace strata::lockstep::detail
