// What the model measures of itself: the column budgets (the ledger of what the processes reported against what the
// contents did, app/model/budgets.hpp), the global means and contents of an output, and the state check after every
// step. All of it is collective over the ranks and gives the same bits on any rank count.
#pragma once

#include <strata/app/model/budgets.hpp>
#include <strata/app/model/decomposition.hpp>
#include <strata/app/model/kernels.hpp>
#include <strata/app/model/process.hpp>
#include <strata/app/model/state.hpp>
#include <strata/core/comms.hpp>
#include <strata/operators/column/integrals.hpp>
#include <strata/operators/operators.hpp>

#include <array>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace strata::app {

struct GlobalDiagnostics {
    double meanT = 0;                              // K, mass- and area-weighted
    std::array<double, budgetCount> content{};     // heat J m-2, water kg m-2, tracer kg m-2: area-weighted means
    std::array<double, budgetCount> residual{};    // largest column budget residual since the previous call
    std::array<double, budgetCount> runResidual{}; // largest column budget residual since t = 0
    double analyticError = 0;                      // the case's analytic_solution: max |value - exact|; NaN without
};

// A value outside its physical range, NaN or Inf: which variable, where (global column, level) and the value.
struct StateViolation {
    std::string variable, expected;
    uint64_t column = 0;
    uint32_t level = 0;
    double value = 0;
};

// |a - b|, for the budgets' "moved" term.
struct AbsDifference {
    STRATA_HD double operator()(double a, double b) const { return a > b ? a - b : b - a; }
};

template <class Backend>
class Diagnostics {
public:
    Diagnostics(Backend backend, core::Context const& comm, Decomposition const& decomposition,
                std::vector<double> areaWeights, std::shared_ptr<ops::Grid const> const& grid)
        : m_backend(backend), m_comm(comm), m_decomp(decomposition), m_areaWeights(std::move(areaWeights)),
          m_budget(decomposition.local, Backend::memSpace), m_ledger(decomposition.local, Backend::memSpace),
          m_column(decomposition.local, Backend::memSpace), m_mass(decomposition.local, Backend::memSpace),
          m_weighted(grid, decomposition.local, Backend::memSpace),
          m_moved(budgetCount * std::size_t{decomposition.local}, Backend::memSpace) {}

    // What the processes report in a step (StepContext::budget).
    BudgetTerms& budgetTerms() { return m_budget; }
    // After a step that threw: what it had reported is dropped.
    void dropStepTerms() { m_budget = BudgetTerms(m_decomp.local, Backend::memSpace); }

    // The step's end: what changed place inside each column, sum(rho0 |psi(n+1) - psi(n)| dz) per budget, and in
    // the same launch the ledger's sums of the step (and the step's budget terms zeroed for the next step).
    void afterStep(State& s) {
        auto const& u = s.now;
        auto const& u0 = s.start;
        static_assert(HeatBudget == 0 && WaterBudget == 1 && TracerBudget == 2, "m_moved's order is the budgets'");
        ops::columnIntegralsOfThen(m_backend, m_weighted, m_moved, m_ledger.afterStep(m_budget, m_moved),
                                   s.rho * (map(AbsDifference{}, u.T, u0.T) / s.exner) * constants::cp,
                                   s.rho * ((map(AbsDifference{}, u.q, u0.q) + map(AbsDifference{}, u.qc, u0.qc)) +
                                            map(AbsDifference{}, u.qr, u0.qr)),
                                   s.rho * map(AbsDifference{}, u.tracer, u0.tracer));
    }

    // Mass-weighted column means, then area-weighted: sums that do not depend on the decomposition. The budget
    // residuals since the previous call and since t = 0; analyticError is left to the caller.
    GlobalDiagnostics measure(State& s) {
        GlobalDiagnostics d;
        std::vector<double> area(m_areaWeights);
        double const totalArea = m_comm.sum(area);
        integrate(s.rho * s.now.T, m_column);
        integrate(s.rho * 1.0, m_mass);
        d.meanT = areaSum(m_column) / areaSum(m_mass);
        integrate(s.rho * (s.now.T / s.exner) * constants::cp, m_column);
        d.content[HeatBudget] = areaSum(m_column) / totalArea;
        integrate(s.rho * ((s.now.q + s.now.qc) + s.now.qr), m_column);
        d.content[WaterBudget] = areaSum(m_column) / totalArea;
        integrate(s.rho * s.now.tracer, m_column);
        d.content[TracerBudget] = areaSum(m_column) / totalArea;

        // The budgets: the content change since t = 0, from the differences to the initial state.
        auto const& i = s.initial;
        integrate(s.rho * ((s.now.T - i.T) / s.exner) * constants::cp, m_column);
        toLedger(HeatBudget);
        integrate(s.rho * (((s.now.q - i.q) + (s.now.qc - i.qc)) + (s.now.qr - i.qr)), m_column);
        toLedger(WaterBudget);
        integrate(s.rho * (s.now.tracer - i.tracer), m_column);
        toLedger(TracerBudget);
        double global[2 * budgetCount];
        m_ledger.toHost();
        for (int b = 0; b < budgetCount; ++b) {
            global[b] = m_ledger.intervalResidual(Budget(b));
            global[budgetCount + b] = m_ledger.runResidual(Budget(b));
        }
        m_comm.max(global); // a NaN residual on any rank stays NaN: a failure no comparison can hide
        for (int b = 0; b < budgetCount; ++b) {
            d.residual[b] = global[b];
            d.runResidual[b] = global[budgetCount + b];
        }
        return d;
    }

