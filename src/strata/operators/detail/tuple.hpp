// A minimal tuple usable in device code (std::tuple's members are not __device__), for expression arguments.
#pragma once

#include <strata/core/config.hpp>

#include <cstddef>
#include <utility>

namespace strata::ops::detail {

template <std::size_t I, class T>
struct TupleLeaf {
    T value;
};

template <class Seq, class... Ts>
struct TupleImpl;
template <std::size_t... Is, class... Ts>
struct TupleImpl<std::index_sequence<Is...>, Ts...> : TupleLeaf<Is, Ts>... {};

template <class... Ts>
struct Tuple : TupleImpl<std::index_sequence_for<Ts...>, Ts...> {
    static constexpr std::size_t size = sizeof...(Ts);
};

template <std::size_t I, class T>
STRATA_HD T& get(TupleLeaf<I, T>& leaf) {
    return leaf.value;
}
template <std::size_t I, class T>
STRATA_HD T const& get(TupleLeaf<I, T> const& leaf) {
    return leaf.value;
}

template <class... Ts, std::size_t... Is>
STRATA_HD Tuple<Ts...> makeTupleImpl(std::index_sequence<Is...>, Ts const&... values) {
    Tuple<Ts...> t;
    ((get<Is>(t) = values), ...);
    return t;
}
template <class... Ts>
STRATA_HD Tuple<Ts...> makeTuple(Ts const&... values) {
    return makeTupleImpl(std::index_sequence_for<Ts...>{}, values...);
}

// The type of the I-th element of a pack.
template <std::size_t I, class... Ts>
using PackElement = std::tuple_element_t<I, std::tuple<Ts...>>;

} // namespace strata::ops::detail
