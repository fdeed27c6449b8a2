// Loading a configuration: read the file, apply the --set overrides to the YAML tree, read every key through the
// schema (app/detail/config_schema.hpp), check the rules that relate several keys, and emit the resolved YAML.
#include <strata/app/config.hpp>
#include <strata/app/detail/config_schema.hpp>
#include <strata/app/processes/coriolis.hpp>
#include <strata/app/processes/vertical_diffusion.hpp>

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <optional>
#include <sstream>

namespace strata::app {
namespace {

using detail::DistinctSubset;
using detail::firstControl;
using detail::formatNumber;
using detail::joined;
using detail::NumberList;
using detail::printable;
using detail::Rule;

[[noreturn]] void fail(std::string const& where, std::string what, std::string expected) {
    throw ConfigError(std::move(what), where, std::move(expected));
}

bool absent(YAML::Node const& n) { return !n.IsDefined() || n.IsNull(); }

bool contains(std::vector<std::string> const& names, std::string const& name) {
    return std::find(names.begin(), names.end(), name) != names.end();
}

// Keys as the user wrote them, control characters escaped (a key is only ever printed).
std::string joinPath(std::string const& parent, std::string const& key) {
    return parent.empty() ? printable(key) : parent + "." + printable(key);
}

// A node as the user wrote it, quoted: 'ten', '[1, 2]' (control characters escaped, long text cut).
std::string shown(YAML::Node const& n) {
    if (n.IsScalar()) return "'" + printable(n.Scalar()) + "'";
    YAML::Emitter out;
    out.SetMapFormat(YAML::Flow);
    out.SetSeqFormat(YAML::Flow);
    out << n;
    return "'" + printable(out.c_str()) + "'";
}

// Text values (strings, names, process names, list entries) hold no control characters: a byte below 0x20 (tab and
// newline included) or 0x7f would end up in file names, NetCDF attributes and the log.
void checkText(std::string const& where, YAML::Node const& n) {
    std::size_t const at = firstControl(n.Scalar());
    if (at == std::string::npos) return;
    char byte[8];
    std::snprintf(byte, sizeof byte, "0x%02x", static_cast<unsigned>(static_cast<unsigned char>(n.Scalar()[at])));
    fail(where, shown(n) + " contains a control character (byte " + byte + " at position " + std::to_string(at) + ")",
         "text without control characters (bytes 0x00 to 0x1f and 0x7f, tab and newline included)");
}

// Numbers are plain scalars: "600", '600', a block scalar or a tagged value (!!str 600, !foo 600) is a string that
// only looks like a number, and reading it as one would hide a slip in the file. yaml-cpp gives plain scalars the tag
// "?" and quoted or block ones "!".
void checkPlainNumber(std::string const& where, YAML::Node const& n, std::string const& expected) {
    std::string const& tag = n.Tag();
    if (tag == "?") return;
    std::string const prefix = "tag:yaml.org,2002:";
    std::string const problem =
        tag == "!" ? " is quoted (or a block scalar): a string, not a number"
                   : " has the tag " + printable(tag.rfind(prefix, 0) == 0 ? "!!" + tag.substr(prefix.size()) : tag);
    fail(where, shown(n) + problem, "a number written plainly, without quotes or tags: " + expected);
}

// ---- scalar text -> value --------------------------------------------------------------------------------------

enum class Parsed { Ok, WrongType, OutOfRange };

// YAML allows a leading '+' on numbers; std::from_chars does not.
std::string_view withoutPlus(std::string_view s) {
    if (s.size() > 1 && s[0] == '+' && s[1] != '-' && s[1] != '+') s.remove_prefix(1);
    return s;
}

template <class T>
requires std::unsigned_integral<T> Parsed parseText(std::string_view s, T& out) {
    s = withoutPlus(s);
    long long v = 0;
    auto const r = std::from_chars(s.data(), s.data() + s.size(), v);
    if (r.ec == std::errc::invalid_argument || r.ptr != s.data() + s.size()) return Parsed::WrongType;
    if (r.ec == std::errc::result_out_of_range || v < 0 ||
        static_cast<unsigned long long>(v) > std::numeric_limits<T>::max())
        return Parsed::OutOfRange;
    out = static_cast<T>(v);
    return Parsed::Ok;
}

Parsed parseText(std::string_view s, double& out) {
    s = withoutPlus(s);
    auto const r = std::from_chars(s.data(), s.data() + s.size(), out);
    if (r.ec == std::errc::invalid_argument || r.ptr != s.data() + s.size()) return Parsed::WrongType;
    if (r.ec == std::errc::result_out_of_range) return Parsed::OutOfRange;
    return std::isfinite(out) ? Parsed::Ok : Parsed::WrongType;
}

Parsed parseText(std::string_view s, std::string& out) {
    out = s;
    return Parsed::Ok;
}

Parsed parseText(std::string_view s, NamedValue& out) {
    for (std::size_t i = 0; i < out.names.size(); ++i)
        if (out.names[i] == s) {
            out.index = i;
            return Parsed::Ok;
        }
    return Parsed::OutOfRange;
}

template <class E>
requires std::is_enum_v<E> Parsed parseText(std::string_view s, E& out) {
    for (auto const& [name, value] : Choices<E>::names)
        if (name == s) {
            out = value;
            return Parsed::Ok;
        }
    return Parsed::OutOfRange;
}

// An enum, or a process's enum behind a NamedValue.
template <class T>
constexpr bool isNamed = std::is_enum_v<T> || std::is_same_v<T, NamedValue>;

template <class T>
char const* kindOf() {
    if constexpr (std::is_same_v<T, std::string>)
        return "a string";
    else if constexpr (isNamed<T>)
        return "a name";
    else if constexpr (std::is_integral_v<T>)
        return "an integer";
    else
        return "a finite number";
}

// ---- reading: a schema visitor that fills the config from a YAML tree ------------------------------------------

class Reader {
public:
    // A missing node (yaml-cpp's "invalid" node, which throws on most queries) is read as an empty one.
    Reader(YAML::Node const& node, std::string path)
        : m_node(node.IsDefined() ? node : YAML::Node()), m_path(std::move(path)) {}

