// ForEach and Variable: walking an index domain collectively, and values that live per domain element.
//
// `makeForEach<N>(worker)` (or `makeForEach<CtUint32<X, Y>>(worker)`, or `makeForEach(worker)` for the block
// domain) maps the domain onto the block's workers: worker w takes elements w, w + numWorkers, ... . Calling it with a
// functor runs the functor once per element the worker owns. The functor takes
//     ()                    no index needed
//     (uint32_t i)          the linear index
//     (Idx const& idx)      the index with its slot (needed to touch context variables) and idx.nd()
// followed by one argument per context variable passed after the functor: the element of that variable for this
// index (take it by reference to write it). A functor that returns a value makes forEach return a new context
// variable holding the results.
//
// A context variable (`makeVar<T>(forEach, init...)`) carries a value per domain element from one step to the next,
// across syncs, like a register in a GPU kernel. It belongs to the worker: read it only inside a forEach over the same
// domain. `makeMaster(worker)` is a forEach over a domain of one element: its functor runs on exactly one worker.
//
// forEach does not sync. Put `worker.sync()` between steps that read what other workers wrote.
#pragma once

#include <strata/core/lockstep/idx.hpp>
#include <strata/core/lockstep/worker.hpp>

#include <cstdint>
#include <type_traits>
#include <utility>

namespace strata::lockstep {

template <class TWorker, class DomSizeND>
class ForEach;

template <class T, class TForEach>
class Variable {
public:
    static constexpr uint32_t slots = TForEach::maxSlots;

    Variable() = default;
    STRATA_HD explicit Variable(T const& init) {
        for (uint32_t s = 0; s < slots; ++s)
            m_data[s] = init;
    }
    template <uint32_t D>
    STRATA_HD T& operator[](Idx<D> const& idx) {
        return m_data[idx.slot];
    }
    template <uint32_t D>
    STRATA_HD T const& operator[](Idx<D> const& idx) const {
        return m_data[idx.slot];
    }

private:
    T m_data[slots]{}; // value-initialised: slots a worker does not own stay defined
};

template <class TWorker, class DomSizeND>
class ForEach {
public:
    static constexpr uint32_t dim = DomSizeND::dim;
    static constexpr uint32_t domSize = DomSizeND::product;
    static constexpr uint32_t maxSlots = (domSize + TWorker::minNumWorkers - 1) / TWorker::minNumWorkers;
    using IdxType = Idx<dim>;

    STRATA_HD explicit ForEach(TWorker const& worker) : m_worker(worker) {}
    STRATA_HD TWorker const& worker() const { return m_worker; }

    template <class F, class... Vars>
    STRATA_HD auto operator()(F&& f, Vars&&... vars) const {
        using R = decltype(invoke(f, std::declval<IdxType const&>(), vars...));
        if constexpr (std::is_void_v<R>) {
            walk([&](IdxType const& idx) { invoke(f, idx, vars...); });
        } else {
            Variable<std::remove_cvref_t<R>, ForEach> result;
            walk([&](IdxType const& idx) { result[idx] = invoke(f, idx, vars...); });
            return result;
        }
    }

private:
    template <class G>
    STRATA_HD void walk(G&& g) const {
        uint32_t const nw = m_worker.numWorkers();
        uint32_t slot = 0;
        for (uint32_t i = m_worker.workerIdx(); i < domSize; i += nw, ++slot) {
            IdxType idx{i, slot, {}};
            if constexpr (dim > 1)
                idx.ndIdx = toND(i, DomSizeND::toRT());
            else
                idx.ndIdx[0] = i;
            g(idx);
        }
    }

    template <class F, class... Vars>
    STRATA_HD static decltype(auto) invoke(F& f, IdxType const& idx, Vars&... vars) {
        if constexpr (std::is_invocable_v<F&, IdxType const&, decltype(vars[idx])...>) {
            return f(idx, vars[idx]...);
        } else {
            static_assert(std::is_invocable_v<F&, decltype(vars[idx])...>,
                          "forEach functor: expected f(), f(uint32_t) or f(Idx), each followed by one argument per "
                          "context variable");
            return f(vars[idx]...);
        }
    }

    TWorker const& m_worker;
};

template <uint32_t N, class TWorker>
STRATA_HD auto makeForEach(TWorker const& worker) {
    return ForEach<TWorker, CtUint32<N>>(worker);
}

template <class DomSizeND, class TWorker>
requires isCtUint32<DomSizeND> STRATA_HD auto makeForEach(TWorker const& worker) {
    return ForEach<TWorker, DomSizeND>(worker);
}

// The block's own domain.
template <class TWorker>
STRATA_HD auto makeForEach(TWorker const& worker) {
    return ForEach<TWorker, typename TWorker::BlockCfgType::DomSizeNDType>(worker);
}

template <class TWorker>
STRATA_HD auto makeMaster(TWorker const& worker) {
    return ForEach<TWorker, CtUint32<1>>(worker);
}

// Runs f(e) for every e in 0..count-1, with count known only at run time: the block domain is walked
// ceil(count / blockDomSize) times. No sync.
template <class TWorker, class F>
STRATA_HD void forEachInRange(TWorker const& worker, uint32_t count, F&& f) {
    constexpr uint32_t dom = TWorker::blockDomSize();
    auto forEach = makeForEach(worker);
    for (uint32_t base = 0; base < count; base += dom) {
        forEach([&](uint32_t i) {
            if (base + i < count) f(base + i);
        });
    }
}

// Runs f(o, i) for every o in 0..outer-1 and i in 0..inner-1 (i fastest), spread over the workers like
// forEachInRange over outer * inner elements, but without a division per element when inner exceeds the worker
// count (the CPU backends and tall columns): each worker steps its (o, i) pair forward. No sync.
template <class TWorker, class F>
STRATA_HD void forEachInRange2D(TWorker const& worker, uint32_t outer, uint32_t inner, F&& f) {
    uint32_t const total = outer * inner;
    uint32_t const nw = worker.numWorkers();
    uint32_t x = worker.workerIdx();
    if (x >= total) return;
    if (nw < inner) {
        uint32_t o = x / inner, i = x % inner;
        for (; x < total; x += nw) {
            f(o, i);
            i += nw;
            if (i >= inner) { // nw < inner: at most one wrap per step
                i -= inner;
                ++o;
            }
        }
    } else {
        for (; x < total; x += nw)
            f(x / inner, x % inner);
    }
}

template <class T, class TForEach, class... Init>
STRATA_HD auto makeVar(TForEach const&, Init&&... init) {
    if constexpr (sizeof...(Init) == 0) {
        return Variable<T, TForEach>();
    } else {
        return Variable<T, TForEach>(T(std::forward<Init>(init)...));
    }
}

} // namespace strata::lockstep
