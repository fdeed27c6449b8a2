// Boundary conditions of stencil operators, as types.
//
// An operator that needs a value outside the column takes one boundary condition for the bottom and one for the top:
//   SetValue{v}        the value of the operand at the boundary face
//   SetGradient{g}     the operand's vertical gradient at the boundary
//   SetDivergence{d}   the result at the boundary (divergence operators)
//   Extrapolate{}      continue the nearest interior value (or result)
//   FirstOrderOneSided{}, ThirdOrderOneSided{}   one-sided stencils for the upwind products
// `v`, `g` and `d` are a scalar or a ColumnValues<T> (one value per column, e.g. a surface flux).
// Which operator accepts which condition is in docs/operators.md; a wrong one is a compile error naming both.
#pragma once

#include <strata/core/config.hpp>
#include <strata/operators/field.hpp>

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <type_traits>

namespace strata::ops {

// A set of boundary-condition kinds: what an operator accepts at one end (operator.hpp), e.g.
// `bc::setValue | bc::extrapolate`. Each condition type states its kind.
struct BCSet {
    uint32_t bits = 0;
};
constexpr BCSet operator|(BCSet a, BCSet b) { return {a.bits | b.bits}; }

// The kinds in bit order, with their names (as the compile errors list them).
inline constexpr std::size_t bcKindCount = 7;
constexpr std::string_view bcKindName(std::size_t bit) {
    constexpr std::string_view names[bcKindCount] = {
        "none", "SetValue", "SetGradient", "SetDivergence", "Extrapolate", "FirstOrderOneSided", "ThirdOrderOneSided"};
    return names[bit];
}
constexpr std::size_t bcCount(BCSet s) {
    std::size_t n = 0;
    for (std::size_t bit = 0; bit < bcKindCount; ++bit)
        n += (s.bits >> bit) & 1u;
    return n;
}

namespace bc {
inline constexpr BCSet none{1u << 0};
inline constexpr BCSet setValue{1u << 1};
inline constexpr BCSet setGradient{1u << 2};
inline constexpr BCSet setDivergence{1u << 3};
inline constexpr BCSet extrapolate{1u << 4};
inline constexpr BCSet firstOrderOneSided{1u << 5};
inline constexpr BCSet thirdOrderOneSided{1u << 6};
} // namespace bc

// Whether boundary condition B is one of the set's kinds.
template <class B>
constexpr bool accepts(BCSet s) {
    return (B::kind.bits & s.bits) != 0;
}

struct NoBC {
    static constexpr std::string_view name = "none";
    static constexpr BCSet kind = bc::none;
};

template <class V>
struct SetValue {
    static constexpr std::string_view name = "SetValue";
    static constexpr BCSet kind = bc::setValue;
    V value;
};
template <class V>
SetValue(V) -> SetValue<V>;

template <class V>
struct SetGradient {
    static constexpr std::string_view name = "SetGradient";
    static constexpr BCSet kind = bc::setGradient;
    V value;
};
template <class V>
SetGradient(V) -> SetGradient<V>;

template <class V>
struct SetDivergence {
    static constexpr std::string_view name = "SetDivergence";
    static constexpr BCSet kind = bc::setDivergence;
    V value;
};
template <class V>
SetDivergence(V) -> SetDivergence<V>;

struct Extrapolate {
    static constexpr std::string_view name = "Extrapolate";
    static constexpr BCSet kind = bc::extrapolate;
};
struct FirstOrderOneSided {
    static constexpr std::string_view name = "FirstOrderOneSided";
    static constexpr BCSet kind = bc::firstOrderOneSided;
};
struct ThirdOrderOneSided {
    static constexpr std::string_view name = "ThirdOrderOneSided";
    static constexpr BCSet kind = bc::thirdOrderOneSided;
};

// The boundary value for column `col`, converted to the operand's type.
template <class T, class V>
STRATA_HD T bcValue(V const& v, uint32_t col) {
    if constexpr (std::is_arithmetic_v<V>)
        return static_cast<T>(v);
    else
        return static_cast<T>(v(col));
}

// A boundary condition: a type that states its kind. Strata's own are above; a type of one's own with
// `static constexpr BCSet kind = bc::setValue;` and a `value` (a scalar or a per-column callable) is used as SetValue
// is: the operators' rules test the kind, not the type.
template <class B>
concept BoundaryCondition = requires {
    { B::kind } -> std::convertible_to<BCSet>;
};

namespace detail {
template <class B>
constexpr bool isKind(BCSet kind) {
    if constexpr (BoundaryCondition<B>)
        return B::kind.bits == kind.bits;
    else
        return false;
}
} // namespace detail

template <class B>
inline constexpr bool isSetValue = detail::isKind<B>(bc::setValue);
template <class B>
inline constexpr bool isSetGradient = detail::isKind<B>(bc::setGradient);
template <class B>
inline constexpr bool isSetDivergence = detail::isKind<B>(bc::setDivergence);
template <class B>
inline constexpr bool isExtrapolate = detail::isKind<B>(bc::extrapolate);
template <class B>
inline constexpr bool isNoBC = detail::isKind<B>(bc::none);
template <class B>
inline constexpr bool isFirstOrderOneSided = detail::isKind<B>(bc::firstOrderOneSided);
template <class B>
inline constexpr bool isThirdOrderOneSided = detail::isKind<B>(bc::thirdOrderOneSided);

} // namespace strata::ops
