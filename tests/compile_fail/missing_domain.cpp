// A kernel that declares no block domain needs one at launch.
#include <strata/core/lockstep.hpp>

namespace ls = strata::lockstep;

struct Generic {
    template <class W>
    void operator()(W const&) const {}
};

int main() {
#if defined(STRATA_COMPILE_FAIL)
    ls::launch(strata::core::Serial{}, ls::config(1), Generic{});
#else
    ls::launch(strata::core::Serial{}, ls::config<64>(1), Generic{});
#endif
}
