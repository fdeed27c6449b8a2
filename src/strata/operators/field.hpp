// Field<T, Stagger>: one value per level of a staggering for every local column.
//
// Storage is level-contiguous per column (workers of a block walk the levels of a column, so neighbouring workers
// touch neighbouring addresses) with the column stride padded to a multiple of 8 values. The data lives in the
// backend's memory space with a host mirror (`host()`, `at()`), copied explicitly with toDevice()/toHost(); on CPU
// backends the two are one array. Kernels see a FieldView.
#pragma once

#include <strata/core/backend.hpp>
#include <strata/core/config.hpp>
#include <strata/core/error.hpp>
#include <strata/core/memory.hpp>
#include <strata/operators/grid.hpp>
#include <strata/operators/stagger.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

namespace strata::ops {

template <class T, class S>
struct FieldView {
    T* data;
    uint32_t stride;
    uint32_t levels;
    uint32_t columns;

    STRATA_HD T& operator()(uint32_t col, std::size_t k) const { return data[std::size_t{col} * stride + k]; }
};

// One value per column (surface fluxes, per-column boundary values).
template <class T>
struct ColumnValues {
    T const* data;
    STRATA_HD T operator()(uint32_t col) const { return data[col]; }
};

inline constexpr uint32_t fieldStridePad = 8;

template <class T, class S>
class Field {
    static_assert(isStagger<S>, "Field<T, S>: S must be ops::Center or ops::Face");

public:
    using Value = T;
    using Stagger = S;

    Field(std::shared_ptr<Grid const> grid, uint32_t columns, core::MemSpace space, T init = T{})
        : m_grid(std::move(grid)), m_columns(columns), m_levels(S::levels(m_grid->cells())),
          m_stride((m_levels + fieldStridePad - 1) / fieldStridePad * fieldStridePad),
          m_data(static_cast<std::size_t>(m_stride) * columns, space, init) {}

    Grid const& grid() const { return *m_grid; }
    std::shared_ptr<Grid const> const& gridPtr() const { return m_grid; }
    uint32_t columns() const { return m_columns; }
    uint32_t levels() const { return m_levels; }
    uint32_t stride() const { return m_stride; }
    core::MemSpace space() const { return m_data.space(); }

    FieldView<T, S> view() { return {m_data.device(), m_stride, m_levels, m_columns}; }
    FieldView<T const, S> view() const { return {m_data.device(), m_stride, m_levels, m_columns}; }

    T& at(uint32_t col, uint32_t k) { return m_data.host()[static_cast<std::size_t>(col) * m_stride + k]; }
    T at(uint32_t col, uint32_t k) const { return m_data.host()[static_cast<std::size_t>(col) * m_stride + k]; }
    std::span<T> column(uint32_t col) { return m_data.host().subspan(std::size_t{col} * m_stride, m_levels); }
    std::span<T const> column(uint32_t col) const {
        return m_data.host().subspan(std::size_t{col} * m_stride, m_levels);
    }

    void toDevice() { m_data.toDevice(); }
    void toHost() { m_data.toHost(); }

private:
    std::shared_ptr<Grid const> m_grid;
    uint32_t m_columns;
    uint32_t m_levels;
    uint32_t m_stride;
    core::Buffer<T> m_data;
};

} // namespace strata::ops
