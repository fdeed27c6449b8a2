// The tendency outputs (app/model/tendencies.hpp): each process's tendency of each variable it changes and the whole
// step's, as the output variables tendency_of_<var>_due_to_<process> and tendency_of_<var>.
//   - Held-Suarez's tendencies of T and u over one step against the SSP-RK3 step of a linear relaxation, by hand;
//   - in the default, ekman and kessler_column cases (explicit processes, implicit ones and adjustments), the
//     processes' tendencies add up to the whole step's and that to the state's change, to rounding, and leaving out
//     any one process breaks the sum;
//   - a process's tendency is zero where it does nothing (surface fluxes above the lowest level);
//   - the refusals: a process that is not enabled, a variable the process does not change, a name of no process;
//   - the metadata of the names, and their sums in the restart entries.
// Restarted runs writing these means bit for bit: tests/restart (restart_tendencies).
#include <strata/app/config.hpp>
#include <strata/app/model/detail/run_support.hpp>
#include <strata/app/model/model.hpp>
#define STRATA_TEST_NAME "test_tendencies"
#include "tests/app/physics_test_support.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <string>
#include <vector>

using namespace strata;
using namespace strata::test;
using Catch::Matchers::Contains;

namespace {

std::string listed(std::vector<std::string> const& names) {
    std::string s = "output.variables=[";
    for (std::size_t i = 0; i < names.size(); ++i)
        s.append(i ? ", " : "").append(names[i]);
    return s + "]";
}

// Every tendency the case can output: each process's of each variable it changes, then each variable's whole one.
std::vector<std::string> allTendencies(std::string const& config, std::vector<std::string> overrides) {
    Case plain(config, overrides);
    std::vector<std::string> names;
    for (auto const& p : plain.model->processes())
        for (auto const& d : p->fields())
            if (d.access != app::Access::Reads) {
                std::string const name = "tendency_of_" + d.name + "_due_to_" + p->name();
                if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
            }
    for (std::size_t i = 0; i < app::prognosticCount(); ++i)
        names.push_back("tendency_of_" + std::string(app::prognostic(i).name));
    return names;
}

} // namespace

TEST_CASE("Held-Suarez's tendencies over a step are SSP-RK3's step of -kT (T - Teq) and -kv u, by hand",
          "[tendencies]") {
    // A linear relaxation dx/dt = -k (x - x_eq) with k and x_eq fixed: the three stages give
    // (x(n+1) - x(n)) / dt = -k (x(n) - x_eq) (1 - k dt / 2 + (k dt)^2 / 6).
    Case k("held_suarez", {"grid.horizontal.nlat=6", "grid.horizontal.nlon=1", "initial_conditions.u=5",
                           "output.variables=[T, tendency_of_T_due_to_held_suarez, tendency_of_u_due_to_held_suarez, "
                           "tendency_of_T]"});
    auto& s = k.state();
    s.now.T.toHost();
    s.now.u.toHost();
    s.p.toHost();
    s.pFace.toHost();
    std::vector<double> const T0 = app::hostValues(s.now.T), u0 = app::hostValues(s.now.u);
    k.steps(1);
    auto const dT = k.model->outputValues("tendency_of_T_due_to_held_suarez");
    auto const du = k.model->outputValues("tendency_of_u_due_to_held_suarez");
    auto const total = k.model->outputValues("tendency_of_T");
    double const dt = k.cfg.time.dt, pi = std::numbers::pi, kappa = 287.04 / 1004.64, day = 86400.0;
    uint32_t const n = s.grid->cells();
    double worstT = 0, worstU = 0, worstTotal = 0;
    for (uint32_t c = 0; c < s.columns; ++c)
        for (uint32_t z = 0; z < n; ++z) {
            // Held & Suarez (1994), eqs. (1)-(3), with the parameters of configs/held_suarez.yaml.
            double const phi = s.latitude.host()[c] * pi / 180.0, p = s.p.at(c, z);
            double const teq = std::max(200.0, (315.0 - 60.0 * std::pow(std::sin(phi), 2) -
                                                10.0 * std::log(p / 1e5) * std::pow(std::cos(phi), 2)) *
                                                   std::pow(p / 1e5, kappa));
            double const above = std::max(0.0, (p / s.pFace.at(c, 0) - 0.7) / 0.3);
            double const kt = 0.025 / day + (0.25 - 0.025) / day * above * std::pow(std::cos(phi), 4);
            double const kv = 1.0 / day * above;
            auto const rk3 = [dt](double rate) { return 1.0 - rate * dt / 2.0 + rate * rate * dt * dt / 6.0; };
            std::size_t const i = std::size_t{c} * n + z;
            double const expectT = -kt * (T0[i] - teq) * rk3(kt), expectU = -kv * u0[i] * rk3(kv);
            worstT = std::max(worstT, std::fabs(dT[i] - expectT) / (std::fabs(expectT) + 1e-300));
            worstU = std::max(worstU, std::fabs(du[i] - expectU) / (std::fabs(expectU) + 1e-30));
            worstTotal = std::max(worstTotal, std::fabs(total[i] - dT[i]));
        }
    INFO("relative error: T " << worstT << ", u " << worstU << "; |whole - Held-Suarez| " << worstTotal << " K/s");
    // The stages' rounding relative to the tendency (measured: 4e-14 for T, largest where T is near Teq; 3e-16 for u).
    CHECK(worstT < 1e-12);
    CHECK(worstU < 1e-12);
    // Held-Suarez alone changes T: the whole tendency is its, to the rounding of the stored T (ulp(300 K) / dt).
    CHECK(worstTotal < 4 * std::numeric_limits<double>::epsilon() * 320.0 / dt);
}

