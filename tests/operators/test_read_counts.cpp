// The read-counting instrument: a test-only leaf that counts every global read of every element. Shmem must read each
// leaf element once per column (plus tile halos) where it stages leaves (Threads, Cuda), and on Serial and OpenMP,
// which stage only arguments with stencils or divisions, read a leaf once per use by the innermost stencil (once per
// level under a division); Direct re-reads leaves
// under nested stencils. The expected Direct
// counts follow from the stencils' definitions (worked out by hand below), not from running the code.
#include <strata/operators/operators.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>
#include <utility>
#include <vector>

using namespace strata;
using namespace strata::ops;

namespace {

// A Center field leaf that counts reads per (column, level).
struct CountingLeaf : LeafBase<CountingLeaf> {
    using Value = double;
    using Stagger = Center;
    FieldView<double const, Center> field;
    std::atomic<uint32_t>* counts; // columns x levels

    template <class Ctx>
    double eval(Ctx const& ctx, Level k) const {
        counts[ctx.col * field.levels + k].fetch_add(1, std::memory_order_relaxed);
        return field.data[ctx.col * field.stride + k];
    }
};

struct Counted {
    Field<double, Center> field;
    std::vector<std::atomic<uint32_t>> counts;
    Counted(std::shared_ptr<Grid const> grid, uint32_t columns)
        : field(grid, columns, core::MemSpace::Host, 1.0), counts(columns * field.levels()) {
        for (uint32_t c = 0; c < columns; ++c)
            for (uint32_t k = 0; k < field.levels(); ++k)
                field.at(c, k) = 1.0 + 0.1 * k + c;
    }
    CountingLeaf leaf() { return {{}, std::as_const(field).view(), counts.data()}; }
    void reset() {
        for (auto& c : counts)
            c.store(0);
    }
    uint32_t at(uint32_t col, uint32_t k) const { return counts[col * field.levels() + k].load(); }
};

// theta and K on 40 levels x 3 columns, and the two trees the count tests evaluate:
//   diffusion  = div(interp(K) * grad(theta)): center c reads faces c and c + 1; face f reads centers f - 1 and f
//   biharmonic = div(grad(div(grad(theta))))
struct Trees {
    static constexpr uint32_t n = 40, columns = 3;
    std::shared_ptr<Grid const> grid = std::make_shared<Grid const>(Grid::uniform(n, 4000.0));
    Counted theta{grid, columns}, kappa{grid, columns};
    Field<double, Center> out{grid, columns, core::MemSpace::Host};

    auto diffusion() {
        auto const grad = GradientC2F{SetValue{300.0}, SetGradient{0.0}};
        auto const interp = InterpolateC2F{Extrapolate{}, Extrapolate{}};
        auto const div = DivergenceF2C{SetValue{0.0}, SetValue{0.0}};
        return div(interp(kappa.leaf()) * grad(theta.leaf()));
    }
    auto biharmonic() {
        auto const grad = GradientC2F{SetValue{300.0}, SetGradient{0.0}};
        auto const div = DivergenceF2C{SetValue{0.0}, SetValue{0.0}};
        return div(grad(div(grad(theta.leaf()))));
    }
};

// Every element of both counted leaves read exactly once.
void requireReadOnce(Counted const& a, Counted const& b) {
    for (uint32_t c = 0; c < Trees::columns; ++c)
        for (uint32_t k = 0; k < Trees::n; ++k) {
            INFO("column " << c << " level " << k);
            REQUIRE(a.at(c, k) == 1);
            REQUIRE(b.at(c, k) == 1);
        }
}

} // namespace

