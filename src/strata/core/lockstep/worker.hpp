// Worker: one of the threads that run a block together, and what it knows about the launch.
//
//   workerIdx()      this worker, 0 .. numWorkers()-1
//   numWorkers()     workers in the block: 1 on Serial/OpenMP, Threads::numWorkers, whole warps on Cuda
//   blockDomIdx()    this block's index in the grid;  gridDomSize(): blocks in the grid (loop over blocks with them)
//   blockDomSize()   size of the block's index domain (compile time), blockDomSizeND() its N-D extent
//   sync()           block barrier: every worker must reach it, the same number of times
//
// Kernels never assume numWorkers(): forEach maps any domain onto the workers there are. `minNumWorkers` is the
// compile-time lower bound a backend guarantees (it sizes context variables: one slot per domain element a worker
// may own).
#pragma once

#include <strata/core/backend.hpp>
#include <strata/core/config.hpp>
#include <strata/core/lockstep/block_cfg.hpp>

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace strata::core::detail {
class BlockChecker;
enum class Arrival : uint8_t;
void checkedArrive(BlockChecker* c, uint32_t worker);
} // namespace strata::core::detail

namespace strata::lockstep {

template <class Cfg, class Backend>
class Worker {
public:
    using BlockCfgType = Cfg;
    using BackendType = Backend;
    static constexpr bool checked = Backend::checked;
    static constexpr uint32_t minNumWorkers = Backend::isGpu ? Cfg::cudaNumWorkers() : 1u;

    STRATA_HD Worker(uint32_t workerIdx, uint32_t numWorkers, uint32_t blockIdx, uint32_t gridSize,
                     std::byte* staticShared, std::byte* dynShared, std::size_t dynBytes,
                     core::detail::BlockChecker* checker = nullptr)
        : m_workerIdx(workerIdx), m_numWorkers(numWorkers), m_blockIdx(blockIdx), m_gridSize(gridSize),
          m_staticShared(staticShared), m_dynShared(dynShared), m_dynBytes(dynBytes), m_checker(checker) {}

    STRATA_HD uint32_t workerIdx() const { return m_workerIdx; }
    STRATA_HD uint32_t numWorkers() const {
        if constexpr (Backend::isGpu) // whole warps, a compile-time count
            return Cfg::cudaNumWorkers();
        else
            return m_numWorkers;
    }
    STRATA_HD uint32_t blockDomIdx() const { return m_blockIdx; }
    STRATA_HD uint32_t gridDomSize() const { return m_gridSize; }
    STRATA_HD static constexpr uint32_t blockDomSize() { return Cfg::domSize(); }
    STRATA_HD static constexpr auto blockDomSizeND() { return Cfg::domSizeND(); }

    STRATA_HD_TEMPLATE
    STRATA_HD void sync() const {
        if constexpr (Backend::isGpu) {
#if STRATA_ON_DEVICE
            __syncthreads();
#endif
        } else if constexpr (checked) {
            core::detail::checkedArrive(m_checker, m_workerIdx);
        }
    }

    STRATA_HD std::byte* staticSharedBase() const { return m_staticShared; }
    STRATA_HD std::byte* dynSharedBase() const { return m_dynShared; }
    STRATA_HD std::size_t dynSharedBytes() const { return m_dynBytes; }
    STRATA_HD core::detail::BlockChecker* checker() const { return m_checker; }

private:
    uint32_t m_workerIdx;
    uint32_t m_numWorkers;
    uint32_t m_blockIdx;
    uint32_t m_gridSize;
    std::byte* m_staticShared;
    std::byte* m_dynShared;
    std::size_t m_dynBytes;
    core::detail::BlockChecker* m_checker;
};

} // namespace strata::lockstep
