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
// what it wrote).
//
// Shared memory is declared once, by the body: a `struct Shared { double column[NRows]; ... };` member sizes the
// block's static shared memory, and `ctx.sharedArray(&Shared::column)` / `ctx.sharedVar(&Shared::x)` view it (the
// `sharedBytes` argument is then left out). The older form reserves bytes at the call and carves them in order with
// `ctx.staticSharedArray<T, M>()`; asking for more than was reserved is an error naming both numbers, on every
// backend (an exception on the CPU ones, a trap on a GPU). Without an interdependent axis,
//
//     threaded(backend, independent(n), body);           // body(i) for every i, no shared memory, no syncs
//
// is a plain parallel loop. `independent(ni, nj)` or `independent(ni, nj, nk)` gives several independent axes, the
// body one index per axis (`body(i, j)`, `body(ctx, i, j)`), the first the fastest. `interdependentUpTo<N>(extent)`
// is an interdependent axis of a run-time extent of at most N (`ctx.extent()`; the block is sized for N, the steps
// run below the extent, and so do the collectives of threaded_collectives.hpp). Bodies are functors
// (on CUDA: non-generic, or functor structs with a template operator()), called on every backend with the same
// arguments.
//
// Two knobs tune the launch without changing a bit of the result (each index's body runs the same operations):
//
//     threaded(backend, independent(n), coarsen(4), body);                  // 4 blocks' worth of indices per block
//     threaded(backend, independent(n), blockSize<64>(), body);             // 64 indices per block (a plain loop)
//     threaded(backend, independent(n), blockSize<64>().coarsen(4), body);
//     threaded(backend, independent(n), interdependent<N>(), coarsen(4), body); // 4 consecutive j per block
//
// as ClimaComms' `coarsen` and `block_size`. Without an interdependent axis a block takes blockSize indices (the
// default core::defaultBlockItems; on Cuda the threads of the block, at most 256) coarsen times over; with one, the
// block is the interdependent axis and coarsen(k) gives each block k consecutive independent indices in turn, so a
// launch has ceil(n / k) blocks (at most Backend::maxGridBlocks, the rest grid-stride). blockSize with an
// interdependent axis does not compile: the axis is the block.
//
// A call of another shape (two axes of a kind, the axes swapped or missing, a body that takes the interdependent
// index or no context, a mutable body) does not compile, with a message that says what to write instead
// (tests/compile_fail/threaded_*.cpp).
#pragma once

#include <strata/core/error.hpp>
#include <strata/core/lockstep.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <tuple>
#include <type_traits>

namespace strata::threaded {

struct Independent {
    uint32_t count;
};
inline Independent independent(uint32_t count) { return {count}; }

// Two or three independent axes: the body takes one index per axis, body(i, j) or body(ctx, i, j) (and k), with the
// first axis the fastest, as the flattened loop `i = f % ni, j = (f / ni) % nj, k = f / (ni nj)` would take them.
// The product of the extents must fit in 32 bits (checked at the call).
template <uint32_t D>
struct IndependentAxes {
    static_assert(D == 2 || D == 3, "threaded: independent(...) takes one, two or three extents");
    uint32_t extent[D];
};
inline IndependentAxes<2> independent(uint32_t ni, uint32_t nj) { return {{ni, nj}}; }
inline IndependentAxes<3> independent(uint32_t ni, uint32_t nj, uint32_t nk) { return {{ni, nj, nk}}; }

template <uint32_t N>
struct Interdependent {
    static_assert(N > 0, "threaded: interdependent<N> needs N > 0 (no interdependent axis: leave it out)");
    static constexpr uint32_t bound = N;
    static constexpr bool bounded = false;
    std::size_t sharedBytes = 0;
};
template <uint32_t N>
Interdependent<N> interdependent(std::size_t sharedBytes = 0) {
    return {sharedBytes};
}

// An interdependent axis whose extent is known at run time, at most N: the block is sized for N, and the steps run
// for the indices below `extent` only (checked at the call: extent <= N). The body reads it as ctx.extent().
template <uint32_t N>
struct InterdependentUpTo {
    static_assert(N > 0, "threaded: interdependentUpTo<N> needs N > 0 (no interdependent axis: leave it out)");
    static constexpr uint32_t bound = N;
    static constexpr bool bounded = true;
    uint32_t extent = N;
    std::size_t sharedBytes = 0;
};
template <uint32_t N>
InterdependentUpTo<N> interdependentUpTo(uint32_t extent, std::size_t sharedBytes = 0) {
    return {extent, sharedBytes};
}

// Bytes to reserve for `count` shared arrays of M elements of T (alignment included).
template <class T, uint32_t M>
constexpr std::size_t sharedBytesFor(uint32_t count = 1) {
    return count * lockstep::detail::alignUp(sizeof(T) * M);
}

// The launch knobs: B indices per block of a loop without an interdependent axis (0: core::defaultBlockItems), and
// each block taking `coarsen` blocks' worth of indices (with an interdependent axis: `coarsen` consecutive
// independent indices). Checked at the call: coarsen >= 1.
template <uint32_t B = 0>
struct Knobs {
    uint32_t coarsenBy = 1;
    constexpr Knobs<B> coarsen(uint32_t k) const { return {k}; }
};
inline constexpr Knobs<> coarsen(uint32_t k) { return {k}; }
template <uint32_t B>
constexpr Knobs<B> blockSize() {
    static_assert(B > 0, "threaded: blockSize<B>() needs B > 0");
    return {};
}

// Bounded: the interdependent extent is a run-time value at most N (interdependentUpTo<N>(extent)).
template <class TWorker, uint32_t N, bool Bounded = false>
class Context {
public:
    STRATA_HD explicit Context(TWorker const& worker, uint32_t extent = N) : m_worker(worker), m_extent(extent) {}

