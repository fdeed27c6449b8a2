// The batched band solvers (band.hpp): tridiagonal with many right-hand sides (a matrix per column or one for all),
// pentadiagonal and 2x2 block tridiagonal, Thomas and cyclic reduction. The test builds each column's system as
// sparse rows straight from the fields (not through the solver's block view), and checks the solution's backward
// error in long double, and for n <= 64 its distance to a dense Gaussian elimination with partial pivoting. Each
// variant is bit-identical across backends and worker counts; solving in place changes no bit; a singular system
// with options.check throws naming its column and level.
#include "tests/core/backends.hpp"
#include <strata/operators/column/band.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

using namespace strata;
using namespace strata::ops;

namespace {

constexpr auto host = core::MemSpace::Host;
constexpr uint32_t sizes[] = {1, 2, 3, 7, 64, 1000};
template <class T>
constexpr T nanOf = std::numeric_limits<T>::quiet_NaN(); // outside the matrix: a solver that reads it fails
template <class T>
using FieldsOf = std::vector<std::unique_ptr<Field<T, Center>>>;
using F = Field<double, Center>;
using Fields = FieldsOf<double>;

std::shared_ptr<Grid const> gridOf(uint32_t n) { return std::make_shared<Grid const>(Grid::uniform(n, 1000.0)); }

template <class T>
FieldsOf<T> makeFields(std::shared_ptr<Grid const> const& grid, uint32_t columns, std::size_t count) {
    FieldsOf<T> fields;
    for (std::size_t i = 0; i < count; ++i)
        fields.push_back(std::make_unique<Field<T, Center>>(grid, columns, host));
    return fields;
}

template <class T>
std::vector<Field<T, Center>*> pointers(FieldsOf<T> const& fields) {
    std::vector<Field<T, Center>*> p;
    for (auto const& f : fields)
        p.push_back(f.get());
    return p;
}

// Row k: random off-diagonal entries in (-1, 1) and a diagonal of either sign with |diag| = sum |off| + [0.1, 1.1).
template <class T>
void fillDominantRow(std::mt19937_64& rng, std::vector<Field<T, Center>*> const& off, Field<T, Center>& diag,
                     uint32_t col, uint32_t k) {
    std::uniform_real_distribution<double> entry(-1.0, 1.0), margin(0.1, 1.1);
    std::bernoulli_distribution negative(0.3);
    double sum = 0;
    for (Field<T, Center>* f : off) {
        f->at(col, k) = static_cast<T>(entry(rng));
        sum += std::fabs(f->at(col, k));
    }
    auto const value = static_cast<T>(sum + margin(rng));
    diag.at(col, k) = negative(rng) ? -value : value;
}

template <class T>
void fillRandom(std::mt19937_64& rng, Field<T, Center>& f) {
    std::uniform_real_distribution<double> value(-1.0, 1.0);
    for (uint32_t col = 0; col < f.columns(); ++col)
        for (uint32_t k = 0; k < f.levels(); ++k)
            f.at(col, k) = static_cast<T>(value(rng));
}

// One column's system as sparse rows (unknown, coefficient) and its right-hand side.
struct Rows {
    std::vector<std::vector<std::pair<long, long double>>> row;
    std::vector<long double> rhs;

