// Lazy column expressions: leaves, pointwise nodes and stencil nodes, evaluated only by `evaluate` (engine.hpp).
//
//   leaves      a Field (read-only), a scalar, the height of a staggering (`coord<Center>()`, `coord<Face>()`)
//   pointwise   + - * / and unary -, and `map(f, args...)` with a STRATA_HD functor f
//   stencil     an operator applied to expressions: `div(interp(K) * grad(theta))` (stencils.hpp)
//
// Every node has a Value type, a Stagger (Center, Face, or AnyStagger for scalars) and a stencil `depth`: 0 for
// leaves, the largest depth of the arguments for pointwise nodes, 1 + that for stencil nodes. A pointwise node must
// not mix staggerings (interpolate first): that is a compile error.
//
// Evaluation is one function per node, `eval(ctx, k)`: the value at level k of column ctx.col. The context decides
// where a stencil node's arguments come from: recomputed from their own subtrees (Direct) or read from the block's
// shared-memory buffers that the Shmem engine filled beforehand. Both call the same operator code on the same values,
// so both give the same bits.
//
// Buffer slots. The Shmem engine keeps its buffer plan itself (engine/planner.hpp), one BufferInfo per argument of
// every stencil node, in an array the nodes never store. A node knows only how many slots its subtree has (`slots`:
// 0 for leaves and stencil-free math) and, at compile time, where they start: a node with slots is evaluated as
// `eval<Base>(ctx, k)` (children's slots first, in argument order, then a stencil node's own, one per argument), and
// the context carries the array (`ctx.buffers`). `walk<Base>(visitor, lo, hi)` shows the planner every argument with
// its slot and the levels it is read at; `stage<D, Base>` fills the buffers of depth D. A leaf needs none of these.
//
// Interior levels. Every node also has a `reach`: at levels at least `reach` away from both ends of its staggering no
// operator in its subtree meets a boundary. There the engines evaluate with a context whose `interior` is true, and
// the operators compile without their boundary branches (`if constexpr (!Ctx::interior)`): the same interior formula,
// so the same bits, but a level loop the compiler can vectorise. The Shmem engine reads a staged argument from its
// buffer instead of evaluating it, so there only the arguments it evaluates add their reach: `shmemReach<S>` (S: the
// backend stages stencil-free arguments too), at most `reach`, is the margin that engine uses (stencil_node.hpp).
#pragma once

#include <strata/core/config.hpp>
#include <strata/operators/detail/tuple.hpp>
#include <strata/operators/field.hpp>
#include <strata/operators/stagger.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

namespace strata::ops {

// A level index. 64-bit: index arithmetic in a level loop (k - 1, k + 2) then cannot wrap in a narrower type, and
// the compiler can vectorise the loop.
using Level = std::size_t;

struct ExprTag {};

template <class E>
concept Expression = std::is_base_of_v<ExprTag, std::remove_cvref_t<E>>;

// ---------------------------------------------------------------------------------------------------------------
// Leaves

// What every leaf does alike: it is its own only leaf, and has no buffers to plan or stage.
template <class Derived>
struct LeafBase : ExprTag {
    static constexpr int depth = 0;
    static constexpr int reach = 0; // a leaf reads only its own level
    template <bool StageStencilFree>
    static constexpr int shmemReach = 0;
    static constexpr std::size_t slots = 0;
    template <class F>
    void forEachLeaf(F&& f) const {
        f(static_cast<Derived const&>(*this));
    }
};

template <class T, class S>
struct FieldLeaf : LeafBase<FieldLeaf<T, S>> {
    using Value = std::remove_const_t<T>;
    using Stagger = S;
    FieldView<T const, S> field;

    template <class Ctx>
    STRATA_HD Value eval(Ctx const& ctx, Level k) const {
        // 64-bit offset: with 32-bit index arithmetic the compiler cannot prove the index does not wrap, and does
        // not vectorise the level loop.
        return field.data[static_cast<std::size_t>(ctx.col) * field.stride + k];
    }
};

template <class T>
struct ScalarLeaf : LeafBase<ScalarLeaf<T>> {
    using Value = T;
    using Stagger = AnyStagger;
    T value;

