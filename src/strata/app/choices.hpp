// Named choices: a configuration key that takes one of a few names is an enum, decoded once when the file is read, so
// nothing compares strings while a run steps. `Choices<E>::names` lists each value's YAML spelling once; the reader,
// the resolved YAML, the messages and docs/config.md all use it (the order is the order messages list them in). A
// process's own enums sit next to it (app/processes/), the run's in app/config.hpp.
#pragma once

#include <strata/app/detail/config_rules.hpp>

#include <array>
#include <string>
#include <string_view>
#include <utility>

namespace strata::app {

template <class E>
struct Choices;

#define STRATA_CHOICES(E, ...)                                                                                         \
    template <>                                                                                                        \
    struct Choices<E> {                                                                                                \
        static constexpr std::array names = {__VA_ARGS__};                                                             \
    }

template <class E>
using Choice = std::pair<std::string_view, E>;

// The YAML spelling of a named choice ("power"), for messages.
template <class E>
constexpr std::string_view nameOf(E value) {
    for (auto const& [name, v] : Choices<E>::names)
        if (v == value) return name;
    return "?";
}

// A process's part that can be switched on or off (`momentum: off`). YAML 1.1's booleans are accepted as well; the
// resolved YAML writes on or off.
enum class Switch { On, Off };
STRATA_CHOICES(Switch, Choice<Switch>{"on", Switch::On}, Choice<Switch>{"off", Switch::Off},
               Choice<Switch>{"true", Switch::On}, Choice<Switch>{"false", Switch::Off});
constexpr bool isOn(Switch s) { return s == Switch::On; }

namespace detail {

// One of the names of an enum's Choices (the reader maps the name to the value; the emitter writes it back).
template <class E>
Rule<E> named() {
    std::string expected = "one of: ";
    for (std::size_t i = 0; i < Choices<E>::names.size(); ++i)
        expected += (i ? ", " : "") + std::string(Choices<E>::names[i].first);
    return {std::move(expected), [](E const&) { return true; }};
}

} // namespace detail
} // namespace strata::app
