// The process interface: what the driver (app/model/model.hpp) sees of a physical process, and what a process gets.
//
// A process is one file (app/processes/*.hpp, or a user's own): its settings struct with its schema
// (app/process_settings.hpp), the fields of the model state it reads, adds tendencies to or adjusts, with their units
// (fields()), the output variables it makes (its settings' outputs()), its kernels and its class. The driver consumes
// the declarations:
//   - a declared field must be a variable of the catalogue (app/model/variables.hpp) with the catalogue's units;
//   - the process reaches the state's fields through its ProcessEnv, which hands out declared fields alone (a process
//     that asks for another is refused when the model is made, naming the field), and through the stage's prognostic
//     variables and tendencies handed to addTendencies and implicitStep (which a check can hold to the declarations:
//     Stepper::checkWrites);
//   - addTendencies is called only for a process that declares a tendency, implicitStep only for one that declares
//     an adjustment; every call is timed and counted by the stepper, so a process holds its physics only.
//
// A process may add explicit tendencies of the prognostic variables (called once per Runge-Kutta stage), take an
// implicit step after the explicit part, check its own stability limit before the run starts, and state what it adds
// to the column budgets. The budgets follow column contents with the fixed weights of the anelastic reference state
// (app/model/state.hpp):
//   heat    H = cp * sum(rho0 * theta * dz)   (J m-2; theta = T / exner0)
//   water   W = sum(rho0 * q * dz)            (kg m-2)
//   tracer  M = sum(rho0 * tracer * dz)
// A process reports what crossed the column's boundaries (diffusion: the surface fluxes) and what its sources added
// (Held-Suarez: the integral of its heating; subsidence: the lateral inflow that balances its divergent mass flux),
// each computed from its own formula, not from the change of the state. The model compares these with the change of
// the contents across steps and output intervals (app/model/budgets.hpp).
#pragma once

#include <strata/app/config.hpp>
#include <strata/app/io/restart.hpp>
#include <strata/app/model/column_sums.hpp>
#include <strata/app/model/kernels.hpp>
#include <strata/app/model/state.hpp>
#include <strata/app/model/variables.hpp>
#include <strata/core/error.hpp>
#include <strata/operators/column/integrals.hpp>
#include <strata/operators/operators.hpp>

#include <algorithm>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace strata::app {

// How a process uses a field of the state.
enum class Access {
    Reads,    // reads it (a reference field, or a prognostic variable's current value)
    Tendency, // adds explicit tendencies to it, every Runge-Kutta stage (addTendencies)
    Adjusts,  // changes it after the explicit part of the step (implicitStep)
};
inline constexpr char const* accessText(Access a) {
    return a == Access::Reads ? "reads" : a == Access::Tendency ? "tendency of" : "adjusts";
}

struct FieldDecl {
    std::string name, units;
    Access access;
};

// The quantities the budgets follow.
enum Budget : int { HeatBudget = 0, WaterBudget = 1, TracerBudget = 2 };
inline constexpr int budgetCount = 3;
inline constexpr char const* budgetNames[budgetCount] = {"heat", "water", "tracer"};

// Per-column budget terms of one step, reported by the processes, in the backend's memory (budgetCount x columns
// each): `change` is what they say entered or was added, `gross` the sum of the magnitudes of those terms (what
// crossed, whatever its sign). A process adds its terms with addColumnTerms (app/model/column_sums.hpp), in a kernel;
// the ledger folds them into its sums after the step and zeroes them (app/model/budgets.hpp). Nothing is copied.
struct BudgetTerms {
    uint32_t columns;
    core::Buffer<double> change, gross;
    BudgetTerms(uint32_t columns, core::MemSpace space)
        : columns(columns), change(budgetCount * std::size_t{columns}, space, 0.0),
          gross(budgetCount * std::size_t{columns}, space, 0.0) {}
    // `t` as a term of budget b: its amount into `change`, its magnitude into `gross`.
    ColumnTerm term(Budget b, ColumnTerm t) {
        t.sum = change.device() + std::size_t{columns} * b;
        t.gross = gross.device() + std::size_t{columns} * b;
        return t;
    }
    // scale x perColumn[c] entered column c.
    ColumnTerm term(Budget b, core::Buffer<double> const& perColumn, double scale) {
        return term(b, columnTerm(perColumn, scale));
    }
};