    explicit Rows(std::size_t size) : row(size), rhs(size) {}
    // Adds a coefficient unless its unknown lies outside the system (those entries are never read).
    void add(std::size_t r, long unknown, double value) {
        if (unknown >= 0 && unknown < static_cast<long>(row.size())) row[r].emplace_back(unknown, value);
    }
};

// Largest componentwise backward error |A x - d|_r / (|A| |x| + |d|)_r.
double backwardError(Rows const& sys, std::vector<long double> const& x) {
    long double worst = 0;
    for (std::size_t r = 0; r < sys.row.size(); ++r) {
        long double sum = -sys.rhs[r], size = std::fabs(sys.rhs[r]);
        for (auto const& [unknown, coefficient] : sys.row[r]) {
            sum += coefficient * x[unknown];
            size += std::fabs(coefficient * x[unknown]);
        }
        worst = std::max(worst, std::fabs(sum) / size);
    }
    return static_cast<double>(worst);
}

// Gaussian elimination with partial pivoting on the dense matrix, in long double.
std::vector<long double> denseSolve(Rows const& sys) {
    std::size_t const n = sys.row.size();
    std::vector<std::vector<long double>> m(n, std::vector<long double>(n + 1, 0.0L));
    for (std::size_t r = 0; r < n; ++r) {
        for (auto const& [unknown, coefficient] : sys.row[r])
            m[r][unknown] = coefficient;
        m[r][n] = sys.rhs[r];
    }
    for (std::size_t p = 0; p < n; ++p) {
        std::size_t best = p;
        for (std::size_t r = p + 1; r < n; ++r)
            if (std::fabs(m[r][p]) > std::fabs(m[best][p])) best = r;
        std::swap(m[p], m[best]);
        for (std::size_t r = p + 1; r < n; ++r) {
            long double const factor = m[r][p] / m[p][p];
            for (std::size_t q = p; q <= n; ++q)
                m[r][q] -= factor * m[p][q];
        }
    }
    std::vector<long double> x(n);
    for (std::size_t r = n; r-- > 0;) {
        long double sum = m[r][n];
        for (std::size_t q = r + 1; q < n; ++q)
            sum -= m[r][q] * x[q];
        x[r] = sum / m[r][r];
    }
    return x;
}

template <class T>
bool bitIdentical(FieldsOf<T> const& x, FieldsOf<T> const& y) {
    for (std::size_t i = 0; i < x.size(); ++i)
        for (uint32_t col = 0; col < x[i]->columns(); ++col)
            if (std::memcmp(x[i]->column(col).data(), y[i]->column(col).data(), x[i]->levels() * sizeof(T)) != 0)
                return false;
    return true;
}

// ---- the three systems: fields, the solve, and each column's rows built from the fields ----------------------------

// Tridiagonal with m right-hand sides; `shared`: one matrix (a single column) for every column.
template <class T = double>
struct TriProblem {
    using Value = T;
    static constexpr char const* name = "tridiagonal batch";
    std::shared_ptr<Grid const> grid;
    uint32_t n, columns, m;
    bool shared;
    FieldsOf<T> matrix, d; // a, b, c

    TriProblem(uint32_t levels, uint32_t cols, uint64_t seed, uint32_t rhs = 3, bool sharedMatrix = false)
        : grid(gridOf(levels)), n(levels), columns(cols), m(rhs), shared(sharedMatrix),
          matrix(makeFields<T>(grid, sharedMatrix ? 1 : cols, 3)), d(makeFields<T>(grid, cols, rhs)) {
        std::mt19937_64 rng(seed);
        Field<T, Center>&a = *matrix[0], &b = *matrix[1], &c = *matrix[2];
        for (uint32_t col = 0; col < a.columns(); ++col) {
            for (uint32_t k = 0; k < n; ++k)
                fillDominantRow<T>(rng, {&a, &c}, b, col, k);
            a.at(col, 0) = c.at(col, n - 1) = nanOf<T>;
        }
        for (auto& f : d)
            fillRandom(rng, *f);
    }
    FieldsOf<T> solution() const { return makeFields<T>(grid, columns, m); }
    template <class Backend>
    Tridiag solve(Backend const& backend, FieldsOf<T> const& rhs, FieldsOf<T>& x, Tridiag variant,
                  BandOptions options = {}) const {
        std::vector<Field<T, Center>*> const rp = pointers(rhs), xp = pointers(x);
        std::vector<Field<T, Center> const*> const dp(rp.begin(), rp.end());
        return solveTridiagonalBatch(backend, *matrix[0], *matrix[1], *matrix[2], std::span(dp), std::span(xp), variant,
                                     options);
    }
    std::size_t systems() const { return m; }
    Rows rows(uint32_t col, std::size_t j) const {
        uint32_t const mc = shared ? 0 : col;
        Rows sys(n);
        for (uint32_t k = 0; k < n; ++k) {
            long const at = k;
            sys.add(k, at - 1, matrix[0]->at(mc, k));
            sys.add(k, at, matrix[1]->at(mc, k));
            sys.add(k, at + 1, matrix[2]->at(mc, k));
            sys.rhs[k] = d[j]->at(col, k);
        }
        return sys;
    }
    std::vector<long double> unknowns(FieldsOf<T> const& x, uint32_t col, std::size_t j) const {
        return {x[j]->column(col).begin(), x[j]->column(col).end()};
    }
    void makeSingular(uint32_t col, uint32_t level) { // a zero row
        for (auto& f : matrix)
            f->at(shared ? 0 : col, level) = 0;
    }
};

template <class T = double>
struct PentaProblem {
    using Value = T;
    static constexpr char const* name = "pentadiagonal";
    std::shared_ptr<Grid const> grid;
    uint32_t n, columns;
    FieldsOf<T> matrix, d; // e, a, b, c, f

