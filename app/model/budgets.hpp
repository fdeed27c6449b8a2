// Conservation budgets of the model, per column, across steps and output intervals.
//
// For each followed quantity (heat, water, tracer: app/model/processes.hpp) and column the ledger keeps, since t = 0,
//   content   C(t) - C(0) = sum(rho0 (psi(t) - psi(0)) dz)  (measured from the state, with the fixed reference weights)
//   expected  E(t)        = the sum of what the processes reported entering through the boundaries or added by sources
//   gross     G(t)        = the sum of the magnitudes of those reported terms
//   moved     V(t)        = sum over steps of sum(rho0 |psi(n+1) - psi(n)| dz): what changed place inside the column
// and a residual over any interval [t1, t2] is
//   |(C(t2) - C(t1)) - (E(t2) - E(t1))| / ((G(t2) - G(t1)) + (V(t2) - V(t1)))
// the part of the content change that no process accounts for, relative to everything that crossed the column's
// boundaries, was added, or moved within it over the interval (never relative to the content itself, which would hide
// a spurious source behind a large offset). A residual is NaN if any term is NaN, and infinite when the content changed
// while nothing happened. The model fills the ledger; the ledger only does the arithmetic.
#pragma once

#include "app/model/processes.hpp"

#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace strata::app {

class BudgetLedger {
public:
    explicit BudgetLedger(uint32_t columns) {
        for (int b = 0; b < budgetCount; ++b)
            for (auto* v : {&m_expected[b], &m_gross[b], &m_moved[b], &m_content[b], &m_mark[b].content,
                            &m_mark[b].expected, &m_mark[b].scale})
                v->assign(columns, 0.0);
    }

    // After a step: the processes' terms of that step and what moved inside each column.
    void addStep(BudgetTerms const& terms, std::array<std::vector<double>, budgetCount> const& moved) {
        for (int b = 0; b < budgetCount; ++b)
            for (std::size_t c = 0; c < m_expected[b].size(); ++c) {
                m_expected[b][c] += terms.change[b][c];
                m_gross[b][c] += terms.gross[b][c];
                m_moved[b][c] += moved[b][c];
            }
    }

    // The measured content change since t = 0, per column (set before asking for residuals).
    std::vector<double>& content(Budget b) { return m_content[b]; }

    // The largest column residual since t = 0.
    double runResidual(Budget b) const {
        double worst = 0;
        for (std::size_t c = 0; c < m_content[b].size(); ++c)
            worst = worse(worst, residual(m_content[b][c], m_expected[b][c], m_gross[b][c] + m_moved[b][c]));
        return worst;
    }

    // The largest column residual since the previous call (or t = 0); starts the next interval.
    double intervalResidual(Budget b) {
        double worst = 0;
        Mark& m = m_mark[b];
        for (std::size_t c = 0; c < m_content[b].size(); ++c) {
            double const scale = m_gross[b][c] + m_moved[b][c];
            worst = worse(
                worst, residual(m_content[b][c] - m.content[c], m_expected[b][c] - m.expected[c], scale - m.scale[c]));
            m.content[c] = m_content[b][c];
            m.expected[c] = m_expected[b][c];
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
            add("expected", m_expected[b]);
            add("gross", m_gross[b]);
            add("moved", m_moved[b]);
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
    std::array<std::vector<double>, budgetCount> m_expected, m_gross, m_moved, m_content;
    std::array<Mark, budgetCount> m_mark;
};

} // namespace strata::app