    // The interdependent axis' extent: N, or the run-time extent of interdependentUpTo<N>(extent).
    STRATA_HD uint32_t extent() const { return Bounded ? m_extent : N; }

    template <class F>
    STRATA_HD void syncInterdependent(F&& f) const {
        static_assert(std::is_invocable_v<F&, uint32_t>,
                      "threaded: ctx.syncInterdependent(f) calls f(i) for every interdependent index i (a uint32_t); "
                      "for the pairs (o, i) of a tile write ctx.syncInterdependent2D(outer, inner, f)");
        if constexpr (std::is_invocable_v<F&, uint32_t>) {
            if constexpr (Bounded)
                lockstep::makeForEach<N>(m_worker)([&](uint32_t i) {
                    if (i < m_extent) f(i);
                });
            else
                lockstep::makeForEach<N>(m_worker)([&](uint32_t i) { f(i); });
        }
        m_worker.sync();
    }

    // f(o, i) for o < outer and i < inner (i fastest; the flat index o * inner + i spread over the workers as above,
    // lockstep::forEachInRange2D), then a sync. For tiles of whole columns.
    template <class F>
    STRATA_HD void syncInterdependent2D(uint32_t outer, uint32_t inner, F&& f) const {
        static_assert(std::is_invocable_v<F&, uint32_t, uint32_t>,
                      "threaded: ctx.syncInterdependent2D(outer, inner, f) calls f(o, i) (two uint32_t); for one index "
                      "write ctx.syncInterdependent(f)");
        if constexpr (std::is_invocable_v<F&, uint32_t, uint32_t>)
            lockstep::forEachInRange2D(m_worker, outer, inner, f);
        m_worker.sync();
    }

    // The body's own shared memory, declared as a `struct Shared` member of the body: it sizes the block (static
    // shared memory, as a lockstep kernel's `Shared` does), so the budget is stated once, by the type.
    template <class S, class T, std::size_t M>
    STRATA_HD auto sharedArray(T (S::*member)[M]) const {
        return lockstep::sharedArray(m_worker, member);
    }
    template <class S, class T>
    STRATA_HD auto sharedVar(T S::*member) const {
        return lockstep::sharedVar(m_worker, member);
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
    uint32_t m_extent;
    std::size_t m_used = 0;
};

namespace detail {

// A body's `struct Shared`, passed on to the kernel that runs it, so that the launch gives the block that much static
// shared memory on every backend.
template <class Body>
struct BodyShared {};
template <lockstep::detail::HasShared Body>
struct BodyShared<Body> {
    using Shared = typename Body::Shared;
};

// Bounded: the steps run below `extent` (interdependentUpTo); otherwise extent is N.
template <uint32_t N, class Body, bool Bounded = false>
struct InterdependentKernel : BodyShared<Body> {
    static constexpr uint32_t blockDomSize = N;