    template <class T>
    void field(std::string const& key, T& value, Rule<T> const& rule) {
        if (auto v = read(key, rule, value)) value = std::move(*v);
    }

    template <class T>
    void field(std::string const& key, std::optional<T>& value, Rule<T> const& rule) {
        value = read(key, rule);
    }

    void field(std::string const& key, std::vector<std::string>& value, DistinctSubset const& rule) {
        YAML::Node const list = take(key);
        if (absent(list)) return;
        std::string const path = joinPath(m_path, key);
        std::string const expected = "a list of distinct names from: " + joined(rule.allowed);
        if (!list.IsSequence()) fail(path, shown(list) + " is not a list", expected);
        if (list.size() == 0) fail(path, "the list is empty", expected);
        std::vector<std::string> names;
        for (std::size_t i = 0; i < list.size(); ++i) {
            YAML::Node const item = list[i];
            std::string const where = path + "[" + std::to_string(i) + "]";
            if (!item.IsScalar()) fail(where, shown(item) + " is not a name", "one of: " + joined(rule.allowed));
            checkText(where, item);
            if (!rule.accepts(item.Scalar()))
                fail(where, shown(item) + " is not allowed", "one of: " + joined(rule.allowed));
            if (contains(names, item.Scalar())) fail(where, shown(item) + " is listed twice", expected);
            names.push_back(item.Scalar());
        }
        value = std::move(names);
    }

    void field(std::string const& key, std::vector<double>& value, NumberList const& rule) {
        YAML::Node const list = take(key);
        if (absent(list)) return;
        std::string const path = joinPath(m_path, key);
        std::string const expected =
            "a list of numbers, each " + rule.each.expected.substr(rule.each.expected.find(' ') + 1);
        if (!list.IsSequence()) fail(path, shown(list) + " is not a list", expected);
        if (list.size() == 0) fail(path, "the list is empty", expected);
        std::vector<double> numbers;
        for (std::size_t i = 0; i < list.size(); ++i) {
            YAML::Node const item = list[i];
            std::string const where = path + "[" + std::to_string(i) + "]";
            double x = 0;
            if (item.IsScalar()) checkPlainNumber(where, item, rule.each.expected);
            if (!item.IsScalar() || parseText(item.Scalar(), x) != Parsed::Ok)
                fail(where, shown(item) + " is not a finite number", rule.each.expected);
            if (!rule.each.accepts(x)) fail(where, shown(item) + " is out of range", rule.each.expected);
            numbers.push_back(x);
        }
        value = std::move(numbers);
    }

    template <class F>
    void section(std::string const& key, F&& describeChild) {
        Reader child(take(key), joinPath(m_path, key));
        describeChild(child);
        child.finish();
    }

    template <class F>
    void processList(std::string const& key, std::vector<std::string>& order, F&& describeEach);

    // After the schema walk: the node must be a map whose keys are all known, each once.
    void finish() const {
        if (absent(m_node)) return;
        std::string const where = m_path.empty() ? "configuration" : m_path;
        if (!m_node.IsMap()) fail(where, shown(m_node) + " is not a map", "a map with keys: " + joined(m_known));
        std::vector<std::string> seen;
        for (auto const& entry : m_node) {
            if (!entry.first.IsScalar())
                fail(where, shown(entry.first) + " is not a valid key", "one of: " + joined(m_known));
            std::string const& key = entry.first.Scalar();
            std::string const path = joinPath(m_path, key);
            if (!contains(m_known, key))
                fail(path, "unknown key" + detail::suggestion(key, m_known), "one of: " + joined(m_known));
            if (contains(seen, key)) fail(path, "duplicate key", "each key at most once");
            seen.push_back(key);
        }
    }

private:
    YAML::Node take(std::string const& key) {
        m_known.push_back(key);
        if (!m_node.IsMap()) return YAML::Node();
        YAML::Node const& map = m_node; // const lookup: never inserts
        return map[key];
    }

    template <class T>
    std::optional<T> read(std::string const& key, Rule<T> const& rule, T const& initial = T{}) {
        YAML::Node const n = take(key);
        if (absent(n)) return std::nullopt;
        std::string const path = joinPath(m_path, key);
        T value = initial;
        if (n.IsScalar()) {
            if constexpr (std::is_same_v<T, std::string> || isNamed<T>)
                checkText(path, n);
            else
                checkPlainNumber(path, n, rule.expected);
        }
        Parsed const parsed = n.IsScalar() ? parseText(n.Scalar(), value) : Parsed::WrongType;
        if (parsed == Parsed::WrongType) fail(path, shown(n) + " is not " + kindOf<T>(), rule.expected);
        if (parsed == Parsed::OutOfRange || !rule.accepts(value))
            fail(path,
                 shown(n) + (std::is_same_v<T, std::string> || isNamed<T> ? " is not allowed" : " is out of range"),
                 rule.expected);
        return value;
    }

