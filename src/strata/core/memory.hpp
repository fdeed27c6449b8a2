// Buffer<T>: an array in a backend's memory space with a host mirror and explicit copies.
//
// On host backends (Serial, OpenMP, Threads) device and host storage are the same array: `toDevice()` and `toHost()`
// copy nothing, so CPU runs pay no mirror. On Cuda the device array is cudaMalloc'ed and the host mirror is separate;
// kernels get `device()` pointers, host code reads and writes `host()` and copies explicitly.
//
// Host arrays of 2 MiB or more (HostAllocator) start on a 2 MiB boundary and are advised to the kernel as transparent
// huge pages (Linux `madvise(MADV_HUGEPAGE)`, which takes effect where THP is in its "madvise" or "always" mode): a
// stream over fields of tens of megabytes then crosses a page, and misses in the TLB, every 2 MiB instead of every
// 4 KiB (docs/performance.md measures the effect). STRATA_HUGE_PAGES=0 (read once) turns it off: plain
// `operator new`, 4 KiB pages.
#pragma once

#include <strata/core/backend.hpp>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <new>
#include <span>
#include <type_traits>
#include <vector>

namespace strata::core {

namespace detail {
// Bytes held by every Buffer of the process now (host arrays; a Cuda buffer holds as many again on the device).
inline std::atomic<std::size_t>& liveBufferBytes() {
    static std::atomic<std::size_t> bytes{0};
    return bytes;
}
// STRATA_SEPARATE_MIRROR=1 (read once): host-space buffers keep their "device" array apart from the host mirror,
// as on a GPU, and toDevice() poisons the mirror (NaN, or 0x5a bytes for other types). A kernel result read on the
// host without toHost(), or host values a kernel uses without toDevice(), then show up in CPU runs as they would on a
// GPU: as NaN or stale values (the regression runs every case this way and wants the same bits).
inline bool separateMirror() {
    static bool const on = [] {
        char const* v = std::getenv("STRATA_SEPARATE_MIRROR");
        return v != nullptr && v[0] == '1';
    }();
    return on;
}
// Host allocations of at least this many bytes are aligned to it and advised as huge pages (unless
// STRATA_HUGE_PAGES=0).
inline constexpr std::size_t hugePageBytes = std::size_t{2} << 20;
bool hugePages();
void* hostAllocate(std::size_t bytes);
void hostRelease(void* p, std::size_t bytes) noexcept;
void* cudaAllocate(std::size_t bytes);
void cudaRelease(void* p) noexcept;
void cudaCopyToDevice(void* dst, void const* src, std::size_t bytes);
void cudaCopyToHost(void* dst, void const* src, std::size_t bytes);
} // namespace detail

// Copies between host and device asked for by every Buffer of the process (toDevice and toHost calls). On Cuda each
// one is a copy, and toHost waits for the device; on the CPU backends they copy nothing, but they are counted the
// same, so the CPU tests and benchmarks see the copies a GPU run would make (the model's profile, per step).
inline std::atomic<uint64_t>& transferCounter() {
    static std::atomic<uint64_t> count{0};
    return count;
}

// The allocator of every Buffer's host array (and of its separate mirror): detail::hostAllocate.
template <class T>
struct HostAllocator {
    static_assert(alignof(T) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__, "an over-aligned type needs its own allocator");
    using value_type = T;
    HostAllocator() = default;
    template <class U>
    HostAllocator(HostAllocator<U> const&) noexcept {}
    T* allocate(std::size_t n) {
        if (n > std::numeric_limits<std::size_t>::max() / sizeof(T)) throw std::bad_array_new_length();
        return static_cast<T*>(detail::hostAllocate(n * sizeof(T)));
    }
    void deallocate(T* p, std::size_t n) noexcept { detail::hostRelease(p, n * sizeof(T)); }
    template <class U>
    bool operator==(HostAllocator<U> const&) const noexcept {
        return true;
    }
};

template <class T>
class Buffer {
public:
    Buffer() = default;
    Buffer(std::size_t size, MemSpace space, T const& init = T{}) : m_space(space), m_host(size, init) {
        if (space == MemSpace::Cuda) {
            m_device.reset(static_cast<T*>(detail::cudaAllocate(size * sizeof(T))));
            toDevice();
        } else if (detail::separateMirror()) {
            m_mirror = m_host; // both hold the initial value, as after a Cuda buffer's construction
        }
        detail::liveBufferBytes() += bytes();
    }
    ~Buffer() { detail::liveBufferBytes() -= bytes(); }
    Buffer(Buffer&& other) noexcept
        : m_space(other.m_space), m_host(std::move(other.m_host)), m_device(std::move(other.m_device)),
          m_mirror(std::move(other.m_mirror)) {
        other.m_host.clear(); // moved-from: empty, counted as nothing
        other.m_mirror.clear();
    }
    Buffer& operator=(Buffer&& other) noexcept {
        if (this != &other) {
            detail::liveBufferBytes() -= bytes();
            m_space = other.m_space;
            m_host = std::move(other.m_host);
            m_device = std::move(other.m_device);
            m_mirror = std::move(other.m_mirror);
            other.m_host.clear();
            other.m_mirror.clear();
        }
        return *this;
    }
    Buffer(Buffer const&) = delete;
    Buffer& operator=(Buffer const&) = delete;

    std::size_t size() const { return m_host.size(); }
    std::size_t bytes() const { return m_host.size() * sizeof(T); }
    MemSpace space() const { return m_space; }

    T* device() {
        return m_space == MemSpace::Cuda ? m_device.get() : m_mirror.empty() ? m_host.data() : m_mirror.data();
    }
    T const* device() const {
        return m_space == MemSpace::Cuda ? m_device.get() : m_mirror.empty() ? m_host.data() : m_mirror.data();
    }
    std::span<T> host() { return m_host; }
    std::span<T const> host() const { return m_host; }

    void toDevice() {
        transferCounter().fetch_add(1, std::memory_order_relaxed);
        if (m_space == MemSpace::Cuda) detail::cudaCopyToDevice(m_device.get(), m_host.data(), size() * sizeof(T));
        if (!m_mirror.empty()) {
            std::copy(m_host.begin(), m_host.end(), m_mirror.begin());
            poisonHost();
        }
    }
    void toHost() {
        transferCounter().fetch_add(1, std::memory_order_relaxed);
        if (m_space == MemSpace::Cuda) detail::cudaCopyToHost(m_host.data(), m_device.get(), size() * sizeof(T));
        if (!m_mirror.empty()) std::copy(m_mirror.begin(), m_mirror.end(), m_host.begin());
    }

private:
    void poisonHost() {
        if constexpr (std::is_floating_point_v<T>)
            std::fill(m_host.begin(), m_host.end(), std::numeric_limits<T>::quiet_NaN());
        else if constexpr (std::is_trivially_copyable_v<T>)
            std::memset(static_cast<void*>(m_host.data()), 0x5a, m_host.size() * sizeof(T));
    }

    struct CudaDeleter {
        void operator()(T* p) const noexcept { detail::cudaRelease(p); }
    };
    MemSpace m_space = MemSpace::Host;
    std::vector<T, HostAllocator<T>> m_host;
    std::unique_ptr<T, CudaDeleter> m_device;
    std::vector<T, HostAllocator<T>> m_mirror; // the "device" array of a host buffer under STRATA_SEPARATE_MIRROR=1
};

} // namespace strata::core