    // Block b takes the indices j of the chunks b, b + grid, ..., a chunk being `coarsen` consecutive j.
    template <class TWorker>
    STRATA_HD void operator()(TWorker const& worker, Body const& body, uint32_t count, uint32_t extent,
                              uint32_t coarsen) const {
        uint64_t const stride = uint64_t(worker.gridDomSize()) * coarsen;
        for (uint64_t first = uint64_t(worker.blockDomIdx()) * coarsen; first < count; first += stride) {
            uint64_t const end = first + coarsen < count ? first + coarsen : count;
            for (uint64_t j = first; j < end; ++j) {
                Context<TWorker, N, Bounded> ctx(worker, extent);
                body(ctx, static_cast<uint32_t>(j));
                if (j + 1 < end || first + stride < count) worker.sync(); // the next j reuses the shared arrays
            }
        }
    }
};

// B indices per block (0: the default), each block taking `coarsen` runs of B consecutive indices.
template <class Body, uint32_t B = 0>
struct IndependentKernel {
    static constexpr uint32_t blockDomSize = B > 0 ? B : core::defaultBlockItems;

    template <class TWorker>
    STRATA_HD void operator()(TWorker const& worker, Body const& body, uint32_t count, uint32_t coarsen) const {
        using Backend = typename TWorker::BackendType;
        uint64_t const chunk = uint64_t(blockDomSize) * coarsen, stride = chunk * worker.gridDomSize();
        for (uint64_t first = worker.blockDomIdx() * chunk; first < count; first += stride) {
            uint64_t const end = first + chunk < count ? first + chunk : count;
            if constexpr (Backend::oneWorkerPerBlock) {
                // One worker per block: a plain loop without a bounds test per element, which the compiler can
                // vectorise (with the test the lockstep triad falls well short of the plain loop's bandwidth).
                uint32_t const lo = static_cast<uint32_t>(first), valid = static_cast<uint32_t>(end - first);
                for (uint32_t i = 0; i < valid; ++i)
                    body(lo + i);
            } else {
                for (uint64_t run = first; run < end; run += blockDomSize) {
                    uint32_t const r = static_cast<uint32_t>(run);
                    uint32_t const valid = static_cast<uint32_t>(end - run < blockDomSize ? end - run : blockDomSize);
                    lockstep::makeForEach(worker)([&](uint32_t i) {
                        if (i < valid) body(r + i);
                    });
                }
            }
        }
    }
};

// A body over several independent axes, called with the flattened index: splits it, first axis fastest.
template <uint32_t D, class Body>
struct SplitIndependent : BodyShared<Body> {
    Body body;
    uint32_t extent[D];

