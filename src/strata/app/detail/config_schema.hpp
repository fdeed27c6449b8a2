// The configuration schema, written once: every YAML key, the struct field it fills and the rule its value obeys.
//
// `describe(visitor, config)` walks the schema; the visitor decides what a walk means. The reader in config.cpp
// fills the fields from a YAML tree and rejects unknown keys, the emitter writes them out as the resolved YAML, and
// the tests list every key path to check that docs/config.md documents it. A visitor provides
//   field(key, value, rule)                 one value (`value` may be std::optional: absent stays unset)
//   section(key, describeChild)             a nested map
//   processList(key, order, describeEach)   the process list; describeEach(p) calls
//     p.process(name, describeSettings) once per known process (app/process_settings.hpp: Strata's own and those
//     a program registered), whose settings are described through a SettingsVisitor
// Each process's settings are described in its own file (app/processes/*.hpp).
// Rules relating several keys (exactly one of steps/days, output interval a multiple of dt, ...) are in config.cpp.
#pragma once

#include <strata/app/config.hpp>
#include <strata/app/detail/config_rules.hpp>
#include <strata/app/process_settings.hpp>

#include <type_traits>

namespace strata::app::detail {

template <class V>
void describe(V& v, VerticalGridConfig& c) {
    v.field("levels", c.levels, between<uint32_t>(1, 100000));
    v.field("top", c.top, above(0.0));
    v.field("stretching", c.stretching, named<Stretching>());
    v.field("exponent", c.exponent, atLeast(1.0));
    // Instead of the four above; z_0 = 0, increasing, at most 100001: checked in config.cpp.
    v.field("faces", c.faces, NumberList{atLeast(0.0)});
    v.field("faces_file", c.facesFile, nonEmptyText()); // read into faces (config.cpp)
}

template <class V>
void describe(V& v, HorizontalGridConfig& c) {
    v.field("type", c.type, named<HorizontalGridType>());
    // >= 1 for the grid type in use: checked in config.cpp, where the type is known.
    v.field("nlat", c.nlat, between<uint32_t>(0, 100000));
    v.field("nlon", c.nlon, between<uint32_t>(0, 100000));
    v.field("ncol", c.ncol, between<uint32_t>(0, 100000000));
    v.field("lat", c.lat, NumberList{between(-90.0, 90.0)}); // columns only, as many as lon: config.cpp
    v.field("lon", c.lon, NumberList{anyNumber()});
}

template <class V>
void describe(V& v, TimeConfig& c) {
    v.field("dt", c.dt, above(0.0));
    v.field("steps", c.steps, atLeast<uint64_t>(1));
    v.field("days", c.days, above(0.0));
    v.field("start", c.start, timestamp());
}

template <class V>
void describe(V& v, BackendConfig& c) {
    v.field("type", c.type, named<BackendType>());
    v.field("threads_workers", c.threadsWorkers, between<uint32_t>(1, 1024)); // the Threads launcher's limit
    v.field("engine", c.engine, named<EngineChoice>());
}

template <class V>
void describe(V& v, InitialConfig& c) {
    v.field("temperature", c.temperature, named<InitialTemperature>());
    v.field("surface_temperature", c.surfaceTemperature, above(0.0));
    v.field("lapse_rate", c.lapseRate, anyNumber());
    v.field("minimum_temperature", c.minimumTemperature, above(0.0));
    v.field("equator_pole_difference", c.equatorPoleDifference, atLeast(0.0));
    v.field("amplitude", c.amplitude, atLeast(0.0));
    v.field("surface_pressure", c.surfacePressure, above(0.0));
    v.field("humidity", c.humidity, atLeast(0.0));
    v.field("tracer_height", c.tracerHeight, anyNumber());
    v.field("tracer_width", c.tracerWidth, above(0.0));
    v.field("wind", c.wind, named<InitialWind>());
    v.field("u", c.u, anyNumber());
    v.field("v", c.v, anyNumber());
    v.field("sounding", c.sounding, anyText()); // a file: read by the model (app/io/sounding.hpp)
}

template <class V>
void describe(V& v, OutputConfig& c) {
    v.field("path", c.path, nonEmptyText());
    v.field("variables", c.variables, // the variable catalogue's, and the tendencies its patterns stand for
            DistinctSubset{outputChoices(), [](std::string const& name) { return findTendency(name).has_value(); }});
    v.field("interval", c.interval, above(0.0));
    v.field("precision", c.precision, named<Precision>());
    v.field("format", c.format, named<OutputFormat>());
    v.field("deflate", c.deflate, between<uint32_t>(0, 9));
}

template <class V>
void describe(V& v, RestartConfig& c) {
    v.field("interval", c.interval, atLeast(0.0));
    v.field("path", c.path, anyText());
}

template <class V>
void describe(V& v, Config& c) {
    v.field("title", c.title, anyText());
    v.section("grid", [&](auto& grid) {
        grid.section("vertical", [&](auto& s) { describe(s, c.vertical); });
        grid.section("horizontal", [&](auto& s) { describe(s, c.horizontal); });
    });
    v.section("time", [&](auto& s) { describe(s, c.time); });
    v.section("backend", [&](auto& s) { describe(s, c.backend); });
    v.processList("processes", c.processOrder, [&](auto& p) {
        for (ProcessSchema const& schema : processSchemas())
            p.process(schema.name, [&](auto& s) {
                auto it = c.processSettings.try_emplace(schema.name, schema.defaults()).first;
                ErasedVisitor<std::remove_reference_t<decltype(s)>> erased(s);
                it->second.describe(erased);
            });
    });
    v.section("initial_conditions", [&](auto& s) { describe(s, c.initial); });
    v.field("analytic_solution", c.analytic, named<AnalyticCase>());
    v.section("output", [&](auto& s) { describe(s, c.output); });
    v.section("restart", [&](auto& s) { describe(s, c.restart); });
}

} // namespace strata::app::detail
