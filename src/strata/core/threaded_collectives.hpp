// Block collectives in the `threaded` front end: over the interdependent axis 0..N-1 of a `threaded` body.
//
//     auto scratch = ctx.sharedArray(&Shared::scratch);               // a member double scratch[N] of the body's
//                                                                     // struct Shared, or from reserved bytes:
//     auto scratch = ctx.template staticSharedArray<double, N>();     // collectiveBytes<double, N>() of them
//     double total = threaded::reduce(ctx, scratch, [&](uint32_t k) { return column[k]; }, lockstep::Plus{});
//     threaded::inclusiveScan(ctx, scratch, value, [&](uint32_t k, double s) { p[k] = s; }, lockstep::Plus{});
//     threaded::exclusiveScan(ctx, scratch, value, 0.0, emit, lockstep::Plus{});
//     double top = threaded::broadcast(ctx, scratch, N - 1, value);
//
// Under interdependentUpTo<N>(extent) they run over the elements below ctx.extent() (the scratch sized for N), with
// the orders and bits of a compile-time axis of that extent; an extent of 0 reduces to T{} and scans emit nothing,
// and a broadcast from an element at or past the extent is an error (a trap on a GPU).
//
// Like `syncInterdependent`, each is a step every worker calls: `value(k)` is called once per element, `emit(k, s)`
// once per element with its scan result, and the step ends with a sync, so what `emit` wrote may be read by any
// element afterwards (not inside `emit`: that is a read before the collective finished). The orders of combination,
// and with them the bits, are those of the lockstep collectives (core/lockstep/collectives.hpp), whatever the worker
// count.
#pragma once

#include <strata/core/lockstep/collectives.hpp>
#include <strata/core/threaded.hpp>

#include <cstdint>
#include <type_traits>

namespace strata::threaded {

using lockstep::collectiveBytes;

namespace detail {
template <class F>
struct ByLinear {
    F const& f;
    template <class IdxT>
    STRATA_HD auto operator()(IdxT const& idx) const {
        return f(idx.lin());
    }
};
} // namespace detail

STRATA_HD_TEMPLATE
template <class TWorker, uint32_t N, bool Bounded, class Scratch, class F, class Op>
STRATA_HD auto reduce(Context<TWorker, N, Bounded> const& ctx, Scratch const& scratch, F const& value, Op const& op,
                      char const* file = __builtin_FILE(), uint32_t line = __builtin_LINE()) {
    using T = std::remove_cvref_t<decltype(value(0u))>;
    return lockstep::detail::reduceCore<T>(lockstep::makeForEach<N>(ctx.worker()), scratch, detail::ByLinear<F>{value},
                                           op, {"threaded::reduce", file, line}, ctx.extent());
}

STRATA_HD_TEMPLATE
template <class TWorker, uint32_t N, bool Bounded, class Scratch, class F, class Emit, class Op>
STRATA_HD void inclusiveScan(Context<TWorker, N, Bounded> const& ctx, Scratch const& scratch, F const& value,
                             Emit const& emit, Op const& op, char const* file = __builtin_FILE(),
                             uint32_t line = __builtin_LINE()) {
    using T = std::remove_cvref_t<decltype(value(0u))>;
    lockstep::detail::scanCore<false>(
        lockstep::makeForEach<N>(ctx.worker()), scratch, detail::ByLinear<F>{value},
        [&](auto const& idx, T const& s) { emit(idx.lin(), s); }, T{}, op, {"threaded::inclusiveScan", file, line},
        ctx.extent());
}

STRATA_HD_TEMPLATE
template <class TWorker, uint32_t N, bool Bounded, class Scratch, class F, class Emit, class Op>
STRATA_HD void exclusiveScan(Context<TWorker, N, Bounded> const& ctx, Scratch const& scratch, F const& value,
                             std::remove_cvref_t<decltype(std::declval<F const&>()(0u))> const& init, Emit const& emit,
                             Op const& op, char const* file = __builtin_FILE(), uint32_t line = __builtin_LINE()) {
    using T = std::remove_cvref_t<decltype(value(0u))>;
    lockstep::detail::scanCore<true>(
        lockstep::makeForEach<N>(ctx.worker()), scratch, detail::ByLinear<F>{value},
        [&](auto const& idx, T const& s) { emit(idx.lin(), s); }, init, op, {"threaded::exclusiveScan", file, line},
        ctx.extent());
}

STRATA_HD_TEMPLATE
template <class TWorker, uint32_t N, bool Bounded, class Scratch, class F>
STRATA_HD auto broadcast(Context<TWorker, N, Bounded> const& ctx, Scratch const& scratch, uint32_t k, F const& value,
                         char const* file = __builtin_FILE(), uint32_t line = __builtin_LINE()) {
    using T = std::remove_cvref_t<decltype(value(0u))>;
    return lockstep::detail::broadcastCore<T>(lockstep::makeForEach<N>(ctx.worker()), scratch, k,
                                              detail::ByLinear<F>{value}, {"threaded::broadcast", file, line},
                                              ctx.extent());
}

} // namespace strata::threaded