    STRATA_HD void operator()(uint32_t flat) const {
        uint32_t const i = flat % extent[0], rest = flat / extent[0];
        if constexpr (D == 2)
            body(i, rest);
        else
            body(i, rest % extent[1], rest / extent[1]);
    }
    template <class Ctx>
    STRATA_HD void operator()(Ctx& ctx, uint32_t flat) const {
        uint32_t const i = flat % extent[0], rest = flat / extent[0];
        if constexpr (D == 2)
            body(ctx, i, rest);
        else
            body(ctx, i, rest % extent[1], rest / extent[1]);
    }
};

// The flattened count of several axes; an error when it does not fit the 32-bit index.
template <uint32_t D>
uint32_t flatCount(IndependentAxes<D> const& axes) {
    uint64_t n = 1;
    for (uint32_t e : axes.extent)
        n *= e;
    if (n > UINT32_MAX)
        throw Error("independent(...) spans " + std::to_string(n) + " indices", "threaded",
                    "at most 2^32 - 1 in all (the product of the extents)");
    return static_cast<uint32_t>(n);
}

template <uint32_t D, class Body>
SplitIndependent<D, Body> splitOf(IndependentAxes<D> const& axes, Body const& body) {
    SplitIndependent<D, Body> split{{}, body, {}};
    for (uint32_t d = 0; d < D; ++d)
        split.extent[d] = axes.extent[d];
    return split;
}

template <uint32_t D, class Body, class... Lead>
constexpr bool takesAxes() {
    if constexpr (D == 2)
        return std::is_invocable_v<Body const&, Lead..., uint32_t, uint32_t>;
    else
        return std::is_invocable_v<Body const&, Lead..., uint32_t, uint32_t, uint32_t>;
}

template <class T>
inline constexpr bool isInterdependent = false;
template <uint32_t N>
inline constexpr bool isInterdependent<Interdependent<N>> = true;
template <uint32_t N>
inline constexpr bool isInterdependent<InterdependentUpTo<N>> = true;
template <class T>
inline constexpr bool isIndependent = std::is_same_v<T, Independent>;
template <uint32_t D>
inline constexpr bool isIndependent<IndependentAxes<D>> = true;
template <class T>
inline constexpr bool isAxis = isIndependent<T> || isInterdependent<T>;
template <class T>
inline constexpr bool isKnobs = false;
template <uint32_t B>
inline constexpr bool isKnobs<Knobs<B>> = true;
template <class T>
inline constexpr bool alwaysFalse = false;

// The context a body with an interdependent axis of N is called with on Backend (the launch's worker type).
template <class Backend, uint32_t N, bool Bounded = false>
using ContextFor =
    Context<lockstep::Worker<lockstep::BlockCfg<lockstep::CtUint32<N>>, typename Backend::Tag>, N, Bounded>;

// Misuse of threaded, caught where it is written with a message that says what to write instead (rather than as an
// overload or call error deep in the kernels below).
template <class Backend, uint32_t N, class Body, bool Bounded = false>
constexpr bool checkInterdependentBody() {
    using Ctx = ContextFor<Backend, N, Bounded>;
    if constexpr (std::is_invocable_v<Body const&, Ctx&, uint32_t const&>) {
    } else if constexpr (std::is_invocable_v<Body&, Ctx&, uint32_t const&>) {
        static_assert(alwaysFalse<Body>, "threaded: the body's operator() must be const (every worker calls the one "
                                         "body): no mutable lambda, no non-const operator()");
    } else if constexpr (std::is_invocable_v<Body const&, Ctx&, uint32_t&>) {
        static_assert(alwaysFalse<Body>, "threaded: the body takes the independent index by value, body(ctx, "
                                         "uint32_t j), not by non-const reference");
    } else if constexpr (std::is_invocable_v<Body const&, Ctx&, uint32_t, uint32_t>) {
        static_assert(alwaysFalse<Body>,
                      "threaded: the interdependent index is not a parameter of the body: write body(ctx, j) and use "
                      "the index inside a step, ctx.syncInterdependent([&](uint32_t i) { ... }); a second independent "
                      "index comes with independent(ni, nj)");
    } else if constexpr (std::is_invocable_v<Body const&, uint32_t>) {
        static_assert(alwaysFalse<Body>,
                      "threaded: with an interdependent axis the body is body(ctx, j), the context first; a body(i) "
                      "without one is threaded(backend, independent(n), body)");
    } else {
        static_assert(alwaysFalse<Body>, "threaded: with an interdependent axis the body must be callable as "
                                         "body(ctx, j): ctx a threaded::Context&, j the independent index (uint32_t)");
    }
    return std::is_invocable_v<Body const&, Ctx&, uint32_t const&>;
}

template <class Backend, class Body>
constexpr bool checkIndependentBody() {
    if constexpr (std::is_invocable_v<Body const&, uint32_t>) {
    } else if constexpr (isInterdependent<Body>) {
        static_assert(alwaysFalse<Body>, "threaded: the body is missing: threaded(backend, independent(n), "
                                         "interdependent<N>(bytes), body)");
    } else if constexpr (std::is_invocable_v<Body&, uint32_t>) {
        static_assert(alwaysFalse<Body>, "threaded: the body's operator() must be const (every worker calls the one "
                                         "body): no mutable lambda, no non-const operator()");
    } else if constexpr (std::is_invocable_v<Body const&, uint32_t, uint32_t>) {
        static_assert(alwaysFalse<Body>,
                      "threaded: a body of two indices needs two independent axes: threaded(backend, "
                      "independent(ni, nj), body), body(i, j)");
    } else if constexpr (std::is_invocable_v<Body const&, ContextFor<Backend, 1>&, uint32_t>) {
        static_assert(alwaysFalse<Body>,
                      "threaded: a body(ctx, j) needs an interdependent axis: threaded(backend, independent(n), "
                      "interdependent<N>(bytes), body); without one the body is body(i)");
    } else {
        static_assert(alwaysFalse<Body>, "threaded: without an interdependent axis the body must be callable as "
                                         "body(i), i a uint32_t");
    }
    return std::is_invocable_v<Body const&, uint32_t>;
}

template <class T>
inline constexpr bool isCountOrAxis = std::is_integral_v<T> || isAxis<T> || isKnobs<T>;

template <class Backend, class... Args>
constexpr void rejectThreadedCall() {
    using First = std::tuple_element_t<0, std::tuple<Args..., void>>;
    using Last = std::tuple_element_t<sizeof...(Args) == 0 ? 0 : sizeof...(Args) - 1, std::tuple<Args..., void>>;
    constexpr int independents = (0 + ... + int(isIndependent<Args>));
    constexpr int interdependents = (0 + ... + int(isInterdependent<Args>));
    if constexpr (isAxis<Backend>) {
        static_assert(alwaysFalse<Backend>, "threaded: the backend comes first: threaded(backend, independent(n), "
                                            "[interdependent<N>(bytes),] body)");
    } else if constexpr (interdependents > 1) {
        static_assert(alwaysFalse<Backend>,
                      "threaded: one interdependent axis per call: for a block of outer x inner elements give "
                      "interdependent<Outer * Inner>(bytes) and walk it with ctx.syncInterdependent2D(outer, inner, "
                      "f), f(o, i)");
    } else if constexpr (independents > 1) {
        static_assert(alwaysFalse<Backend>,
                      "threaded: one independent(...) per call: give every independent extent to it, "
                      "independent(ni, nj[, nk]), and take one index each, body(i, j) or body(ctx, i, j)");
    } else if constexpr (isInterdependent<First>) {
        static_assert(alwaysFalse<Backend>, "threaded: the independent axis comes first: threaded(backend, "
                                            "independent(n), interdependent<N>(bytes), body)");
    } else if constexpr (std::is_integral_v<First>) {
        static_assert(
            alwaysFalse<Backend>,
            "threaded: give the independent range as independent(n): threaded(backend, independent(n), body)");
    } else if constexpr (independents == 0) {
        static_assert(alwaysFalse<Backend>, "threaded: the independent axis is missing: threaded(backend, "
                                            "independent(n), [interdependent<N>(bytes),] body)");
    } else if constexpr (sizeof...(Args) == 0 || isCountOrAxis<Last>) {
        static_assert(alwaysFalse<Backend>, "threaded: the body is missing: threaded(backend, independent(n), "
                                            "[interdependent<N>(bytes),] body)");
    } else if constexpr ((0 + ... + int(isKnobs<Args>)) > 0) {
        static_assert(alwaysFalse<Backend>, "threaded: the knobs come after the axes, just before the body: "
                                            "threaded(backend, independent(n), [interdependent<N>(bytes),] "
                                            "coarsen(k) or blockSize<B>().coarsen(k), body)");
    } else {
        static_assert(alwaysFalse<Backend>, "threaded: the call is threaded(backend, independent(n), body) or "
                                            "threaded(backend, independent(n), interdependent<N>(bytes), body)");
    }
}

} // namespace detail

namespace detail {
template <uint32_t B>
uint32_t checkedCoarsen(Knobs<B> knobs) {
    if (knobs.coarsenBy == 0)
        throw Error("coarsen(0)", "threaded", "coarsen(k) with k >= 1 (the indices each block takes, in runs)");
    return knobs.coarsenBy;
}
template <uint32_t B>
constexpr void blockSizeOnlyWithoutInterdependent() {
    static_assert(B == 0, "threaded: blockSize<B>() sizes the blocks of a loop without an interdependent axis; with "
                          "one, the block is the axis, interdependent<N>: leave blockSize out (coarsen(k) still "
                          "applies)");
}
} // namespace detail

template <class Backend, uint32_t N, class Body, uint32_t B = 0>
void threaded(Backend const& backend, Independent range, Interdependent<N> axis, Knobs<B> knobs, Body const& body) {
    detail::blockSizeOnlyWithoutInterdependent<B>();
    if constexpr (B == 0 && detail::checkInterdependentBody<Backend, N, Body>()) { // else only the message above
        uint32_t const coarsen = detail::checkedCoarsen(knobs);
        uint32_t const grid = std::min(range.count / coarsen + (range.count % coarsen != 0), Backend::maxGridBlocks);
        lockstep::launch(backend, lockstep::configSMem(grid, axis.sharedBytes), detail::InterdependentKernel<N, Body>{},
                         body, range.count, N, coarsen);
    }
}

template <class Backend, uint32_t N, class Body, uint32_t B = 0>
void threaded(Backend const& backend, Independent range, InterdependentUpTo<N> axis, Knobs<B> knobs, Body const& body) {
    detail::blockSizeOnlyWithoutInterdependent<B>();
    if constexpr (B == 0 && detail::checkInterdependentBody<Backend, N, Body, true>()) { // else only the message
        if (axis.extent > N)
            throw Error("interdependentUpTo<" + std::to_string(N) + ">(" + std::to_string(axis.extent) +
                            "): the extent exceeds the bound",
                        "threaded", "an extent of at most " + std::to_string(N));
        uint32_t const coarsen = detail::checkedCoarsen(knobs);
        uint32_t const grid = std::min(range.count / coarsen + (range.count % coarsen != 0), Backend::maxGridBlocks);
        lockstep::launch(backend, lockstep::configSMem(grid, axis.sharedBytes),
                         detail::InterdependentKernel<N, Body, true>{}, body, range.count, axis.extent, coarsen);
    }
}

template <class Backend, class Body, uint32_t B = 0>
void threaded(Backend const& backend, Independent range, Knobs<B> knobs, Body const& body) {
    if constexpr (detail::checkIndependentBody<Backend, Body>()) { // else only the message above
        using Kernel = detail::IndependentKernel<Body, B>;
        uint64_t const chunk = uint64_t(Kernel::blockDomSize) * detail::checkedCoarsen(knobs);
        uint64_t const blocks = (range.count + chunk - 1) / chunk;
        lockstep::launch(backend,
                         lockstep::config(static_cast<uint32_t>(std::min<uint64_t>(blocks, Backend::maxGridBlocks))),
                         Kernel{}, body, range.count, knobs.coarsenBy);
    }
}

template <class Backend, uint32_t D, class Axis, class Body, uint32_t B = 0>
requires detail::isInterdependent<Axis>
void threaded(Backend const& backend, IndependentAxes<D> axes, Axis axis, Knobs<B> knobs, Body const& body) {
    if constexpr (detail::takesAxes<D, Body, detail::ContextFor<Backend, Axis::bound, Axis::bounded>&>()) {
        threaded(backend, independent(detail::flatCount(axes)), axis, knobs, detail::splitOf(axes, body));
    } else {
        static_assert(detail::alwaysFalse<Body>,
                      "threaded: with independent(ni, nj[, nk]) and an interdependent axis the body takes the "
                      "context and one index per independent axis: body(ctx, i, j[, k]), each a uint32_t");
    }
}

template <class Backend, uint32_t D, class Body, uint32_t B = 0>
void threaded(Backend const& backend, IndependentAxes<D> axes, Knobs<B> knobs, Body const& body) {
    if constexpr (detail::takesAxes<D, Body>()) {
        threaded(backend, independent(detail::flatCount(axes)), knobs, detail::splitOf(axes, body));
    } else {
        static_assert(detail::alwaysFalse<Body>, "threaded: with independent(ni, nj[, nk]) the body takes one index "
                                                 "per axis: body(i, j[, k]), each a uint32_t");
    }
}

// Without knobs: the defaults (core::defaultBlockItems indices per block, no coarsening).
template <class Backend, class Range, class Axis, class Body>
requires(detail::isIndependent<Range>&& detail::isInterdependent<Axis> &&
         !detail::isKnobs<Body>) void threaded(Backend const& backend, Range range, Axis axis, Body const& body) {
    threaded(backend, range, axis, Knobs<>{}, body);
}
template <class Backend, class Range, class Body>
requires(detail::isIndependent<Range> && !detail::isAxis<Body> &&
         !detail::isKnobs<Body>) void threaded(Backend const& backend, Range range, Body const& body) {
    threaded(backend, range, Knobs<>{}, body);
}

// Any other call: a compile error that says what to write (the overloads above are more specialised and win).
template <class Backend, class... Args>
void threaded(Backend const&, Args const&...) {
    detail::rejectThreadedCall<Backend, Args...>();
}

} // namespace strata::threaded

#include <strata/core/threaded_collectives.hpp> // reduce, scans and broadcast over the interdependent axis
