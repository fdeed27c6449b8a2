#include <strata/core/detail/block_checker.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <sstream>

namespace strata::core::detail {

namespace {
constexpr unsigned char poisonByte = 0xFF; // a double of all ones is a NaN, an integer is -1
constexpr uint64_t writerMask = 0xFFFF;

bool sameSite(SyncSite const& a, SyncSite const& b) {
    if (a.what == nullptr || b.what == nullptr) return a.what == b.what;
    return a.line == b.line && std::strcmp(a.what, b.what) == 0 && std::strcmp(a.file, b.file) == 0;
}

std::string describe(SyncSite const& s) {
    if (s.what == nullptr) return "sync()";
    return std::string(s.what) + " (" + s.file + ":" + std::to_string(s.line) + ")";
}
} // namespace

BlockChecker::BlockChecker(uint32_t numWorkers, std::size_t sharedBytes, bool checkShared)
    : m_numWorkers(numWorkers), m_sharedBytes(sharedBytes), m_checkShared(checkShared),
      m_shared(new std::byte[sharedBytes > 0 ? sharedBytes : 1]), m_kinds(numWorkers, Arrival::Sync),
      m_sites(numWorkers) {
    m_scratch.reset(new ScratchSlot[numWorkers]);
    if (checkShared) {
        m_shadow.reset(new std::atomic<uint64_t>[sharedBytes > 0 ? sharedBytes : 1]);
        for (std::size_t i = 0; i < sharedBytes; ++i)
            m_shadow[i].store(0, std::memory_order_relaxed);
    }
}

void BlockChecker::beginBlock(uint32_t worker, uint32_t blockIdx) {
    if (worker == 0) {
        std::memset(m_shared.get(), poisonByte, m_sharedBytes);
        m_blockIdx = blockIdx;
        m_blockStartEpoch = m_epoch.load(std::memory_order_relaxed) + 1;
    }
    arrive(worker, Arrival::BlockStart);
}

void BlockChecker::arrive(uint32_t worker, Arrival kind, SyncSite site) {
    std::unique_lock lock(m_mutex);
    if (failed()) return;
    m_kinds[worker] = kind;
    m_sites[worker] = site;
    if (++m_arrived == m_numWorkers) {
        for (uint32_t w = 1; w < m_numWorkers; ++w) {
            if (m_kinds[w] != m_kinds[0]) {
                uint32_t const atSync = m_kinds[w] == Arrival::Sync ? w : 0;
                uint32_t const atEnd = atSync == w ? 0 : w;
                std::ostringstream msg;
                msg << "block " << m_blockIdx << ": worker " << atSync << " waits in " << describe(m_sites[atSync])
                    << " while worker " << atEnd
                    << " reached the end of the kernel; every worker of a block must call sync() the same number of "
                       "times (is a sync() inside a branch?)";
                lock.unlock();
                fail(msg.str());
                return;
            }
        }
        for (uint32_t w = 1; w < m_numWorkers; ++w) {
            if (!sameSite(m_sites[w], m_sites[0])) {
                std::ostringstream msg;
                msg << "block " << m_blockIdx << ": worker 0 waits in " << describe(m_sites[0]) << " while worker " << w
                    << " waits in " << describe(m_sites[w])
                    << "; every worker of a block must reach the same collectives and sync() calls in the same order "
                       "(is a collective inside a branch?)";
                lock.unlock();
                fail(msg.str());
                return;
            }
        }
        m_arrived = 0;
        ++m_generation;
        m_epoch.fetch_add(1, std::memory_order_relaxed);
        m_cv.notify_all();
        return;
    }
    uint64_t const gen = m_generation;
    m_cv.wait(lock, [&] { return m_generation != gen || failed(); });
}

bool BlockChecker::inBuffer(void const* addr, std::size_t bytes) const {
    // Compared as integers: pointer arithmetic past the buffer is undefined.
    auto const p = reinterpret_cast<std::uintptr_t>(addr);
    auto const base = reinterpret_cast<std::uintptr_t>(m_shared.get());
    return p >= base && p - base <= m_sharedBytes && bytes <= m_sharedBytes - (p - base);
}

void* BlockChecker::outsideBuffer(char const* access, void const* addr, std::size_t bytes, uint32_t worker) {
    auto const offset = static_cast<std::intptr_t>(reinterpret_cast<std::uintptr_t>(addr) -
                                                   reinterpret_cast<std::uintptr_t>(m_shared.get()));
    std::ostringstream msg;
    msg << "block " << m_blockIdx << ", worker " << worker << ": " << access << " " << bytes << " bytes at offset "
        << offset << ", outside the block's " << m_sharedBytes
        << " bytes of shared memory (a shared struct read through another kernel's larger `Shared`, or a dynamic "
           "array larger than the launch gave?)";
    fail(msg.str());
    // Only this worker uses its slot: it grows to the largest access and holds the poison pattern before each use.
    auto& slot = m_scratch[worker];
    std::size_t const units = (bytes + sizeof(std::max_align_t) - 1) / sizeof(std::max_align_t);
    if (slot.count < units) {
        slot.units.reset(new std::max_align_t[units]);
        slot.count = units;
    }
    std::memset(static_cast<void*>(slot.units.get()), poisonByte, units * sizeof(std::max_align_t));
    return slot.units.get();
}

void* BlockChecker::onRead(void const* addr, std::size_t bytes, uint32_t worker) {
    if (!inBuffer(addr, bytes)) return outsideBuffer("reads", addr, bytes, worker);
    void* const inside = const_cast<void*>(addr);
    if (!m_checkShared || failed()) return inside;
    auto const off = static_cast<std::size_t>(static_cast<std::byte const*>(addr) - m_shared.get());
    uint64_t const epoch = m_epoch.load(std::memory_order_relaxed);
    for (std::size_t b = off; b < off + bytes; ++b) {
        uint64_t const rec = m_shadow[b].load(std::memory_order_relaxed);
        uint64_t const recEpoch = rec >> 16;
        auto const writer = static_cast<uint32_t>(rec & writerMask);
        if (recEpoch < m_blockStartEpoch) {
            std::ostringstream msg;
            msg << "block " << m_blockIdx << ", worker " << worker << ": reads shared byte " << b
                << " before any worker wrote it in this block (uninitialised, or written by another worker and not "
                   "yet: a missing sync())";
            fail(msg.str());
            return inside;
        }
        if (recEpoch == epoch && writer != worker) {
            std::ostringstream msg;
            msg << "block " << m_blockIdx << ", worker " << worker << ": reads shared byte " << b << " that worker "
                << writer << " wrote with no sync() between (a race: the result depends on timing)";
            fail(msg.str());
            return inside;
        }
    }
    return inside;
}

void* BlockChecker::onWrite(void const* addr, std::size_t bytes, uint32_t worker) {
    if (!inBuffer(addr, bytes)) return outsideBuffer("writes", addr, bytes, worker);
    void* const inside = const_cast<void*>(addr);
    if (!m_checkShared || failed()) return inside;
    auto const off = static_cast<std::size_t>(static_cast<std::byte const*>(addr) - m_shared.get());
    uint64_t const epoch = m_epoch.load(std::memory_order_relaxed);
    for (std::size_t b = off; b < off + bytes; ++b) {
        uint64_t const old = m_shadow[b].exchange((epoch << 16) | worker, std::memory_order_relaxed);
        auto const writer = static_cast<uint32_t>(old & writerMask);
        if ((old >> 16) == epoch && writer != worker) {
            std::ostringstream msg;
            msg << "block " << m_blockIdx << ", worker " << worker << ": writes shared byte " << b << " that worker "
                << writer << " wrote with no sync() between (a write-write race)";
            fail(msg.str());
            return inside;
        }
    }
    return inside;
}

void BlockChecker::outOfRange(uint32_t index, uint32_t size, uint32_t worker) {
    std::ostringstream msg;
    msg << "block " << m_blockIdx << ", worker " << worker << ": shared array index " << index << " out of range (size "
        << size << ")";
    fail(msg.str());
}

void BlockChecker::fail(std::string message) {
    {
        std::lock_guard lock(m_messageMutex);
        if (m_failed.load(std::memory_order_relaxed)) return;
        m_message = std::move(message);
        m_failed.store(true, std::memory_order_release);
    }
    std::lock_guard lock(m_mutex);
    m_cv.notify_all();
}

} // namespace strata::core::detail

namespace strata::core::detail {
// Out-of-line entry points used by lockstep::CheckedRef (kept out of the header so kernels need not see <mutex>).
void* checkedRead(BlockChecker* c, void const* p, std::size_t bytes, uint32_t worker) {
    return c->onRead(p, bytes, worker);
}
void* checkedWrite(BlockChecker* c, void const* p, std::size_t bytes, uint32_t worker) {
    return c->onWrite(p, bytes, worker);
}
void checkedOutOfRange(BlockChecker* c, uint32_t index, uint32_t size, uint32_t worker) {
    c->outOfRange(index, size, worker);
}
} // namespace strata::core::detail

namespace strata::core::detail {
void checkedArrive(BlockChecker* c, uint32_t worker) { c->arrive(worker, Arrival::Sync); }
} // namespace strata::core::detail