namespace {

// Every tendency of a case over `steps` steps: the processes' parts of each variable add up to its whole tendency,
// and that is the state's change over the time; each part that is above the rounding somewhere matters to the sum.
// Returns the number of parts.
std::size_t checkSums(std::string const& config, std::vector<std::string> const& base, int steps) {
    auto const names = allTendencies(config, base);
    auto overrides = base;
    overrides.push_back(listed(names));
    Case k(config, overrides);
    auto& s = k.state();
    std::vector<std::vector<double>> start;
    for (auto* f : s.now.all())
        start.push_back(app::hostValues(*f));
    k.steps(steps);
    std::size_t count = 0;
    double const dt = k.cfg.time.dt, eps = std::numeric_limits<double>::epsilon();
    for (std::size_t v = 0; v < app::prognosticCount(); ++v) {
        std::string const var(app::prognostic(v).name);
        INFO("variable " << var);
        std::vector<double> const now = app::hostValues(*s.now.all()[v]);
        std::vector<double> const whole = k.model->outputValues("tendency_of_" + var);
        std::vector<std::pair<std::string, std::vector<double>>> parts;
        for (auto const& name : names)
            if (name.starts_with("tendency_of_" + var + "_due_to_"))
                parts.emplace_back(name, k.model->outputValues(name));
        count += parts.size();
        double scale = 0; // the largest |value| of the variable: its rounding per step is a few ulps of it
        for (std::size_t i = 0; i < now.size(); ++i)
            scale = std::max({scale, std::fabs(now[i]), std::fabs(start[v][i])});
        // Each stage update and each implicit step rounds the stored state once: 8 ulps of the largest value per
        // step, as a tendency (/ dt), bounds the difference of the sum of the parts and the whole.
        double const tolerance = 8 * eps * scale / dt;
        double sumError = 0, changeError = 0, largest = 0;
        std::vector<double> sumWithout(parts.size(), 0.0); // the error with part j left out
        for (std::size_t i = 0; i < now.size(); ++i) {
            double sum = 0;
            for (auto const& [name, values] : parts)
                sum += values[i];
            sumError = std::max(sumError, std::fabs(sum - whole[i]));
            for (std::size_t j = 0; j < parts.size(); ++j)
                sumWithout[j] = std::max(sumWithout[j], std::fabs(sum - parts[j].second[i] - whole[i]));
            changeError = std::max(changeError, std::fabs((now[i] - start[v][i]) / (steps * dt) - whole[i]));
            largest = std::max(largest, std::fabs(whole[i]));
        }
        INFO(parts.size() << " processes; largest |tendency| " << largest << ", |sum - whole| " << sumError
                          << ", |change / time - whole| " << changeError << ", tolerance " << tolerance);
        CHECK(sumError <= tolerance);
        CHECK(changeError <= tolerance);
        // The check is sharp: leaving out any process's part that is above the rounding somewhere breaks it. (A part
        // may be zero: the default case has no cloud or rain water for advection to carry.)
        for (std::size_t j = 0; j < parts.size(); ++j) {
            double partLargest = 0;
            for (double x : parts[j].second)
                partLargest = std::max(partLargest, std::fabs(x));
            INFO("without " << parts[j].first << " (largest " << partLargest << "): " << sumWithout[j]);
            if (partLargest > 1000 * tolerance) CHECK(sumWithout[j] > 100 * tolerance);
        }
    }
    return count;
}

} // namespace

TEST_CASE("the processes' tendencies add up to the whole step's, and that to the state's change", "[tendencies]") {
    // Explicit and implicit processes, two explicit tendencies of u and v (Held-Suarez, then Coriolis), adjustments
    // of T and q by three processes.
    SECTION("default") { CHECK(checkSums("default", {"grid.horizontal.nlat=4", "grid.horizontal.nlon=2"}, 4) > 12); }
    // Two explicit processes of u and v (Coriolis, then explicit diffusion).
    SECTION("ekman") { CHECK(checkSums("ekman", {}, 10) >= 4); }
    // Advection in the stages, Kessler's adjustments of T, q, qc and qr with rain falling (after 5 minutes of updraft).
    SECTION("kessler_column") { CHECK(checkSums("kessler_column", {}, 120) > 4); }
}

