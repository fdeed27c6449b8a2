// The backends compiled into this build, listed once. What differs between backends is in their tags (traits,
// core/backend.hpp) and launch specialisations (core/lockstep/detail/launch_*); what iterates over them uses this
// list: the program's dispatch from the configuration's `backend.type` (app/model/run.cpp, which checks that every
// compiled backend has a choice of its name in app/config.hpp), the model's explicit instantiations and their
// `extern template` declarations (app/model/instantiate.hpp) and the tests' backend list (tests/core/backends.hpp).
//
//   STRATA_FOR_EACH_BACKEND(X)   X(Tag) for each compiled tag, in the configuration's order (for declarations that
//                                need the preprocessor: explicit instantiations)
//   CompiledBackends             the same tags as a type list, BackendList<Serial, OpenMP, Threads[, Cuda]>
//   forEachBackend(f)            f(std::type_identity<Tag>{}) for each of them, in order
//   withBackendNamed(name, f)    f(std::type_identity<Tag>{}) for the tag whose `name` is `name`; false if none
//
// Cuda is compiled only in a build with STRATA_ENABLE_CUDA=ON (STRATA_HAVE_CUDA); OpenMP always is (without the
// OpenMP flag it runs as Serial does; core::openmpCompiled() says which).
#pragma once

#include <strata/core/backend.hpp>

#include <string_view>
#include <type_traits>

#define STRATA_FOR_EACH_HOST_BACKEND(X) X(::strata::core::Serial) X(::strata::core::OpenMP) X(::strata::core::Threads)
#if defined(STRATA_HAVE_CUDA)
#define STRATA_FOR_EACH_BACKEND(X) STRATA_FOR_EACH_HOST_BACKEND(X) X(::strata::core::Cuda)
#else
#define STRATA_FOR_EACH_BACKEND(X) STRATA_FOR_EACH_HOST_BACKEND(X)
#endif

namespace strata::core {

template <class... Tags>
struct BackendList {
    static constexpr std::size_t size = sizeof...(Tags);
};

namespace detail {
template <class First, class... Tags>
BackendList<Tags...> dropFirst(BackendList<First, Tags...>); // declared only: the list without its first type
} // namespace detail

#define STRATA_DETAIL_BACKEND_ITEM(Tag) , Tag
using CompiledBackends =
    decltype(detail::dropFirst(BackendList<void STRATA_FOR_EACH_BACKEND(STRATA_DETAIL_BACKEND_ITEM)>{}));
#undef STRATA_DETAIL_BACKEND_ITEM

template <class F, class... Tags>
constexpr void forEachBackend(BackendList<Tags...>, F&& f) {
    (f(std::type_identity<Tags>{}), ...);
}
template <class F>
constexpr void forEachBackend(F&& f) {
    forEachBackend(CompiledBackends{}, f);
}

template <class F, class... Tags>
constexpr bool withBackendNamed(BackendList<Tags...>, std::string_view name, F&& f) {
    return ((Tags::name == name ? (f(std::type_identity<Tags>{}), true) : false) || ...);
}
template <class F>
constexpr bool withBackendNamed(std::string_view name, F&& f) {
    return withBackendNamed(CompiledBackends{}, name, f);
}

} // namespace strata::core
