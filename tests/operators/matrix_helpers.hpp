// Helpers of the operator-matrix tests (test_matrix.cpp, test_matrix_algebra.cpp): a stretched grid, sampled fields
// and bit-for-bit comparisons of fields and band matrices.
#pragma once

#include <strata/operators/matrix.hpp>
#include <strata/operators/operators.hpp>

#include <cmath>
#include <cstring>
#include <memory>

namespace strata::test {

inline std::shared_ptr<ops::Grid const> stretched(uint32_t n) {
    return std::make_shared<ops::Grid const>(
        ops::Grid::stretched(n, 1000.0, [](double s) { return s * s * 0.5 + 0.5 * s; }));
}

template <class S>
ops::Field<double, S> sampled(std::shared_ptr<ops::Grid const> const& grid, uint32_t columns, double seed,
                              double offset = 0) {
    ops::Field<double, S> f(grid, columns, core::MemSpace::Host);
    for (uint32_t c = 0; c < columns; ++c)
        for (uint32_t k = 0; k < f.levels(); ++k)
            f.at(c, k) = offset + std::sin(seed * (k + 1) + 0.7 * c) + 0.3 * std::cos(2.3 * seed * k);
    return f;
}

template <class T, class S>
bool sameBits(ops::Field<T, S> const& a, ops::Field<T, S> const& b) {
    for (uint32_t c = 0; c < a.columns(); ++c)
        if (std::memcmp(a.column(c).data(), b.column(c).data(), a.levels() * sizeof(T)) != 0) return false;
    return true;
}

template <class T, class RowS, class ColS>
bool sameBits(ops::BandMatrix<T, RowS, ColS> const& a, ops::BandMatrix<T, RowS, ColS> const& b) {
    if (a.lo != b.lo || a.hi != b.hi || !sameBits(a.affine, b.affine)) return false;
    for (int d = a.lo; d <= a.hi; ++d)
        if (!sameBits(a.diagonal(d), b.diagonal(d))) return false;
    return true;
}

} // namespace strata::test
