// The process descriptors and the variable catalogue: a process from outside Strata's sources (tests/app/processes/
// tracer_decay.hpp) is one file and one registration line, and goes through the configuration, the stepper, the
// budgets, the output and the restart check like Strata's own; the driver refuses a process whose declarations do not
// match what it asks for; every variable of the catalogue reaches the four places the catalogue drives.
#define STRATA_TEST_NAME "test_processes"

#include <strata/app/config.hpp>
#include <strata/app/model/model.hpp>
#include <strata/app/model/registry.hpp>
#include <strata/app/model/run_impl.hpp>

#include "tests/app/physics_test_support.hpp"
#include "tests/app/processes/tracer_decay.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

using namespace strata;
using strata::test::Case;
using strata::test::Serial;

namespace {

// The one line a new process needs (a program makes it once, before it reads its configuration).
bool const registered = (app::registerProcess<test::TracerDecay>(), true);

std::string const column = R"(grid:
  vertical: {levels: 20, top: 10000.0}
  horizontal: {type: columns, ncol: 2}
time: {dt: 600.0, steps: 3}
output: {interval: 600.0, variables: [tracer, tracer_decay_column]}
)";

app::Config decayCase(std::string const& settings) {
    return app::parseConfig(column + "processes:\n  - tracer_decay: " + settings + "\n", "test_processes");
}

bool contains(std::vector<std::string> const& names, std::string const& name) {
    return std::find(names.begin(), names.end(), name) != names.end();
}

} // namespace

TEST_CASE("a registered process is read, written and checked by the configuration like Strata's own", "[processes]") {
    REQUIRE(registered);
    app::Config const c = decayCase("{rate: 2.5, above: 4000}");
    auto const& s = c.settings<test::TracerDecaySettings>();
    CHECK(s.rate == 2.5);
    CHECK(s.above == 4000.0);
    app::Config const back = app::parseConfig(c.resolvedYaml, "resolved"); // written out and read back
    CHECK(back.processOrder == c.processOrder);
    CHECK(back.processSettings == c.processSettings);
    CHECK(back.settings<test::TracerDecaySettings>() == s);
    CHECK(contains(app::outputChoices(), "tracer_decay_column"));
    try {
        decayCase("{rat: 1}");
        FAIL("an unknown key was accepted");
    } catch (app::ConfigError const& e) {
        CHECK(std::string(e.what()).find("processes.tracer_decay.rat: unknown key; did you mean 'rate'?") !=
              std::string::npos);
    }
    try {
        decayCase("{rate: -1}");
        FAIL("a negative rate was accepted");
    } catch (app::ConfigError const& e) {
        CHECK(std::string(e.what()).find("processes.tracer_decay.rate") != std::string::npos);
    }
    // A continuation with other settings of the process is refused, naming it.
    app::RestartMeta meta;
    meta.configYaml = decayCase("{rate: 1.0, above: 4000}").resolvedYaml;
    meta.step = 1;
    try {
        app::checkRestartCompatible(c, meta, "r.nc");
        FAIL("a restart with other settings was accepted");
    } catch (app::ConfigError const& e) {
        CHECK(e.where() == "processes.tracer_decay");
    }
    meta.configYaml = c.resolvedYaml;
    CHECK_NOTHROW(app::checkRestartCompatible(c, meta, "r.nc"));
}

