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

#include "core/config.hpp"
#include "operators/field.hpp"

#include <string_view>
#include <type_traits>

namespace strata::ops {

struct NoBC {
    static constexpr std::string_view name = "none";
};

template <class V>
struct SetValue {
    static constexpr std::string_view name = "SetValue";
    V value;
};
template <class V>
SetValue(V) -> SetValue<V>;

template <class V>
struct SetGradient {
    static constexpr std::string_view name = "SetGradient";
    V value;
};
template <class V>
SetGradient(V) -> SetGradient<V>;

template <class V>
struct SetDivergence {
    static constexpr std::string_view name = "SetDivergence";
    V value;
};
template <class V>
SetDivergence(V) -> SetDivergence<V>;

struct Extrapolate {
    static constexpr std::string_view name = "Extrapolate";
};
struct FirstOrderOneSided {
    static constexpr std::string_view name = "FirstOrderOneSided";
};
struct ThirdOrderOneSided {
    static constexpr std::string_view name = "ThirdOrderOneSided";
};

// The boundary value for column `col`, converted to the operand's type.
template <class T, class V>
STRATA_HD T bcValue(V const& v, uint32_t col) {
    if constexpr (std::is_arithmetic_v<V>)
        return static_cast<T>(v);
    else
        return static_cast<T>(v(col));
}

namespace detail {
template <class B, template <class> class Kind>
struct IsKind : std::false_type {};
template <class V, template <class> class Kind>
struct IsKind<Kind<V>, Kind> : std::true_type {};
} // namespace detail

template <class B>
inline constexpr bool isSetValue = detail::IsKind<B, SetValue>::value;
template <class B>
inline constexpr bool isSetGradient = detail::IsKind<B, SetGradient>::value;
template <class B>
inline constexpr bool isSetDivergence = detail::IsKind<B, SetDivergence>::value;
template <class B>
inline constexpr bool isExtrapolate = std::is_same_v<B, Extrapolate>;
template <class B>
inline constexpr bool isNoBC = std::is_same_v<B, NoBC>;
template <class B>
inline constexpr bool isFirstOrderOneSided = std::is_same_v<B, FirstOrderOneSided>;
template <class B>
inline constexpr bool isThirdOrderOneSided = std::is_same_v<B, ThirdOrderOneSided>;

} // namespace strata::ops