    YAML::Node m_node;
    std::string m_path;
    std::vector<std::string> m_known; // keys the schema asked for, in schema order
};

struct ProcessItem {
    std::string name;
    YAML::Node settings;
};

struct ProcessNames {
    std::vector<std::string>& names;
    template <class F>
    void process(std::string const& name, F&&) {
        names.push_back(name);
    }
};

struct ProcessReader {
    std::vector<ProcessItem> const& items;
    std::string const& path;
    template <class F>
    void process(std::string const& name, F&& describeSettings) {
        for (auto const& item : items) {
            if (item.name != name) continue;
            Reader settings(item.settings, path + "." + name);
            describeSettings(settings);
            settings.finish();
        }
    }
};

// Items are "- name: {settings}", "- name:" or "- name"; each names a known process, at most once.
std::vector<ProcessItem> processItems(YAML::Node const& list, std::string const& path,
                                      std::vector<std::string> const& known) {
    std::vector<ProcessItem> items;
    if (absent(list)) return items;
    if (!list.IsSequence())
        fail(path, shown(list) + " is not a list", "a list of processes, e.g. '- held_suarez: {ka: 0.025}'");
    for (std::size_t i = 0; i < list.size(); ++i) {
        YAML::Node const item = list[i];
        std::string const where = path + "[" + std::to_string(i) + "]";
        ProcessItem p;
        if (item.IsScalar()) {
            p = {item.Scalar(), YAML::Node()};
        } else if (item.IsMap() && item.size() == 1 && item.begin()->first.IsScalar()) {
            p = {item.begin()->first.Scalar(), item.begin()->second};
        } else {
            fail(where, shown(item) + " is not a process",
                 "a map with one key, the process name, and its settings indented under it, e.g. "
                 "'- held_suarez: {ka: 0.025}'");
        }
        if (item.IsScalar()) checkText(where, item);
        if (!contains(known, p.name))
            fail(where, "unknown process '" + printable(p.name) + "'" + detail::suggestion(p.name, known),
                 "one of: " + joined(known));
        for (std::size_t j = 0; j < items.size(); ++j)
            if (items[j].name == p.name)
                fail(where,
                     "'" + printable(p.name) + "' is listed twice (also at " + path + "[" + std::to_string(j) + "])",
                     "each process at most once");
        items.push_back(std::move(p));
    }
    return items;
}

template <class F>
void Reader::processList(std::string const& key, std::vector<std::string>& order, F&& describeEach) {
    std::string const path = joinPath(m_path, key);
    std::vector<std::string> known;
    ProcessNames names{known};
    describeEach(names);
    std::vector<ProcessItem> const items = processItems(take(key), path, known);
    ProcessReader reader{items, path};
    describeEach(reader);
    order.clear();
    for (auto const& item : items)
        order.push_back(item.name);
}

// ---- emitting: a schema visitor that writes the config as YAML -------------------------------------------------

std::string yamlText(std::string const& s) { return s; }
template <class E>
requires std::is_enum_v<E> std::string yamlText(E value) { return std::string(nameOf(value)); }
std::string yamlText(NamedValue const& v) { return std::string(v.names.at(v.index)); }
template <class T>
requires std::unsigned_integral<T> std::string yamlText(T x) { return std::to_string(x); }
// Doubles keep a decimal point (600.0), so the type reads at a glance.
std::string yamlText(double x) {
    std::string s = formatNumber(x);
    if (s.find_first_of(".e") == std::string::npos) s += ".0";
    return s;
}

class Emitter {
public:
    explicit Emitter(YAML::Emitter& out) : m_out(out) {}

    template <class T, class R>
    void field(std::string const& key, T const& value, R const&) {
        m_out << YAML::Key << key << YAML::Value << yamlText(value);
    }

    template <class T, class R>
    void field(std::string const& key, std::optional<T> const& value, R const& rule) {
        if (value) field(key, *value, rule);
    }

    void field(std::string const& key, std::vector<std::string> const& value, DistinctSubset const&) {
        m_out << YAML::Key << key << YAML::Value << YAML::Flow << YAML::BeginSeq;
        for (auto const& v : value)
            m_out << v;
        m_out << YAML::EndSeq;
    }

    void field(std::string const& key, std::vector<double> const& value, NumberList const&) {
        if (value.empty()) return; // absent: an empty list is not valid YAML for it
        m_out << YAML::Key << key << YAML::Value << YAML::Flow << YAML::BeginSeq;
        for (double x : value)
            m_out << yamlText(x);
        m_out << YAML::EndSeq;
    }

    template <class F>
    void section(std::string const& key, F&& describeChild) {
        m_out << YAML::Key << key << YAML::Value << YAML::BeginMap;
        describeChild(*this);
        m_out << YAML::EndMap;
    }

    template <class F>
    void processList(std::string const& key, std::vector<std::string> const& order, F&& describeEach) {
        m_out << YAML::Key << key << YAML::Value;
        if (order.empty()) m_out << YAML::Flow; // "processes: []"
        m_out << YAML::BeginSeq;
        for (auto const& name : order) {
            Only only{name, *this};
            describeEach(only);
        }
        m_out << YAML::EndSeq;
    }

private:
    struct Only {
        std::string const& wanted;
        Emitter& emitter;
        template <class F>
        void process(std::string const& name, F&& describeSettings) {
            if (name != wanted) return;
            emitter.m_out << YAML::BeginMap;
            emitter.section(name, describeSettings);
            emitter.m_out << YAML::EndMap;
        }
    };