    PentaProblem(uint32_t levels, uint32_t cols, uint64_t seed)
        : grid(gridOf(levels)), n(levels), columns(cols), matrix(makeFields<T>(grid, cols, 5)),
          d(makeFields<T>(grid, cols, 1)) {
        std::mt19937_64 rng(seed);
        Field<T, Center>&e = *matrix[0], &a = *matrix[1], &b = *matrix[2], &c = *matrix[3], &f = *matrix[4];
        for (uint32_t col = 0; col < cols; ++col) {
            for (uint32_t k = 0; k < n; ++k)
                fillDominantRow<T>(rng, {&e, &a, &c, &f}, b, col, k);
            for (uint32_t k = 0; k < n; ++k) { // outside the matrix
                if (k < 2) e.at(col, k) = nanOf<T>;
                if (k < 1) a.at(col, k) = nanOf<T>;
                if (k + 1 >= n) c.at(col, k) = nanOf<T>;
                if (k + 2 >= n) f.at(col, k) = nanOf<T>;
            }
        }
        fillRandom(rng, *d[0]);
    }
    FieldsOf<T> solution() const { return makeFields<T>(grid, columns, 1); }
    template <class Backend>
    Tridiag solve(Backend const& backend, FieldsOf<T> const& rhs, FieldsOf<T>& x, Tridiag variant,
                  BandOptions options = {}) const {
        return solvePentadiagonal(backend, *matrix[0], *matrix[1], *matrix[2], *matrix[3], *matrix[4], *rhs[0], *x[0],
                                  variant, options);
    }
    std::size_t systems() const { return 1; }
    Rows rows(uint32_t col, std::size_t) const {
        Rows sys(n);
        for (uint32_t k = 0; k < n; ++k) {
            for (int q = -2; q <= 2; ++q)
                sys.add(k, static_cast<long>(k) + q, matrix[q + 2]->at(col, k));
            sys.rhs[k] = d[0]->at(col, k);
        }
        return sys;
    }
    std::vector<long double> unknowns(FieldsOf<T> const& x, uint32_t col, std::size_t) const {
        return {x[0]->column(col).begin(), x[0]->column(col).end()};
    }
    void makeSingular(uint32_t col, uint32_t level) {
        for (auto& f : matrix)
            f->at(col, level) = 0;
    }
};

// 2x2 blocks; the fields in the order A.uu, A.uv, A.vu, A.vv, B.uu, ..., C.vv; unknowns interleaved (u0, v0, u1, ...).
template <class T = double>
struct BlockProblem {
    using Value = T;
    static constexpr char const* name = "2x2 block tridiagonal";
    std::shared_ptr<Grid const> grid;
    uint32_t n, columns;
    FieldsOf<T> matrix, d; // 12 bands; du, dv

