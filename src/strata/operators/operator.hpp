// Defining a stencil operator: a rule (the stencil) and a name, with no edit of Strata.
//
// A rule is a struct of static members:
//   using Out = Face;                                   the staggering of the result
//   using Operands = ops::Operands<Center>;             the staggering of each operand, in order
//   static constexpr Footprint footprint[] = {{-1, 0}}; per operand: the levels k + lo .. k + hi it reads for result
//                                                       level k, boundary stencils included
//   static constexpr BCSet bottom = bc::setValue | bc::setGradient;   the boundary conditions it accepts at each end
//   static constexpr BCSet top = bc::setValue | bc::setGradient;      (bc::none: the operator takes none there)
//   template <class Ctx, class Op, class A>
//   STRATA_HD static auto apply(Ctx const& ctx, Level k, Op const& op, A const& a);
//                                                       the result at level k; a(kk) is the operand at level kk,
//                                                       op.bottom / op.top the boundary conditions (types Op::Bottom,
//                                                       Op::Top), ctx.grid the grid's spacings, ctx.col the column
// Optional: `static constexpr std::string_view operandNames[]` ("the velocity w", ...) for the compile errors.
//
// The contract of apply (docs/operators.md, "Defining an operator"):
//   - boundary stencils sit in `if constexpr (!Ctx::interior)` (or behind `Ctx::interior ||`): the engines evaluate
//     levels far from the ends with an interior context, where those branches vanish and the level loop vectorises;
//   - boundary stencils apply only within operatorBoundaryMargin (2) levels of either end of the result;
//   - no division: multiply by the grid's reciprocals (rdzFace, rdzCenter) or by a constant's reciprocal, so that
//     every engine and backend rounds alike.
//
// The operator itself derives from Operator<itself, Rule, Bottom, Top> and states its name. The base holds the
// boundary conditions, checks the operands' staggering and the boundary conditions at compile time (GCC's error
// prints a message naming the operator and what it accepts) and builds the expression node. With a deduction guide,
// `GradientC2F{SetValue{0.0}, SetGradient{0.0}}(x)` works:
//
//   template <class B = NoBC, class T = NoBC>
//   struct GradientC2F : Operator<GradientC2F<B, T>, rules::DifferenceC2F<SetGradient>, B, T> {
//       static constexpr std::string_view name = "GradientC2F";
//   };
//   template <class B, class T>
//   GradientC2F(B, T) -> GradientC2F<B, T>;
//
// The name is a member, not a template argument: nvcc's host stubs cannot spell class-type template arguments (a
// string) in kernel names.
#pragma once

#include <strata/operators/bcs.hpp>
#include <strata/operators/expr.hpp>
#include <strata/operators/stagger.hpp>
#include <strata/operators/stencil_node.hpp>

#include <cstddef>
#include <string_view>
#include <type_traits>
#include <utility>

