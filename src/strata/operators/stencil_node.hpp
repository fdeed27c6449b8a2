// StencilNode: an operator applied to argument expressions, and how the Shmem engine's buffers serve it.
//
// Each argument that is not a scalar gets one buffer per column in block shared memory: the argument's values over
// the levels the operator will read for the current tile of output levels, boundary levels included. (On the
// one-worker CPU backends only arguments with a stencil or a division: see stagedArg.) The engine keeps the layout,
// one BufferInfo per argument slot (expr.hpp, "Buffer slots"); the node keeps none. `walk` shows the engine's planner
// each argument top-down (a node's argument range is its own output range widened by the operator's footprint),
// `stage<D, Base>` fills the buffers of every node of depth D (so a sync after each depth is enough: a depth-D buffer
// only needs buffers of depth < D), and `eval` applies the operator, reading its arguments from the buffers (Shmem
// context) or recomputing them (Direct context).
#pragma once

#include <strata/core/lockstep.hpp>
#include <strata/operators/expr.hpp>

#include <cstddef>
#include <cstdint>
#include <utility>

namespace strata::ops {

// Levels an operator reads from argument I around output level k: k + lo .. k + hi (boundary stencils included).
struct Footprint {
    int32_t lo;
    int32_t hi;
};

struct BufferInfo {
    uint32_t offset = 0;   // bytes from the start of the column's shared region
    uint32_t capacity = 0; // values
    int32_t lo = 0;        // first level = tile start + lo
    int32_t hi = 0;        // last level = tile end - 1 + hi
};

// The Shmem engine's buffer plan of an expression with N slots (expr.hpp, "Buffer slots"), laid out by the planner
// (engine/planner.hpp) and passed to the kernel beside the expression.
template <std::size_t N>
struct BufferPlan {
    BufferInfo slot[N > 0 ? N : 1];
};

// Every operator handles boundaries only within this many levels of either end of its output (Upwind3rdOrder and
// UpwindLimited: faces 0, 1, n-1, n; the others the first and last level): an operator's contract (docs/operators.md).
// (A margin of 1 per operator where that suffices would be correct, but GCC 12 then leaves the divergence's interior
// level loop under Shmem scalar, and the diffusion tree runs slower; docs/performance.md.)
inline constexpr int operatorBoundaryMargin = 2;

namespace detail {
// The margin an argument evaluated in place adds, at each end: output level k reads argument levels k + lo .. k + hi,
// which are interior for the argument when k + lo >= reach (bottom) and k + hi <= its last level - reach (top); its
// last level is the output's plus `shift` (+1 for a face argument of a center output, -1 for a center argument of a
// face output). An argument without stencils adds none: it has no boundary branches, and the operator's own margin
// keeps the levels its interior formula reads inside the column.
template <class A, class Out>
constexpr int argReach(Footprint fp, int reach) {
    if constexpr (A::depth == 0) {
        return 0;
    } else {
        constexpr int shift = int{std::is_same_v<typename A::Stagger, Face>} - int{std::is_same_v<Out, Face>};
        int const bottom = reach - fp.lo, top = reach + fp.hi - shift;
        return bottom > top ? bottom : top;
    }
}

template <class Op, class... Args, std::size_t... I>
constexpr int stencilReach(std::index_sequence<I...>) {
    return maxOf({operatorBoundaryMargin, argReach<PackElement<I, Args...>, typename Op::Out>(
                                              Op::template footprint<I>(), PackElement<I, Args...>::reach)...});
}
} // namespace detail

template <class A>
inline constexpr bool isBuffered = !std::is_same_v<typename A::Stagger, AnyStagger>;

namespace detail {
// Whether pointwise math E divides somewhere (a Divide node in it).
template <class E>
inline constexpr bool dividesIn = false;
template <class F, class... Args>
inline constexpr bool dividesIn<Pointwise<F, Args...>> = std::is_same_v<F, Divide> || (dividesIn<Args> || ...);
} // namespace detail

// Whether the Shmem engine gives argument A a buffer. An argument without stencils (depth 0: a field, or pointwise math
// on fields) is staged where `stencilFree` says so: on a GPU (and on the checking Threads backend, which models one) a
// buffer saves re-reading global memory; on the one-worker CPU backends the re-read hits the cache, and copying the
// values into a buffer first costs a pass over the column (docs/performance.md), so there only an argument
// that divides is staged: an operator reads its argument at several levels (the third-order upwind product at four)
// and would divide again at each, where a division costs as much as several other operations.
// (Variable templates, not constexpr functions: nvcc does not let device code call host constexpr functions.)
template <class A, bool StageStencilFree>
inline constexpr bool stagedArg = isBuffered<A> && (A::depth > 0 || StageStencilFree || detail::dividesIn<A>);

namespace detail {
// A stencil node's reach where the Shmem engine evaluates it (StencilNode::shmemReach): an argument read from its
// buffer is never evaluated, so only the operator's own boundary margin counts for it; one evaluated in place adds
// its own shmemReach, as in stencilReach.
template <class Op, bool StageStencilFree, class... Args, std::size_t... I>
constexpr int stencilShmemReach(std::index_sequence<I...>) {
    return maxOf(
        {operatorBoundaryMargin,
         (stagedArg<PackElement<I, Args...>, StageStencilFree>
              ? operatorBoundaryMargin
              : argReach<PackElement<I, Args...>, typename Op::Out>(
                    Op::template footprint<I>(), PackElement<I, Args...>::template shmemReach<StageStencilFree>))...});
}
} // namespace detail

// Whether, in context Ctx, argument A comes from its Shmem buffer (else it is evaluated where it is used).
template <class A, class Ctx, bool Shmem = Ctx::shmem>
inline constexpr bool readsBuffer = false;
template <class A, class Ctx>
inline constexpr bool readsBuffer<A, Ctx, true> = stagedArg<A, Ctx::stageStencilFree>;

template <class Op, class... Args>
struct StencilNode : ExprTag {
    using Value = std::common_type_t<typename Args::Value...>;
    using Stagger = typename Op::Out;
    static constexpr int depth = 1 + detail::maxOf({Args::depth...});
    static constexpr std::size_t arity = sizeof...(Args);
    // Output level k (of `last + 1` levels) is interior when reach <= k <= last - reach: then k is outside the
    // operator's boundary margin and every argument level it reads, k + lo .. k + hi, is interior for the argument
    // (whose last level is at least last - 1: a staggering differs by one level).
    static constexpr int reach = detail::stencilReach<Op, Args...>(std::index_sequence_for<Args...>{});
    // The same where the Shmem engine evaluates the node: its staged arguments come from their buffers (which hold
    // every level the operator reads), so they add nothing to the margin. With a tree's stencil arguments staged,
    // advection's root -(div(flux(rho0 w, q)) - q d/dz(rho0 w)) / rho0 is interior 2 levels from the ends instead of 6
    // (its reach with the flux-limited product; 7 with the third-order one): fewer levels on the general path.
    template <bool StageStencilFree>
    static constexpr int
        shmemReach = detail::stencilShmemReach<Op, StageStencilFree, Args...>(std::index_sequence_for<Args...>{});
    // Buffer slots (expr.hpp): the arguments' subtrees' first, then one per argument (a scalar's stays unused).
    static constexpr std::size_t childSlots = (Args::slots + ... + std::size_t{0});
    static constexpr std::size_t slots = childSlots + arity;

