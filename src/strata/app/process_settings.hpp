// What the configuration knows of a process, without its backend: its name, its settings and how they are read and
// written (the schema), the rules that relate its settings to the rest of the configuration, and the output variables
// it makes. A process file (app/processes/*.hpp) writes these next to its class; registerProcess
// (app/model/registry.hpp) records them here, and the configuration reader, the resolved YAML, the restart check and
// the docs test walk them.
//
// A process's settings are a struct of its own; `Config` holds each enabled process's struct behind ProcessSettings
// (type-erased, comparable, copyable) and hands it back typed: `config.settings<DiffusionSettings>()`. A settings
// struct provides
//   static constexpr std::string_view process   the process's name in the configuration ("vertical_diffusion")
//   template <class V> void describe(V& v)      its keys, as the schema's visitors expect (v.field(key, value, rule))
//   bool operator==(...) const = default
// and may provide
//   static std::vector<VariableInfo> outputs()  the output variables the process makes (catalogue entries)
//   void check(Config const&) const             rules relating it to other keys; throws ConfigError
#pragma once

#include <strata/app/choices.hpp>
#include <strata/app/detail/config_rules.hpp>
#include <strata/app/model/variables.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <vector>

namespace strata::app {

struct Config;

// The rules a setting's value obeys (app/detail/config_rules.hpp), by the names a settings struct outside Strata uses:
// v.field("tau_days", tauDays, rules::above(0.0)).
namespace rules {
using detail::above;
using detail::anyNumber;
using detail::anyText;
using detail::atLeast;
using detail::between;
using detail::named;
using detail::nonEmptyText;
using detail::oneOf;
using detail::Rule;
} // namespace rules

// A named choice with its enum type erased: the names and the index of the value (for a process's own enums, which
// the configuration reader cannot know).
struct NamedValue {
    std::vector<std::string_view> names;
    std::size_t index = 0;
};

// The schema visitor with its type erased, so that a process's settings can be described from its own file: each
// concrete visitor (the reader, the emitter, the docs test's key lister) is wrapped in an ErasedVisitor.
class SettingsVisitor {
public:
    virtual ~SettingsVisitor() = default;
    virtual void field(std::string const& key, double& value, detail::Rule<double> const& rule) = 0;
    virtual void field(std::string const& key, uint32_t& value, detail::Rule<uint32_t> const& rule) = 0;
    virtual void field(std::string const& key, std::string& value, detail::Rule<std::string> const& rule) = 0;
    virtual void field(std::string const& key, NamedValue& value, detail::Rule<NamedValue> const& rule) = 0;

    template <class E>
    requires std::is_enum_v<E>
    void field(std::string const& key, E& value, detail::Rule<E> const& rule) {
        NamedValue named;
        named.index = Choices<E>::names.size();
        for (std::size_t i = 0; i < Choices<E>::names.size(); ++i) {
            named.names.push_back(Choices<E>::names[i].first);
            // the first spelling of the value (a value may have several: Switch's on and true)
            if (Choices<E>::names[i].second == value && named.index == Choices<E>::names.size()) named.index = i;
        }
        field(key, named, detail::Rule<NamedValue>{rule.expected, [](NamedValue const&) { return true; }});
        value = Choices<E>::names[named.index].second;
    }
};

template <class V>
class ErasedVisitor final : public SettingsVisitor {
public:
    explicit ErasedVisitor(V& visitor) : m_visitor(visitor) {}
    using SettingsVisitor::field;
    void field(std::string const& key, double& value, detail::Rule<double> const& rule) override {
        m_visitor.field(key, value, rule);
    }
    void field(std::string const& key, uint32_t& value, detail::Rule<uint32_t> const& rule) override {
        m_visitor.field(key, value, rule);
    }
    void field(std::string const& key, std::string& value, detail::Rule<std::string> const& rule) override {
        m_visitor.field(key, value, rule);
    }
    void field(std::string const& key, NamedValue& value, detail::Rule<NamedValue> const& rule) override {
        m_visitor.field(key, value, rule);
    }

private:
    V& m_visitor;
};

// A process with no settings.
template <class Tag>
struct NoSettings {
    template <class V>
    void describe(V&) {}
    bool operator==(NoSettings const&) const = default;
};

template <class S>
concept ProcessSettingsStruct = requires(S s, SettingsVisitor& v) {
    { S::process } -> std::convertible_to<std::string_view>;
    s.describe(v);
    { s == s } -> std::convertible_to<bool>;
};

// One enabled process's settings, type-erased: copyable, comparable, described by the schema.
class ProcessSettings {
public:
    template <ProcessSettingsStruct S>
    explicit ProcessSettings(S settings) : m_self(std::make_unique<Held<S>>(std::move(settings))) {}
    ProcessSettings(ProcessSettings const& other) : m_self(other.m_self->clone()) {}
    ProcessSettings& operator=(ProcessSettings const& other) {
        m_self = other.m_self->clone();
        return *this;
    }
    ProcessSettings(ProcessSettings&&) noexcept = default;
    ProcessSettings& operator=(ProcessSettings&&) noexcept = default;

