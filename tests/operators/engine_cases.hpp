// Pieces the engine tests share: a bit-for-bit comparison of two fields and the diffusion tree
// div(interp(K) * grad(theta)) with zero flux at both ends (theta fixed at `thetaBottom` below the first face).
#pragma once

#include <strata/operators/operators.hpp>

#include <cstdint>
#include <cstring>

namespace strata::test {

// Every level of every column identical bit for bit (the padding excluded).
template <class T, class S>
bool sameBits(ops::Field<T, S> const& a, ops::Field<T, S> const& b) {
    for (uint32_t c = 0; c < a.columns(); ++c)
        if (std::memcmp(a.column(c).data(), b.column(c).data(), a.levels() * sizeof(T)) != 0) return false;
    return true;
}

template <class K, class Theta>
auto diffusionTree(K const& kappa, Theta const& theta, double thetaBottom) {
    auto const grad = ops::GradientC2F{ops::SetValue{thetaBottom}, ops::SetGradient{0.0}};
    auto const interp = ops::InterpolateC2F{ops::Extrapolate{}, ops::Extrapolate{}};
    auto const div = ops::DivergenceF2C{ops::SetValue{0.0}, ops::SetValue{0.0}};
    return div(interp(kappa) * grad(theta));
}

} // namespace strata::test
