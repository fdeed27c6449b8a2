// A launch's configuration (blocks, dynamic shared memory, the block domain) and what the launch loops need to know
// of a kernel (its static shared memory, its name): shared by core/lockstep/launch.hpp and the backends' launch loops
// in core/lockstep/detail/, each of which compiles on its own.
#pragma once

#include <strata/core/config.hpp>
#include <strata/core/lockstep/block_cfg.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <typeinfo>

namespace strata::lockstep {

template <class DomSizeND>
struct LaunchCfg {
    uint32_t gridSize;
    std::size_t dynSharedBytes = 0;
};

inline LaunchCfg<void> config(uint32_t gridSize) { return {gridSize, 0}; }
template <uint32_t N>
LaunchCfg<CtUint32<N>> config(uint32_t gridSize) {
    return {gridSize, 0};
}
template <class DomSizeND>
requires isCtUint32<DomSizeND> LaunchCfg<DomSizeND> config(uint32_t gridSize) { return {gridSize, 0}; }
inline LaunchCfg<void> configSMem(uint32_t gridSize, std::size_t dynBytes) { return {gridSize, dynBytes}; }
template <uint32_t N>
LaunchCfg<CtUint32<N>> configSMem(uint32_t gridSize, std::size_t dynBytes) {
    return {gridSize, dynBytes};
}
template <class DomSizeND>
requires isCtUint32<DomSizeND> LaunchCfg<DomSizeND> configSMem(uint32_t gridSize, std::size_t dynBytes) {
    return {gridSize, dynBytes};
}
template <class DataObject>
auto configFor(DataObject const&, uint32_t gridSize, std::size_t dynBytes = 0) {
    return LaunchCfg<typename MakeBlockCfg<DataObject>::type::DomSizeNDType>{gridSize, dynBytes};
}

namespace detail {
template <class K>
concept HasShared = requires {
    typename K::Shared;
};

template <class K>
STRATA_HD constexpr std::size_t staticSharedBytes() {
    if constexpr (HasShared<K>)
        return sizeof(typename K::Shared);
    else
        return 0;
}

// Dynamic shared memory starts at this offset after the static part.
constexpr std::size_t sharedAlign = 16;
STRATA_HD constexpr std::size_t alignUp(std::size_t n) { return (n + sharedAlign - 1) / sharedAlign * sharedAlign; }

// The type name as written in the source (`strata::test::NeighbourReadKernel<false>`), or the compiler's name where
// the ABI offers no demangler (kernel_name.cpp).
std::string demangle(char const* name);

template <class Kernel>
std::string kernelName() {
    return demangle(typeid(Kernel).name());
}
} // namespace detail

} // namespace strata::lockstep