    YAML::Emitter& m_out;
};

// ---- YAML documents ---------------------------------------------------------------------------------------------

// YAML::LoadAll, but never stuck: yaml-cpp 0.7 (Debian 12) loops forever, allocating an empty document per turn, on a
// token that starts no node outside any collection ("," alone on a line, or after a complete flow collection:
// "[a, b]\n,"), upstream jbeder/yaml-cpp#1040, fixed after 0.8.0 (#1319). A first pass with a parser that keeps no
// nodes stops at the second document that starts where the previous one did, and throws the syntax error there.
std::vector<YAML::Node> loadAllDocuments(std::string const& text) {
    struct DocumentStarts : YAML::EventHandler {
        std::optional<YAML::Mark> previous;
        void OnDocumentStart(YAML::Mark const& mark) override {
            if (previous && previous->pos == mark.pos)
                throw YAML::ParserException(mark, "a token that starts no node (e.g. ',' outside any flow collection)");
            previous = mark;
        }
        void OnDocumentEnd() override {}
        void OnNull(YAML::Mark const&, YAML::anchor_t) override {}
        void OnAlias(YAML::Mark const&, YAML::anchor_t) override {}
        void OnScalar(YAML::Mark const&, std::string const&, YAML::anchor_t, std::string const&) override {}
        void OnSequenceStart(YAML::Mark const&, std::string const&, YAML::anchor_t,
                             YAML::EmitterStyle::value) override {}
        void OnSequenceEnd() override {}
        void OnMapStart(YAML::Mark const&, std::string const&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
        void OnMapEnd() override {}
    };
    std::istringstream in(text);
    YAML::Parser parser(in);
    DocumentStarts starts;
    while (parser.HandleNextDocument(starts)) {
    }
    return YAML::LoadAll(text);
}

// ---- overrides: --set key.path=value, applied to the YAML tree -------------------------------------------------

YAML::Node namedProcess(std::string const& name) {
    YAML::Node item(YAML::NodeType::Map);
    item[name] = YAML::Node();
    return item;
}

// The process list item naming `name` (as a map), appended when the list has none.
YAML::Node processItem(YAML::Node root, std::string const& name, std::string const& where) {
    YAML::Node list = root["processes"];
    if (absent(list)) list = YAML::Node(YAML::NodeType::Sequence);
    if (!list.IsSequence()) fail(where, "processes is " + shown(list) + ", not a list", "processes to be a list");
    for (std::size_t i = 0; i < list.size(); ++i) {
        YAML::Node item = list[i];
        YAML::Node const& view = item; // const lookup: never inserts
        if (item.IsScalar() && item.Scalar() == name) {
            item = namedProcess(name);
            return item;
        }
        if (item.IsMap() && view[name].IsDefined()) return item;
    }
    list.push_back(namedProcess(name));
    return list[list.size() - 1];
}

// The map parent[key], created when missing or null.
YAML::Node childMap(YAML::Node parent, std::string const& key, std::string const& where) {
    YAML::Node child = parent[key];
    if (absent(child)) child = YAML::Node(YAML::NodeType::Map);
    if (!child.IsMap())
        fail(where, "'" + printable(key) + "' is " + shown(child) + ", not a map",
             "a key path through maps to a value");
    return child;
}

// What an override's value may not hold: a directive, an anchor, an alias or a tag. Parsed as a document of its own,
// "%r.nc" is a directive and "&a", "!!str" are empty nodes, so each would reset the key to its default without a
// word, where the same text in the file is an error or means something else. Returns what was found, or "".
std::string yamlMachinery(std::string const& valueText) {
    struct Finder : YAML::EventHandler {
        std::string found;
        void note(std::string const& tag, YAML::anchor_t anchor) {
            if (found.empty() && anchor != YAML::NullAnchor) found = "an anchor (&)";
            if (found.empty() && !tag.empty() && tag != "?" && tag != "!") found = "a tag (" + tag + ")";
        }
        void OnDocumentStart(YAML::Mark const&) override {}
        void OnDocumentEnd() override {}
        void OnNull(YAML::Mark const&, YAML::anchor_t anchor) override { note("", anchor); }
        void OnAlias(YAML::Mark const&, YAML::anchor_t) override {
            if (found.empty()) found = "an alias (*)";
        }
        void OnScalar(YAML::Mark const&, std::string const& tag, YAML::anchor_t anchor, std::string const&) override {
            note(tag, anchor);
        }
        void OnSequenceStart(YAML::Mark const&, std::string const& tag, YAML::anchor_t anchor,
                             YAML::EmitterStyle::value) override {
            note(tag, anchor);
        }
        void OnSequenceEnd() override {}
        void OnMapStart(YAML::Mark const&, std::string const& tag, YAML::anchor_t anchor,
                        YAML::EmitterStyle::value) override {
            note(tag, anchor);
        }
        void OnMapEnd() override {}
    };
    std::size_t const first = valueText.find_first_not_of(" \t");
    if (first != std::string::npos && valueText[first] == '%') return "a directive (%)";
    // A tag on an empty node ("!!str" alone) reaches the event handler as a plain null, without its tag.
    if (first != std::string::npos && valueText[first] == '!') return "a tag (!)";
    std::istringstream in(valueText);
    YAML::Parser parser(in);
    Finder finder;
    try {
        while (parser.HandleNextDocument(finder) && finder.found.empty()) {
        }
    } catch (YAML::Exception const&) {
        return ""; // a syntax error: the load has reported it already
    }
    return finder.found;
}

void applyOverride(YAML::Node& root, std::string const& text) {
    std::string const where = "--set " + printable(text);
    std::size_t const eq = text.find('=');
    if (eq == std::string::npos) fail(where, "no '=' in the override", "key.path=value, e.g. grid.vertical.levels=60");
    std::string const path = text.substr(0, eq), valueText = text.substr(eq + 1);
    std::vector<std::string> keys;
    for (std::size_t begin = 0;;) {
        std::size_t const dot = path.find('.', begin);
        keys.push_back(path.substr(begin, dot - begin));
        if (dot == std::string::npos) break;
        begin = dot + 1;
    }
    if (contains(keys, ""))
        fail(where, "'" + printable(path) + "' is not a key path", "dot-separated keys, e.g. grid.vertical.levels");
    YAML::Node value;
    std::string const expectedValue = "a YAML scalar or flow collection, e.g. 60, out/a.nc, [T, q]";
    try {
        std::vector<YAML::Node> const documents = loadAllDocuments(valueText);
        if (documents.size() > 1)
            fail(where, "the value '" + printable(valueText) + "' is several YAML documents", expectedValue);
        if (!documents.empty()) value = documents.front();
    } catch (YAML::Exception const& e) {
        fail(where, "the value '" + printable(valueText) + "' is not valid YAML: " + printable(e.msg), expectedValue);
    }
    // After the load, which refuses the texts on which yaml-cpp's parser loops (loadAllDocuments).
    if (std::string const found = yamlMachinery(valueText); !found.empty())
        fail(where, "the value '" + printable(valueText) + "' holds " + found,
             "a plain value; quote text that starts with %, &, * or !, e.g. --set 'output.path=\"%r.nc\"'");
    if (absent(root)) root = YAML::Node(YAML::NodeType::Map);
    if (!root.IsMap()) fail(where, "the configuration is not a map", "a configuration file holding a map of sections");

    YAML::Node map = root;
    std::size_t k = 0;
    if (keys.size() >= 2 && keys[0] == "processes") { // processes.<name>...: the list item naming the process
        YAML::Node item = processItem(root, keys[1], where);
        if (keys.size() == 2) {
            item[keys[1]] = value;
            return;
        }
        map.reset(childMap(item, keys[1], where));
        k = 2;
    }
    for (; k + 1 < keys.size(); ++k)
        map.reset(childMap(map, keys[k], where));
    map[keys.back()] = value;
}

// ---- rules relating several keys -------------------------------------------------------------------------------

std::string ratioText(double x) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.12g", x);
    return buf;
}

// seconds as a whole number of steps of dt (within 1e-9 relative), at least one.
uint64_t wholeSteps(double seconds, double dt, std::string const& where, double value, std::string const& expected) {
    double const steps = seconds / dt;
    double const n = std::round(steps);
    if (!(n >= 1.0 && n <= 1e15) || std::abs(steps - n) > 1e-9 * n)
        fail(where,
             "'" + formatNumber(value) + "' is " + ratioText(steps) + " steps of time.dt = " + formatNumber(dt) + " s",
             expected);
    return static_cast<uint64_t>(n);
}

// Columns at given places: lat and lon together, as long as each other (and ncol, which they set when absent).
void checkColumnPlaces(HorizontalGridConfig& h) {
    if (h.lat.empty() && h.lon.empty()) return;
    if (h.type != HorizontalGridType::Columns)
        fail(h.lat.empty() ? "grid.horizontal.lon" : "grid.horizontal.lat", "given with type latlon",
             "lat and lon only with grid.horizontal.type: columns");
    if (h.lat.size() != h.lon.size())
        fail(h.lat.empty() ? "grid.horizontal.lat" : "grid.horizontal.lon",
             std::to_string(h.lon.size()) + " longitude(s) for " + std::to_string(h.lat.size()) + " latitude(s)",
             "grid.horizontal.lat and grid.horizontal.lon of the same length, one entry per column");
    auto const n = static_cast<uint32_t>(h.lat.size());
    if (h.ncol != 0 && h.ncol != n)
        fail("grid.horizontal.ncol",
             "'" + std::to_string(h.ncol) + "' with " + std::to_string(n) + " columns in grid.horizontal.lat and lon",
             "ncol equal to the length of lat and lon, or no ncol");
    h.ncol = n;
}

void checkHorizontal(HorizontalGridConfig& h) {
    checkColumnPlaces(h);
    auto atLeastOne = [&](uint32_t n, std::string const& key) {
        if (n < 1)
            fail("grid.horizontal." + key, "'" + std::to_string(n) + "' is out of range",
                 "an integer >= 1 when grid.horizontal.type is " + std::string(nameOf(h.type)));
    };
    if (h.type == HorizontalGridType::LatLon) {
        atLeastOne(h.nlat, "nlat");
        atLeastOne(h.nlon, "nlon");
    } else {
        atLeastOne(h.ncol, "ncol");
    }
}

// An Ekman spiral needs f != 0 in every column: no column on the equator.
void checkEkmanLatitudes(HorizontalGridConfig const& h) {
    for (std::size_t i = 0; i < h.lat.size(); ++i)
        if (h.lat[i] == 0.0)
            fail("grid.horizontal.lat[" + std::to_string(i) + "]", "'0' is on the equator (f = 0: no Ekman spiral)",
                 "latitudes other than 0 with initial_conditions.wind: ekman");
    if (!h.lat.empty()) return;
    uint32_t const n = h.type == HorizontalGridType::LatLon ? h.nlat : h.ncol;
    if (n % 2 == 1)
        fail(h.type == HorizontalGridType::LatLon ? "grid.horizontal.nlat" : "grid.horizontal.ncol",
             "'" + std::to_string(n) + "' puts a column on the equator (f = 0: no Ekman spiral)",
             "an even number with initial_conditions.wind: ekman");
}

// An analytic solution belongs to one case: its processes, settings and start.
void checkAnalyticSolution(Config const& c) {
    auto refuse = [&](std::string const& what, std::string const& expected) {
        fail("analytic_solution", "'" + std::string(nameOf(c.analytic)) + "' " + what, expected);
    };
    auto const& d = c.settings<DiffusionSettings>();
    if (c.analytic == AnalyticCase::HeatEquation) {
        std::string const expected = "only vertical_diffusion with form: plain, profile: constant, surface_heat_flux: "
                                     "0, and initial_conditions.temperature: cosine (the case of configs/"
                                     "heat_equation.yaml)";
        if (c.processOrder != std::vector<std::string>{std::string(DiffusionSettings::process)})
            refuse("with processes other than vertical_diffusion alone", expected);
        if (d.form != DiffusionForm::Plain || d.profile != DiffusionProfile::Constant || d.surfaceHeatFlux != 0.0)
            refuse("with vertical_diffusion other than plain, constant and closed", expected);
        if (c.initial.temperature != InitialTemperature::Cosine)
            refuse("with initial_conditions.temperature: " + std::string(nameOf(c.initial.temperature)), expected);
    }
    if (c.analytic == AnalyticCase::Ekman) {
        std::string const expected =
            "initial_conditions.wind: ekman with only coriolis and vertical_diffusion (the case of configs/ekman.yaml)";
        if (c.initial.wind != InitialWind::Ekman)
            refuse("with initial_conditions.wind: " + std::string(nameOf(c.initial.wind)), expected);
        if (c.processOrder.size() != 2) refuse("with processes other than coriolis and vertical_diffusion", expected);
    }
}

// The initial temperature must stay positive over the whole column. lapse_rate's profile,
// max(Ts - lapse_rate z, minimum_temperature) - equator_pole_difference sin^2(latitude), is lowest at the top (or at
// the ground for an inversion) and at a pole (whether or not a column sits there).
void checkInitialTemperature(InitialConfig const& i, double top) {
    bool const lapseRate = i.temperature == InitialTemperature::LapseRate && i.sounding.empty();
    if (i.equatorPoleDifference != 0.0 && !lapseRate)
        fail("initial_conditions.equator_pole_difference",
             "'" + formatNumber(i.equatorPoleDifference) + "' with " +
                 (i.sounding.empty() ? "temperature: " + std::string(nameOf(i.temperature)) : "a sounding"),
             "0 unless initial_conditions.temperature is lapse_rate (without a sounding)");
    if (lapseRate) {
        double const column =
            std::max(std::min(i.surfaceTemperature, i.surfaceTemperature - i.lapseRate * top), i.minimumTemperature);
        if (column - i.equatorPoleDifference <= 0.0)
            fail("initial_conditions.equator_pole_difference",
                 "'" + formatNumber(i.equatorPoleDifference) +
                     "' gives T = " + ratioText(column - i.equatorPoleDifference) + " K at a pole",
                 "a difference below the column's lowest temperature before it, max(min(surface_temperature, "
                 "surface_temperature - lapse_rate top), minimum_temperature) = " +
                     ratioText(column) + " K");
    }
    if (i.temperature == InitialTemperature::Cosine && i.amplitude >= i.surfaceTemperature)
        fail("initial_conditions.amplitude", "'" + formatNumber(i.amplitude) + "' gives T <= 0 K at grid.vertical.top",
             "an amplitude below surface_temperature = " + formatNumber(i.surfaceTemperature) + " K");
}

// The face heights the model will build (makeVerticalGrid: z_k = top (k / levels)^exponent for power, top k / levels
// for uniform; z_0 = 0 and z_levels = top exactly) must be finite and strictly increasing with every cell at least
// minCellThickness thick: a huge exponent makes (k / levels)^exponent underflow, so the lowest faces coincide.
constexpr double minCellThickness = 1e-6; // m

// grid.vertical.faces: z_0 = 0 < z_1 < ... < z_n, every cell at least minCellThickness thick, alone (without the
// keys of the computed grids, which are then left unset).
// `file`: where the faces were read from (grid.vertical.faces_file), for the messages; empty: the list itself.
void checkFaces(VerticalGridConfig const& v, std::string const& file = "") {
    std::string const key = file.empty() ? "grid.vertical.faces" : "grid.vertical.faces_file";
    auto at = [&](std::size_t k) {
        std::string where = key;
        if (file.empty()) return where.append("[").append(std::to_string(k)).append("]");
        return where.append(" (").append(file).append(", value ").append(std::to_string(k)).append(")");
    };
    std::string const expected = "face heights z_0 = 0 < z_1 < ... < z_n (m), each cell at least " +
                                 formatNumber(minCellThickness) + " m thick, 2 to 100001 of them";
    std::pair<char const*, bool> const others[] = {{"levels", v.levels.has_value()},
                                                   {"top", v.top.has_value()},
                                                   {"stretching", v.stretching.has_value()},
                                                   {"exponent", v.exponent.has_value()}};
    for (auto const& [name, given] : others)
        if (given)
            fail(std::string("grid.vertical.") + name, "given with " + key,
                 "either faces (or faces_file) or levels, top, stretching and exponent");
    if (v.faces.size() < 2 || v.faces.size() > 100001)
        fail(file.empty() ? key : key + " (" + file + ")", std::to_string(v.faces.size()) + " value(s)", expected);
    if (v.faces[0] != 0.0) fail(at(0), "'" + formatNumber(v.faces[0]) + "' is not the ground", expected);
    for (std::size_t k = 1; k < v.faces.size(); ++k)
        if (!(v.faces[k] - v.faces[k - 1] >= minCellThickness))
            fail(at(k),
                 "'" + formatNumber(v.faces[k]) + "' is not above " +
                     (file.empty() ? "faces[" + std::to_string(k - 1) + "]" : "value " + std::to_string(k - 1)) +
                     " = " + formatNumber(v.faces[k - 1]) + " by at least " + formatNumber(minCellThickness) + " m",
                 expected);
}

// grid.vertical.faces_file: a text file of face heights (m), separated by white space or commas, '#' starting a
// comment. Read into faces, checked as they are (naming the file), and unset: the resolved configuration holds the
// faces themselves, so a continuation compares the heights, not the file name.
void readFacesFile(VerticalGridConfig& v, std::filesystem::path const& folder) {
    if (!v.facesFile) return;
    std::filesystem::path path(*v.facesFile);
    if (path.is_relative() && !folder.empty()) path = (folder / path).lexically_normal();
    std::string const file = path.string();
    if (!v.faces.empty())
        fail("grid.vertical.faces_file", "given with grid.vertical.faces", "one of faces and faces_file");
    std::ifstream in(path);
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec) || !in)
        fail("grid.vertical.faces_file", "'" + printable(file) + "': no such file",
             "a text file of face heights (a relative path is relative to the configuration file's folder)");
    std::string line;
    for (int number = 1; std::getline(in, line); ++number) {
        line = line.substr(0, line.find('#'));
        std::replace(line.begin(), line.end(), ',', ' ');
        std::istringstream words(line);
        for (std::string word; words >> word;) {
            double z = 0;
            if (parseText(word, z) != Parsed::Ok)
                fail("grid.vertical.faces_file (" + file + ", line " + std::to_string(number) + ")",
                     "'" + printable(word) + "' is not a finite number", "face heights in m");
            v.faces.push_back(z);
        }
    }
    checkFaces(v, file);
    v.facesFile.reset();
}

