// Buffer<T>: an array in a backend's memory space with a host mirror and explicit copies.
//
// On host backends (Serial, OpenMP, Threads) device and host storage are the same array: `toDevice()` and `toHost()`
// copy nothing, so CPU runs pay no mirror. On Cuda the device array is cudaMalloc'ed and the host mirror is separate;
// kernels get `device()` pointers, host code reads and writes `host()` and copies explicitly.
#pragma once

#include "core/backend.hpp"

#include <atomic>
#include <cstddef>
#include <memory>
#include <span>
#include <vector>

namespace strata::core {

namespace detail {
// Bytes held by every Buffer of the process now (host arrays; a Cuda buffer holds as many again on the device).
inline std::atomic<std::size_t>& liveBufferBytes() {
    static std::atomic<std::size_t> bytes{0};
    return bytes;
}
void* cudaAllocate(std::size_t bytes);
void cudaRelease(void* p) noexcept;
void cudaCopyToDevice(void* dst, void const* src, std::size_t bytes);
void cudaCopyToHost(void* dst, void const* src, std::size_t bytes);
} // namespace detail

template <class T>
class Buffer {
public:
    Buffer() = default;
    Buffer(std::size_t size, MemSpace space, T const& init = T{}) : m_space(space), m_host(size, init) {
        if (space == MemSpace::Cuda) {
            m_device.reset(static_cast<T*>(detail::cudaAllocate(size * sizeof(T))));
            toDevice();
        }
        detail::liveBufferBytes() += bytes();
    }
    ~Buffer() { detail::liveBufferBytes() -= bytes(); }
    Buffer(Buffer&& other) noexcept
        : m_space(other.m_space), m_host(std::move(other.m_host)), m_device(std::move(other.m_device)) {
        other.m_host.clear(); // moved-from: empty, counted as nothing
    }
    Buffer& operator=(Buffer&& other) noexcept {
        if (this != &other) {
            detail::liveBufferBytes() -= bytes();
            m_space = other.m_space;
            m_host = std::move(other.m_host);
            m_device = std::move(other.m_device);
            other.m_host.clear();
        }
        return *this;
    }
    Buffer(Buffer const&) = delete;
    Buffer& operator=(Buffer const&) = delete;

    std::size_t size() const { return m_host.size(); }
    std::size_t bytes() const { return m_host.size() * sizeof(T); }
    MemSpace space() const { return m_space; }

    T* device() { return m_space == MemSpace::Cuda ? m_device.get() : m_host.data(); }
    T const* device() const { return m_space == MemSpace::Cuda ? m_device.get() : m_host.data(); }
    std::span<T> host() { return m_host; }
    std::span<T const> host() const { return m_host; }

    void toDevice() {
        if (m_space == MemSpace::Cuda) detail::cudaCopyToDevice(m_device.get(), m_host.data(), size() * sizeof(T));
    }
    void toHost() {
        if (m_space == MemSpace::Cuda) detail::cudaCopyToHost(m_host.data(), m_device.get(), size() * sizeof(T));
    }

private:
    struct CudaDeleter {
        void operator()(T* p) const noexcept { detail::cudaRelease(p); }
    };
    MemSpace m_space = MemSpace::Host;
    std::vector<T> m_host;
    std::unique_ptr<T, CudaDeleter> m_device;
};

} // namespace strata::core
