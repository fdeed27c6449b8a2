// Block collectives: reduce, scan and broadcast over a lockstep index domain, with bits that do not depend on the
// number of workers.
//
// Every collective is called by every worker of the block, at the same point (like sync(), which it calls), over a
// forEach domain of N elements and a scratch array in block shared memory of at least N elements of T:
//
//     T     reduce(forEach, scratch, var, op)            op over the elements of the context variable `var`
//     T     sum / minimum / maximum(forEach, scratch, var)
//     bool  anyOf / allOf(forEach, scratch, flags)        flags: a context variable of bool, scratch of bool
//     Var   inclusiveScan(forEach, scratch, var, op)     element i: var[0] op var[1] op ... op var[i]
//     Var   exclusiveScan(forEach, scratch, var, init, op)   element 0: init, element i > 0: the inclusive scan's i-1
//     T     broadcast(forEach, scratch, var, k)          element k's value, on every worker (k in the domain)
//
// `op(a, b)` must be associative; it need not be commutative: the left operand always holds lower indices. Each
// collective returns on every worker with the result (a value, or a context variable over the same domain) and leaves
// the scratch free for the next collective. The scratch is counted in the kernel's shared memory like any other
// array: a member `T scratch[N]` of the kernel's `struct Shared`, or `collectiveBytes<T, N>()` of the dynamic bytes
// (threaded's `interdependent<N>(bytes)`).
//
// The order of combination is fixed by the domain's indices, never by the workers, so Serial, OpenMP, Threads with any
// worker count and a GPU block compute the same operations in the same order and give the same bits:
//   reduce  a pairwise tree: for stride s = 1, 2, 4, ... every element i that is a multiple of 2s and has i + s < N
//           becomes op(a[i], a[i + s]); the result is a[0]. For N = 4: (a0 + a1) + (a2 + a3).
//   scan    Brent-Kung: an up-sweep (s = 1, 2, 4, ...: a[i] = op(a[i - s], a[i]) for i = 2s - 1, 4s - 1, ... < N),
//           then a down-sweep (s from the up-sweep's largest down to 1: a[i] = op(a[i - s], a[i]) for i = 3s - 1,
//           5s - 1, ... < N).
// `detail::serialTreeReduce` and `detail::serialScan` below evaluate the same orders on host arrays. For floating-point
// `+` these are not a left-to-right sum: {1, 1e100, -1e100, 1} sums to 0, not 1.
//
// With several workers one step of the tree is one sync: a reduction costs ceil(log2 N) + 2 syncs, a scan about
// 2 log2 N + 2, a broadcast 2. With one (oneWorkerPerBlock: Serial, OpenMP) the worker evaluates the same orders as it
// walks the elements, without the scratch or syncs (detail::pairwiseTree, detail::OrderedTree). On Threads each sync
// names the collective and its call site, so workers that meet at a barrier from different collectives (one inside a
// branch, one not reached by every worker) are reported with both sites.
#pragma once

#include <strata/core/config.hpp>
#include <strata/core/error.hpp>
#include <strata/core/lockstep/for_each.hpp>
#include <strata/core/lockstep/launch_cfg.hpp>
#include <strata/core/lockstep/shared.hpp>
#include <strata/core/lockstep/worker.hpp>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

namespace strata::core::detail {
void checkedArriveAt(BlockChecker* c, uint32_t worker, char const* what, char const* file, uint32_t line);
} // namespace strata::core::detail

