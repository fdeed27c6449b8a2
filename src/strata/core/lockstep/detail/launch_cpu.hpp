// The CPU backends' launch specialisations, Launcher<Serial>, Launcher<OpenMP> and Launcher<Threads>
// (detail/launcher.hpp says what one provides; included by core/lockstep/launch.hpp; compiles on its own).
#pragma once

#include <strata/core/backend.hpp>
#include <strata/core/detail/block_checker.hpp>
#include <strata/core/error.hpp>
#include <strata/core/lockstep/detail/launcher.hpp>
#include <strata/core/lockstep/launch_cfg.hpp>
#include <strata/core/lockstep/worker.hpp>

#include <cstddef>
#include <exception>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#if defined(_OPENMP)
#include <omp.h>
#endif
#if defined(__x86_64__) && defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace strata::lockstep::detail {

// A kernel's streaming (non-temporal) stores are weakly ordered (operators' streamStore): each thread of a launch
// fences its own before the launch returns, so that any thread reads them after it. One fence per thread and launch.
inline void storeFence() {
#if defined(__x86_64__) && defined(__SSE2__)
    _mm_sfence();
#endif
}
// Fences when the thread leaves the scope, a kernel's exception included.
struct StoreFenceAtExit {
    StoreFenceAtExit() = default;
    StoreFenceAtExit(StoreFenceAtExit const&) = delete;
    StoreFenceAtExit& operator=(StoreFenceAtExit const&) = delete;
    ~StoreFenceAtExit() { storeFence(); }
};

// The bytes of a CPU block's shared memory: the kernel's static `Shared`, then (aligned) the launch's dynamic bytes.
template <class Kernel>
struct HostSharedLayout {
    std::size_t dynOffset;
    std::size_t totalBytes;
    template <class Dom>
    explicit HostSharedLayout(LaunchCfg<Dom> const& cfg)
        : dynOffset(alignUp(staticSharedBytes<Kernel>())), totalBytes(dynOffset + cfg.dynSharedBytes) {}
};

template <>
struct Launcher<core::Serial> {
    template <class Cfg, class Dom, class Kernel, class... Args>
    static void launch(core::Serial const&, LaunchCfg<Dom> const& cfg, Kernel const& kernel, Args const&... args) {
        HostSharedLayout<Kernel> const layout(cfg);
        auto smem = std::make_unique<std::byte[]>(layout.totalBytes > 0 ? layout.totalBytes : 1);
        StoreFenceAtExit const fence;
        for (uint32_t b = 0; b < cfg.gridSize; ++b) {
            Worker<Cfg, core::Serial> w(0, 1, b, cfg.gridSize, smem.get(), smem.get() + layout.dynOffset,
                                        cfg.dynSharedBytes);
            kernel(w, args...);
        }
    }
};

template <>
struct Launcher<core::OpenMP> {
    template <class Cfg, class Dom, class Kernel, class... Args>
    static void launch(core::OpenMP const&, LaunchCfg<Dom> const& cfg, Kernel const& kernel, Args const&... args) {
#if defined(STRATA_HAVE_OPENMP) && !defined(_OPENMP) && !defined(__CUDA_ARCH__)
        // This loop is compiled in the caller's translation unit: without the OpenMP flag there, the pragmas are
        // ignored and every block runs on one thread, silently. Linking Strata::core (or strata.pc's flags) brings it.
        static_assert(sizeof(Kernel) == 0,
                      "Strata was built with OpenMP, but this file is compiled without it (-fopenmp): the OpenMP "
                      "backend would run on one thread. Link Strata::core, or use the flags of pkg-config strata");
#endif
        HostSharedLayout<Kernel> const layout(cfg);
        std::exception_ptr error;
#pragma omp parallel
        {
            auto smem = std::make_unique<std::byte[]>(layout.totalBytes > 0 ? layout.totalBytes : 1);
#pragma omp for schedule(static)
            for (int64_t b = 0; b < static_cast<int64_t>(cfg.gridSize); ++b) {
                try {
                    Worker<Cfg, core::OpenMP> w(0, 1, static_cast<uint32_t>(b), cfg.gridSize, smem.get(),
                                                smem.get() + layout.dynOffset, cfg.dynSharedBytes);
                    kernel(w, args...);
                } catch (...) {
#pragma omp critical(strata_launch_error)
                    if (!error) error = std::current_exception();
                }
            }
            storeFence();
        }
        if (error) std::rethrow_exception(error);
    }
};

template <>
struct Launcher<core::Threads> {
    template <class Cfg, class Dom, class Kernel, class... Args>
    static void launch(core::Threads const& backend, LaunchCfg<Dom> const& cfg, Kernel const& kernel,
                       Args const&... args) {
        HostSharedLayout<Kernel> const layout(cfg);
        uint32_t const nw = backend.numWorkers;
        if (nw == 0 || nw > 1024)
            throw Error("Threads::numWorkers = " + std::to_string(nw), "lockstep launch",
                        "1 to 1024 workers per block");
        core::detail::BlockChecker checker(nw, layout.totalBytes, backend.checkShared);
        auto body = [&](uint32_t wi) {
            for (uint32_t b = 0; b < cfg.gridSize && !checker.failed(); ++b) {
                checker.beginBlock(wi, b);
                try {
                    Worker<Cfg, core::Threads> w(wi, nw, b, cfg.gridSize, checker.sharedBase(),
                                                 checker.sharedBase() + layout.dynOffset, cfg.dynSharedBytes, &checker);
                    kernel(w, args...);
                } catch (std::exception const& e) {
                    checker.fail(std::string("worker ") + std::to_string(wi) + " threw: " + e.what());
                }
                checker.arrive(wi, core::detail::Arrival::BlockEnd);
            }
        };
        std::vector<std::thread> threads;
        threads.reserve(nw);
        for (uint32_t wi = 0; wi < nw; ++wi)
            threads.emplace_back(body, wi);
        for (auto& t : threads)
            t.join();
        if (checker.failed()) throw Error(checker.message(), "kernel " + kernelName<Kernel>() + " (Threads backend)");
    }
};

} // namespace strata::lockstep::detail