    BlockProblem(uint32_t levels, uint32_t cols, uint64_t seed)
        : grid(gridOf(levels)), n(levels), columns(cols), matrix(makeFields<T>(grid, cols, 12)),
          d(makeFields<T>(grid, cols, 2)) {
        std::mt19937_64 rng(seed);
        auto band = [&](int block, int entry) { return matrix[4 * block + entry].get(); };
        for (uint32_t col = 0; col < cols; ++col) {
            for (uint32_t k = 0; k < n; ++k) {
                fillDominantRow<T>(rng, {band(0, 0), band(0, 1), band(1, 1), band(2, 0), band(2, 1)}, *band(1, 0), col,
                                   k);
                fillDominantRow<T>(rng, {band(0, 2), band(0, 3), band(1, 2), band(2, 2), band(2, 3)}, *band(1, 3), col,
                                   k);
            }
            for (int entry = 0; entry < 4; ++entry)
                band(0, entry)->at(col, 0) = band(2, entry)->at(col, n - 1) = nanOf<T>;
        }
        fillRandom(rng, *d[0]);
        fillRandom(rng, *d[1]);
    }
    FieldsOf<T> solution() const { return makeFields<T>(grid, columns, 2); }
    Block2x2<T> block(int i) const {
        return {*matrix[4 * i], *matrix[4 * i + 1], *matrix[4 * i + 2], *matrix[4 * i + 3]};
    }
    template <class Backend>
    Tridiag solve(Backend const& backend, FieldsOf<T> const& rhs, FieldsOf<T>& x, Tridiag variant,
                  BandOptions options = {}) const {
        return solveBlockTridiagonal(backend, block(0), block(1), block(2), *rhs[0], *rhs[1], *x[0], *x[1], variant,
                                     options);
    }
    std::size_t systems() const { return 1; }
    Rows rows(uint32_t col, std::size_t) const {
        Rows sys(2 * std::size_t{n});
        for (uint32_t k = 0; k < n; ++k)
            for (int r = 0; r < 2; ++r) { // row u (r = 0) reads entries uu, uv; row v entries vu, vv
                std::size_t const row = 2 * std::size_t{k} + r;
                for (int block = 0; block < 3; ++block)
                    for (int s = 0; s < 2; ++s)
                        sys.add(row, 2 * (static_cast<long>(k) + block - 1) + s,
                                matrix[4 * block + 2 * r + s]->at(col, k));
                sys.rhs[row] = d[r]->at(col, k);
            }
        return sys;
    }
    std::vector<long double> unknowns(FieldsOf<T> const& x, uint32_t col, std::size_t) const {
        std::vector<long double> u;
        for (uint32_t k = 0; k < n; ++k) {
            u.push_back(x[0]->at(col, k));
            u.push_back(x[1]->at(col, k));
        }
        return u;
    }
    void makeSingular(uint32_t col, uint32_t level) { // row u of the level: zero
        for (int block = 0; block < 3; ++block)
            for (int s = 0; s < 2; ++s)
                matrix[4 * block + s]->at(col, level) = 0;
    }
};

// The worst backward error over every column and right-hand side, and (n <= 64) the worst relative distance to the
// dense solution.
template <class Problem>
std::pair<double, double> errors(Problem const& p, auto const& x) {
    double backward = 0, dense = 0;
    for (uint32_t col = 0; col < p.columns; ++col)
        for (std::size_t j = 0; j < p.systems(); ++j) {
            Rows const sys = p.rows(col, j);
            auto const u = p.unknowns(x, col, j);
            backward = std::max(backward, backwardError(sys, u));
            if (p.n > 64) continue;
            auto const reference = denseSolve(sys);
            long double diff = 0, size = 0;
            for (std::size_t i = 0; i < u.size(); ++i) {
                diff = std::max(diff, std::fabs(u[i] - reference[i]));
                size = std::max(size, std::fabs(reference[i]));
            }
            dense = std::max(dense, static_cast<double>(diff / size));
        }
    return {backward, dense};
}

// Room for cyclic reduction at 1000 levels on the CPU backends (the default 48 KiB holds fewer).
BandOptions const roomy{std::size_t{1} << 22, false};

std::set<std::string> printed;

template <class Problem, class Backend>
void checkSolves(Backend const& backend, Problem const& p) {
    for (Tridiag variant : {Tridiag::Thomas, Tridiag::CyclicReduction}) {
        INFO(Problem::name << ", n = " << p.n << ", " << tridiagName(variant));
        auto x = p.solution();
        REQUIRE(p.solve(backend, p.d, x, variant, roomy) == variant);
        auto const [backward, dense] = errors(p, x);
        constexpr char const* precision = std::is_same_v<typename Problem::Value, float> ? "float" : "double";
        std::string key = precision;
        key += Problem::name;
        key += tridiagName(variant);
        key += std::to_string(p.n);
        char denseText[32] = "(n > 64: not run)";
        if (p.n <= 64) std::snprintf(denseText, sizeof denseText, "%.2e", dense);
        if (printed.insert(key).second)
            std::printf("%-6s %-22s %-16s n = %4u: backward error %.2e, vs dense elimination %s\n", precision,
                        Problem::name, tridiagName(variant), p.n, backward, denseText);
        INFO("backward error " << backward << ", vs dense " << dense);
        // A few ulps: measured up to 6e-16 in double, 9e-7 in float (cyclic reduction at 1000 levels). Diagonally
        // dominant, so well conditioned: the distance to the dense solution is of the same order.
        constexpr bool single = std::is_same_v<typename Problem::Value, float>;
        REQUIRE(backward < (single ? 4e-6 : 2e-15));
        REQUIRE(dense < (single ? 4e-6 : 1e-14));
    }
}

} // namespace

