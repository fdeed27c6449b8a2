// Block shared memory as kernels see it: `SharedSpan<T, Checked>`.
//
// Static shared memory is declared per kernel as a plain struct, `struct Shared { double col[64]; int flag; };`, a
// member of the kernel type. Inside the kernel `sharedArray(worker, &Shared::col)` and `sharedVar(worker,
// &Shared::flag)` give spans over it; no per-source-line ids, no two arrays that alias by accident. Dynamic shared
// memory, sized at launch with `configSMem`, sits after the static part: `dynSharedArray<T>(worker)`.
//
// On Serial, OpenMP and Cuda a span's `operator[]` is a plain `T&`. On the Threads backend it is a `CheckedRef<T>`
// that reports each read and write to the block checker (see core/detail/block_checker.hpp), so a missing sync() is an
// error every time instead of a heisenbug. An index out of range, or an address outside the block's shared memory (a
// struct read through another kernel's `Shared`), is reported and the access goes to a safe place instead: the
// checker never reads or writes outside its buffer. Write kernel code that works with both: `sh[i] = x`,
// `y = sh[i] + 1`, `sh[i] += x`; to pass an element to a template such as std::max, read it into a `T` first.
#pragma once

#include <strata/core/config.hpp>

#include <cstddef>
#include <cstdint>

namespace strata::core::detail {
class BlockChecker;
// Each returns the address the access is to use: `p` itself when its bytes lie in the block's shared memory, else
// (the error reported) a scratch slot of the worker's, poisoned for a read, so that a wrong kernel never touches
// memory outside the buffer.
void* checkedRead(BlockChecker* c, void const* p, std::size_t bytes, uint32_t worker);
void* checkedWrite(BlockChecker* c, void const* p, std::size_t bytes, uint32_t worker);
void checkedOutOfRange(BlockChecker* c, uint32_t index, uint32_t size, uint32_t worker);
} // namespace strata::core::detail

namespace strata::lockstep {

template <class T>
class CheckedRef {
public:
    CheckedRef(T* p, core::detail::BlockChecker* c, uint32_t worker) : m_p(p), m_checker(c), m_worker(worker) {}

    operator T() const { return *static_cast<T*>(core::detail::checkedRead(m_checker, m_p, sizeof(T), m_worker)); }
    CheckedRef& operator=(T const& v) {
        *static_cast<T*>(core::detail::checkedWrite(m_checker, m_p, sizeof(T), m_worker)) = v;
        return *this;
    }
    CheckedRef& operator=(CheckedRef const& other) { return *this = static_cast<T>(other); }
    CheckedRef& operator+=(T const& v) { return *this = static_cast<T>(*this) + v; }
    CheckedRef& operator-=(T const& v) { return *this = static_cast<T>(*this) - v; }
    CheckedRef& operator*=(T const& v) { return *this = static_cast<T>(*this) * v; }
    CheckedRef& operator/=(T const& v) { return *this = static_cast<T>(*this) / v; }
    T get() const { return static_cast<T>(*this); }

private:
    T* m_p;
    core::detail::BlockChecker* m_checker;
    uint32_t m_worker;
};

template <class T, bool Checked>
class SharedSpan;

template <class T>
class SharedSpan<T, false> {
public:
    using value_type = T;
    STRATA_HD SharedSpan(T* p, uint32_t n) : m_p(p), m_n(n) {}
    // A 64-bit index: a level loop indexing with it stays affine for the vectoriser (a 32-bit index might wrap).
    STRATA_HD T& operator[](std::size_t i) const { return m_p[i]; }
    STRATA_HD uint32_t size() const { return m_n; }
    STRATA_HD T* data() const { return m_p; }

private:
    T* m_p;
    uint32_t m_n;
};

template <class T>
class SharedSpan<T, true> {
public:
    using value_type = T;
    SharedSpan(T* p, uint32_t n, core::detail::BlockChecker* c, uint32_t worker)
        : m_p(p), m_n(n), m_checker(c), m_worker(worker) {}
    CheckedRef<T> operator[](std::size_t i) const {
        if (i >= m_n) {
            core::detail::checkedOutOfRange(m_checker, i < UINT32_MAX ? static_cast<uint32_t>(i) : UINT32_MAX, m_n,
                                            m_worker);
            i = 0; // keep going on valid memory; the launch reports the error
        }
        return CheckedRef<T>(m_p + i, m_checker, m_worker);
    }
    uint32_t size() const { return m_n; }

private:
    T* m_p;
    uint32_t m_n;
    core::detail::BlockChecker* m_checker;
    uint32_t m_worker;
};

// Reads an element as a value, whatever the span's flavour (useful in generic helpers).
template <class Span>
STRATA_HD auto load(Span const& s, uint32_t i) -> typename Span::value_type {
    return static_cast<typename Span::value_type>(s[i]);
}

template <class Worker, class T>
STRATA_HD auto makeSharedSpan(Worker const& worker, T* p, uint32_t n) {
    if constexpr (Worker::checked) {
        return SharedSpan<T, true>(p, n, worker.checker(), worker.workerIdx());
    } else {
        return SharedSpan<T, false>(p, n);
    }
}

// A kernel's static shared array: `sharedArray(worker, &Kernel::Shared::col)`.
template <class Worker, class S, class T, std::size_t N>
STRATA_HD auto sharedArray(Worker const& worker, T (S::*member)[N]) {
    S* s = reinterpret_cast<S*>(worker.staticSharedBase());
    return makeSharedSpan(worker, &(s->*member)[0], static_cast<uint32_t>(N));
}

// A kernel's static shared scalar as a span of one: `auto flag = sharedVar(worker, &Shared::flag); flag[0] = 1;`.
template <class Worker, class S, class T>
STRATA_HD auto sharedVar(Worker const& worker, T S::*member) {
    S* s = reinterpret_cast<S*>(worker.staticSharedBase());
    return makeSharedSpan(worker, &(s->*member), 1u);
}

// The dynamic shared memory given at launch, viewed as an array of T.
template <class T, class Worker>
STRATA_HD auto dynSharedArray(Worker const& worker) {
    return makeSharedSpan(worker, reinterpret_cast<T*>(worker.dynSharedBase()),
                          static_cast<uint32_t>(worker.dynSharedBytes() / sizeof(T)));
}

} // namespace strata::lockstep
