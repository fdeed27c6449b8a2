// The `threaded` front end: loops over an independent range, optionally with one interdependent axis, lowered to
// lockstep kernels. It is the ClimaComms `@threaded` idea in C++:
//
//     threaded(backend, independent(nCols), interdependent<NRows>(sharedBytes), body);
//
// runs `body(ctx, j)` once per independent index j, one block per j (grid-stride when there are more j than blocks),
// with the block's workers spread over the interdependent axis 0..NRows-1. Inside the body every use of the
// interdependent index happens in a step
//
//     ctx.syncInterdependent([&](uint32_t i) { ... });   // runs for every i, then syncs the block
//     ctx.syncInterdependent2D(outer, inner, f);         // f(o, i) for o * inner + i < outer * inner, then syncs
//
// (or in a walk of the workers' own, lockstep::forEachInRange2D, that such a step follows before anything reads
// what it wrote)
// and shared arrays come from `ctx.staticSharedArray<T, M>()`, carved in order from the `sharedBytes` reserved at the
// call (asking for more is an error naming both numbers). Without an interdependent axis,
//
//     threaded(backend, independent(n), body);           // body(i) for every i, no shared memory, no syncs
//
// is a plain parallel loop. Bodies are functors (on CUDA: non-generic, or functor structs with a template
// operator()), called on every backend with the same arguments.
#pragma once

#include <strata/core/lockstep.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace strata::threaded {

struct Independent {
    uint32_t count;
};
inline Independent independent(uint32_t count) { return {count}; }

template <uint32_t N>
struct Interdependent {
    std::size_t sharedBytes = 0;
};
template <uint32_t N>
Interdependent<N> interdependent(std::size_t sharedBytes = 0) {
    return {sharedBytes};
}

// Bytes to reserve for `count` shared arrays of M elements of T (alignment included).
template <class T, uint32_t M>
constexpr std::size_t sharedBytesFor(uint32_t count = 1) {
    return count * lockstep::detail::alignUp(sizeof(T) * M);
}

template <class TWorker, uint32_t N>
class Context {
public:
    STRATA_HD explicit Context(TWorker const& worker) : m_worker(worker) {}

    template <class F>
    STRATA_HD void syncInterdependent(F&& f) const {
        lockstep::makeForEach<N>(m_worker)([&](uint32_t i) { f(i); });
        m_worker.sync();
    }

    // f(o, i) for o < outer and i < inner (i fastest; the flat index o * inner + i spread over the workers as above,
    // lockstep::forEachInRange2D), then a sync. For tiles of whole columns.
    template <class F>
    STRATA_HD void syncInterdependent2D(uint32_t outer, uint32_t inner, F&& f) const {
        lockstep::forEachInRange2D(m_worker, outer, inner, f);
        m_worker.sync();
    }

    template <class T, uint32_t M>
    STRATA_HD auto staticSharedArray() {
        std::size_t const offset = m_used;
        m_used += lockstep::detail::alignUp(sizeof(T) * M);
        if (m_used > m_worker.dynSharedBytes()) fail(m_used, m_worker.dynSharedBytes());
        return lockstep::makeSharedSpan(m_worker, reinterpret_cast<T*>(m_worker.dynSharedBase() + offset), M);
    }

    STRATA_HD TWorker const& worker() const { return m_worker; }

private:
    STRATA_HD_TEMPLATE
    STRATA_HD static void fail(std::size_t needed, std::size_t reserved) {
#if STRATA_ON_DEVICE
        (void)needed;
        (void)reserved;
        __trap();
#else
        throw Error("staticSharedArray needs " + std::to_string(needed) + " bytes of shared memory but only " +
                        std::to_string(reserved) + " were reserved",
                    "threaded", "interdependent<N>(bytes) with bytes >= " + std::to_string(needed));
#endif
    }

    TWorker const& m_worker;
    std::size_t m_used = 0;
};

namespace detail {

template <uint32_t N, class Body>
struct InterdependentKernel {
    static constexpr uint32_t blockDomSize = N;

    template <class TWorker>
    STRATA_HD void operator()(TWorker const& worker, Body const& body, uint32_t count) const {
        for (uint32_t j = worker.blockDomIdx(); j < count; j += worker.gridDomSize()) {
            Context<TWorker, N> ctx(worker);
            body(ctx, j);
            if (j + worker.gridDomSize() < count) worker.sync(); // the next j reuses the shared arrays
        }
    }
};

template <class Body>
struct IndependentKernel {
    static constexpr uint32_t blockDomSize = core::defaultBlockItems;

    template <class TWorker>
    STRATA_HD void operator()(TWorker const& worker, Body const& body, uint32_t count) const {
        using Backend = typename TWorker::BackendType;
        for (uint32_t b = worker.blockDomIdx(); b * blockDomSize < count; b += worker.gridDomSize()) {
            uint32_t const first = b * blockDomSize;
            uint32_t const valid = count - first < blockDomSize ? count - first : blockDomSize;
            if constexpr (Backend::oneWorkerPerBlock) {
                // One worker per block: a plain loop without a bounds test per element, which the compiler can
                // vectorise (with the test the lockstep triad falls well short of the plain loop's bandwidth).
                for (uint32_t i = 0; i < valid; ++i)
                    body(first + i);
            } else {
                lockstep::makeForEach(worker)([&](uint32_t i) {
                    if (i < valid) body(first + i);
                });
            }
        }
    }
};

} // namespace detail

template <class Backend, uint32_t N, class Body>
void threaded(Backend const& backend, Independent range, Interdependent<N> axis, Body const& body) {
    uint32_t const grid = std::min(range.count, Backend::maxGridBlocks);
    lockstep::launch(backend, lockstep::configSMem(grid, axis.sharedBytes), detail::InterdependentKernel<N, Body>{},
                     body, range.count);
}

template <class Backend, class Body>
void threaded(Backend const& backend, Independent range, Body const& body) {
    using Kernel = detail::IndependentKernel<Body>;
    uint32_t const blocks = (range.count + Kernel::blockDomSize - 1) / Kernel::blockDomSize;
    lockstep::launch(backend, lockstep::config(std::min(blocks, Backend::maxGridBlocks)), Kernel{}, body, range.count);
}

} // namespace strata::threaded

#include <strata/core/threaded_collectives.hpp> // reduce, scans and broadcast over the interdependent axis