    bool operator==(ProcessSettings const& other) const { return m_self->equals(*other.m_self); }
    void describe(SettingsVisitor& v) { m_self->describe(v); }
    template <class S>
    S* get() {
        auto* held = dynamic_cast<Held<S>*>(m_self.get());
        return held ? &held->value : nullptr;
    }
    template <class S>
    S const* get() const {
        auto const* held = dynamic_cast<Held<S> const*>(m_self.get());
        return held ? &held->value : nullptr;
    }

private:
    struct Erased {
        virtual ~Erased() = default;
        virtual std::unique_ptr<Erased> clone() const = 0;
        virtual bool equals(Erased const&) const = 0;
        virtual void describe(SettingsVisitor&) = 0;
    };
    template <class S>
    struct Held final : Erased {
        S value;
        explicit Held(S s) : value(std::move(s)) {}
        std::unique_ptr<Erased> clone() const override { return std::make_unique<Held>(value); }
        bool equals(Erased const& other) const override {
            auto const* o = dynamic_cast<Held const*>(&other);
            return o != nullptr && static_cast<bool>(value == o->value);
        }
        void describe(SettingsVisitor& v) override { value.describe(v); }
    };
    std::unique_ptr<Erased> m_self;
};

struct ProcessSchema {
    std::string name;
    std::type_info const* settingsType; // the settings struct: one name, one process
    std::function<ProcessSettings()> defaults;
    std::function<void(Config const&)> check; // may be empty
    std::vector<VariableInfo> outputs;
};

template <class S>
void checkSettings(Config const& c); // S's check (app/config.hpp, where Config is complete)

template <ProcessSettingsStruct S>
ProcessSchema schemaOf() {
    ProcessSchema s{std::string(S::process), &typeid(S), [] { return ProcessSettings(S{}); }, {}, {}};
    if constexpr (requires(S const& x, Config const& c) { x.check(c); })
        s.check = [](Config const& c) { checkSettings<S>(c); };
    if constexpr (requires { S::outputs(); }) s.outputs = S::outputs();
    return s;
}

// Every process the configuration can name: Strata's own (app/processes/builtin.hpp) in their order, then those a
// program registered (registerProcess), in the order it registered them.
std::vector<ProcessSchema> const& processSchemas();
ProcessSchema const* findProcessSchema(std::string_view name);
// Adds a schema. An Error: a name already registered (two processes cannot share a configuration name); an output
// variable that is not Source::Process, or that has a state variable's name, or another process's with other
// metadata (two processes may make the same variable, declared alike: precipitation_flux).
void addProcessSchema(ProcessSchema schema);

} // namespace strata::app