#define BAND_TEST_BACKENDS                                                                                             \
    STRATA_CPU_BACKENDS, STRATA_SMALL_GRID_BACKENDS, strata::test::ThreadsBackend<2>, strata::test::ThreadsBackend<64>

TEMPLATE_TEST_CASE("batched tridiagonal: a matrix per column or one for all, 1, 3 and 17 right-hand sides, 1 to 1000 "
                   "levels",
                   "[column][band]", BAND_TEST_BACKENDS) {
    auto const backend = TestType::make();
    for (uint32_t n : sizes)
        for (uint32_t m : {1u, 3u, 17u})
            for (bool shared : {false, true}) {
                INFO("m = " << m << (shared ? ", one matrix" : ", a matrix per column"));
                checkSolves(backend, TriProblem(n, 5, 100 * n + m, m, shared));
            }
}

TEMPLATE_TEST_CASE("pentadiagonal: Thomas and cyclic reduction at 1 to 1000 levels", "[column][band]",
                   BAND_TEST_BACKENDS) {
    auto const backend = TestType::make();
    for (uint32_t n : {1u, 2u, 3u, 4u, 5u, 7u, 8u, 64u, 65u, 1000u, 1001u})
        checkSolves(backend, PentaProblem(n, 5, 7 * n));
}

TEMPLATE_TEST_CASE("2x2 block tridiagonal: Thomas and cyclic reduction at 1 to 1000 levels", "[column][band]",
                   BAND_TEST_BACKENDS) {
    auto const backend = TestType::make();
    for (uint32_t n : sizes)
        checkSolves(backend, BlockProblem(n, 5, 13 * n));
}

TEMPLATE_TEST_CASE("single precision: every system and variant solves to float rounding", "[column][band]",
                   STRATA_CPU_BACKENDS) {
    auto const backend = TestType::make();
    for (uint32_t n : {1u, 7u, 64u, 1000u}) {
        checkSolves(backend, TriProblem<float>(n, 5, n, 3));
        checkSolves(backend, TriProblem<float>(n, 5, n, 2, true));
        checkSolves(backend, PentaProblem<float>(n, 5, n));
        checkSolves(backend, BlockProblem<float>(n, 5, n));
    }
}

TEST_CASE("the batch on scalars has solveTridiagonal's bits, variant by variant, for each right-hand side",
          "[column][band]") {
    core::Serial const serial;
    for (uint32_t n : {1u, 7u, 300u}) {
        TriProblem const p(n, 9, n, 3);
        for (Tridiag variant : {Tridiag::Thomas, Tridiag::CyclicReduction}) {
            INFO("n = " << n << ", " << tridiagName(variant));
            Fields batch = p.solution(), single = p.solution();
            p.solve(serial, p.d, batch, variant);
            for (uint32_t j = 0; j < p.m; ++j)
                solveTridiagonal(serial, *p.matrix[0], *p.matrix[1], *p.matrix[2], *p.d[j], *single[j], variant);
            REQUIRE(bitIdentical(batch, single));
        }
    }
}

TEST_CASE("band solvers: Thomas, Bfb and cyclic reduction are bit-identical across Serial, OpenMP and Threads with 1, "
          "2, 7 and 64 workers",
          "[column][band][bfb]") {
    auto each = [](auto const& p) {
        for (Tridiag variant : {Tridiag::Bfb, Tridiag::CyclicReduction}) {
            INFO(p.name << ", n = " << p.n << ", " << tridiagName(variant));
            auto run = [&](auto const& backend) {
                Fields x = p.solution();
                p.solve(backend, p.d, x, variant, roomy);
                return x;
            };
            Fields const reference = run(core::Serial{});
            REQUIRE(bitIdentical(reference, run(core::OpenMP{})));
            REQUIRE(bitIdentical(reference, run(core::GridLimited<core::Serial, 3>{})));
            for (uint32_t workers : {1u, 2u, 7u, 64u})
                REQUIRE(bitIdentical(reference, run(core::Threads{workers, true})));
            if (variant == Tridiag::Bfb) REQUIRE(bitIdentical(reference, run(core::Serial{}))); // and repeatable
        }
    };
    for (uint32_t n : {1u, 3u, 64u, 1000u}) {
        each(TriProblem(n, 37, 3 * n, 18));
        each(TriProblem(n, 37, 3 * n, 2, true));
        each(PentaProblem(n, 37, 5 * n));
        each(BlockProblem(n, 37, 11 * n));
    }
}

