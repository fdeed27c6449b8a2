// Conservation budgets of the model, per column, across steps and output intervals.
//
// For each followed quantity (heat, water, tracer: app/model/process.hpp) and column the ledger keeps, since t = 0,
//   content   C(t) - C(0) = sum(rho0 (psi(t) - psi(0)) dz)  (measured from the state, with the fixed reference weights)
//   expected  E(t)        = the sum of what the processes reported entering through the boundaries or added by sources
//   gross     G(t)        = the sum of the magnitudes of those reported terms
//   moved     V(t)        = sum over steps of sum(rho0 |psi(n+1) - psi(n)| dz): what changed place inside the column
// and a residual over any interval [t1, t2] is
//   |(C(t2) - C(t1)) - (E(t2) - E(t1))| / ((G(t2) - G(t1)) + (V(t2) - V(t1)))
// the part of the content change that no process accounts for, relative to everything that crossed the column's
// boundaries, was added, or moved within it over the interval (never relative to the content itself, which would hide
// a spurious source behind a large offset). A residual is NaN if any term is NaN, and infinite when the content changed
// while nothing happened. The model fills the ledger; the ledger only does the arithmetic. E, G and V are summed on
// the device after every step (no copy); the host reads them when it asks for residuals or writes a restart.
#pragma once

#include <strata/app/model/process.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace strata::app {

// The ledger's running sums after a step, for column c and every budget: expected += change, gross += gross of the
// step, moved += moved of the step; the step's terms are zeroed for the next step. Run in the launch that integrates
// the step's "moved" (ops::columnIntegralsOfThen, Model::step), after the column's integrals are written.
struct LedgerStep {
    double* expected[budgetCount];
    double* gross[budgetCount];
    double* moved[budgetCount];
    double* stepChange;      // budgetCount x columns (BudgetTerms)
    double* stepGross;       // budgetCount x columns (BudgetTerms)
    double const* stepMoved; // budgetCount x columns
    uint32_t columns;
    STRATA_HD void operator()(uint32_t c) const {
        for (int b = 0; b < budgetCount; ++b) {
            std::size_t const i = std::size_t{columns} * b + c;
            expected[b][c] += stepChange[i];
            gross[b][c] += stepGross[i];
            moved[b][c] += stepMoved[i];
            stepChange[i] = 0.0;
            stepGross[i] = 0.0;
        }
    }
};

class BudgetLedger {
public:
    BudgetLedger(uint32_t columns, core::MemSpace space) : m_columns(columns) {
        for (int b = 0; b < budgetCount; ++b) {
            for (auto* v : {&m_expected[b], &m_gross[b], &m_moved[b]})
                *v = core::Buffer<double>(columns, space, 0.0);
            for (auto* v : {&m_content[b], &m_mark[b].content, &m_mark[b].expected, &m_mark[b].scale})
                v->assign(columns, 0.0);
        }
    }

    // What adds a step to the ledger: the processes' terms of that step and what moved inside each column
    // (budgetCount x columns, both in the backend's memory) into the running sums; the terms zeroed for the next step.
    LedgerStep afterStep(BudgetTerms& terms, core::Buffer<double> const& moved) {
        LedgerStep k{};
        for (int b = 0; b < budgetCount; ++b) {
            k.expected[b] = m_expected[b].device();
            k.gross[b] = m_gross[b].device();
            k.moved[b] = m_moved[b].device();
        }
        k.stepChange = terms.change.device();
        k.stepGross = terms.gross.device();
        k.stepMoved = moved.device();
        k.columns = m_columns;
        return k;
    }

    // The running sums to the host: before asking for residuals.
    void toHost() {
        for (int b = 0; b < budgetCount; ++b)
            for (auto* v : {&m_expected[b], &m_gross[b], &m_moved[b]})
                v->toHost();
    }

    // The measured content change since t = 0, per column (set before asking for residuals).
    std::vector<double>& content(Budget b) { return m_content[b]; }

    // The largest column residual since t = 0 (after toHost()).
    double runResidual(Budget b) const {
        double worst = 0;
        auto const expected = m_expected[b].host(), gross = m_gross[b].host(), moved = m_moved[b].host();
        for (std::size_t c = 0; c < m_content[b].size(); ++c)
            worst = worse(worst, residual(m_content[b][c], expected[c], gross[c] + moved[c]));
        return worst;
    }

    // The largest column residual since the previous call (or t = 0), after toHost(); starts the next interval.
    double intervalResidual(Budget b) {
        double worst = 0;
        Mark& m = m_mark[b];
        auto const expected = m_expected[b].host(), gross = m_gross[b].host(), moved = m_moved[b].host();
        for (std::size_t c = 0; c < m_content[b].size(); ++c) {
            double const scale = gross[c] + moved[c];
            worst =
                worse(worst, residual(m_content[b][c] - m.content[c], expected[c] - m.expected[c], scale - m.scale[c]));
            m.content[c] = m_content[b][c];
            m.expected[c] = expected[c];
            m.scale[c] = scale;
        }
        return worst;
    }

    // For restart files: what the ledger carries from step to step (the measured content is recomputed).
    void restartEntries(std::vector<RestartEntry>& entries) {
        for (int b = 0; b < budgetCount; ++b) {
            std::string const name = std::string("budget_") + budgetNames[b];
            auto add = [&](std::string const& what, std::vector<double>& v) {
                entries.push_back(
                    {name + "_" + what, 1, [&v] { return v; }, [&v](std::vector<double> const& x) { v = x; }});
            };
            auto addSum = [&](std::string const& what, core::Buffer<double>& v) {
                entries.push_back(bufferRestartEntry(name + "_" + what, v));
            };
            addSum("expected", m_expected[b]);
            addSum("gross", m_gross[b]);
            addSum("moved", m_moved[b]);
            add("mark_content", m_mark[b].content);
            add("mark_expected", m_mark[b].expected);
            add("mark_scale", m_mark[b].scale);
        }
    }

    static double residual(double change, double expected, double scale) {
        double const r = std::fabs(change - expected);
        if (std::isnan(r) || std::isnan(scale)) return std::numeric_limits<double>::quiet_NaN();
        if (r == 0) return 0;
        return scale > 0 ? r / scale : std::numeric_limits<double>::infinity();
    }

private:
    // The larger of two residuals, NaN winning: a NaN is never hidden by a comparison.
    static double worse(double a, double b) { return std::isnan(a) || std::isnan(b) ? std::nan("") : std::max(a, b); }

    struct Mark {
        std::vector<double> content, expected, scale;
    };
    uint32_t m_columns;
    std::array<core::Buffer<double>, budgetCount> m_expected, m_gross, m_moved; // in the backend's memory
    std::array<std::vector<double>, budgetCount> m_content;                     // host: set before the residuals
    std::array<Mark, budgetCount> m_mark;
};

} // namespace strata::app