TEST_CASE("read counts: Shmem reads each leaf element once per column, Direct many times", "[operators][reads]") {
    Trees t;
    auto const n = Trees::n, columns = Trees::columns;
    auto& theta = t.theta;
    auto& kappa = t.kappa;
    auto& out = t.out;
    // Direct: an interior element j is read through faces j and j + 1, each used by two centers: 4 times; each
    // nesting of div(grad(.)) multiplies by 4: 16 for the biharmonic tree.
    auto const diffusion = t.diffusion();
    auto const biharmonic = t.biharmonic();

    for (auto backend : {core::Threads{1, true}, core::Threads{4, true}}) {
        INFO("Threads with " << backend.numWorkers << " workers");
        theta.reset();
        kappa.reset();
        evaluate(backend, out, diffusion, Engine::Shmem);
        requireReadOnce(theta, kappa);

        theta.reset();
        kappa.reset();
        evaluate(backend, out, diffusion, Engine::Direct);
        for (uint32_t c = 0; c < columns; ++c)
            for (uint32_t k = 2; k + 2 < n; ++k) {
                INFO("column " << c << " level " << k);
                REQUIRE(theta.at(c, k) == 4);
                REQUIRE(kappa.at(c, k) == 4);
            }

        theta.reset();
        evaluate(backend, out, biharmonic, Engine::Shmem);
        for (uint32_t c = 0; c < columns; ++c)
            for (uint32_t k = 0; k < n; ++k)
                REQUIRE(theta.at(c, k) == 1);

        theta.reset();
        evaluate(backend, out, biharmonic, Engine::Direct);
        for (uint32_t c = 0; c < columns; ++c)
            for (uint32_t k = 4; k + 4 < n; ++k)
                REQUIRE(theta.at(c, k) == 16);
    }
}

TEST_CASE(
    "read counts: on Serial and OpenMP, Shmem reads stencil-free arguments where they are used, unless they divide",
    "[operators][reads]") {
    // The one-worker CPU backends stage only arguments that contain stencils (or divisions, below): a face of interp(K)
    // * grad(theta) is computed once (into a buffer), reading K and theta where it is computed. An interior center j is
    // read by faces j and j + 1: 2 reads, against 1 when leaves are staged too (Threads, Cuda) and 4 with Direct.
    Trees t;
    auto const n = Trees::n, columns = Trees::columns;
    auto& theta = t.theta;
    auto& kappa = t.kappa;
    auto& out = t.out;
    auto const diffusion = t.diffusion();
    auto const biharmonic = t.biharmonic();

    auto run = [&](auto const& backend) {
        theta.reset();
        kappa.reset();
        evaluate(backend, out, diffusion, Engine::Shmem);
        for (uint32_t c = 0; c < columns; ++c)
            for (uint32_t k = 1; k + 1 < n; ++k) {
                INFO("column " << c << " level " << k);
                REQUIRE(theta.at(c, k) == 2);
                REQUIRE(kappa.at(c, k) == 2);
            }
        theta.reset();
        evaluate(backend, out, biharmonic, Engine::Shmem); // the inner grad(theta) is staged: 2 reads, not 16
        for (uint32_t c = 0; c < columns; ++c)
            for (uint32_t k = 1; k + 1 < n; ++k)
                REQUIRE(theta.at(c, k) == 2);
        // An argument that divides is staged (computed once per level, not once per face that reads it): the
        // third-order upwind product reads four centers per face, so theta / K unstaged would be read 4 times at an
        // interior level (and divided 4 times), staged once.
        auto const third = Upwind3rdOrderBiasedProductC2F{ThirdOrderOneSided{}, ThirdOrderOneSided{}};
        auto const div = DivergenceF2C{SetValue{0.0}, SetValue{0.0}};
        Field<double, Face> w(t.grid, columns, core::MemSpace::Host, -1.0);
        theta.reset();
        kappa.reset();
        evaluate(backend, out, div(third(w, theta.leaf() / kappa.leaf())), Engine::Shmem);
        requireReadOnce(theta, kappa);
        theta.reset();
        evaluate(backend, out, div(third(w, theta.leaf() * 2.0)), Engine::Shmem); // no division: read where used
        for (uint32_t c = 0; c < columns; ++c)
            for (uint32_t k = 3; k + 3 < n; ++k)
                REQUIRE(theta.at(c, k) == 4);
    };
    SECTION("Serial") { run(core::Serial{}); }
    SECTION("OpenMP") { run(core::OpenMP{}); }
}

