// The Kokkos peer of the operators suite: the diffusion tree div(interp(K) * grad(theta)) written the way a Kokkos
// user would write it, TeamPolicy with one team per column and the face fluxes in team scratch, over the same fields
// and grid reciprocals as Strata's engines (bench_operators.cpp registers it as operators/serial/diffusion/kokkos/N
// and checks its result bit for bit like every variant).
//
// Built only when Debian's Kokkos (libtrilinos-kokkos-dev) is installed: its CMake package files point at targets
// that do not exist, so app/CMakeLists.txt finds Kokkos_Core.hpp under /usr/include/trilinos and links
// trilinos_kokkoscore by hand. Debian builds Kokkos with the Serial execution space only: there is no OpenMP peer.
#include <strata/app/bench/bench_kokkos.hpp>

#include <Kokkos_Core.hpp>

#include <cstdlib>

namespace strata::bench {

namespace {

void ensureKokkos() {
    static bool const initialised = [] {
        if (!Kokkos::is_initialized()) {
            Kokkos::InitArguments args;
            args.num_threads = 1;
            args.disable_warnings = true;
            Kokkos::initialize(args);
            std::atexit([] { Kokkos::finalize(); });
        }
        return true;
    }();
    (void)initialised;
}

using Space = Kokkos::DefaultHostExecutionSpace;
using Team = Kokkos::TeamPolicy<Space>::member_type;
template <class T>
using Unmanaged2D = Kokkos::View<T**, Kokkos::LayoutRight, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
template <class T>
using Unmanaged1D = Kokkos::View<T*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
using Scratch = Kokkos::View<double*, Space::scratch_memory_space, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

} // namespace

char const* kokkosExecutionSpace() { return Space::name(); }

void kokkosDiffusion(KokkosColumns const& a) {
    ensureKokkos();
    int const n = static_cast<int>(a.levels);
    Unmanaged2D<double const> const K(a.kappa, a.columns, a.stride), th(a.theta, a.columns, a.stride);
    Unmanaged2D<double> const out(a.out, a.columns, a.stride);
    Unmanaged1D<double const> const rdzc(a.rdzCenter, a.levels), rdzf(a.rdzFace, a.levels + 1),
        wBelow(a.interpBelow, a.levels + 1), wAbove(a.interpAbove, a.levels + 1);
    auto const policy = Kokkos::TeamPolicy<Space>(static_cast<int>(a.columns), Kokkos::AUTO)
                            .set_scratch_size(0, Kokkos::PerTeam(Scratch::shmem_size(a.levels + 1)));
    Kokkos::parallel_for(
        "diffusion", policy, KOKKOS_LAMBDA(Team const& team) {
            int const c = team.league_rank();
            Scratch f(team.team_scratch(0), n + 1);
            // face fluxes interp(K) * grad(theta); the closed ends (SetValue 0 of the divergence) are 0
            Kokkos::parallel_for(Kokkos::TeamThreadRange(team, 1, n), [&](int k) {
                f(k) = (K(c, k - 1) * wBelow(k) + K(c, k) * wAbove(k)) * ((th(c, k) - th(c, k - 1)) * rdzf(k));
            });
            Kokkos::single(Kokkos::PerTeam(team), [&]() {
                f(0) = 0.0;
                f(n) = 0.0;
            });
            team.team_barrier();
            Kokkos::parallel_for(Kokkos::TeamThreadRange(team, 0, n),
                                 [&](int k) { out(c, k) = (f(k + 1) - f(k)) * rdzc(k); });
        });
    Kokkos::fence();
}

} // namespace strata::bench