void checkVerticalGrid(VerticalGridConfig& v) {
    if (!v.faces.empty()) return checkFaces(v);
    VerticalGridConfig const defaults;
    v.levels = v.levels.value_or(*defaults.levels);
    v.top = v.top.value_or(*defaults.top);
    v.stretching = v.stretching.value_or(*defaults.stretching);
    v.exponent = v.exponent.value_or(*defaults.exponent);
    uint32_t const levels = *v.levels;
    double const top = *v.top, exponent = *v.exponent;
    bool const power = v.stretching == Stretching::Power;
    double below = 0.0, dz = 0.0;
    uint32_t k = 1; // the first cell (from the ground) thinner than the minimum, or not finite
    for (; k <= levels; ++k) {
        double const s = static_cast<double>(k) / static_cast<double>(levels);
        double const z = k == levels ? top : top * (power ? std::pow(s, exponent) : s);
        dz = z - below;
        if (!(dz >= minCellThickness && std::isfinite(dz))) break;
        below = z;
    }
    if (k > levels) return;
    uint32_t const at = k - 1;
    std::string const grid = power ? "z_k = top (k / levels)^exponent" : "z_k = top k / levels";
    fail(power ? "grid.vertical.exponent" : "grid.vertical.top",
         "'" + formatNumber(power ? exponent : top) + "' makes cell " + std::to_string(at) + " of " +
             std::to_string(levels) + " " + ratioText(dz) + " m thick (" + grid + ", top = " + formatNumber(top) +
             " m)",
         "every cell at least " + formatNumber(minCellThickness) + " m thick" +
             (power ? ": a smaller exponent, fewer levels or a higher top" : ": fewer levels or a higher top"));
}