namespace strata::lockstep {

// Shared bytes a collective over N elements of T needs (what threaded's interdependent<N>(bytes) must include).
template <class T, uint32_t N>
constexpr std::size_t collectiveBytes() {
    return detail::alignUp(sizeof(T) * N);
}

// The operators of the common reductions. Min and Max keep the left operand unless the right one is strictly
// smaller (larger): with NaNs the result is still fixed by the order.
struct Plus {
    template <class T>
    STRATA_HD T operator()(T const& a, T const& b) const {
        return a + b;
    }
};
struct Min {
    template <class T>
    STRATA_HD T operator()(T const& a, T const& b) const {
        return b < a ? b : a;
    }
};
struct Max {
    template <class T>
    STRATA_HD T operator()(T const& a, T const& b) const {
        return a < b ? b : a;
    }
};
struct LogicalOr {
    STRATA_HD bool operator()(bool a, bool b) const { return a || b; }
};
struct LogicalAnd {
    STRATA_HD bool operator()(bool a, bool b) const { return a && b; }
};

namespace detail {

// A collective's step boundary: a sync that, on the checking backend, says which collective and call site it belongs
// to.
struct CollectiveSite {
    char const* what;
    char const* file;
    uint32_t line;
};

template <class TWorker>
STRATA_HD void collectiveSync(TWorker const& worker, CollectiveSite const& site) {
    if constexpr (TWorker::checked) {
        core::detail::checkedArriveAt(worker.checker(), worker.workerIdx(), site.what, site.file, site.line);
    } else {
        (void)site;
        worker.sync();
    }
}

// Never returns: a scratch smaller than the collective's domain.
[[noreturn]] STRATA_HD inline void scratchTooSmall(uint32_t size, uint32_t n, CollectiveSite const& site) {
#if STRATA_ON_DEVICE
    (void)size;
    (void)n;
    (void)site;
    __trap();
    __builtin_unreachable();
#else
    throw Error(std::string(site.what) + ": the scratch array holds " + std::to_string(size) +
                    " elements, the domain has " + std::to_string(n),
                std::string(site.file) + ":" + std::to_string(site.line),
                "a shared scratch array of at least the domain's size (collectiveBytes<T, N>())");
#endif
}

template <class Scratch>
STRATA_HD void requireScratch(Scratch const& scratch, uint32_t n, CollectiveSite const& site) {
    if (scratch.size() < n) scratchTooSmall(scratch.size(), n, site);
}

// Work items of one step, spread over the workers: f(p) for p in 0..count-1. Which worker takes a pair does not change
// any result: the pairs of one step touch disjoint elements.
template <class TWorker, class F>
STRATA_HD void forEachPair(TWorker const& worker, uint32_t count, F&& f) {
    uint32_t const nw = worker.numWorkers();
    for (uint32_t p = worker.workerIdx(); p < count; p += nw)
        f(p);
}

template <class T, class Scratch, class Op>
STRATA_HD void combineInto(Scratch const& a, uint32_t left, uint32_t right, uint32_t into, Op const& op) {
    T const l = a[left];
    T const r = a[right];
    a[into] = op(l, r);
}

// The pairwise tree over a[0..n-1], in place: the result is a[0]. Ends with a sync after the last step.
template <class T, class TWorker, class Scratch, class Op>
STRATA_HD void treeReduceInPlace(TWorker const& worker, Scratch const& a, uint32_t n, Op const& op,
                                 CollectiveSite const& site) {
    for (uint32_t s = 1; s < n; s *= 2) {
        uint32_t const pairs = (n - s + 2 * s - 1) / (2 * s); // i = 2 s p with i + s < n
        forEachPair(worker, pairs, [&](uint32_t p) {
            uint32_t const i = 2 * s * p;
            combineInto<T>(a, i, i + s, i, op);
        });
        collectiveSync(worker, site);
    }
}

// The Brent-Kung inclusive scan over a[0..n-1], in place. Ends with a sync after the last step.
template <class T, class TWorker, class Scratch, class Op>
STRATA_HD void scanInPlace(TWorker const& worker, Scratch const& a, uint32_t n, Op const& op,
                           CollectiveSite const& site) {
    uint32_t top = 0;
    for (uint32_t s = 1; 2 * s <= n; s *= 2) {
        uint32_t const count = n / (2 * s); // i = 2 s (p + 1) - 1 < n
        forEachPair(worker, count, [&](uint32_t p) {
            uint32_t const i = 2 * s * (p + 1) - 1;
            combineInto<T>(a, i - s, i, i, op);
        });
        collectiveSync(worker, site);
        top = s;
    }
    for (uint32_t s = top; s >= 1; s /= 2) {
        uint32_t const count = n >= 3 * s ? (n - 3 * s) / (2 * s) + 1 : 0; // i = 2 s p + 3 s - 1 < n
        if (count > 0) {
            forEachPair(worker, count, [&](uint32_t p) {
                uint32_t const i = 2 * s * p + 3 * s - 1;
                combineInto<T>(a, i - s, i, i, op);
            });
            collectiveSync(worker, site);
        }
    }
}

// The same orders on a host array, one element after another: what the collectives promise, for tests and docs.
template <class T, class Op>
T serialTreeReduce(std::vector<T> a, Op const& op) {
    uint32_t const n = static_cast<uint32_t>(a.size());
    for (uint32_t s = 1; s < n; s *= 2)
        for (uint32_t i = 0; i + s < n; i += 2 * s)
            a[i] = op(a[i], a[i + s]);
    return a[0];
}

template <class T, class Op>
std::vector<T> serialScan(std::vector<T> a, Op const& op) {
    uint32_t const n = static_cast<uint32_t>(a.size());
    uint32_t top = 0;
    for (uint32_t s = 1; 2 * s <= n; s *= 2) {
        for (uint32_t i = 2 * s - 1; i < n; i += 2 * s)
            a[i] = op(a[i - s], a[i]);
        top = s;
    }
    for (uint32_t s = top; s >= 1; s /= 2)
        for (uint32_t i = 3 * s - 1; i < n; i += 2 * s)
            a[i] = op(a[i - s], a[i]);
    return a;
}

} // namespace detail

namespace detail {

STRATA_HD constexpr uint32_t powerOfTwoAtLeast(uint32_t n) {
    uint32_t w = 1;
    while (w < n)
        w *= 2;
    return w;
}

// The pairwise tree's value over [lo, lo + W) cut at n, for one worker that reads any element (W a power of two,
// lo < n): the tree's level W/2 joins the two halves when the right one exists. T(0, bit_ceil(n)) is the reduction.
template <uint32_t W, class T, class Get, class Op>
STRATA_HD T pairwiseTree(uint32_t lo, uint32_t n, Get const& get, Op const& op) {
    if constexpr (W == 1) {
        return get(lo);
    } else {
        T const left = pairwiseTree<W / 2, T>(lo, n, get, op);
        if (lo + W / 2 >= n) return left;
        return op(left, pairwiseTree<W / 2, T>(lo + W / 2, n, get, op));
    }
}

// The same orders evaluated by one worker that sees the elements in index order (Serial, OpenMP), without the scratch:
// a binary counter of complete blocks (block d combines 2^k consecutive elements by the pairwise tree). Pushing an
// element merges the equal-sized blocks on top, as the tree's levels do; the reduction is the blocks combined from the
// top (the smallest, rightmost) down, which is how the tree joins a domain that is not a power of two; and the
// Brent-Kung prefix of the elements so far is the blocks folded from the bottom, kept per block as `prefix`.
template <class T, uint32_t N>
struct OrderedTree {
    static constexpr uint32_t maxDepth = 33;
    T block[maxDepth];
    T prefix[maxDepth];
    uint32_t size[maxDepth];
    uint32_t depth = 0;