namespace strata::ops {

// The staggering of each operand of a rule.
template <class... S>
struct Operands {
    static constexpr std::size_t count = sizeof...(S);
};

namespace detail {
// Compile-time text for the errors: a fixed buffer that can be a template argument, so that a failing check prints
// the composed message: GCC prints the argument of the template that failed as text (Clang 14 as character codes;
// the operator's and the condition's types, also arguments of compileError, are readable on both).
struct ErrorText {
    char text[240]{};
    std::size_t size = 0;
    constexpr ErrorText& operator+=(std::string_view s) {
        for (char c : s)
            if (size + 1 < sizeof(text)) text[size++] = c;
        return *this;
    }
};

template <ErrorText Message, class Op, class Offending>
constexpr void compileError() {
    static_assert(Message.size == 0, "Strata operator: an operand's staggering or a boundary condition is not one the "
                                     "operator accepts (the ErrorText above says which; see the operator's rule)");
}

constexpr std::string_view staggerPhrase(std::string_view name) {
    return name == "Center" ? "cell centers (Center)" : name == "Face" ? "cell faces (Face)" : name;
}

template <class Op, class Rule, std::size_t I, class Expected>
constexpr ErrorText operandError() {
    ErrorText m;
    m += Op::name;
    m += ": ";
    if constexpr (requires { Rule::operandNames[I]; })
        m += Rule::operandNames[I];
    else if constexpr (Rule::Operands::count == 1)
        m += "the operand";
    else {
        m += "operand ";
        char const digit[2] = {static_cast<char>('1' + I), 0};
        m += digit;
    }
    m += " must be on ";
    m += staggerPhrase(Expected::name);
    return m;
}

template <class Op, BCSet Accepted, bool AtTop>
constexpr ErrorText bcError() {
    std::string_view const end = AtTop ? "top" : "bottom";
    ErrorText m;
    m += Op::name;
    m += ": ";
    BCSet const named{Accepted.bits & ~bc::none.bits};
    if (named.bits == 0) {
        m += "takes no ";
        m += end;
        m += " boundary condition";
        return m;
    }
    m += "the ";
    m += end;
    m += " boundary condition must be ";
    std::size_t const count = bcCount(named);
    for (std::size_t i = 0, listed = 0; i < bcKindCount; ++i) {
        if ((named.bits & (1u << i)) == 0) continue;
        if (listed > 0) m += listed + 1 == count ? " or " : ", ";
        m += bcKindName(i);
        ++listed;
    }
    if (Accepted.bits & bc::none.bits) m += " (or none)";
    return m;
}

template <std::size_t I, class List>
struct OperandAt;
template <std::size_t I, class... S>
struct OperandAt<I, Operands<S...>> {
    using type = PackElement<I, S...>;
};

template <class Op, class Rule, std::size_t I, class X>
constexpr void checkOperand() {
    using Expected = typename OperandAt<I, typename Rule::Operands>::type;
    if constexpr (!std::is_same_v<typename ExprOf<X>::Stagger, Expected>)
        compileError<operandError<Op, Rule, I, Expected>(), Op, typename ExprOf<X>::Stagger>();
}

template <class Op, class Rule, class... X, std::size_t... I>
constexpr void checkOperands(std::index_sequence<I...>) {
    (checkOperand<Op, Rule, I, X>(), ...);
}

template <class Op, BCSet Accepted, bool AtTop, class BC>
constexpr void checkBC() {
    static_assert(BoundaryCondition<BC>, "Strata operator: a boundary condition type states its kind "
                                         "(static constexpr BCSet kind = bc::setValue, ...): see bcs.hpp");
    if constexpr (BoundaryCondition<BC> && !accepts<BC>(Accepted))
        compileError<bcError<Op, Accepted, AtTop>(), Op, BC>();
}
} // namespace detail

// The base of every stencil operator (CRTP: Derived is the operator, which names itself with
// `static constexpr std::string_view name`): Rule's stencil with the boundary conditions it was given.
template <class Derived, class Rule, class BottomBC = NoBC, class TopBC = NoBC>
struct Operator {
    using Bottom = BottomBC;
    using Top = TopBC;
    using Out = typename Rule::Out;

    Bottom bottom{};
    Top top{};

    template <std::size_t I>
    static constexpr Footprint footprint() {
        return Rule::footprint[I];
    }

    // Applying the operator to its operands builds the expression node; nothing is evaluated yet.
    template <class... X>
    auto operator()(X const&... x) const {
        static_assert(
            requires { std::string_view{Derived::name}; },
            "Strata operator: the operator states its name (static constexpr std::string_view name)");
        if constexpr (sizeof...(X) != Rule::Operands::count) {
            static_assert(sizeof...(X) == Rule::Operands::count,
                          "Strata operator: the number of operands differs from the rule's Operands");
        } else {
            // One footprint per operand: a rule with too few fails here, as a read past the end of its footprint[].
            [[maybe_unused]] constexpr Footprint lastFootprint = Rule::footprint[Rule::Operands::count - 1];
            detail::checkOperands<Derived, Rule, X...>(std::index_sequence_for<X...>{});
            detail::checkBC<Derived, Rule::bottom, false, Bottom>();
            detail::checkBC<Derived, Rule::top, true, Top>();
            return makeStencil(static_cast<Derived const&>(*this), asExpr(x)...);
        }
    }

    // The operator itself (Derived), so that a rule reads the members an operator of its own adds (a coefficient).
    template <class Ctx, class... A>
    STRATA_HD auto apply(Ctx const& ctx, Level k, A const&... a) const {
        return Rule::apply(ctx, k, static_cast<Derived const&>(*this), a...);
    }
};

} // namespace strata::ops
