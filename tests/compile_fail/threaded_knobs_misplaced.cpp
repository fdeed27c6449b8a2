// The knobs come after the axes, just before the body.
#include <strata/core/threaded.hpp>

#include <cstdint>

namespace th = strata::threaded;
using strata::core::Serial;

struct Each {
    void operator()(uint32_t) const {}
};

int main() {
#if defined(STRATA_COMPILE_FAIL)
    th::threaded(Serial{}, th::coarsen(2), th::independent(3), Each{});
#else
    th::threaded(Serial{}, th::independent(3), th::coarsen(2), Each{});
#endif
}
