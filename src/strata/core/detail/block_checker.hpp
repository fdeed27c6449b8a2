// BlockChecker: the Threads backend's barrier and shared-memory race checker for one block at a time.
//
// Barrier: a mutex + condition variable, so waiting workers sleep (2 cores, up to hundreds of workers: spinning would
// starve the worker everybody waits for). Each arrival says whether it is a `sync()` or the end of the kernel body;
// a barrier where the two meet means a `sync()` that not every worker reached (a sync inside a branch), which is an
// error on a GPU too.
//
// Shadow memory: one 64-bit record per byte of block shared memory = (epoch << 16) | last writer. The epoch advances
// at every barrier and keeps growing over blocks, so a new block needs no clearing. A read by worker w is an error when
// the byte was written by another worker in the current epoch (a read-after-write with no sync between: on a GPU the
// result depends on timing) or not written since the block began (uninitialised: it holds the poison pattern).
// A write is an error when another worker wrote the byte in the same epoch. Reads do not record themselves, so a
// write-after-read in one epoch is not detected; the poison and the read check catch the common missing-sync bugs
// deterministically, whatever the thread schedule.
//
// An access outside the block's shared memory (a kernel reading its struct through another kernel's larger `Shared`)
// is an error, and it is not performed: a write goes to a scratch slot of the worker's, a read comes from one filled
// with the poison pattern. This holds after the first error too, and with `checkShared` off, so the checker never
// touches memory outside its buffer.
//
// The first error is kept; after it barriers stop blocking so every worker runs to the end, and the launch throws.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace strata::core::detail {

enum class Arrival : uint8_t { Sync, BlockEnd, BlockStart };

// Where a worker waits at a barrier: a plain sync() (`what` null) or a step of a block collective (its name and call
// site, core/lockstep/collectives.hpp). Workers that meet at one barrier from different sites are an error: a
// collective that not every worker reaches, or one inside a divergent branch, even when the sync counts agree.
struct SyncSite {
    char const* what = nullptr;
    char const* file = nullptr;
    uint32_t line = 0;
};

class BlockChecker {
public:
    BlockChecker(uint32_t numWorkers, std::size_t sharedBytes, bool checkShared);

    std::byte* sharedBase() { return m_shared.get(); }
    std::size_t sharedBytes() const { return m_sharedBytes; }
    uint32_t numWorkers() const { return m_numWorkers; }
    bool checking() const { return m_checkShared; }

    // Called by every worker at block start; worker 0 poisons shared memory and opens a new epoch.
    void beginBlock(uint32_t worker, uint32_t blockIdx);
    void arrive(uint32_t worker, Arrival kind, SyncSite site = {});

    // Each returns the address the access is to use: `addr` when its bytes lie in the block's shared memory, else
    // (the error reported, whether or not races are checked) the worker's scratch slot, poisoned for a read.
    void* onRead(void const* addr, std::size_t bytes, uint32_t worker);
    void* onWrite(void const* addr, std::size_t bytes, uint32_t worker);
    void outOfRange(uint32_t index, uint32_t size, uint32_t worker);

    void fail(std::string message);
    bool failed() const { return m_failed.load(std::memory_order_acquire); }
    std::string const& message() const { return m_message; }

private:
    bool inBuffer(void const* addr, std::size_t bytes) const;
    void* outsideBuffer(char const* access, void const* addr, std::size_t bytes, uint32_t worker);

    uint32_t m_numWorkers;
    std::size_t m_sharedBytes;
    bool m_checkShared;
    std::unique_ptr<std::byte[]> m_shared;
    std::unique_ptr<std::atomic<uint64_t>[]> m_shadow;
    struct ScratchSlot { // (not a vector of vectors: nvcc 13 fails on one in a header with an internal error)
        std::unique_ptr<std::max_align_t[]> units;
        std::size_t count = 0;
    };
    std::unique_ptr<ScratchSlot[]> m_scratch; // per worker: where accesses outside the buffer go

    std::mutex m_mutex;
    std::condition_variable m_cv;
    uint32_t m_arrived = 0;
    uint64_t m_generation = 0;
    std::vector<Arrival> m_kinds;
    std::vector<SyncSite> m_sites;
    std::atomic<uint64_t> m_epoch{0};
    uint64_t m_blockStartEpoch = 1;
    uint32_t m_blockIdx = 0;

    std::atomic<bool> m_failed{false};
    std::mutex m_messageMutex;
    std::string m_message;
};

} // namespace strata::core::detail