// A sounding gives T, q and the winds: no analytic solution or Ekman start; the file must exist (the model reads
// it: app/io/sounding.hpp).
void checkSounding(Config const& c) {
    std::string const& path = c.initial.sounding;
    if (path.empty()) return;
    if (c.initial.wind == InitialWind::Ekman)
        fail("initial_conditions.wind", "'ekman' with a sounding", "uniform: the sounding gives the winds");
    if (c.analytic != AnalyticCase::None)
        fail("analytic_solution", "'" + std::string(nameOf(c.analytic)) + "' with initial_conditions.sounding",
             "none: an analytic solution starts from its own analytic profile");
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec))
        fail("initial_conditions.sounding", "'" + printable(path) + "': no such file",
             "a NetCDF sounding file (a relative path is relative to the configuration file's folder)");
}

// The run length: at most 1e15 steps (as for time.days) and a finite number of seconds.
void checkRunLength(Config const& c) {
    if (!c.time.steps) return;
    uint64_t const steps = *c.time.steps;
    if (steps > 1'000'000'000'000'000ull)
        fail("time.steps", "'" + std::to_string(steps) + "' is out of range", "an integer in [1, 10^15]");
    if (!std::isfinite(static_cast<double>(steps) * c.time.dt))
        fail("time.steps",
             "'" + std::to_string(steps) + "' steps of time.dt = " + formatNumber(c.time.dt) +
                 " s is more seconds than a double holds",
             "a run length steps * dt below 1.8e308 s");
}

void validate(Config& c) {
    checkHorizontal(c.horizontal);
    checkVerticalGrid(c.vertical);
    checkRunLength(c);
    (void)c.totalSteps();
    (void)c.outputEvery();
    (void)c.restartEvery();
    checkInitialTemperature(c.initial, c.vertical.height());
    checkSounding(c);
    if (c.output.deflate > 0 && c.output.format != OutputFormat::Netcdf4)
        fail("output.deflate", "'" + std::to_string(c.output.deflate) + "' with format 64bit_offset",
             "0 (the 64bit_offset format has no compression), or format: netcdf4");
    for (auto const& name : c.processOrder) // each process's rules relating its settings to the rest
        if (auto const& check = findProcessSchema(name)->check) check(c);
    if (c.initial.wind == InitialWind::Ekman) {
        auto const& d = c.settings<DiffusionSettings>();
        bool const ok = c.enabled(CoriolisSettings::process) && c.enabled(DiffusionSettings::process) &&
                        d.profile == DiffusionProfile::Constant && d.surfaceMomentum == SurfaceMomentum::NoSlip &&
                        d.kappa > 0;
        if (!ok)
            fail("initial_conditions.wind", "'ekman' without its processes",
                 "coriolis and vertical_diffusion with profile: constant, kappa > 0 and surface_momentum: no_slip");
        checkEkmanLatitudes(c.horizontal);
    }
    checkAnalyticSolution(c);
    if (c.time.start.size() == 10) c.time.start += " 00:00:00"; // one form for the time axis units
}

// ---- files -----------------------------------------------------------------------------------------------------

std::string readFile(std::string const& path) {
    std::string const where = path.empty() ? "''" : path;
    std::string const expected = "a readable YAML configuration file";
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) fail(where, "no such file", expected);
    if (std::filesystem::is_directory(path, ec)) fail(where, "is a directory", expected);
    std::ifstream in(path, std::ios::binary);
    if (!in) fail(where, "cannot be opened", expected);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (in.bad()) fail(where, "cannot be read", expected);
    return text;
}