TEST_CASE("a registered process steps with the SSP-RK3 decay factor, keeps the tracer below its height, and reports to "
          "the budget",
          "[processes][physics][budget]") {
    // Exact: for d(psi)/dt = -k psi, one SSP-RK3 step multiplies psi by R(-k dt) = 1 - x + x^2/2 - x^3/6, x = k dt.
    // The budget check fails when the loss is left out (tracerDecayReports = false, the second pass): the tracer's
    // run residual is then 1 (all of what left, unexplained), against 2.4e-16 with it.
    double const rate = 8.0, above = 4000.0, dt = 600.0;
    double const x = rate / 86400.0 * dt, factor = 1.0 - x + x * x / 2.0 - x * x * x / 6.0;
    for (bool const reports : {true, false}) {
        test::tracerDecayReports = reports;
        Case k(decayCase("{rate: " + test::num(rate) + ", above: " + test::num(above) + "}"));
        auto& s = k.state();
        s.now.tracer.toHost();
        app::CenterField start(s.grid, s.columns, s.space); // the initial blob (tracer_height, tracer_width)
        test::setField(start, [&](uint32_t c, uint32_t z) { return s.now.tracer.at(c, z); });
        k.steps(3);
        auto const& zc = s.grid->centers();
        double const worst = test::maxOver(s.now.tracer, [&](uint32_t c, uint32_t z, double value) {
            double const expected = start.at(c, z) * (zc[z] > above ? factor * factor * factor : 1.0);
            return expected > 1e-200 ? std::fabs(value - expected) / expected : std::fabs(value - expected);
        });
        CHECK(worst < 4e-16);
        double const residual = k.model->diagnostics().runResidual[app::TracerBudget];
        INFO("reports " << reports << ": tracer run residual " << residual);
        if (reports)
            CHECK(residual < 1e-12);
        else
            CHECK(residual > 1e-4);
        // The output variable: the column's decay from the current state, by hand.
        auto const values = k.model->outputValues("tracer_decay_column");
        REQUIRE(values.size() == s.columns);
        s.rho.toHost();
        double byHand = 0;
        for (uint32_t z = 0; z < s.grid->cells(); ++z)
            if (zc[z] > above)
                byHand += s.rho.at(0, z) * (rate / 86400.0) * s.now.tracer.at(0, z) * s.grid->dzCenter()[z];
        CHECK(values[0] == Approx(byHand).epsilon(1e-14));
    }
    test::tracerDecayReports = true;
}

namespace {

// Asks for p_face without declaring it.
template <class Backend>
class UndeclaredRead : public app::Process<Backend> {
public:
    struct Settings : app::NoSettings<Settings> {
        static constexpr std::string_view process = "undeclared_read";
    };
    static std::vector<app::FieldDecl> declarations(app::Config const&) { return {{"T", "K", app::Access::Reads}}; }
    UndeclaredRead(app::Config const&, app::ProcessEnv<Backend>& env)
        : app::Process<Backend>(env.declared()), m_pFace(env.face("p_face")) {}
    std::string name() const override { return std::string(Settings::process); }

private:
    app::FaceField const& m_pFace;
};

// Declares T in degrees Celsius.
template <class Backend>
class WrongUnits : public app::Process<Backend> {
public:
    struct Settings : app::NoSettings<Settings> {
        static constexpr std::string_view process = "wrong_units";
    };
    static std::vector<app::FieldDecl> declarations(app::Config const&) {
        return {{"T", "degC", app::Access::Tendency}};
    }
    WrongUnits(app::Config const&, app::ProcessEnv<Backend>& env) : app::Process<Backend>(env.declared()) {}
    std::string name() const override { return std::string(Settings::process); }
};

// Declares a tendency of the reference pressure, which is fixed in time.
template <class Backend>
class TendencyOfReference : public app::Process<Backend> {
public:
    struct Settings : app::NoSettings<Settings> {
        static constexpr std::string_view process = "tendency_of_reference";
    };
    static std::vector<app::FieldDecl> declarations(app::Config const&) { return {{"p", "Pa", app::Access::Tendency}}; }
    TendencyOfReference(app::Config const&, app::ProcessEnv<Backend>& env) : app::Process<Backend>(env.declared()) {}
    std::string name() const override { return std::string(Settings::process); }
};

std::string modelError(std::string const& process) {
    try {
        Case k(app::parseConfig(column + "processes: [" + process + "]\n", "test_processes"));
    } catch (Error const& e) {
        return e.what();
    }
    return "";
}

} // namespace

TEST_CASE("the driver refuses a process whose declarations do not match what it uses", "[processes][errors]") {
    app::registerProcess<UndeclaredRead>();
    app::registerProcess<WrongUnits>();
    app::registerProcess<TendencyOfReference>();
    CHECK_THAT(modelError("undeclared_read"),
               Catch::Matchers::Contains("process 'undeclared_read' asks for 'p_face', which its fields() does not "
                                         "declare"));
    CHECK_THAT(modelError("wrong_units"),
               Catch::Matchers::Contains("process 'wrong_units' declares 'T' in degC, the state holds it in K"));
    CHECK_THAT(modelError("tendency_of_reference"),
               Catch::Matchers::Contains("declares that it tendency of 'p', which is fixed in time"));
    // A process registered twice under one name is refused.
    CHECK_THROWS_WITH(app::addProcessSchema(app::schemaOf<test::TracerDecaySettings>()),
                      Catch::Matchers::Contains("a process named 'tracer_decay' is already registered"));
}