TEST_CASE("the Shmem engine's interior margin counts only what it evaluates in place", "[operators][reads]") {
    // From the footprints the operators declare (stencils.hpp) and operatorBoundaryMargin (2): the flux-limited
    // product on two fields, which add nothing (no stencils, no boundary branches): reach 2; the divergence
    // (footprint {-1, 2}) on the flux, a face argument of a center output (its last level one more): max(2 + 1,
    // 2 + 2 - 1) = 3, which Direct needs (it evaluates the flux in place; pointwise nodes add nothing). Under Shmem
    // the flux is read from its buffer: only the divergence's own margin is left.
    auto grid = std::make_shared<Grid const>(Grid::uniform(30, 3000.0));
    Field<double, Center> q(grid, 1, core::MemSpace::Host), rho(grid, 1, core::MemSpace::Host);
    Field<double, Face> w(grid, 1, core::MemSpace::Host);
    auto const div = DivergenceF2C{SetValue{0.0}, SetValue{0.0}};
    auto const limited = UpwindLimitedProductC2F{FirstOrderOneSided{}, FirstOrderOneSided{}};
    using Tendency = decltype(-(div(limited(w, q)) / rho));
    using Flux = decltype(limited(w, q));
    STATIC_REQUIRE(Flux::reach == operatorBoundaryMargin);
    STATIC_REQUIRE(Tendency::reach == 3);
    STATIC_REQUIRE(Tendency::template shmemReach<false> == operatorBoundaryMargin);
    STATIC_REQUIRE(Tendency::template shmemReach<true> == operatorBoundaryMargin);
    // The flux evaluates its fields in place on the CPU (no division: not staged), and reads them from buffers where
    // stencil-free arguments are staged (a GPU): its own margin either way.
    STATIC_REQUIRE(Flux::template shmemReach<false> == operatorBoundaryMargin);
    STATIC_REQUIRE(Flux::template shmemReach<true> == operatorBoundaryMargin);
    // Stencils under stencils add their footprint, at each end: div(grad(div(grad(theta)))), footprints {-1, 0}
    // (grad, a center argument of a face output: its last level one less) and {-1, 2} (div, a face argument of a
    // center output: one more): grad 2; div max(2 + 1, 2 + 2 - 1) = 3; grad max(3 + 1, 3 + 0 + 1) = 4; div
    // max(4 + 1, 4 + 2 - 1) = 5.
    using Biharmonic = decltype(Trees{}.biharmonic());
    STATIC_REQUIRE(Biharmonic::reach == 5);
    STATIC_REQUIRE(Biharmonic::template shmemReach<false> == operatorBoundaryMargin);
}

// Records the argument slots a tree shows the planner (StencilNode::walk), as the planner's BufferLayout sees them.
struct SlotRecorder {
    std::vector<std::size_t> slots;
    template <class A>
    void argument(std::size_t slot, int32_t, int32_t) {
        slots.push_back(slot);
    }
};

template <class E>
void requireDistinctSlots(E const& expr) {
    SlotRecorder r;
    detail::walkAt<0>(expr, r, 0, 0);
    REQUIRE(r.slots.size() == E::slots); // one slot per argument of every stencil node
    std::vector<std::size_t> sorted = r.slots;
    std::sort(sorted.begin(), sorted.end());
    for (std::size_t i = 0; i < sorted.size(); ++i)
        REQUIRE(sorted[i] == i); // each slot once, none outside the plan
}