    Op op;
    detail::Tuple<Args...> args;

    template <std::size_t Base = 0, class Ctx>
    STRATA_HD Value eval(Ctx const& ctx, Level k) const {
        return evalImpl<Base>(ctx, k, std::index_sequence_for<Args...>{});
    }

    // The value of argument I at level kk, from its buffer (the slot Base + childSlots + I of the context's plan) or
    // recomputed.
    template <std::size_t I, std::size_t Base, class Ctx>
    STRATA_HD auto arg(Ctx const& ctx, Level kk) const {
        using A = detail::PackElement<I, Args...>;
        using V = typename A::Value;
        if constexpr (readsBuffer<A, Ctx>) {
            BufferInfo const& b = ctx.buffers[Base + childSlots + I];
            int32_t const start = static_cast<int32_t>(ctx.k0) + b.lo;
            uint32_t const first = start > 0 ? static_cast<uint32_t>(start) : 0u;
            return static_cast<V>(ctx.template span<V>(b.offset, b.capacity)[kk - first]);
        } else {
            return detail::evalAt<Base + detail::slotsBefore<I, Args...>>(detail::get<I>(args), ctx, kk);
        }
    }

    template <class G>
    void forEachLeaf(G&& g) const {
        forEachLeafImpl(g, std::index_sequence_for<Args...>{});
    }