    template <class Ctx>
    STRATA_HD Value eval(Ctx const&, Level) const {
        return value;
    }
};

// The height (m) of each level of staggering S.
template <class S>
struct CoordLeaf : LeafBase<CoordLeaf<S>> {
    using Value = double;
    using Stagger = S;

    template <class Ctx>
    STRATA_HD Value eval(Ctx const& ctx, Level k) const {
        if constexpr (std::is_same_v<S, Center>)
            return ctx.grid.zc[k];
        else
            return ctx.grid.zf[k];
    }
};

template <class S>
CoordLeaf<S> coord() {
    return {};
}

// ---------------------------------------------------------------------------------------------------------------
// Turning operands into expressions

template <class T, class S>
FieldLeaf<T, S> asExpr(Field<T, S> const& f) {
    return {{}, f.view()};
}
template <Expression E>
E asExpr(E const& e) {
    return e;
}
template <class T>
requires std::is_arithmetic_v<T> ScalarLeaf<T> asExpr(T v) { return {{}, v}; }

template <class X>
using ExprOf = decltype(asExpr(std::declval<X const&>()));

template <class X>
concept Operand = requires(X const& x) {
    asExpr(x);
};

// ---------------------------------------------------------------------------------------------------------------
// Staggering of a pointwise combination

namespace detail {
template <class A, class B>
struct CombineStagger {
    static constexpr bool ok = std::is_same_v<A, B> || std::is_same_v<A, AnyStagger> || std::is_same_v<B, AnyStagger>;
    static_assert(ok, "pointwise expression mixes Center and Face values: interpolate one operand first "
                      "(InterpolateC2F / InterpolateF2C)");
    using type = std::conditional_t<std::is_same_v<A, AnyStagger>, B, A>;
};
template <class... S>
struct CommonStagger;
template <class S>
struct CommonStagger<S> {
    using type = S;
};
template <class A, class B, class... Rest>
struct CommonStagger<A, B, Rest...> {
    using type = typename CommonStagger<typename CombineStagger<A, B>::type, Rest...>::type;
};
constexpr int maxOf(std::initializer_list<int> xs) { return std::max(xs); }
constexpr std::size_t sumOfFirst(std::size_t count, std::initializer_list<std::size_t> xs) {
    std::size_t sum = 0, i = 0;
    for (std::size_t const x : xs)
        if (i++ < count) sum += x;
    return sum;
}
// The first slot of argument I's subtree, counted from its parent's Base: the slots of the arguments before it.
template <std::size_t I, class... Args>
inline constexpr std::size_t slotsBefore = sumOfFirst(I + 1,
                                                      {std::size_t{0}, Args::slots...}); // (a leading 0: no args)

// A child's value, slots and staging, its subtree's slots starting at Base. A subtree without slots (a leaf,
// stencil-free math) is called without one, so that a leaf needs only `eval(ctx, k)`.
template <std::size_t Base, class A, class Ctx>
STRATA_HD auto evalAt(A const& a, Ctx const& ctx, Level k) {
    if constexpr (A::slots == 0)
        return a.eval(ctx, k);
    else
        return a.template eval<Base>(ctx, k);
}
template <std::size_t Base, class A, class V>
void walkAt(A const& a, V& visitor, int32_t lo, int32_t hi) {
    if constexpr (A::slots > 0) a.template walk<Base>(visitor, lo, hi);
}
template <int D, std::size_t Base, class A, class B>
STRATA_HD void stageAt(A const& a, B const& block) {
    if constexpr (A::slots > 0) a.template stage<D, Base>(block);
}
} // namespace detail

// ---------------------------------------------------------------------------------------------------------------
// Pointwise nodes

template <class F, class... Args>
struct Pointwise : ExprTag {
    using Value = std::remove_cvref_t<std::invoke_result_t<F const&, typename Args::Value...>>;
    using Stagger = typename detail::CommonStagger<typename Args::Stagger...>::type;
    static constexpr int depth = detail::maxOf({Args::depth...});
    static constexpr int reach = detail::maxOf({Args::reach...});
    template <bool StageStencilFree>
    static constexpr int shmemReach = detail::maxOf({Args::template shmemReach<StageStencilFree>...});
    static constexpr std::size_t slots = (Args::slots + ... + std::size_t{0});

