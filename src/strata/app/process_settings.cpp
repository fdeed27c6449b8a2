// GCC 12 warns falsely about a memcpy overlap in "'" + std::string(...) once the processes' check functions are
// inlined into their schema's lambda (GCC bug 105329); no code here copies overlapping memory.
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ == 12
#pragma GCC diagnostic ignored "-Wrestrict"
#endif
#include <strata/app/process_settings.hpp>
#include <strata/app/processes/builtin.hpp>

#include <algorithm>

namespace strata::app {

namespace {
std::vector<ProcessSchema>& schemas() {
    static std::vector<ProcessSchema> all = schemasOf(BuiltinProcesses{});
    return all;
}
} // namespace

std::vector<ProcessSchema> const& processSchemas() { return schemas(); }

ProcessSchema const* findProcessSchema(std::string_view name) {
    for (auto const& s : schemas())
        if (s.name == name) return &s;
    return nullptr;
}

namespace {
bool sameVariable(VariableInfo const& a, VariableInfo const& b) {
    return a.name == b.name && a.units == b.units && a.longName == b.longName && a.standardName == b.standardName &&
           a.where == b.where && a.source == b.source && a.output == b.output && a.cellMethods == b.cellMethods;
}
} // namespace

void addProcessSchema(ProcessSchema schema) {
    if (findProcessSchema(schema.name) != nullptr)
        throw Error("a process named '" + schema.name + "' is already registered", "registerProcess",
                    "a name no other process has");
    for (auto const& v : schema.outputs) {
        std::string const what = "process '" + schema.name + "' declares the output variable '" + std::string(v.name);
        if (v.source != Source::Process)
            throw Error(what + "' with another source than Source::Process", "registerProcess",
                        "a process's outputs made by the process (Source::Process)");
        VariableInfo known{};
        if (findVariable(v.name, known) && !(known.source == Source::Process && sameVariable(known, v)))
            throw Error(what + "', which the catalogue already has as another variable", "registerProcess",
                        "a name of its own, or the same declaration as the process that has it");
    }
    schemas().push_back(std::move(schema));
}

std::vector<VariableInfo> catalogue() {
    std::vector<VariableInfo> all(std::begin(stateVariables), std::end(stateVariables));
    for (auto const& s : schemas())
        for (auto const& v : s.outputs)
            if (std::none_of(all.begin(), all.end(), [&](VariableInfo const& seen) { return seen.name == v.name; }))
                all.push_back(v);
    return all;
}

bool findVariable(std::string_view name, VariableInfo& out) {
    for (auto const& v : catalogue())
        if (v.name == name) {
            out = v;
            return true;
        }
    return false;
}

std::vector<std::string> outputChoices() {
    std::vector<std::string> names;
    for (auto const& v : catalogue())
        if (v.output) names.emplace_back(v.name);
    for (auto const pattern : tendencyPatterns)
        names.emplace_back(pattern);
    return names;
}

std::optional<TendencyVariable> findTendency(std::string_view name) {
    std::string_view constexpr prefix = "tendency_of_", due = "_due_to_";
    if (!name.starts_with(prefix)) return std::nullopt;
    std::string_view rest = name.substr(prefix.size());
    std::string_view process;
    if (auto const at = rest.find(due); at != std::string_view::npos) { // no variable's name holds "_due_to_"
        process = rest.substr(at + due.size());
        rest = rest.substr(0, at);
        if (findProcessSchema(process) == nullptr) return std::nullopt;
    }
    for (std::size_t i = 0; i < std::size(prognosticTendencies); ++i) {
        TendencyOf const& t = prognosticTendencies[i];
        if (t.variable != rest) continue;
        TendencyVariable v;
        v.variable = i;
        v.process = std::string(process);
        v.name = std::string(name);
        v.units = std::string(t.units);
        v.standardName = std::string(t.standardName);
        v.longName = std::string(t.longName);
        if (process.empty())
            v.longName.append(" (the whole step), mean since the previous output");
        else
            v.longName.append(" due to ").append(process).append(", mean since the previous output");
        return v;
    }
    return std::nullopt;
}

} // namespace strata::app