class StabilityError : public Error {
public:
    using Error::Error;
};

template <class Backend>
struct StepContext {
    Backend backend;
    ops::Engine engine;
    double dt;
    std::shared_ptr<ops::Grid const> grid;
    uint32_t columns;
    CenterField& scratch; // one center field a process may use within one call
    BudgetTerms& budget;
    double time = 0; // s: the model time of the step's start, or of the Runge-Kutta stage being evaluated
    // The largest value over every rank's columns (a collective call: every rank makes it, in the same order), for
    // choices that must not depend on the decomposition (sub-steps). Identity on one rank or when unset.
    std::function<double(double)> globalMax = [](double x) { return x; };
};

// A process's share of the model step's cost model (docs/performance.md, "The model step against its cost model"),
// per step, per cell (column x level) and per column (surface and boundary work):
//   bytes            the least the process moves as the step is structured, one pass over the fields per call (three
//                    Runge-Kutta stages for explicit tendencies, one call for an implicit step or a step set-up):
//                    every field a call needs read once, every field it changes read and written once, 8 bytes a
//                    value; temporaries (scratch fields, tridiagonal coefficients, staged values) are assumed to stay
//                    in fast memory. What the process moves beyond that is what fusion could save.
//   transcendentals  exp, log, pow, sin, cos and sqrt the process evaluates per step, as implemented.
struct StepCost {
    double bytesPerCell = 0, bytesPerColumn = 0;
    double transcendentalsPerCell = 0, transcendentalsPerColumn = 0;
    std::string basis; // what was counted, in words
};
// SSP-RK3's stability interval on the negative real axis, [-2.5127, 0] (R(z) = 1 + z + z^2/2 + z^3/6, |R| = 1): a
// linear decay at rate k is stable for k dt up to this (Process::checkStability).
inline constexpr double rk3RealAxisLimit = 2.512745326618163;

// A state check's range of a variable, when a process allows more than the catalogue's (Process::widenedRange).
struct ValidRange {
    double lo, hi;
    std::string expected;
};

template <class Backend>
class Process {
public:
    virtual ~Process() = default;
    virtual std::string name() const = 0;
    // The fields of the state this process uses (app/model/variables.hpp names and units); see the header comment.
    std::vector<FieldDecl> const& fields() const { return m_fields; }
    virtual void checkStability(StepContext<Backend>&) {}
    virtual void prepareStep(StepContext<Backend>&) {}
    // Adds this process's tendencies of `u` to `t`. `weight` = dt times the stage's weight in the step.
    virtual void addTendencies(StepContext<Backend>&, Prognostics const& /*u*/, Prognostics& /*t*/, double /*weight*/) {
    }
    virtual void implicitStep(StepContext<Backend>&, Prognostics& /*u*/) {}
    // The values of one of its output variables (its settings' outputs()): level-contiguous per column for face
    // variables, one per column for surface ones (means since the previous call). False: none of that name.
    virtual bool output(std::string_view /*name*/, std::vector<double>& /*values*/) { return false; }
    // What an output variable this process makes is in this case, for the file's long_name ("rain reaching the
    // ground (Kessler warm rain)"); empty: the catalogue's generic long_name.
    virtual std::string outputLongName(std::string const& /*name*/) const { return {}; }
    // A wider range than the catalogue's for the state check of a variable (a scheme that undershoots a little).
    virtual std::optional<ValidRange> widenedRange(std::string_view /*variable*/) const { return std::nullopt; }
    // State the process carries from step to step (running means), for restart files; most carry none.
    virtual void restartEntries(std::vector<RestartEntry>&) {}
    // Its share of the step's cost model (StepCost); a process that states none counts as free.
    virtual StepCost stepCost() const { return {0, 0, 0, 0, "not stated"}; }