TEST_CASE("every variable of the catalogue reaches the output choices, the NetCDF metadata, the restart and the state "
          "check",
          "[processes][catalogue]") {
    REQUIRE(registered);
    auto const choices = app::outputChoices();
    for (auto const& v : app::catalogue()) {
        INFO(v.name);
        if (!v.output) continue;
        CHECK(contains(choices, std::string(v.name)));
        auto const info = app::detail::variableInfo(std::string(v.name)); // the NetCDF attributes of the variable
        CHECK(std::string(info.units) == v.units);
        CHECK(std::string(info.standardName) == v.standardName);
        CHECK(info.onFaces == (v.where == app::Staggering::Face));
        CHECK(info.surface == (v.where == app::Staggering::Column));
    }
    // A process's own output variable is in the catalogue once it is registered.
    CHECK(contains(choices, "tracer_decay_column"));

    Case k(decayCase("{}"));
    // Every prognostic and reference variable is a field of the state in its staggering (what ProcessEnv hands out).
    for (auto const& v : app::catalogue()) {
        if (v.source != app::Source::Prognostic && v.source != app::Source::Reference) continue;
        INFO(v.name);
        bool const found = v.where == app::Staggering::Center ? k.state().center(v.name) != nullptr
                           : v.where == app::Staggering::Face ? k.state().face(v.name) != nullptr
                                                              : k.state().perColumn(v.name) != nullptr;
        CHECK(found);
    }
    auto const entries = k.model->restartEntries();
    for (std::size_t i = 0; i < app::prognosticCount(); ++i) {
        INFO(app::prognostic(i).name);
        CHECK(std::any_of(entries.begin(), entries.end(),
                          [&](app::RestartEntry const& e) { return e.name == app::prognostic(i).name; }));
    }
    // Each checked variable, made NaN at one point, is the one the state check reports.
    for (std::size_t i = 0; i < app::checkedCount(); ++i) {
        std::string const name(app::checkedVariable(i).name);
        INFO(name);
        app::CenterField& f = *k.state().center(name);
        f.toHost();
        double const kept = f.at(1, 3);
        f.at(1, 3) = std::numeric_limits<double>::quiet_NaN();
        f.toDevice();
        auto const bad = k.model->checkState();
        REQUIRE(bad);
        CHECK(bad->variable == name);
        CHECK(bad->column == 1);
        CHECK(bad->level == 3);
        f.at(1, 3) = kept;
        f.toDevice();
    }
    CHECK_FALSE(k.model->checkState());
}

namespace {

// Declares a tendency of T and adds one to q as well.
template <class Backend>
class UndeclaredWrite : public app::Process<Backend> {
public:
    struct Settings : app::NoSettings<Settings> {
        static constexpr std::string_view process = "undeclared_write";
    };
    static std::vector<app::FieldDecl> declarations(app::Config const&) { return {{"T", "K", app::Access::Tendency}}; }
    UndeclaredWrite(app::Config const&, app::ProcessEnv<Backend>& env) : app::Process<Backend>(env.declared()) {}
    std::string name() const override { return std::string(Settings::process); }
    void addTendencies(app::StepContext<Backend>&, app::Prognostics const&, app::Prognostics& t, double) override {
        t.q.toHost();
        t.q.at(0, 0) += 1e-9;
        t.q.toDevice();
    }
};

} // namespace