TEMPLATE_TEST_CASE("band solvers in place (x = d) give the out-of-place bits", "[column][band]", BAND_TEST_BACKENDS) {
    auto const backend = TestType::make();
    auto each = [&](auto& p) {
        for (Tridiag variant : {Tridiag::Thomas, Tridiag::CyclicReduction}) {
            INFO(p.name << ", n = " << p.n << ", " << tridiagName(variant));
            Fields x = p.solution();
            p.solve(backend, p.d, x, variant);
            p.solve(backend, p.d, p.d, variant); // the solution overwrites the right-hand sides
            REQUIRE(bitIdentical(x, p.d));
        }
    };
    for (uint32_t n : {1u, 5u, 100u}) {
        TriProblem tri(n, 4, n, 3);
        PentaProblem penta(n, 4, n);
        BlockProblem block(n, 4, n);
        each(tri);
        each(penta);
        each(block);
    }
    // The 2x2 system's solutions may even be each other's right-hand sides: xu = dv, xv = du.
    for (Tridiag variant : {Tridiag::Thomas, Tridiag::CyclicReduction}) {
        BlockProblem block(100, 4, 9);
        Fields x = block.solution();
        block.solve(backend, block.d, x, variant);
        solveBlockTridiagonal(backend, block.block(0), block.block(1), block.block(2), *block.d[0], *block.d[1],
                              *block.d[1], *block.d[0], variant);
        std::swap(block.d[0], block.d[1]);
        REQUIRE(bitIdentical(x, block.d));
    }
}

TEMPLATE_TEST_CASE("a singular system: with options.check the solve throws naming the column and level, without "
                   "it gives inf or NaN and no error",
                   "[column][band][singular]", BAND_TEST_BACKENDS) {
    auto const backend = TestType::make();
    BandOptions checked;
    checked.check = true;
    auto each = [&](auto make, std::string const& where) {
        for (uint32_t n : {7u, 64u})
            for (Tridiag variant : {Tridiag::Thomas, Tridiag::CyclicReduction}) {
                auto p = make(n);
                INFO(p.name << ", n = " << n << ", " << tridiagName(variant));
                Fields x = p.solution(), unchecked = p.solution();
                // Nonsingular: no error, and the check changes no bit.
                p.solve(backend, p.d, unchecked, variant);
                REQUIRE_NOTHROW(p.solve(backend, p.d, x, variant, checked));
                REQUIRE(bitIdentical(x, unchecked));
                // Column 3 singular at level 5, column 4 at level 2: the first column is named.
                p.makeSingular(3, 5);
                p.makeSingular(4, 2);
                REQUIRE_THROWS_WITH(p.solve(backend, p.d, x, variant, checked),
                                    Catch::Contains(where) &&
                                        Catch::Contains("zero or non-finite pivot in column 3 "
                                                        "at level" +
                                                        std::string(p.name[0] == 'p' ? "s 4 and 5" : " 5")));
                REQUIRE_NOTHROW(p.solve(backend, p.d, unchecked, variant));
                bool finite = true;
                for (auto const& f : unchecked)
                    for (double v : f->column(3))
                        finite = finite && std::isfinite(v);
                REQUIRE_FALSE(finite);
            }
    };
    each([](uint32_t n) { return TriProblem(n, 5, n, 2); }, "solveTridiagonalBatch");
    each([](uint32_t n) { return PentaProblem(n, 5, n); }, "solvePentadiagonal");
    each([](uint32_t n) { return BlockProblem(n, 5, n); }, "solveBlockTridiagonal");

    // One matrix for every column: singular, it is named as such.
    for (Tridiag variant : {Tridiag::Thomas, Tridiag::CyclicReduction}) {
        TriProblem p(7, 5, 1, 2, true);
        p.makeSingular(0, 6);
        Fields x = p.solution();
        REQUIRE_THROWS_WITH(p.solve(backend, p.d, x, variant, checked),
                            Catch::Contains("pivot in column 0 (the matrix every column shares) at level 6"));
    }
    // [[1, 1], [1, 1]]: Thomas's second pivot is 1 - 1 = 0; cyclic reduction's first final pivot is.
    TriProblem p(2, 1, 1, 1);
    p.matrix[1]->at(0, 0) = p.matrix[2]->at(0, 0) = p.matrix[0]->at(0, 1) = p.matrix[1]->at(0, 1) = 1;
    Fields x = p.solution();
    REQUIRE_THROWS_WITH(p.solve(backend, p.d, x, Tridiag::Thomas, checked), Catch::Contains("column 0 at level 1"));
    REQUIRE_THROWS_WITH(p.solve(backend, p.d, x, Tridiag::CyclicReduction, checked),
                        Catch::Contains("column 0 at level 0"));
}

