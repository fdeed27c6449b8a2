#include <strata/core/comms.hpp>

#include <strata/core/error.hpp>

#include <cmath>
#include <cstring>
#include <limits>

namespace strata::core {

namespace {
__extension__ typedef unsigned __int128 u128; // GCC/Clang 128-bit integer (exact shifts of 53+31 bits)
constexpr int digitBits = 32;
constexpr int lowestExponent = -1152; // weight of digit 0: below 2^-1126, the lowest mantissa bit of any double
                                      // (DBL_TRUE_MIN after frexp normalises it)
constexpr int64_t digitBase = int64_t{1} << digitBits;
// A digit receives at most 2^32 per add; normalising every 2^29 adds keeps |digit| < 2^62.
constexpr uint32_t normaliseEvery = 1u << 29;
} // namespace

ReproducibleSum::ReproducibleSum() { std::memset(m_digit, 0, sizeof(m_digit)); }

void ReproducibleSum::add(double x) {
    if (std::isnan(x)) {
        ++m_nan;
        return;
    }
    if (std::isinf(x)) {
        ++(x > 0 ? m_posInf : m_negInf);
        return;
    }
    if (x == 0.0) return;
    int exp = 0;
    double const frac = std::frexp(std::fabs(x), &exp); // |x| = frac * 2^exp, frac in [0.5, 1)
    // |x| = mantissa * 2^(exp - 53) with an exact 53-bit integer mantissa.
    auto mantissa = static_cast<uint64_t>(std::ldexp(frac, 53));
    int const shift = exp - 53 - lowestExponent; // bit position of the mantissa's lowest bit
    int const digit = shift / digitBits;
    int const offset = shift % digitBits;
    // 53 + 31 bits span at most three 32-bit digits.
    u128 const wide = static_cast<u128>(mantissa) << offset;
    int64_t const sign = x < 0 ? -1 : 1;
    for (int k = 0; k < 3 && digit + k < numDigits; ++k) {
        auto const part = static_cast<int64_t>(static_cast<uint64_t>(wide >> (digitBits * k)) & (digitBase - 1));
        m_digit[digit + k] += sign * part;
    }
    if (++m_sinceNormalise >= normaliseEvery) normalise();
}

void ReproducibleSum::normalise() {
    for (int k = 0; k + 1 < numDigits; ++k) {
        int64_t const carry = m_digit[k] >> digitBits; // floor division: keeps 0 <= digit < 2^32
        m_digit[k] -= carry * digitBase;
        m_digit[k + 1] += carry;
    }
    m_sinceNormalise = 0;
}

void ReproducibleSum::merge(ReproducibleSum const& other) {
    ReproducibleSum o = other;
    o.normalise();
    normalise();
    for (int k = 0; k < numDigits; ++k)
        m_digit[k] += o.m_digit[k];
    m_nan += o.m_nan;
    m_posInf += o.m_posInf;
    m_negInf += o.m_negInf;
    normalise();
}

double ReproducibleSum::value() const {
    if (m_nan > 0 || (m_posInf > 0 && m_negInf > 0)) return std::numeric_limits<double>::quiet_NaN();
    if (m_posInf > 0) return std::numeric_limits<double>::infinity();
    if (m_negInf > 0) return -std::numeric_limits<double>::infinity();
    ReproducibleSum n = *this;
    n.normalise();
    // After normalisation digits 0..numDigits-2 are in [0, 2^32) and the top digit carries the sign.
    // Make the number non-negative to read off its magnitude.
    bool negative = n.m_digit[numDigits - 1] < 0;
    if (negative) {
        for (int k = 0; k < numDigits; ++k)
            n.m_digit[k] = -n.m_digit[k];
        n.normalise();
    }
    int top = numDigits - 1;
    while (top >= 0 && n.m_digit[top] == 0)
        --top;
    if (top < 0) return 0.0;
    // The top three digits hold at least 65 significant bits; lower digits only decide ties, fold them in as a
    // sticky bit so the result is a fixed function of the exact sum.
    double result = 0.0;
    uint64_t sticky = 0;
    for (int k = 0; k < top - 2; ++k)
        sticky |= static_cast<uint64_t>(n.m_digit[k]);
    int const low = top - 2 < 0 ? 0 : top - 2;
    u128 acc = 0;
    for (int k = top; k >= low; --k)
        acc = (acc << digitBits) | static_cast<uint64_t>(n.m_digit[k]);
    acc = (acc << 1) | (sticky != 0 ? 1u : 0u);
    int const accExponent = low * digitBits + lowestExponent - 1; // weight of acc's lowest bit
    // Round acc (up to 97 bits) to 64 bits with a sticky bit, then let the FPU round the 64-bit integer to double.
    int bits = 0;
    for (u128 t = acc; t != 0; t >>= 1)
        ++bits;
    int drop = bits > 64 ? bits - 64 : 0;
    uint64_t head = static_cast<uint64_t>(acc >> drop);
    if (drop > 0 && (acc & ((static_cast<u128>(1) << drop) - 1)) != 0) head |= 1u;
    result = std::ldexp(static_cast<double>(head), accExponent + drop);
    return negative ? -result : result;
}

std::vector<int64_t> ReproducibleSum::toWire() const {
    ReproducibleSum n = *this;
    n.normalise();
    std::vector<int64_t> wire(n.m_digit, n.m_digit + numDigits);
    wire.push_back(n.m_nan);
    wire.push_back(n.m_posInf);
    wire.push_back(n.m_negInf);
    return wire;
}

ReproducibleSum ReproducibleSum::fromWire(std::span<int64_t const> wire) {
    if (wire.size() != static_cast<std::size_t>(wireSize)) throw Error("bad wire size", "ReproducibleSum::fromWire");
    ReproducibleSum s;
    for (int k = 0; k < numDigits; ++k)
        s.m_digit[k] = wire[k];
    s.m_nan = wire[numDigits];
    s.m_posInf = wire[numDigits + 1];
    s.m_negInf = wire[numDigits + 2];
    s.normalise();
    return s;
}

Context::Context(MPI_Comm comm) : m_comm(comm) { init(nullptr, nullptr); }
Context::Context(int* argc, char*** argv, MPI_Comm comm) : m_comm(comm) { init(argc, argv); }

void Context::init(int* argc, char*** argv) {
    int initialised = 0;
    MPI_Initialized(&initialised);
    if (!initialised) {
        int provided = 0;
        MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided);
        m_ownsMpi = true;
        if (provided < MPI_THREAD_FUNNELED)
            throw Error("the MPI library provides no MPI_THREAD_FUNNELED support", "comms::Context",
                        "an MPI library that allows OpenMP threads beside MPI calls from the main thread");
    }
    int finalised = 0;
    MPI_Finalized(&finalised);
    if (finalised) throw Error("MPI was already finalised", "comms::Context", "one Context for the whole program");
    MPI_Comm_rank(m_comm, &m_rank);
    MPI_Comm_size(m_comm, &m_size);
    MPI_Comm local;
    MPI_Comm_split_type(m_comm, MPI_COMM_TYPE_SHARED, m_rank, MPI_INFO_NULL, &local);
    MPI_Comm_rank(local, &m_localRank);
    MPI_Comm_size(local, &m_localSize);
    MPI_Comm_free(&local);
}