TEST_CASE("with checkWrites every process call is held to its declarations: Strata's own pass, a process changing "
          "what it did not declare is named",
          "[processes][errors]") {
    // Every built-in process, through the cases that enable them (default: six of the seven, implicit diffusion;
    // kessler_column: Kessler after an updraft; heat_equation: explicit diffusion; subsidence_tracer; held_suarez;
    // ekman: Coriolis with diffusion).
    for (std::string const name :
         {"default", "kessler_column", "heat_equation", "subsidence_tracer", "held_suarez", "ekman"}) {
        INFO(name);
        Case k(name, {});
        k.model->checkWrites(true);
        CHECK_NOTHROW(k.steps(2));
    }
    app::registerProcess<UndeclaredWrite>();
    Case k(app::parseConfig(column + "processes: [undeclared_write]\n", "test_processes"));
    k.model->checkWrites(true);
    CHECK_THROWS_WITH(k.steps(1), Catch::Matchers::Contains("process 'undeclared_write' changed the tendency of 'q', "
                                                            "which its fields() does not declare"));
    // Without the check the step goes through: the check is what catches it.
    Case unchecked(app::parseConfig(column + "processes: [undeclared_write]\n", "test_processes"));
    CHECK_NOTHROW(unchecked.steps(1));
}

TEST_CASE("every built-in process runs alone on a column, with each of its parts switched off, held to its "
          "declarations",
          "[processes]") {
    // What a process needs from another is a declared input, not a required neighbour: each one alone, on one column
    // at the equator, three steps with the declarations checked (a variable a part switched off would still touch is
    // named by checkWrites).
    std::vector<std::pair<std::string, std::string>> const variants = {
        {"vertical_diffusion", "{}"},
        {"vertical_diffusion", "{heat: off, moisture: off, tracer: off}"},
        {"vertical_diffusion", "{profile: reed_jablonowski, momentum: off}"},
        {"vertical_diffusion", "{mode: explicit, momentum: off, tracer: off}"},
        {"vertical_advection", "{}"},
        {"held_suarez", "{}"},
        {"coriolis", "{u_g: 10.0}"},
        {"surface_fluxes", "{}"},
        {"surface_fluxes", "{heat: off, momentum: off, surface_layer_depth: z_a}"},
        {"surface_fluxes", "{moisture: off}"},
        {"large_scale_condensation", "{}"},
        {"kessler", "{}"},
        {"kessler", "{sedimentation: off}"},
    };
    for (auto const& schema : app::schemasOf(app::BuiltinProcesses{})) {
        INFO("process " << schema.name);
        REQUIRE(std::any_of(variants.begin(), variants.end(), [&](auto const& v) { return v.first == schema.name; }));
    }
    for (auto const& [name, settings] : variants) {
        INFO(name << ": " << settings);
        Case k(app::parseConfig("grid: {vertical: {levels: 20, top: 10000.0}, horizontal: {type: columns, ncol: 1}}\n"
                                "time: {dt: 600.0, steps: 3}\noutput: {interval: 600.0}\nprocesses:\n  - " +
                                    name + ": " + settings + "\n",
                                "test_processes"));
        k.model->checkWrites(true);
        CHECK_NOTHROW(k.steps(3));
    }
}

namespace {

// Another process under tracer_decay's name, and one whose output variable takes a state variable's name.
template <class Backend>
class Impostor : public app::Process<Backend> {
public:
    struct Settings : app::NoSettings<Settings> {
        static constexpr std::string_view process = "tracer_decay";
    };
    static std::vector<app::FieldDecl> declarations(app::Config const&) { return {}; }
    Impostor(app::Config const&, app::ProcessEnv<Backend>& env) : app::Process<Backend>(env.declared()) {}
    std::string name() const override { return std::string(Settings::process); }
};

struct ShadowingSettings : app::NoSettings<ShadowingSettings> {
    static constexpr std::string_view process = "shadowing";
    static std::vector<app::VariableInfo> outputs() {
        return {{"T", "degC", "temperature", "", app::Staggering::Center, app::Source::Process}};
    }
};

} // namespace

TEST_CASE("a registration that would make two processes or variables of one name is refused", "[processes][errors]") {
    REQUIRE(registered);
    app::registerProcess<test::TracerDecay>(); // the same process again (host code and nvcc both register): fine
    CHECK_THROWS_WITH(app::registerProcess<Impostor>(),
                      Catch::Matchers::Contains("a process named 'tracer_decay' is already registered"));
    CHECK_THROWS_WITH(app::addProcessSchema(app::schemaOf<ShadowingSettings>()),
                      Catch::Matchers::Contains("process 'shadowing' declares the output variable 'T', which the "
                                                "catalogue already has as another variable"));
    CHECK(app::findProcessSchema("shadowing") == nullptr);
}
