// The checking backend's entry point for the syncs of block collectives (core/lockstep/collectives.hpp): a barrier
// arrival that names the collective and its call site.
#include <strata/core/detail/block_checker.hpp>

namespace strata::core::detail {
void checkedArriveAt(BlockChecker* c, uint32_t worker, char const* what, char const* file, uint32_t line) {
    c->arrive(worker, Arrival::Sync, SyncSite{what, file, line});
}
} // namespace strata::core::detail
