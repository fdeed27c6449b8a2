// Staggerings of a vertical grid, as types: a field lives either on cell centers or on cell faces.
//
// A grid of n cells has n centers (index k = 0..n-1, center k between faces k and k+1) and n + 1 faces
// (k = 0..n, face 0 at the bottom). Operators name what they map: GradientC2F takes Center values to Face values.
#pragma once

#include <strata/core/config.hpp>

#include <cstdint>
#include <string_view>
#include <type_traits>

namespace strata::ops {

struct Center {
    static constexpr std::string_view name = "Center";
    STRATA_HD static constexpr uint32_t levels(uint32_t cells) { return cells; }
};

struct Face {
    static constexpr std::string_view name = "Face";
    STRATA_HD static constexpr uint32_t levels(uint32_t cells) { return cells + 1; }
};

// The staggering of a scalar leaf: fits anywhere.
struct AnyStagger {
    static constexpr std::string_view name = "Any";
};

template <class S>
inline constexpr bool isStagger = std::is_same_v<S, Center> || std::is_same_v<S, Face>;

} // namespace strata::ops