std::string withMark(std::string const& name, YAML::Mark const& mark) {
    if (mark.is_null()) return name;
    return name + ":" + std::to_string(mark.line + 1) + ":" + std::to_string(mark.column + 1);
}

// Exactly one YAML document (a leading "---" is fine; a second document after one is refused, never ignored). An
// empty document after the first ("---" and nothing, or only comments) says nothing and is accepted.
YAML::Node parseYaml(std::string const& text, std::string const& sourceName) {
    std::vector<YAML::Node> documents;
    try {
        documents = loadAllDocuments(text);
    } catch (YAML::Exception const& e) {
        fail(withMark(sourceName, e.mark), "YAML syntax error: " + printable(e.msg), "");
    }
    for (std::size_t i = 1; i < documents.size(); ++i)
        if (!documents[i].IsNull())
            fail(withMark(sourceName, documents[i].Mark()),
                 "a second YAML document (document " + std::to_string(i + 1) + " of " +
                     std::to_string(documents.size()) + "); only one document is allowed",
                 "one YAML document per configuration file: remove the '---' line and what follows it, or merge "
                 "the documents");
    return documents.empty() ? YAML::Node() : documents.front();
}

} // namespace

uint64_t Config::totalSteps() const {
    std::string const expected = "exactly one of time.steps, time.days";
    if (time.steps && time.days)
        fail("time",
             "both steps (" + std::to_string(*time.steps) + ") and days (" + formatNumber(*time.days) + ") are set",
             expected);
    if (time.steps) return *time.steps;
    if (!time.days) fail("time", "neither steps nor days is set", expected);
    return wholeSteps(*time.days * 86400.0, time.dt, "time.days", *time.days,
                      "a run length of a whole number (>= 1) of time.dt steps, within 1e-9 relative");
}