    template <class Op>
    STRATA_HD void push(T value, Op const& op) {
        uint32_t width = 1;
        while (depth > 0 && size[depth - 1] == width) {
            value = op(block[depth - 1], value);
            width *= 2;
            --depth;
        }
        block[depth] = value;
        size[depth] = width;
        prefix[depth] = depth == 0 ? value : op(prefix[depth - 1], value);
        ++depth;
    }
    STRATA_HD T const& inclusivePrefix() const { return prefix[depth - 1]; }
    template <class Op>
    STRATA_HD T total(Op const& op) const {
        T acc = block[depth - 1];
        for (uint32_t d = depth - 1; d-- > 0;)
            acc = op(block[d], acc);
        return acc;
    }
};

} // namespace detail

namespace detail {

// The collectives' bodies, shared by the lockstep and threaded front ends: `load(idx)` gives element idx's value,
// `emit(idx, value)` takes element idx's scan result. Each body starts by writing every element into the scratch and
// ends with a sync after its last read of it.
//
// `n` is the number of elements taking part, the first n of the domain (the domain's size, or threaded's run-time
// extent under its bound); the orders are those of a domain of n elements. With n = 0 a reduction gives T{} and a scan
// emits nothing.
template <class T, class TForEach, class Scratch, class Load, class Op>
STRATA_HD T reduceCore(TForEach const& forEach, Scratch const& scratch, Load const& load, Op const& op,
                       CollectiveSite const& site, uint32_t n = TForEach::domSize) {
    requireScratch(scratch, n, site);
    auto const& worker = forEach.worker();
    if constexpr (std::remove_cvref_t<decltype(worker)>::BackendType::oneWorkerPerBlock) {
        // One worker owns every element, element i in slot i.
        auto const get = [&](uint32_t i) { return load(typename TForEach::IdxType{i, i, {}}); };
        return n == 0 ? T{} : pairwiseTree<powerOfTwoAtLeast(TForEach::domSize), T>(0, n, get, op);
    }
    if (n == 0) return T{}; // every worker alike: no sync to meet
    forEach([&](typename TForEach::IdxType const& idx) {
        if (idx.lin() < n) scratch[idx.lin()] = load(idx);
    });
    collectiveSync(worker, site);
    treeReduceInPlace<T>(worker, scratch, n, op, site);
    T const result = scratch[0];
    collectiveSync(worker, site); // every worker has read a[0]: the scratch is free again
    return result;
}

// Emits the inclusive scan (exclusive: element 0 gets init, element i > 0 the inclusive scan's i - 1).
template <bool Exclusive, class T, class TForEach, class Scratch, class Load, class Emit, class Op>
STRATA_HD void scanCore(TForEach const& forEach, Scratch const& scratch, Load const& load, Emit const& emit,
                        T const& init, Op const& op, CollectiveSite const& site, uint32_t n = TForEach::domSize) {
    requireScratch(scratch, n, site);
    auto const& worker = forEach.worker();
    if constexpr (std::remove_cvref_t<decltype(worker)>::BackendType::oneWorkerPerBlock) {
        OrderedTree<T, TForEach::domSize> tree;
        forEach([&](typename TForEach::IdxType const& idx) {
            if (idx.lin() >= n) return;
            if constexpr (Exclusive) {
                T const before = idx.lin() == 0 ? init : tree.inclusivePrefix();
                tree.push(load(idx), op);
                emit(idx, before);
            } else {
                tree.push(load(idx), op);
                emit(idx, tree.inclusivePrefix());
            }
        });
        return;
    }
    if (n == 0) return;
    forEach([&](typename TForEach::IdxType const& idx) {
        if (idx.lin() < n) scratch[idx.lin()] = load(idx);
    });
    collectiveSync(worker, site);
    scanInPlace<T>(worker, scratch, n, op, site);
    forEach([&](typename TForEach::IdxType const& idx) {
        uint32_t const i = idx.lin();
        if (i >= n) return;
        if constexpr (Exclusive)
            emit(idx, i == 0 ? init : static_cast<T>(scratch[i - 1]));
        else
            emit(idx, static_cast<T>(scratch[i]));
    });
    collectiveSync(worker, site);
}

// Never returns: a broadcast from an element outside the n taking part.
[[noreturn]] STRATA_HD inline void broadcastOutside(uint32_t k, uint32_t n, CollectiveSite const& site) {
#if STRATA_ON_DEVICE
    (void)k;
    (void)n;
    (void)site;
    __trap();
    __builtin_unreachable();
#else
    throw Error(std::string(site.what) + " from element " + std::to_string(k) + " of " + std::to_string(n),
                std::string(site.file) + ":" + std::to_string(site.line), "an element below " + std::to_string(n));
#endif
}

template <class T, class TForEach, class Scratch, class Load>
STRATA_HD T broadcastCore(TForEach const& forEach, Scratch const& scratch, uint32_t k, Load const& load,
                          CollectiveSite const& site, uint32_t n = TForEach::domSize) {
    requireScratch(scratch, 1, site);
    if (k >= n) broadcastOutside(k, n, site);
    if constexpr (std::remove_cvref_t<decltype(forEach.worker())>::BackendType::oneWorkerPerBlock) {
        T result{};
        forEach([&](typename TForEach::IdxType const& idx) {
            if (idx.lin() == k) result = load(idx);
        });
        return result;
    }
    forEach([&](typename TForEach::IdxType const& idx) {
        if (idx.lin() == k) scratch[0] = load(idx);
    });
    collectiveSync(forEach.worker(), site);
    T const result = scratch[0];
    collectiveSync(forEach.worker(), site);
    return result;
}

} // namespace detail

// ---- Over a forEach domain, with context variables -------------------------------------------------------------
// Each takes the call site as defaulted trailing arguments (the checker's messages name it); never pass them.

STRATA_HD_TEMPLATE
template <class TWorker, class Dom, class Scratch, class T, class Op>
STRATA_HD T reduce(ForEach<TWorker, Dom> const& forEach, Scratch const& scratch,
                   Variable<T, ForEach<TWorker, Dom>> const& var, Op const& op, char const* file = __builtin_FILE(),
                   uint32_t line = __builtin_LINE()) {
    return detail::reduceCore<T>(forEach, scratch, [&](auto const& idx) { return var[idx]; }, op,
                                 {"reduce", file, line});
}

STRATA_HD_TEMPLATE
template <class TWorker, class Dom, class Scratch, class T>
STRATA_HD T sum(ForEach<TWorker, Dom> const& forEach, Scratch const& scratch,
                Variable<T, ForEach<TWorker, Dom>> const& var, char const* file = __builtin_FILE(),
                uint32_t line = __builtin_LINE()) {
    return detail::reduceCore<T>(forEach, scratch, [&](auto const& idx) { return var[idx]; }, Plus{},
                                 {"sum", file, line});
}

STRATA_HD_TEMPLATE
template <class TWorker, class Dom, class Scratch, class T>
STRATA_HD T minimum(ForEach<TWorker, Dom> const& forEach, Scratch const& scratch,
                    Variable<T, ForEach<TWorker, Dom>> const& var, char const* file = __builtin_FILE(),
                    uint32_t line = __builtin_LINE()) {
    return detail::reduceCore<T>(forEach, scratch, [&](auto const& idx) { return var[idx]; }, Min{},
                                 {"minimum", file, line});
}

STRATA_HD_TEMPLATE
template <class TWorker, class Dom, class Scratch, class T>
STRATA_HD T maximum(ForEach<TWorker, Dom> const& forEach, Scratch const& scratch,
                    Variable<T, ForEach<TWorker, Dom>> const& var, char const* file = __builtin_FILE(),
                    uint32_t line = __builtin_LINE()) {
    return detail::reduceCore<T>(forEach, scratch, [&](auto const& idx) { return var[idx]; }, Max{},
                                 {"maximum", file, line});
}

STRATA_HD_TEMPLATE
template <class TWorker, class Dom, class Scratch>
STRATA_HD bool anyOf(ForEach<TWorker, Dom> const& forEach, Scratch const& scratch,
                     Variable<bool, ForEach<TWorker, Dom>> const& flags, char const* file = __builtin_FILE(),
                     uint32_t line = __builtin_LINE()) {
    return detail::reduceCore<bool>(forEach, scratch, [&](auto const& idx) { return flags[idx]; }, LogicalOr{},
                                    {"anyOf", file, line});
}

STRATA_HD_TEMPLATE
template <class TWorker, class Dom, class Scratch>
STRATA_HD bool allOf(ForEach<TWorker, Dom> const& forEach, Scratch const& scratch,
                     Variable<bool, ForEach<TWorker, Dom>> const& flags, char const* file = __builtin_FILE(),
                     uint32_t line = __builtin_LINE()) {
    return detail::reduceCore<bool>(forEach, scratch, [&](auto const& idx) { return flags[idx]; }, LogicalAnd{},
                                    {"allOf", file, line});
}

STRATA_HD_TEMPLATE
template <class TWorker, class Dom, class Scratch, class T, class Op>
STRATA_HD Variable<T, ForEach<TWorker, Dom>> inclusiveScan(ForEach<TWorker, Dom> const& forEach, Scratch const& scratch,
                                                           Variable<T, ForEach<TWorker, Dom>> const& var, Op const& op,
                                                           char const* file = __builtin_FILE(),
                                                           uint32_t line = __builtin_LINE()) {
    Variable<T, ForEach<TWorker, Dom>> result;
    detail::scanCore<false>(
        forEach, scratch, [&](auto const& idx) { return var[idx]; },
        [&](auto const& idx, T const& v) { result[idx] = v; }, T{}, op, {"inclusiveScan", file, line});
    return result;
}

STRATA_HD_TEMPLATE
template <class TWorker, class Dom, class Scratch, class T, class Op>
STRATA_HD Variable<T, ForEach<TWorker, Dom>>
exclusiveScan(ForEach<TWorker, Dom> const& forEach, Scratch const& scratch,
              Variable<T, ForEach<TWorker, Dom>> const& var, std::type_identity_t<T> const& init, Op const& op,
              char const* file = __builtin_FILE(), uint32_t line = __builtin_LINE()) {
    Variable<T, ForEach<TWorker, Dom>> result;
    detail::scanCore<true>(
        forEach, scratch, [&](auto const& idx) { return var[idx]; },
        [&](auto const& idx, T const& v) { result[idx] = v; }, init, op, {"exclusiveScan", file, line});
    return result;
}

STRATA_HD_TEMPLATE
template <class TWorker, class Dom, class Scratch, class T>
STRATA_HD T broadcast(ForEach<TWorker, Dom> const& forEach, Scratch const& scratch,
                      Variable<T, ForEach<TWorker, Dom>> const& var, uint32_t k, char const* file = __builtin_FILE(),
                      uint32_t line = __builtin_LINE()) {
    return detail::broadcastCore<T>(forEach, scratch, k, [&](auto const& idx) { return var[idx]; },
                                    {"broadcast", file, line});
}

} // namespace strata::lockstep