TEMPLATE_TEST_CASE("band variant rules: Auto and Bfb run Thomas on the CPU, cyclic reduction falls back to Thomas when "
                   "its shared memory does not fit",
                   "[column][band]", STRATA_CPU_BACKENDS) {
    auto const backend = TestType::make();
    auto each = [&](auto const& p, std::size_t bytes) {
        INFO(p.name);
        Fields thomas = p.solution(), x = p.solution();
        REQUIRE(p.solve(backend, p.d, thomas, Tridiag::Thomas) == Tridiag::Thomas);
        REQUIRE(p.solve(backend, p.d, x, Tridiag::Auto) == Tridiag::Thomas);
        REQUIRE(bitIdentical(thomas, x));
        REQUIRE(p.solve(backend, p.d, x, Tridiag::Bfb) == Tridiag::Thomas);
        REQUIRE(bitIdentical(thomas, x));
        REQUIRE(p.solve(backend, p.d, x, Tridiag::CyclicReduction, BandOptions{bytes, false}) ==
                Tridiag::CyclicReduction);
        REQUIRE_FALSE(bitIdentical(thomas, x)); // another algorithm
        REQUIRE(p.solve(backend, p.d, x, Tridiag::CyclicReduction, BandOptions{bytes - 1, false}) == Tridiag::Thomas);
        REQUIRE(bitIdentical(thomas, x));
    };
    uint32_t const n = 301;
    each(TriProblem(n, 3, 1, 3), tridiagonalBatchCyclicReductionBytes<double>(n, 3));
    each(TriProblem(n, 3, 1, 20), tridiagonalBatchCyclicReductionBytes<double>(n, 20));
    each(PentaProblem(n, 3, 1), pentadiagonalCyclicReductionBytes<double>(n));
    each(BlockProblem(n, 3, 1), blockTridiagonalCyclicReductionBytes<double>(n));
    // The sizes the header states.
    REQUIRE(tridiagonalBatchCyclicReductionBytes<double>(n, 3) == (2 * (3 + 3) + 1) * n * sizeof(double));
    REQUIRE(tridiagonalBatchCyclicReductionBytes<double>(n, 40) == (2 * (3 + 16) + 1) * n * sizeof(double));
    REQUIRE(pentadiagonalCyclicReductionBytes<double>(n) == 29 * 151 * sizeof(double));
    REQUIRE(blockTridiagonalCyclicReductionBytes<double>(n) == 29 * n * sizeof(double));
}

