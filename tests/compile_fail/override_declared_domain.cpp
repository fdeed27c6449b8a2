// A kernel that declares its block domain cannot be launched with another one.
#include <strata/core/lockstep.hpp>

namespace ls = strata::lockstep;

struct Declared {
    static constexpr uint32_t blockDomSize = 42;
    template <class W>
    void operator()(W const&) const {}
};

int main() {
#if defined(STRATA_COMPILE_FAIL)
    ls::launch(strata::core::Serial{}, ls::config<128>(1), Declared{});
#else
    ls::launch(strata::core::Serial{}, ls::config(1), Declared{});
#endif
}