TEST_CASE("the engine's buffer plan gives every stencil argument a slot of its own", "[operators][reads]") {
    // The plan is the engine's (engine/planner.hpp); a node only numbers its arguments' slots: its subtrees' first,
    // in argument order, then one per argument. div(interp(K) * grad(theta)): interp's K is slot 0, grad's theta
    // slot 1, div's product slot 2.
    Trees t;
    using Diffusion = decltype(t.diffusion());
    STATIC_REQUIRE(Diffusion::slots == 3);
    STATIC_REQUIRE(decltype(t.biharmonic())::slots == 4);
    requireDistinctSlots(t.diffusion());
    requireDistinctSlots(t.biharmonic());
    auto const grad = GradientC2F{SetValue{300.0}, SetGradient{0.0}};
    auto const interp = InterpolateC2F{Extrapolate{}, Extrapolate{}};
    auto const div = DivergenceF2C{SetValue{0.0}, SetValue{0.0}};
    auto const k = t.kappa.leaf(), th = t.theta.leaf();
    auto const depth4 = div(interp(k) * grad(div(interp(k) * grad(th)))) + div(grad(th)) * 2.0;
    STATIC_REQUIRE(decltype(depth4)::slots == 8);
    requireDistinctSlots(depth4);
    // The kernels read the slots that walk shows the planner: on Threads (which stages every field) Shmem must give
    // Direct's bits for a tree with two stencil children under one pointwise node, and a scalar argument.
    Field<double, Center> direct(t.grid, Trees::columns, core::MemSpace::Host),
        staged(t.grid, Trees::columns, core::MemSpace::Host);
    evaluate(core::Serial{}, direct, depth4, Engine::Direct);
    evaluate(core::Threads{7, true}, staged, depth4, Engine::Shmem);
    for (uint32_t c = 0; c < Trees::columns; ++c)
        for (uint32_t k = 0; k < Trees::n; ++k) {
            INFO("column " << c << " level " << k);
            REQUIRE(std::memcmp(&staged.at(c, k), &direct.at(c, k), sizeof(double)) == 0);
        }
    // Slot 2 of the diffusion tree is the product under div. Laid out as the planner lays it out, its buffer holds
    // the faces div's footprint {-1, 2} reads around the tile (lo -1, hi 2), and K's, one level lower still.
    detail::BufferLayout layout;
    BufferPlan<Diffusion::slots> plan;
    layout.tileLen = Trees::n;
    layout.stageStencilFree = true;
    layout.slots = plan.slot;
    detail::walkAt<0>(t.diffusion(), layout, 0, 0);
    REQUIRE(layout.buffers == 3);
    REQUIRE(plan.slot[2].capacity == Trees::n + 3);
    REQUIRE(plan.slot[2].lo == -1);
    REQUIRE(plan.slot[2].hi == 2);
    REQUIRE(plan.slot[0].capacity == Trees::n + 4);
    REQUIRE(plan.slot[0].lo == -2);
    REQUIRE(plan.slot[2].offset == 0); // parents before children
    REQUIRE(plan.slot[0].offset >= 8 * plan.slot[2].capacity);
}

TEST_CASE("read counts: tiled Shmem re-reads only the halos", "[operators][reads]") {
    uint32_t const n = 1000, columns = 2, tile = 64;
    auto grid = std::make_shared<Grid const>(Grid::uniform(n, 20000.0));
    Counted theta(grid, columns);
    Field<double, Center> out(grid, columns, core::MemSpace::Host);
    auto const grad = GradientC2F{SetValue{300.0}, SetValue{250.0}};
    auto const div = DivergenceF2C{};
    EvalPlan const plan =
        evaluate(core::Threads{1, true}, out, div(grad(theta.leaf())), Engine::Shmem, EngineOptions{48 * 1024, tile});
    REQUIRE(plan.tiles == (n + tile - 1) / tile);
    // div's footprint reaches levels -1..+2 around a tile (faces), grad's -1..0 around that: a halo of a few levels
    // on each side of every tile boundary. Everything is read at least once, at most twice, and the extra reads are
    // bounded by (tiles - 1) x (halo below + halo above).
    uint64_t total = 0;
    for (uint32_t c = 0; c < columns; ++c)
        for (uint32_t k = 0; k < n; ++k) {
            INFO("column " << c << " level " << k);
            REQUIRE(theta.at(c, k) >= 1);
            REQUIRE(theta.at(c, k) <= 2);
            total += theta.at(c, k);
        }
    uint64_t const extraPerBoundary = 2 + 3; // below: 1 (div) + 1 (grad); above: 2 (div) + 0 (grad) + 1 (face n)
    REQUIRE(total - uint64_t{n} * columns <= uint64_t{plan.tiles - 1} * extraPerBoundary * columns);
    WARN("tiled Shmem, " << n << " levels in tiles of " << tile << ": " << total << " reads for " << n * columns
                         << " elements");
}
