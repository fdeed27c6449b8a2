// Argument checks shared by the column solvers (integrals.hpp, tridiagonal.hpp): shapes, memory spaces, aliasing.
//
// Each check throws strata::Error naming the function (`where`), the argument and what would have been accepted.
#pragma once

#include <strata/core/error.hpp>
#include <strata/core/memory.hpp>
#include <strata/operators/field.hpp>

#include <cstdint>
#include <string>

namespace strata::ops::detail {

inline std::string memSpaceName(core::MemSpace space) { return space == core::MemSpace::Cuda ? "Cuda" : "Host"; }

// `field` has `columns` columns on a grid of `cells` cells and lives where Backend's kernels read.
template <class Backend, class T, class S>
void requireColumnField(char const* where, char const* name, Field<T, S> const& field, uint32_t columns,
                        uint32_t cells) {
    if (field.columns() != columns || field.grid().cells() != cells)
        throw Error(std::string(name) + " has " + std::to_string(field.columns()) + " columns on a grid of " +
                        std::to_string(field.grid().cells()) + " cells",
                    where, std::to_string(columns) + " columns on a grid of " + std::to_string(cells) + " cells");
    if (field.space() != Backend::memSpace)
        throw Error(std::string(name) + " lives in " + memSpaceName(field.space()) + " memory", where,
                    "fields in the memory of the " + std::string(Backend::name) + " backend (" +
                        memSpaceName(Backend::memSpace) + ")");
}

// `values` lives where Backend's kernels read.
template <class Backend, class T>
void requireInBackendMemory(char const* where, char const* name, core::Buffer<T> const& values) {
    if (values.space() != Backend::memSpace)
        throw Error(std::string(name) + " lives in " + memSpaceName(values.space()) + " memory", where,
                    "a buffer in the memory of the " + std::string(Backend::name) + " backend (" +
                        memSpaceName(Backend::memSpace) + ")");
}

// `values` holds exactly one value per column, where Backend's kernels read.
template <class Backend, class T>
void requirePerColumn(char const* where, char const* name, core::Buffer<T> const& values, uint32_t columns) {
    if (values.size() != columns)
        throw Error(std::string(name) + " holds " + std::to_string(values.size()) + " values", where,
                    "one value per column: " + std::to_string(columns));
    requireInBackendMemory<Backend>(where, name, values);
}

// `out` is not the same field as `in` (for outputs that would overwrite an input they still have to read).
template <class T, class S>
void requireDistinct(char const* where, char const* outName, Field<T, S> const& out, char const* inName,
                     Field<T, S> const& in) {
    if (&out == &in)
        throw Error(std::string(outName) + " is also the input " + inName, where,
                    std::string("an output field distinct from ") + inName);
}

} // namespace strata::ops::detail
