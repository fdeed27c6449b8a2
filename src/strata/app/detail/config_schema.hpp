// The configuration schema, written once: every YAML key, the struct field it fills and the rule its value obeys.
//
// `describe(visitor, config)` walks the schema; the visitor decides what a walk means. The reader in config.cpp
// fills the fields from a YAML tree and rejects unknown keys, the emitter writes them out as the resolved YAML, and
// the tests list every key path to check that docs/config.md documents it. A visitor provides
//   field(key, value, rule)                 one value (`value` may be std::optional: absent stays unset)
//   section(key, describeChild)             a nested map
//   processList(key, order, describeEach)   the process list; describeEach(p) calls
//     p.process(name, enabled, describeSettings) once per known process
// Rules relating several keys (exactly one of steps/days, output interval a multiple of dt, ...) are in config.cpp.
#pragma once

#include <strata/app/config.hpp>
#include <strata/app/detail/config_rules.hpp>

namespace strata::app::detail {

// One of the names of an enum's Choices (the reader maps the name to the value; the emitter writes it back).
template <class E>
Rule<E> named() {
    std::string expected = "one of: ";
    for (std::size_t i = 0; i < Choices<E>::names.size(); ++i)
        expected += (i ? ", " : "") + std::string(Choices<E>::names[i].first);
    return {std::move(expected), [](E const&) { return true; }};
}

template <class V>
void describe(V& v, VerticalGridConfig& c) {
    v.field("levels", c.levels, between<uint32_t>(1, 100000));
    v.field("top", c.top, above(0.0));
    v.field("stretching", c.stretching, named<Stretching>());
    v.field("exponent", c.exponent, atLeast(1.0));
}

template <class V>
void describe(V& v, HorizontalGridConfig& c) {
    v.field("type", c.type, named<HorizontalGridType>());
    // >= 1 for the grid type in use: checked in config.cpp, where the type is known.
    v.field("nlat", c.nlat, between<uint32_t>(0, 100000));
    v.field("nlon", c.nlon, between<uint32_t>(0, 100000));
    v.field("ncol", c.ncol, between<uint32_t>(0, 100000000));
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
void describe(V& v, DiffusionConfig& c) {
    v.field("mode", c.mode, named<DiffusionMode>());
    v.field("profile", c.profile, named<DiffusionProfile>());
    v.field("form", c.form, named<DiffusionForm>());
    v.field("kappa", c.kappa, atLeast(0.0));
    v.field("boundary_layer_height", c.boundaryLayerHeight, above(0.0));
    v.field("kappa_free", c.kappaFree, atLeast(0.0));
    v.field("surface_heat_flux", c.surfaceHeatFlux, anyNumber());
    v.field("surface_moisture_flux", c.surfaceMoistureFlux, anyNumber());
    v.field("surface_tracer_flux", c.surfaceTracerFlux, anyNumber());
    v.field("surface_momentum", c.surfaceMomentum, named<SurfaceMomentum>());
}

template <class V>
void describe(V& v, AdvectionConfig& c) {
    v.field("scheme", c.scheme, named<AdvectionScheme>());
    v.field("positive_scheme", c.positiveScheme, named<AdvectionScheme>());
    v.field("profile", c.profile, named<AdvectionProfile>());
    v.field("duration", c.duration, atLeast(0.0));
    v.field("w_max", c.wMax, anyNumber());
}

template <class V>
void describe(V& v, HeldSuarezConfig& c) {
    v.field("ka", c.ka, atLeast(0.0));
    v.field("ks", c.ks, atLeast(0.0));
    v.field("delta_T_y", c.deltaTy, atLeast(0.0));
    v.field("delta_theta_z", c.deltaThetaZ, atLeast(0.0));
    v.field("sigma_b", c.sigmaB, Rule<double>{"a number in [0, 1)", [](double s) { return s >= 0.0 && s < 1.0; }});
    v.field("T_min", c.tMin, above(0.0));
    v.field("T_max", c.tMax, above(0.0));
    v.field("p0", c.p0, above(0.0));
    v.field("kf", c.kf, atLeast(0.0));
}

template <class V>
void describe(V& v, SurfaceFluxesConfig& c) {
    v.field("c_e", c.ce, atLeast(0.0));
    v.field("c_h", c.ch, atLeast(0.0));
    v.field("gustiness", c.gustiness, atLeast(0.0));
}

template <class V>
void describe(V& v, CoriolisConfig& c) {
    v.field("u_g", c.ug, anyNumber());
    v.field("v_g", c.vg, anyNumber());
}

template <class V>
void describe(V& v, InitialConfig& c) {
    v.field("temperature", c.temperature, named<InitialTemperature>());
    v.field("surface_temperature", c.surfaceTemperature, above(0.0));
    v.field("lapse_rate", c.lapseRate, anyNumber());
    v.field("amplitude", c.amplitude, atLeast(0.0));
    v.field("surface_pressure", c.surfacePressure, above(0.0));
    v.field("humidity", c.humidity, atLeast(0.0));
    v.field("tracer_height", c.tracerHeight, anyNumber());
    v.field("tracer_width", c.tracerWidth, above(0.0));
    v.field("wind", c.wind, named<InitialWind>());
    v.field("u", c.u, anyNumber());
    v.field("v", c.v, anyNumber());
}

template <class V>
void describe(V& v, OutputConfig& c) {
    v.field("path", c.path, nonEmptyText());
    v.field("variables", c.variables,
            DistinctSubset{{"T", "theta", "u", "v", "q", "qc", "qr", "tracer", "p", "p_face", "K", "w",
                            "precipitation_flux", "surface_upward_sensible_heat_flux",
                            "surface_upward_latent_heat_flux", "water_evaporation_flux"}});
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
        p.process("vertical_diffusion", c.diffusion.enabled, [&](auto& s) { describe(s, c.diffusion); });
        p.process("vertical_advection", c.advection.enabled, [&](auto& s) { describe(s, c.advection); });
        p.process("held_suarez", c.heldSuarez.enabled, [&](auto& s) { describe(s, c.heldSuarez); });
        p.process("coriolis", c.coriolis.enabled, [&](auto& s) { describe(s, c.coriolis); });
        p.process("surface_fluxes", c.surfaceFluxes.enabled, [&](auto& s) { describe(s, c.surfaceFluxes); });
        p.process("large_scale_condensation", c.condensation.enabled, [](auto&) {});
        p.process("kessler", c.kessler.enabled, [](auto&) {});
    });
    v.section("initial_conditions", [&](auto& s) { describe(s, c.initial); });
    v.section("output", [&](auto& s) { describe(s, c.output); });
    v.section("restart", [&](auto& s) { describe(s, c.restart); });
}

} // namespace strata::app::detail