    // The state check run after every step over the catalogue's checked variables (app/model/variables.hpp), with
    // the ranges the processes widened: one kernel finds, per column, the first variable (in the catalogue's order)
    // with a value out of its range, NaN or Inf (RangeCheck); one value per column to the host, and one reduction over
    // the ranks. Every rank gets the same answer: the first variable out of range, in its lowest global column, at
    // the lowest level.
    template <class Processes>
    std::optional<StateViolation> checkState(State& s, Processes const& processes) {
        auto const checks = stateChecks(s, processes);
        constexpr double none = std::numeric_limits<double>::infinity();
        auto body = [&](std::size_t i) {
            return RangeCheck{std::as_const(*checks[i].field).view(), checks[i].lo, checks[i].hi,
                              static_cast<double>(i), m_column.device()};
        };
        [&]<std::size_t... I>(std::index_sequence<I...>) {
            ops::columnKernel<double>(m_backend, m_decomp.local, s.grid->cells(), body(I)...);
        }
        (std::make_index_sequence<checkedCount()>{});
        m_column.toHost();
        double mine = none; // variable index * 2^40 + global column of this rank's first violation
        for (uint32_t c = 0; c < m_decomp.local; ++c)
            if (m_column.host()[c] < none)
                mine = std::min(mine, m_column.host()[c] * 0x1p40 + static_cast<double>(m_decomp.first + c));
        double const first = m_comm.min(mine);
        if (first == none) return std::nullopt;
        auto const index = static_cast<std::size_t>(first / 0x1p40);
        auto const& b = checks[index];
        StateViolation v{b.name, b.expected, static_cast<uint64_t>(first - static_cast<double>(index) * 0x1p40), 0, 0};
        // The rank holding that column finds the level; the others contribute -inf (a NaN value survives the max).
        double where[2] = {-none, -none};
        if (mine == first) {
            CenterField& f = *b.field;
            f.toHost();
            auto const c = static_cast<uint32_t>(v.column - m_decomp.first);
            for (uint32_t k = 0; k < f.levels(); ++k)
                if (!(f.at(c, k) >= b.lo && f.at(c, k) <= b.hi)) {
                    where[0] = k;
                    where[1] = f.at(c, k);
                    break;
                }
        }
        m_comm.max(where);
        v.level = static_cast<uint32_t>(where[0]);
        v.value = where[1];
        return v;
    }

    // The area-weighted global mean of a per-column value of the local columns (the same bits on any rank count).
    double globalMean(std::vector<double> const& perColumn) const {
        std::vector<double> weighted(perColumn.size()), area(m_areaWeights);
        for (std::size_t c = 0; c < perColumn.size(); ++c)
            weighted[c] = perColumn[c] * m_areaWeights[c];
        return m_comm.sum(weighted) / m_comm.sum(area);
    }

    void restartEntries(std::vector<RestartEntry>& entries) { m_ledger.restartEntries(entries); }

private:
    struct StateCheck {
        std::string name;
        CenterField* field;
        double lo, hi;
        std::string expected;
    };
    // The catalogue's ranges, or a process's wider one (Process::widenedRange).
    template <class Processes>
    static std::array<StateCheck, checkedCount()> stateChecks(State& s, Processes const& processes) {
        std::array<StateCheck, checkedCount()> checks;
        for (std::size_t i = 0; i < checkedCount(); ++i) {
            VariableInfo const& v = checkedVariable(i);
            checks[i] = {std::string(v.name), s.center(v.name), v.lo, v.hi, std::string(v.expected)};
            for (auto const& p : processes)
                if (auto const wider = p->widenedRange(v.name))
                    checks[i] = {checks[i].name, checks[i].field, wider->lo, wider->hi, wider->expected};
        }
        return checks;
    }

    template <class E>
    void integrate(E const& expr, core::Buffer<double>& out) {
        ops::evaluate(m_backend, m_weighted, expr, ops::Engine::Direct);
        ops::columnIntegral(m_backend, m_weighted, out);
    }
    double areaSum(core::Buffer<double>& perColumn) {
        perColumn.toHost();
        std::vector<double> x(m_decomp.local);
        for (uint32_t c = 0; c < m_decomp.local; ++c)
            x[c] = perColumn.host()[c] * m_areaWeights[c];
        return m_comm.sum(x);
    }
    void toLedger(Budget b) {
        m_column.toHost();
        auto& content = m_ledger.content(b);
        std::copy(m_column.host().begin(), m_column.host().end(), content.begin());
    }

    Backend m_backend;
    core::Context const& m_comm;
    Decomposition m_decomp;
    std::vector<double> m_areaWeights;
    BudgetTerms m_budget;
    BudgetLedger m_ledger;
    core::Buffer<double> m_column, m_mass;
    CenterField m_weighted;
    core::Buffer<double> m_moved; // budgetCount x columns: what moved inside each column in the step
};

} // namespace strata::app
