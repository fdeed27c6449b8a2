// Per-column running sums kept in the backend's memory, and the one kernel that adds to them.
//
// The processes report what entered each column (the budgets' terms, app/model/budgets.hpp) and what fell out or
// crossed the surface (the surface means written as output) as per-column amounts. Those amounts are made on the
// device (column integrals, surface kernels), and so are the sums they go into: a step adds them with one small kernel
// per batch of terms and copies nothing to the host. The host reads the sums only when it needs them (an output
// record, a restart file, the budget residuals), with one copy each.
#pragma once

#include <strata/app/io/restart.hpp>
#include <strata/core/memory.hpp>
#include <strata/operators/engine.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <vector>

namespace strata::app {

// One per-column amount and where it goes. For column c:
//   value     = values[c * stride + offset], less values[c * stride + minusOffset] when `difference` is set
//   amount    = ((scale * value) / divisor) * factor, divisor = divisorField[c * divisorStride] when that is set
//   sum[c]   += amount, and gross[c] += |amount| when `gross` is set
// A scale, divisor or factor of 1 changes no bit (IEEE multiplication and division by 1 are exact), so a term
// written in the order the host wrote it (dt cp h / exner0 is scale dt cp, divisor exner0; rain / dt * dt is divisor dt
// and factor dt) gives the bits the host loop gave.
struct ColumnTerm {
    double* sum = nullptr;
    double* gross = nullptr;
    double const* values = nullptr;
    uint32_t stride = 1, offset = 0;
    bool difference = false;
    uint32_t minusOffset = 0;
    double scale = 1;
    double const* divisorField = nullptr;
    uint32_t divisorStride = 0;
    double divisor = 1, factor = 1;

    STRATA_HD double amount(uint32_t c) const {
        double const* v = values + std::size_t{c} * stride;
        double const value = difference ? v[offset] - v[minusOffset] : v[offset];
        double const d = divisorField != nullptr ? divisorField[std::size_t{c} * divisorStride] : divisor;
        return ((scale * value) / d) * factor;
    }
};

// A term whose value is buf[c] (a per-column buffer in the backend's memory), times `scale`.
inline ColumnTerm columnTerm(core::Buffer<double> const& buf, double scale = 1.0) {
    ColumnTerm t;
    t.values = buf.device();
    t.scale = scale;
    return t;
}

// A batch of terms added over the columns, in the order given (the order matters only for terms that add to the same
// sum, and it is the order the processes report in): in a kernel of its own (addColumnTerms), or in the launch of the
// integrals it adds (ops::columnIntegralsOfThen, which runs it for each column after writing its integrals).
struct AddColumnTerms {
    static constexpr int capacity = 8;
    ColumnTerm terms[capacity];
    int count = 0;
    void add(ColumnTerm const& t) {
        if (count == capacity) throw std::logic_error("AddColumnTerms: more than 8 terms in one batch");
        terms[count++] = t;
    }
    STRATA_HD void operator()(uint32_t c) const {
        for (int i = 0; i < count; ++i) {
            ColumnTerm const t = terms[i]; // a local copy: the stores below cannot alias it, so nothing is reloaded
            double const a = t.amount(c);
            t.sum[c] += a;
            if (t.gross != nullptr) t.gross[c] += std::fabs(a);
        }
    }
    STRATA_HD void operator()(uint32_t c, uint32_t) const { (*this)(c); }
};

template <class Backend>
void addColumnTerms(Backend const& backend, uint32_t columns, AddColumnTerms const& batch) {
    if (batch.count > 0) ops::forEachPoint(backend, columns, 1, batch);
}
inline AddColumnTerms columnTerms(std::initializer_list<ColumnTerm> terms) {
    AddColumnTerms batch;
    for (auto const& t : terms)
        batch.add(t);
    return batch;
}
template <class Backend>
void addColumnTerms(Backend const& backend, uint32_t columns, std::initializer_list<ColumnTerm> terms) {
    addColumnTerms(backend, columns, columnTerms(terms));
}

// A per-column kernel (one worker per column: ops::forEachPoint over one level) and then a batch of terms of what
// it just wrote for that column, in one launch: addColumnTerms(backend, columns, kernel, terms).
template <class Kernel>
struct KernelThenTerms {
    Kernel kernel;
    AddColumnTerms terms;
    STRATA_HD void operator()(uint32_t c, uint32_t k) const {
        kernel(c, k);
        terms(c);
    }
};
template <class Backend, class Kernel>
void addColumnTerms(Backend const& backend, uint32_t columns, Kernel const& kernel,
                    std::initializer_list<ColumnTerm> terms) {
    ops::forEachPoint(backend, columns, 1, KernelThenTerms<Kernel>{kernel, columnTerms(terms)});
}

// A restart entry for a per-column buffer in the backend's memory: read back from the device when written, copied to
// the device when read (the whole buffer, which must be one value per local column).
inline RestartEntry bufferRestartEntry(std::string const& name, core::Buffer<double>& buf) {
    return {name, 1,
            [&buf] {
                buf.toHost();
                return std::vector<double>(buf.host().begin(), buf.host().end());
            },
            [&buf, name](std::vector<double> const& v) {
                if (v.size() != buf.size())
                    throw RestartError(name + " holds " + std::to_string(v.size()) + " values", "the restart file",
                                       std::to_string(buf.size()) + " values, one per local column");
                std::copy(v.begin(), v.end(), buf.host().begin());
                buf.toDevice();
            }};
}

// A per-column sum of rate x dt since the last output, and the seconds it covers: the mean of a surface flux over
// an output interval. The sum lives in the backend's memory (added to by addColumnTerms); the seconds on the host.
struct ColumnMean {
    core::Buffer<double> sum;
    double seconds = 0;
    ColumnMean(uint32_t columns, core::MemSpace space) : sum(columns, space, 0.0) {}
    // rate(c) x dt into the sum, where rate(c) = scale x buf[c] (or (buf[c] / divisor) when a divisor is given).
    ColumnTerm adding(core::Buffer<double> const& buf, double scale, double dt, double divisor = 1.0) {
        ColumnTerm t = columnTerm(buf, scale);
        t.sum = sum.device();
        t.divisor = divisor;
        t.factor = dt;
        return t;
    }
    ColumnTerm adding(ColumnTerm t, double dt) {
        t.sum = sum.device();
        t.factor = dt;
        return t;
    }
    void tick(double dt) { seconds += dt; }
    // For restart files: the sum per column and the seconds it covers.
    void restartEntries(std::string const& name, std::vector<RestartEntry>& entries) {
        entries.push_back(bufferRestartEntry(name + "_sum", sum));
        entries.push_back({name + "_seconds", 0, [this] { return std::vector<double>{seconds}; },
                           [this](std::vector<double> const& v) { seconds = v.at(0); }});
    }
    // The mean since the previous call (0 before any time has passed), and a fresh start.
    void takeMean(std::vector<double>& out) {
        sum.toHost();
        auto const s = sum.host();
        out.resize(s.size());
        for (std::size_t c = 0; c < s.size(); ++c)
            out[c] = seconds > 0 ? s[c] / seconds : 0.0;
        std::fill(s.begin(), s.end(), 0.0);
        sum.toDevice();
        seconds = 0;
    }
};

} // namespace strata::app