TEST_CASE("band solvers reject mismatched fields and outputs that alias an input they still read", "[column][band]") {
    core::Serial const serial;
    TriProblem p(10, 2, 1, 2);
    Fields x = p.solution();
    F wrongColumns(p.grid, 3, host), wrongGrid(gridOf(11), 2, host);
    auto batch = [&](std::vector<F const*> d, std::vector<F*> out) {
        return solveTridiagonalBatch(serial, *p.matrix[0], *p.matrix[1], *p.matrix[2], std::span(d), std::span(out));
    };
    REQUIRE_THROWS_WITH(batch({p.d[0].get(), &wrongColumns}, {x[0].get(), x[1].get()}),
                        Catch::Contains("solveTridiagonalBatch") && Catch::Contains("d[1] has 3 columns"));
    REQUIRE_THROWS_WITH(batch({p.d[0].get()}, {x[0].get(), x[1].get()}),
                        Catch::Contains("d holds 1 right-hand sides and x 2 solutions"));
    REQUIRE_THROWS_WITH(batch({p.d[0].get(), p.d[1].get()}, {x[0].get(), p.d[0].get()}),
                        Catch::Contains("x[1] is also the input d[0]"));
    REQUIRE_THROWS_WITH(batch({p.d[0].get(), p.d[1].get()}, {x[0].get(), x[0].get()}),
                        Catch::Contains("x[1] is also the input x[0]"));
    REQUIRE_THROWS_WITH(batch({p.d[0].get(), p.d[1].get()}, {x[0].get(), p.matrix[1].get()}),
                        Catch::Contains("x[1] is also the input b"));
    REQUIRE_NOTHROW(batch({p.d[0].get(), p.d[1].get()}, {p.d[0].get(), p.d[1].get()}));

    PentaProblem penta(10, 2, 1);
    REQUIRE_THROWS_WITH(solvePentadiagonal(serial, *penta.matrix[0], *penta.matrix[1], *penta.matrix[2],
                                           *penta.matrix[3], wrongGrid, *penta.d[0], *x[0]),
                        Catch::Contains("solvePentadiagonal") && Catch::Contains("f has 2 columns on a grid of 11"));
    REQUIRE_THROWS_WITH(solvePentadiagonal(serial, *penta.matrix[0], *penta.matrix[1], *penta.matrix[2],
                                           *penta.matrix[3], *penta.matrix[4], *penta.d[0], *penta.matrix[0]),
                        Catch::Contains("x is also the input e"));

    BlockProblem block(10, 2, 1);
    Fields y = block.solution();
    REQUIRE_THROWS_WITH(solveBlockTridiagonal(serial, block.block(0), block.block(1), block.block(2), *block.d[0],
                                              *block.d[1], *y[0], *y[0]),
                        Catch::Contains("xv is also the input xu"));
    REQUIRE_THROWS_WITH(solveBlockTridiagonal(serial, block.block(0), block.block(1), block.block(2), *block.d[0],
                                              *block.d[1], *y[0], *block.matrix[6]),
                        Catch::Contains("xv is also the input B.vu"));
}

// Not run by default (a measurement, not a test): test_band_solvers "[.cost]". Each figure is the mean of 20 calls.
TEST_CASE("cost: the batch of 1 and 5 right-hand sides against as many solveTridiagonal calls, and the 2x2 systems",
          "[.cost]") {
    uint32_t const n = 64, cols = 16384, repeats = 20;
    PentaProblem const penta(n, cols, 2);
    BlockProblem const block(n, cols, 3);
    auto time = [&](auto&& f) {
        f(); // warm the scratch
        auto const start = std::chrono::steady_clock::now();
        for (uint32_t r = 0; r < repeats; ++r)
            f();
        return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count() / repeats;
    };
    auto measure = [&](auto const& backend, char const* name) {
        Fields y = penta.solution(), z = block.solution();
        for (Tridiag variant : {Tridiag::Thomas, Tridiag::CyclicReduction}) {
            for (uint32_t m : {1u, 5u}) {
                TriProblem const p(n, cols, 1, m);
                Fields x = p.solution();
                double const batch = time([&] { p.solve(backend, p.d, x, variant); });
                double const single = time([&] {
                    for (uint32_t j = 0; j < m; ++j)
                        solveTridiagonal(backend, *p.matrix[0], *p.matrix[1], *p.matrix[2], *p.d[j], *x[j], variant);
                });
                std::printf("%-7s %-16s %u columns x %u levels: batch of %u %8.0f us, %u solveTridiagonal %8.0f us\n",
                            name, tridiagName(variant), cols, n, m, batch, m, single);
            }
            double const five = time([&] { penta.solve(backend, penta.d, y, variant); });
            double const two = time([&] { block.solve(backend, block.d, z, variant); });
            std::printf("%-7s %-16s %u columns x %u levels: pentadiagonal %8.0f us, 2x2 block %8.0f us\n", name,
                        tridiagName(variant), cols, n, five, two);
        }
    };
    measure(core::Serial{}, "Serial");
    measure(core::OpenMP{}, "OpenMP");
}