    F f;
    detail::Tuple<Args...> args;

    template <std::size_t Base = 0, class Ctx>
    STRATA_HD Value eval(Ctx const& ctx, Level k) const {
        return evalImpl<Base>(ctx, k, std::index_sequence_for<Args...>{});
    }
    template <class G>
    void forEachLeaf(G&& g) const {
        forEachArg([&](auto const& a) { a.forEachLeaf(g); });
    }
    template <std::size_t Base, class V>
    void walk(V& visitor, int32_t lo, int32_t hi) const {
        walkImpl<Base>(visitor, lo, hi, std::index_sequence_for<Args...>{});
    }
    template <int D, std::size_t Base, class B>
    STRATA_HD void stage(B const& b) const {
        if constexpr (D <= depth) stageImpl<D, Base>(b, std::index_sequence_for<Args...>{});
    }

private:
    template <std::size_t Base, class Ctx, std::size_t... I>
    STRATA_HD Value evalImpl(Ctx const& ctx, Level k, std::index_sequence<I...>) const {
        return f(detail::evalAt<Base + detail::slotsBefore<I, Args...>>(detail::get<I>(args), ctx, k)...);
    }
    template <class G>
    void forEachArg(G&& g) const {
        forEachArgImpl(g, std::index_sequence_for<Args...>{});
    }
    template <class G, std::size_t... I>
    void forEachArgImpl(G& g, std::index_sequence<I...>) const {
        (g(detail::get<I>(args)), ...);
    }
    template <std::size_t Base, class V, std::size_t... I>
    void walkImpl(V& visitor, int32_t lo, int32_t hi, std::index_sequence<I...>) const {
        (detail::walkAt<Base + detail::slotsBefore<I, Args...>>(detail::get<I>(args), visitor, lo, hi), ...);
    }
    template <int D, std::size_t Base, class B, std::size_t... I>
    STRATA_HD void stageImpl(B const& b, std::index_sequence<I...>) const {
        (detail::stageAt<D, Base + detail::slotsBefore<I, Args...>>(detail::get<I>(args), b), ...);
    }
};

template <class F, class... Args>
Pointwise<F, Args...> makePointwise(F const& f, Args const&... args) {
    return {{}, f, detail::makeTuple(args...)};
}

struct Plus {
    template <class A, class B>
    STRATA_HD auto operator()(A a, B b) const {
        return a + b;
    }
};
struct Minus {
    template <class A, class B>
    STRATA_HD auto operator()(A a, B b) const {
        return a - b;
    }
};
struct Times {
    template <class A, class B>
    STRATA_HD auto operator()(A a, B b) const {
        return a * b;
    }
};
struct Divide {
    template <class A, class B>
    STRATA_HD auto operator()(A a, B b) const {
        return a / b;
    }
};
struct Negate {
    template <class A>
    STRATA_HD auto operator()(A a) const {
        return -a;
    }
};

// An arithmetic operator applies when at least one side is an expression or a field.
template <class A, class B>
concept ExprPair = Operand<A> && Operand<B> &&
    (Expression<ExprOf<A>>&& Expression<ExprOf<B>>)&&(!std::is_arithmetic_v<A> || !std::is_arithmetic_v<B>);

template <class A, class B>
requires ExprPair<A, B>
auto operator+(A const& a, B const& b) { return makePointwise(Plus{}, asExpr(a), asExpr(b)); }
template <class A, class B>
requires ExprPair<A, B>
auto operator-(A const& a, B const& b) { return makePointwise(Minus{}, asExpr(a), asExpr(b)); }
template <class A, class B>
requires ExprPair<A, B>
auto operator*(A const& a, B const& b) { return makePointwise(Times{}, asExpr(a), asExpr(b)); }
template <class A, class B>
requires ExprPair<A, B>
auto operator/(A const& a, B const& b) { return makePointwise(Divide{}, asExpr(a), asExpr(b)); }
template <Expression A>
auto operator-(A const& a) {
    return makePointwise(Negate{}, a);
}

// map(f, args...): f applied pointwise; f is a functor with a STRATA_HD call operator.
template <class F, class... Args>
auto map(F const& f, Args const&... args) {
    return makePointwise(f, asExpr(args)...);
}

} // namespace strata::ops