uint64_t Config::outputEvery() const {
    return wholeSteps(output.interval, time.dt, "output.interval", output.interval,
                      "a positive multiple of time.dt, within 1e-9 relative");
}

uint64_t Config::restartEvery() const {
    if (restart.interval == 0) return 0;
    return wholeSteps(restart.interval, time.dt, "restart.interval", restart.interval,
                      "0 (only at the end) or a positive multiple of time.dt, within 1e-9 relative");
}

std::string configYaml(Config const& config) {
    Config copy = config; // the schema walks mutable configs; the emitter only reads
    YAML::Emitter out;
    out.SetIndent(2);
    out << YAML::BeginMap;
    Emitter emitter(out);
    detail::describe(emitter, copy);
    out << YAML::EndMap;
    return std::string(out.c_str()) + "\n";
}

namespace {

// A relative input file (the sounding, the faces) is relative to the configuration file's folder (empty: the working
// directory); the configuration holds the path as the program opens it.
void resolveInputs(Config& c, std::filesystem::path const& folder) {
    readFacesFile(c.vertical, folder);
    std::string& sounding = c.initial.sounding;
    if (!sounding.empty() && std::filesystem::path(sounding).is_relative() && !folder.empty())
        sounding = (folder / sounding).lexically_normal().string();
}

Config parseIn(std::string const& yamlText, std::string const& sourceName, std::vector<std::string> const& overrides,
               std::filesystem::path const& folder) {
    try {
        YAML::Node root = parseYaml(yamlText, sourceName);
        for (auto const& o : overrides)
            applyOverride(root, o);
        Config config;
        Reader reader(root, "");
        detail::describe(reader, config);
        reader.finish();
        resolveInputs(config, folder);
        validate(config);
        config.resolvedYaml = configYaml(config);
        config.sourcePath = sourceName;
        return config;
    } catch (YAML::Exception const& e) { // a safety net: the reader checks node types before every access
        fail(sourceName, "YAML error: " + printable(e.msg), "");
    }
}

} // namespace

Config parseConfig(std::string const& yamlText, std::string const& sourceName,
                   std::vector<std::string> const& overrides) {
    return parseIn(yamlText, sourceName, overrides, {});
}

Config loadConfig(std::string const& path, std::vector<std::string> const& overrides) {
    return parseIn(readFile(path), path, overrides, std::filesystem::path(path).parent_path());
}

} // namespace strata::app