TEST_CASE("a process's tendency is zero where it does nothing: surface fluxes above the lowest level", "[tendencies]") {
    Case k("default", {"grid.horizontal.nlat=2", "grid.horizontal.nlon=1",
                       "output.variables=[tendency_of_T_due_to_surface_fluxes, tendency_of_u_due_to_coriolis]"});
    k.steps(3);
    auto const dT = k.model->outputValues("tendency_of_T_due_to_surface_fluxes");
    uint32_t const n = k.state().grid->cells();
    for (uint32_t c = 0; c < k.state().columns; ++c) {
        CHECK(dT[std::size_t{c} * n] != 0.0);
        for (uint32_t z = 1; z < n; ++z)
            CHECK(dT[std::size_t{c} * n + z] == 0.0);
    }
    // A record takes the mean and starts again: a record with no step in between holds zeros.
    auto const again = k.model->outputValues("tendency_of_T_due_to_surface_fluxes");
    CHECK(std::all_of(again.begin(), again.end(), [](double x) { return x == 0.0; }));
}

TEST_CASE("tendencies of a process that is not enabled, of a variable it does not change, of no process: refused",
          "[tendencies]") {
    // Kessler is registered but not enabled in the default case.
    CHECK_THROWS_WITH(Case("default", {"output.variables=[T, tendency_of_qr_due_to_kessler]"}),
                      Contains("output.variables[1]: 'tendency_of_qr_due_to_kessler' is a tendency due to 'kessler', "
                               "which is not enabled") &&
                          Contains("expected a tendency due to an enabled process (held_suarez, coriolis"));
    CHECK_THROWS_AS(Case("default", {"output.variables=[tendency_of_qr_due_to_kessler]"}), app::ConfigError);
    // Coriolis turns the winds only.
    CHECK_THROWS_WITH(Case("default", {"output.variables=[tendency_of_T_due_to_coriolis]"}),
                      Contains("output.variables[0]: 'tendency_of_T_due_to_coriolis': process 'coriolis' neither adds "
                               "a tendency to 'T' nor adjusts it (expected a variable the process changes (u, v))"));
    // Names of no process or no variable: the configuration's own refusal, naming the patterns.
    for (char const* bad : {"tendency_of_T_due_to_radiation", "tendency_of_theta", "tendency_of_T_due_to_",
                            "tendency_of_p_due_to_held_suarez"})
        CHECK_THROWS_WITH(app::loadConfig(std::string(STRATA_SOURCE_DIR) + "/configs/default.yaml",
                                          {std::string("output.variables=[") + bad + "]"}),
                          Contains(std::string("output.variables[0]: '") + bad + "' is not allowed") &&
                              Contains("tendency_of_<var>_due_to_<process>"));
}

TEST_CASE("tendency names carry their metadata, and their sums are restart entries", "[tendencies]") {
    auto const t = app::detail::variableInfo("tendency_of_T_due_to_held_suarez");
    CHECK(t.name == "tendency_of_T_due_to_held_suarez");
    CHECK(t.units == "K s-1");
    CHECK(t.standardName == "tendency_of_air_temperature");
    CHECK(t.longName == "tendency of air temperature due to held_suarez, mean since the previous output");
    CHECK(t.cellMethods == "time: mean");
    CHECK_FALSE(t.onFaces);
    CHECK_FALSE(t.surface);
    auto const u = app::detail::variableInfo("tendency_of_u");
    CHECK(u.units == "m s-2");
    CHECK(u.standardName == "tendency_of_eastward_wind");
    CHECK(u.longName == "tendency of eastward wind (the whole step), mean since the previous output");
    CHECK(app::detail::variableInfo("tendency_of_tracer_due_to_vertical_diffusion").units == "s-1");
    CHECK(app::detail::variableInfo("tendency_of_qr").standardName.empty());
    // The reference state is an output choice.
    for (char const* name : {"rho", "rho_face", "exner", "p", "p_face"}) {
        INFO(name);
        auto const choices = app::outputChoices();
        CHECK(std::find(choices.begin(), choices.end(), name) != choices.end());
    }
    CHECK(app::detail::variableInfo("exner").standardName == "dimensionless_exner_function");
    CHECK(app::detail::variableInfo("rho_face").onFaces);

    Case k("default", {"grid.horizontal.nlat=2", "grid.horizontal.nlon=1",
                       "output.variables=[T, rho, exner, tendency_of_q_due_to_large_scale_condensation, "
                       "tendency_of_q]"});
    auto const entries = k.model->restartEntries();
    for (char const* name :
         {"tendency_of_q_due_to_large_scale_condensation_sum", "tendency_of_q_due_to_large_scale_condensation_seconds",
          "tendency_of_q_sum", "tendency_of_q_seconds"}) {
        INFO(name);
        CHECK(std::any_of(entries.begin(), entries.end(), [&](app::RestartEntry const& e) { return e.name == name; }));
    }
    // The reference fields as written: the state's.
    CHECK(k.model->outputValues("rho") == app::hostValues(k.state().rho));
    CHECK(k.model->outputValues("exner") == app::hostValues(k.state().exner));
    // No tendency asked for: no entry.
    Case plain("default", {"grid.horizontal.nlat=2", "grid.horizontal.nlon=1"});
    auto const none = plain.model->restartEntries();
    CHECK(std::none_of(none.begin(), none.end(),
                       [](app::RestartEntry const& e) { return e.name.starts_with("tendency_of_"); }));
}
