// Random expression trees, generated at compile time from a seed: leaves, pointwise nodes and every stencil operator
// with randomly chosen boundary conditions (scalar or per-column values), nested up to a given stencil depth.
#pragma once

#include <strata/operators/operators.hpp>

#include <cstdint>

namespace strata::test {

using namespace strata::ops;

constexpr uint64_t mix(uint64_t x) {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

// The leaves: two center fields (C: Field<double, Center>, or Field<Dual<double>, Center> for a Jacobian with respect
// to both, which are then the same field), two face fields and per-column values.
template <class C = Field<double, Center>>
struct TreeLeavesOf {
    C const* centers[2];
    Field<double, Face> const* faces[2];
    ColumnValues<double> perColumn;
};
using TreeLeaves = TreeLeavesOf<>;

// A pointwise function for map(): a smooth mix of two operands.
struct Blend {
    template <class A, class B>
    STRATA_HD auto operator()(A a, B b) const {
        return 0.75 * a - 0.5 * b + 0.125 * a * b;
    }
};

template <uint64_t R, class L>
auto valueOf(L const& l) {
    if constexpr (R % 2 == 0)
        return 0.25 + static_cast<double>(R % 7);
    else
        return l.perColumn;
}

template <uint64_t Seed, int MaxDepth, class S, bool Exact = false, class L>
auto gen(L const& l);

template <uint64_t R, class S, class L>
auto leaf(L const& l) {
    constexpr int choice = static_cast<int>(R % 5);
    if constexpr (std::is_same_v<S, Center>) {
        if constexpr (choice <= 1)
            return asExpr(*l.centers[choice]);
        else if constexpr (choice == 2)
            return coord<Center>() * 1e-3;
        else if constexpr (choice == 3)
            return asExpr(*l.centers[0]) * 0.5 - 1.0;
        else // a division: staged on every backend (stagedArg), its denominator never below 1
            return asExpr(*l.centers[1]) / (asExpr(*l.centers[0]) * asExpr(*l.centers[0]) + 1.0);
    } else {
        if constexpr (choice <= 1)
            return asExpr(*l.faces[choice]);
        else if constexpr (choice == 2)
            return coord<Face>() * 1e-3;
        else if constexpr (choice == 3)
            return 2.0 * asExpr(*l.faces[1]);
        else
            return asExpr(*l.faces[0]) / (asExpr(*l.faces[1]) * asExpr(*l.faces[1]) + 1.0);
    }
}

template <uint64_t R, int MaxDepth, bool Exact, class L>
auto stencilToFace(L const& l);
template <uint64_t R, int MaxDepth, bool Exact, class L>
auto stencilToCenter(L const& l);

template <uint64_t R, int MaxDepth, class S, bool Exact, class L>
auto pointwise(L const& l) {
    auto a = [&] {
        if constexpr (!Exact)
            return gen<mix(R + 1), MaxDepth - 1, S>(l);
        else if constexpr (std::is_same_v<S, Face>)
            return stencilToFace<mix(R + 1), MaxDepth, true>(l);
        else
            return stencilToCenter<mix(R + 1), MaxDepth, true>(l);
    }();
    auto b = gen<mix(R + 2), (MaxDepth > 1 ? MaxDepth - 2 : 0), S>(l);
    constexpr int choice = static_cast<int>((R >> 8) % 4);
    if constexpr (choice == 0)
        return a + b;
    else if constexpr (choice == 1)
        return a * 0.5 - b;
    else if constexpr (choice == 2)
        return map(Blend{}, a, b);
    else
        return -a * b;
}

template <uint64_t R, int MaxDepth, bool Exact, class L>
auto stencilToFace(L const& l) {
    auto x = gen<mix(R + 3), MaxDepth - 1, Center, Exact>(l);
    constexpr int op = static_cast<int>((R >> 12) % 8);
    constexpr uint64_t r2 = mix(R + 4), r3 = mix(R + 5);
    if constexpr (op == 0) {
        auto bc = [&]<uint64_t Q>() {
            if constexpr (Q % 3 == 0)
                return SetValue{valueOf<Q / 3>(l)};
            else if constexpr (Q % 3 == 1)
                return SetGradient{valueOf<Q / 3>(l)};
            else
                return Extrapolate{};
        };
        return InterpolateC2F{bc.template operator()<r2>(), bc.template operator()<r3>()}(x);
    } else if constexpr (op == 1) {
        auto bc = [&]<uint64_t Q>() {
            if constexpr (Q % 2 == 0)
                return SetValue{valueOf<Q / 2>(l)};
            else
                return SetGradient{valueOf<Q / 2>(l)};
        };
        return GradientC2F{bc.template operator()<r2>(), bc.template operator()<r3>()}(x);
    } else if constexpr (op == 2) {
        auto bc = [&]<uint64_t Q>() {
            if constexpr (Q % 2 == 0)
                return SetValue{valueOf<Q / 2>(l)};
            else
                return SetDivergence{valueOf<Q / 2>(l)};
        };
        return DivergenceC2F{bc.template operator()<r2>(), bc.template operator()<r3>()}(x);
    } else if constexpr (op == 3) {
        return LeftBiasedC2F{SetValue{valueOf<r2>(l)}}(x);
    } else if constexpr (op == 4) {
        return RightBiasedC2F{NoBC{}, SetValue{valueOf<r3>(l)}}(x);
    } else if constexpr (op == 5) {
        auto w = gen<mix(R + 6), MaxDepth - 1, Face>(l);
        auto bc = [&]<uint64_t Q>() {
            if constexpr (Q % 2 == 0)
                return SetValue{valueOf<Q / 2>(l)};
            else
                return Extrapolate{};
        };
        return UpwindBiasedProductC2F{bc.template operator()<r2>(), bc.template operator()<r3>()}(w, x);
    } else if constexpr (op == 6) {
        auto w = gen<mix(R + 7), MaxDepth - 1, Face>(l);
        auto bc = [&]<uint64_t Q>() {
            if constexpr (Q % 2 == 0)
                return FirstOrderOneSided{};
            else
                return ThirdOrderOneSided{};
        };
        return Upwind3rdOrderBiasedProductC2F{bc.template operator()<r2>(), bc.template operator()<r3>()}(w, x);
    } else {
        auto w = gen<mix(R + 12), MaxDepth - 1, Face>(l);
        return UpwindLimitedProductC2F{FirstOrderOneSided{}, FirstOrderOneSided{}}(w, x);
    }
}

template <uint64_t R, int MaxDepth, bool Exact, class L>
auto stencilToCenter(L const& l) {
    auto f = gen<mix(R + 8), MaxDepth - 1, Face, Exact>(l);
    constexpr int op = static_cast<int>((R >> 12) % 6);
    constexpr uint64_t r2 = mix(R + 9), r3 = mix(R + 10);
    auto optional = [&]<uint64_t Q>() {
        if constexpr (Q % 3 == 0)
            return NoBC{};
        else if constexpr (Q % 3 == 1)
            return SetValue{valueOf<Q / 3>(l)};
        else
            return Extrapolate{};
    };
    if constexpr (op == 0) {
        return InterpolateF2C{}(f);
    } else if constexpr (op == 1) {
        return GradientF2C{optional.template operator()<r2>(), optional.template operator()<r3>()}(f);
    } else if constexpr (op == 2) {
        return DivergenceF2C{optional.template operator()<r2>(), optional.template operator()<r3>()}(f);
    } else if constexpr (op == 3) {
        return LeftBiasedF2C{}(f);
    } else if constexpr (op == 4) {
        return RightBiasedF2C{}(f);
    } else {
        auto x = gen<mix(R + 11), MaxDepth - 1, Center>(l);
        auto bc = [&]<uint64_t Q>() {
            if constexpr (Q % 2 == 0)
                return SetValue{valueOf<Q / 2>(l)};
            else
                return Extrapolate{};
        };
        return AdvectionC2C{bc.template operator()<r2>(), bc.template operator()<r3>()}(f, x);
    }
}

// A tree of staggering S with at most MaxDepth nested stencils (exactly MaxDepth when Exact).
template <uint64_t Seed, int MaxDepth, class S, bool Exact, class L>
auto gen(L const& l) {
    constexpr uint64_t r = mix(Seed);
    constexpr int roll = static_cast<int>(r % 10);
    if constexpr (MaxDepth <= 0 || (roll == 0 && !Exact)) {
        return leaf<r, S>(l);
    } else if constexpr (roll <= 2) {
        return pointwise<r, MaxDepth, S, Exact>(l);
    } else if constexpr (std::is_same_v<S, Face>) {
        return stencilToFace<r, MaxDepth, Exact>(l);
    } else {
        return stencilToCenter<r, MaxDepth, Exact>(l);
    }
}

} // namespace strata::test