    // visitor.template argument<A>(slot, lo, hi) for every argument A (its levels read: tile start + lo to tile
    // end - 1 + hi), parents before children.
    template <std::size_t Base, class V>
    void walk(V& visitor, int32_t lo, int32_t hi) const {
        walkImpl<Base>(visitor, lo, hi, std::index_sequence_for<Args...>{});
    }

    template <int D, std::size_t Base, class B>
    STRATA_HD void stage(B const& b) const {
        if constexpr (D == depth) {
            stageImpl<Base>(b, std::index_sequence_for<Args...>{});
        } else if constexpr (D < depth) {
            stageChildren<D, Base>(b, std::index_sequence_for<Args...>{});
        }
    }

private:
    template <std::size_t I, std::size_t Base, class Ctx>
    struct Access {
        StencilNode const* node;
        Ctx const* ctx;
        STRATA_HD auto operator()(Level kk) const { return node->template arg<I, Base>(*ctx, kk); }
    };

    template <std::size_t Base, class Ctx, std::size_t... I>
    STRATA_HD Value evalImpl(Ctx const& ctx, Level k, std::index_sequence<I...>) const {
        return static_cast<Value>(op.apply(ctx, k, Access<I, Base, Ctx>{this, &ctx}...));
    }

    template <class G, std::size_t... I>
    void forEachLeafImpl(G& g, std::index_sequence<I...>) const {
        (detail::get<I>(args).forEachLeaf(g), ...);
    }

    template <std::size_t Base, class V, std::size_t... I>
    void walkImpl(V& visitor, int32_t lo, int32_t hi, std::index_sequence<I...>) const {
        (walkArg<I, Base>(visitor, lo, hi), ...);
    }
    template <std::size_t I, std::size_t Base, class V>
    void walkArg(V& visitor, int32_t lo, int32_t hi) const {
        using A = detail::PackElement<I, Args...>;
        constexpr Footprint fp = Op::template footprint<I>();
        int32_t const argLo = lo + fp.lo, argHi = hi + fp.hi;
        visitor.template argument<A>(Base + childSlots + I, argLo, argHi);
        detail::walkAt<Base + detail::slotsBefore<I, Args...>>(detail::get<I>(args), visitor, argLo, argHi);
    }

    template <std::size_t Base, class B, std::size_t... I>
    STRATA_HD void stageImpl(B const& b, std::index_sequence<I...>) const {
        (stageArg<I, Base>(b), ...);
    }
    template <std::size_t I, std::size_t Base, class B>
    STRATA_HD void stageArg(B const& b) const {
        using A = detail::PackElement<I, Args...>;
        if constexpr (stagedArg<A, B::stageStencilFree>) {
            using V = typename A::Value;
            BufferInfo const info = b.buffers[Base + childSlots + I];
            auto const levels = static_cast<int32_t>(A::Stagger::levels(b.grid.n()));
            int32_t const s0 = static_cast<int32_t>(b.k0) + info.lo;
            int32_t const e0 = static_cast<int32_t>(b.k1) - 1 + info.hi;
            int32_t const s = s0 > 0 ? s0 : 0;
            int32_t const e = e0 < levels - 1 ? e0 : levels - 1;
            if (e < s) return;
            auto const len = static_cast<uint32_t>(e - s + 1);
            auto const& a = detail::get<I>(args);
            b.template forEachLevel<A::template shmemReach<B::stageStencilFree>>(
                static_cast<uint32_t>(s), len, static_cast<uint32_t>(levels),
                [&](uint32_t c, uint32_t i, auto interior) {
                    auto const ctx = b.template ctx<decltype(interior)::value>(c);
                    Level const kk = static_cast<Level>(s) + i;
                    ctx.template span<V>(info.offset, info.capacity)[i] =
                        detail::evalAt<Base + detail::slotsBefore<I, Args...>>(a, ctx, kk);
                });
        }
    }
    template <int D, std::size_t Base, class B, std::size_t... I>
    STRATA_HD void stageChildren(B const& b, std::index_sequence<I...>) const {
        (detail::stageAt<D, Base + detail::slotsBefore<I, Args...>>(detail::get<I>(args), b), ...);
    }
};

template <class Op, class... Args>
StencilNode<Op, Args...> makeStencil(Op const& op, Args const&... args) {
    return {{}, op, detail::makeTuple(args...)};
}

} // namespace strata::ops