Context::~Context() {
    int finalised = 0;
    MPI_Finalized(&finalised);
    if (m_ownsMpi && !finalised) MPI_Finalize();
}

double Context::sum(std::span<double const> local) const {
    ReproducibleSum acc;
    acc.add(local);
    // Digits are normalised (each below 2^32 in magnitude), so summing up to 2^31 ranks cannot overflow int64.
    std::vector<int64_t> wire = acc.toWire();
    std::vector<int64_t> total(wire.size());
    MPI_Allreduce(wire.data(), total.data(), static_cast<int>(wire.size()), MPI_INT64_T, MPI_SUM, m_comm);
    return ReproducibleSum::fromWire(total).value();
}

namespace {
// NaNs first travel as a count, so that any NaN gives NaN whatever MPI does with NaN in MPI_MAX / MPI_MIN.
void extremum(MPI_Comm comm, std::span<double> values, MPI_Op op) {
    std::vector<double> local(values.begin(), values.end()), global(values.size());
    std::vector<int> nan(values.size()), anyNan(values.size());
    for (std::size_t i = 0; i < values.size(); ++i) {
        nan[i] = std::isnan(local[i]) ? 1 : 0;
        if (nan[i]) local[i] = 0;
    }
    int const n = static_cast<int>(values.size());
    MPI_Allreduce(local.data(), global.data(), n, MPI_DOUBLE, op, comm);
    MPI_Allreduce(nan.data(), anyNan.data(), n, MPI_INT, MPI_MAX, comm);
    for (std::size_t i = 0; i < values.size(); ++i)
        values[i] = anyNan[i] ? std::numeric_limits<double>::quiet_NaN() : global[i];
}
} // namespace

void Context::max(std::span<double> values) const { extremum(m_comm, values, MPI_MAX); }
void Context::min(std::span<double> values) const { extremum(m_comm, values, MPI_MIN); }
double Context::max(double local) const {
    max(std::span<double>(&local, 1));
    return local;
}
double Context::min(double local) const {
    min(std::span<double>(&local, 1));
    return local;
}

void Context::barrier() const { MPI_Barrier(m_comm); }

void broadcast(MPI_Comm comm, std::string& text, int root) {
    auto length = static_cast<int>(text.size());
    MPI_Bcast(&length, 1, MPI_INT, root, comm);
    text.resize(static_cast<std::size_t>(length));
    MPI_Bcast(text.data(), length, MPI_CHAR, root, comm);
}

RankProblem firstProblem(MPI_Comm comm, std::string problem) {
    int rank = 0, size = 1;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int const mine = problem.empty() ? size : rank;
    int first = size;
    MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm);
    if (first == size) return {size, {}};
    broadcast(comm, problem, first);
    return {first, std::move(problem)};
}

} // namespace strata::core