    bool declares(Access access) const {
        return std::any_of(m_fields.begin(), m_fields.end(), [&](FieldDecl const& d) { return d.access == access; });
    }

protected:
    explicit Process(std::vector<FieldDecl> fields) : m_fields(std::move(fields)) {}

private:
    std::vector<FieldDecl> m_fields;
};

// What a process is made with: the backend, the grid and the fields of the state it declared. Asking for a field it
// did not declare, or in another staggering than the catalogue's, is an Error naming the process and the field.
template <class Backend>
class ProcessEnv {
public:
    ProcessEnv(std::string process, std::vector<FieldDecl> declared, State& state, Backend const& backend)
        : m_process(std::move(process)), m_declared(std::move(declared)), m_state(state), m_backend(backend) {}

    std::vector<FieldDecl> const& declared() const { return m_declared; }
    Backend const& backend() const { return m_backend; }
    std::shared_ptr<ops::Grid const> const& grid() const { return m_state.grid; }
    uint32_t columns() const { return m_state.columns; }
    core::MemSpace space() const { return m_state.space; }

    // A cell-centered field: a reference-state field ("rho") or a prognostic variable's current value ("u").
    CenterField& center(std::string_view name) const { return *m_state.center(require(name, Staggering::Center)); }
    FaceField& face(std::string_view name) const { return *m_state.face(require(name, Staggering::Face)); }
    core::Buffer<double>& perColumn(std::string_view name) const {
        return *m_state.perColumn(require(name, Staggering::Column));
    }

private:
    std::string_view require(std::string_view name, Staggering where) const {
        bool const declared =
            std::any_of(m_declared.begin(), m_declared.end(), [&](FieldDecl const& d) { return d.name == name; });
        if (!declared)
            throw Error("process '" + m_process + "' asks for '" + std::string(name) +
                            "', which its fields() does not "
                            "declare",
                        "processes." + m_process,
                        "every field a process reads or changes declared in its fields(), with its units");
        VariableInfo v{};
        if (!findVariable(name, v) || v.where != where)
            throw Error("process '" + m_process + "' asks for '" + std::string(name) + "' as a " +
                            (where == Staggering::Face     ? "face"
                             : where == Staggering::Center ? "center"
                                                           : "column") +
                            " field, which the state has not",
                        "processes." + m_process, "a field of the variable catalogue (app/model/variables.hpp)");
        return name;
    }

    std::string m_process;
    std::vector<FieldDecl> m_declared;
    State& m_state;
    Backend m_backend;
};

// A field's values on the host, level-contiguous per column without padding (output and restart files).
template <class F>
std::vector<double> hostValues(F& field) {
    field.toHost();
    std::vector<double> out;
    out.reserve(std::size_t{field.columns()} * field.levels());
    for (uint32_t c = 0; c < field.columns(); ++c)
        out.insert(out.end(), field.column(c).begin(), field.column(c).end());
    return out;
}

// Refuses a process whose declarations the catalogue does not know, or whose units differ from the catalogue's.
inline void checkDeclarations(std::string const& process, std::vector<FieldDecl> const& fields) {
    for (auto const& d : fields) {
        VariableInfo v{};
        if (!findVariable(d.name, v) || v.source == Source::Process || v.source == Source::Diagnostic)
            throw Error("process '" + process + "' declares '" + d.name + "', which is not a field of the state",
                        "processes." + process, "a prognostic or reference variable of app/model/variables.hpp");
        if (v.units != d.units)
            throw Error("process '" + process + "' declares '" + d.name + "' in " + d.units +
                            ", the state holds it in " + std::string(v.units),
                        "processes." + process, "the catalogue's units");
        if (d.access != Access::Reads && v.source != Source::Prognostic)
            throw Error("process '" + process + "' declares that it " + accessText(d.access) + " '" + d.name +
                            "', which is fixed in time",
                        "processes." + process, "tendencies and adjustments of prognostic variables only");
    }
}

} // namespace strata::app
