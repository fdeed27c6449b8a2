// An operator defined outside Strata (examples/custom_operator/second_difference.hpp, through the public mechanism of
// operators/operator.hpp) runs under every engine and CPU backend with the bits of the built-in operators.
#include "examples/custom_operator/second_difference.hpp"
#include "tests/core/backends.hpp"

#include <strata/operators/operators.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <memory>
#include <string_view>

using namespace strata;
using namespace strata::ops;
using my_physics::SecondDifference;

namespace {
// The same stencil divided by the spacing instead of multiplied by its reciprocal: equal to rounding, not in bits.
// The bit comparisons below must tell it apart, or they prove nothing.
struct DividingRule : my_physics::SecondDifferenceRule {
    template <class Ctx, class Op, class A>
    STRATA_HD static auto apply(Ctx const& ctx, Level k, Op const& op, A const& a) {
        using V = decltype(a(0));
        auto const& g = ctx.grid;
        V const below =
            (Ctx::interior || k > 0) ? (a(k) - a(k - 1)) / V(g.dzFace[k]) : bcValue<V>(op.bottom.value, ctx.col);
        V const above = (Ctx::interior || k + 1 < g.n()) ? (a(k + 1) - a(k)) / V(g.dzFace[k + 1])
                                                         : bcValue<V>(op.top.value, ctx.col);
        return (above - below) / V(g.dzCenter[k]);
    }
};
template <class B, class T>
struct Dividing : Operator<Dividing<B, T>, DividingRule, B, T> {
    static constexpr std::string_view name = "Dividing";
};
template <class B, class T>
Dividing(B, T) -> Dividing<B, T>;

// An operator with a member of its own: the rule reads it through `op`.
struct ScaledRule : my_physics::SecondDifferenceRule {
    template <class Ctx, class Op, class A>
    STRATA_HD static auto apply(Ctx const& ctx, Level k, Op const& op, A const& a) {
        using V = decltype(a(0));
        return my_physics::SecondDifferenceRule::apply(ctx, k, op, a) * V(op.factor);
    }
};
template <class B, class T>
struct Scaled : Operator<Scaled<B, T>, ScaledRule, B, T> {
    static constexpr std::string_view name = "Scaled";
    double factor = 1.0;
};
template <class B, class T>
Scaled(B, T, double) -> Scaled<B, T>;

// A boundary condition type of one's own: of kind SetValue, so the operators use it as they use SetValue.
struct Dirichlet {
    static constexpr BCSet kind = bc::setValue;
    double value;
};

template <class S>
bool sameBits(Field<double, S> const& a, Field<double, S> const& b) {
    for (uint32_t c = 0; c < a.columns(); ++c)
        for (uint32_t k = 0; k < a.levels(); ++k) {
            double const x = a.at(c, k), y = b.at(c, k);
            if (std::memcmp(&x, &y, sizeof(double)) != 0) return false;
        }
    return true;
}
} // namespace

TEMPLATE_TEST_CASE("a user-defined operator matches the built-in operators bit for bit on every engine", "[operators]",
                   STRATA_CPU_BACKENDS) {
    auto const backend = TestType::make();
    // A stretched grid and a rough profile: no cancellation hides a difference in rounding.
    auto const stretch = [](double s) { return s * s * 0.6 + 0.4 * s; };
    auto grid = std::make_shared<Grid const>(Grid::stretched(23, 3000.0, stretch));
    uint32_t const cols = 7;
    Field<double, Center> x(grid, cols, core::MemSpace::Host);
    for (uint32_t c = 0; c < cols; ++c)
        for (uint32_t k = 0; k < 23; ++k)
            x.at(c, k) = std::sin(0.7 * k + c) * 300.0 + 0.01 * k * k;
    Field<double, Center> user(grid, cols, core::MemSpace::Host), builtIn(grid, cols, core::MemSpace::Host),
        dividing(grid, cols, core::MemSpace::Host);

    for (Engine engine : {Engine::Direct, Engine::Shmem, Engine::Auto}) {
        INFO("engine " << engineName(engine));
        evaluate(backend, user, SecondDifference{SetGradient{0.25}, SetGradient{-0.5}}(x), engine);
        evaluate(backend, builtIn, DivergenceF2C{}(GradientC2F{SetGradient{0.25}, SetGradient{-0.5}}(x)), engine);
        evaluate(backend, dividing, Dividing{SetGradient{0.25}, SetGradient{-0.5}}(x), engine);
        CHECK(sameBits(user, builtIn));
        CHECK_FALSE(sameBits(dividing, builtIn)); // the comparison can fail
        // Inside an expression with built-in operators, as the argument of one and around one.
        auto const nested = SecondDifference{SetGradient{0.0}, SetGradient{0.0}}(
            InterpolateF2C{}(InterpolateC2F{Extrapolate{}, Extrapolate{}}(x)) * 2.0);
        auto const nestedBuiltIn = DivergenceF2C{}(GradientC2F{SetGradient{0.0}, SetGradient{0.0}}(
            InterpolateF2C{}(InterpolateC2F{Extrapolate{}, Extrapolate{}}(x)) * 2.0));
        evaluate(backend, user, nested, engine);
        evaluate(backend, builtIn, nestedBuiltIn, engine);
        CHECK(sameBits(user, builtIn));

        evaluate(backend, user, Scaled{SetGradient{0.25}, SetGradient{-0.5}, 3.0}(x), engine);
        evaluate(backend, builtIn, DivergenceF2C{}(GradientC2F{SetGradient{0.25}, SetGradient{-0.5}}(x)) * 3.0, engine);
        CHECK(sameBits(user, builtIn));

        Field<double, Face> mine(grid, cols, core::MemSpace::Host), strata(grid, cols, core::MemSpace::Host);
        evaluate(backend, mine, GradientC2F{Dirichlet{280.0}, SetGradient{0.0}}(x), engine);
        evaluate(backend, strata, GradientC2F{SetValue{280.0}, SetGradient{0.0}}(x), engine);
        CHECK(sameBits(mine, strata));
    }
}
