// BlockCfg: the compile-time shape of a block's index domain, and how a kernel states it.
//
// A block domain is what `makeForEach(worker)` walks: `BlockCfg<CtUint32<S...>>` has `domSize()` = product of S and
// `domSizeND()`. It is *not* the number of workers: a backend maps the domain onto however many workers it runs
// (1 on Serial/OpenMP, `Threads::numWorkers`, up to 256 CUDA threads).
//
// A kernel either declares its domain
//     static constexpr uint32_t blockDomSize = 42;            // 1-D
//     using BlockDomSizeND = lockstep::CtUint32<8, 4>;         // N-D  (never both)
// and is launched with `config(gridSize)`, or it is generic and gets the domain at launch: `config<128>(gridSize)`,
// `config<CtUint32<8, 4>>(gridSize)`, or `configFor(dataObject, gridSize)` which asks `MakeBlockCfg<DataObject>`.
// Overriding a declared domain at launch is a compile error: the kernel relies on it.
#pragma once

#include <strata/core/lockstep/vector.hpp>

#include <cstdint>
#include <type_traits>

namespace strata::lockstep {

template <class DomSizeND>
struct BlockCfg {
    static_assert(isCtUint32<DomSizeND>, "BlockCfg takes a lockstep::CtUint32<...> extent");
    using DomSizeNDType = DomSizeND;
    static constexpr uint32_t dim = DomSizeND::dim;
    STRATA_HD static constexpr uint32_t domSize() { return DomSizeND::product; }
    STRATA_HD static constexpr UVec<dim> domSizeND() { return DomSizeND::toRT(); }
    // Workers a CUDA block runs for this domain: whole warps, at most 256.
    STRATA_HD static constexpr uint32_t cudaNumWorkers() {
        uint32_t const warps = (domSize() + 31u) / 32u;
        return warps * 32u > 256u ? 256u : warps * 32u;
    }
};

template <uint32_t... S>
using BlockCfgOf = BlockCfg<CtUint32<S...>>;

// Customisation point: derive a block domain from a data object (specialise with `using type = BlockCfg<...>;`).
template <class T>
struct MakeBlockCfg;

namespace detail {
template <class K>
concept DeclaresDomSize = requires {
    K::blockDomSize;
};
template <class K>
concept DeclaresDomSizeND = requires {
    typename K::BlockDomSizeND;
};

template <class K>
consteval bool kernelDeclaresDomain() {
    static_assert(!(DeclaresDomSize<K> && DeclaresDomSizeND<K>),
                  "lockstep kernel: declare either `blockDomSize` or `BlockDomSizeND`, not both");
    return DeclaresDomSize<K> || DeclaresDomSizeND<K>;
}

template <class K>
struct KernelBlockCfg;
template <DeclaresDomSize K>
struct KernelBlockCfg<K> {
    using type = BlockCfg<CtUint32<K::blockDomSize>>;
};
template <DeclaresDomSizeND K>
struct KernelBlockCfg<K> {
    using type = BlockCfg<typename K::BlockDomSizeND>;
};

// The block domain a launch uses: the kernel's declaration, else the launch configuration's.
template <class Kernel, class LaunchDom>
struct ResolveBlockCfg {
    static constexpr bool declared = kernelDeclaresDomain<Kernel>();
    static_assert(!(declared && !std::is_void_v<LaunchDom>),
                  "lockstep launch: this kernel declares its block domain size (blockDomSize / BlockDomSizeND); "
                  "launch it with config(gridSize) instead of overriding the domain");
    static_assert(declared || !std::is_void_v<LaunchDom>,
                  "lockstep launch: this kernel declares no block domain size; give one at launch, "
                  "e.g. config<128>(gridSize)");
    using type =
        typename std::conditional_t<declared, KernelBlockCfg<Kernel>, std::type_identity<BlockCfg<LaunchDom>>>::type;
};
} // namespace detail

} // namespace strata::lockstep
