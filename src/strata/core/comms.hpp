// comms: the MPI context and reductions whose bits do not depend on how the data is split.
//
// `Context` initialises MPI on construction (unless something else already did) and finalises it on destruction. It
// gives rank and size in its communicator, the node-local rank (ranks sharing a node are numbered 0..n-1), and the
// GPU a rank should use: node-local rank modulo the devices it sees.
//
// `ReproducibleSum` adds doubles exactly: each value is split into 32-bit digits of a 2^-1152 .. 2^1056 fixed-point
// number held in 64-bit integers (a carry-save long accumulator), so adding is integer addition, which is associative.
// The total, however it is split over ranks, threads or calls, is the same set of integers, and its one rounding to
// double happens at the end. `Context::sum` is the global version: the same bits for 1, 2 or 3 ranks.
#pragma once

#include <cstdint>
#include <mpi.h>
#include <span>
#include <string>
#include <vector>

namespace strata::core {

class ReproducibleSum {
public:
    static constexpr int numDigits = 69; // 32-bit digits: weights 2^(32k - 1152), k = 0..68
    ReproducibleSum();

    void add(double x);
    void add(std::span<double const> xs) {
        for (double x : xs)
            add(x);
    }
    void merge(ReproducibleSum const& other);
    double value() const; // the exact sum, correctly rounded to double (to nearest, ties to even)

    // The accumulator as integers, for MPI reductions: digits then the NaN/+inf/-inf counters.
    static constexpr int wireSize = numDigits + 3;
    std::vector<int64_t> toWire() const;
    static ReproducibleSum fromWire(std::span<int64_t const> wire);

private:
    void normalise(); // carry propagation: keeps every digit well inside int64 range
    int64_t m_digit[numDigits];
    int64_t m_nan = 0, m_posInf = 0, m_negInf = 0;
    uint32_t m_sinceNormalise = 0;
};

class Context {
public:
    explicit Context(MPI_Comm comm = MPI_COMM_WORLD);
    Context(int* argc, char*** argv, MPI_Comm comm = MPI_COMM_WORLD);
    ~Context();
    Context(Context const&) = delete;
    Context& operator=(Context const&) = delete;

    int rank() const { return m_rank; }
    int size() const { return m_size; }
    int localRank() const { return m_localRank; }
    int localSize() const { return m_localSize; }
    bool isRoot() const { return m_rank == 0; }
    MPI_Comm comm() const { return m_comm; }
    int deviceFor(int numDevices) const { return numDevices > 0 ? m_localRank % numDevices : -1; }

    double sum(std::span<double const> local) const; // reproducible global sum
    // Element-wise global maximum / minimum of `values` (in place) over the ranks. Exact, so reproducible. A NaN on
    // any rank makes the result NaN (MPI_MAX alone leaves that to the implementation).
    void max(std::span<double> values) const;
    void min(std::span<double> values) const;
    double max(double local) const;
    double min(double local) const;
    void barrier() const;

private:
    void init(int* argc, char*** argv);
    MPI_Comm m_comm;
    bool m_ownsMpi = false;
    int m_rank = 0, m_size = 1, m_localRank = 0, m_localSize = 1;
};

// Text across ranks, for errors that every rank must raise alike (an error on one rank must not leave the others
// waiting in a collective):
//   broadcast(comm, text, root)   every rank gets root's text;
//   firstProblem(comm, problem)   every rank passes its problem (empty: none) and gets the lowest failing rank and its
//                                 problem, or {size, ""} when no rank failed.
struct RankProblem {
    int rank;
    std::string problem;
};
void broadcast(MPI_Comm comm, std::string& text, int root = 0);
RankProblem firstProblem(MPI_Comm comm, std::string problem);

} // namespace strata::core
