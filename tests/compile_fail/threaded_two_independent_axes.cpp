// threaded takes its independent axes in one independent(...): two of them are one call with two extents.
#include <strata/core/threaded.hpp>

#include <cstdint>

namespace th = strata::threaded;
using strata::core::Serial;

struct TwoIndices {
    void operator()(uint32_t i, uint32_t j) const {
        (void)i;
        (void)j;
    }
};

int main() {
#if defined(STRATA_COMPILE_FAIL)
    th::threaded(Serial{}, th::independent(3), th::independent(5), TwoIndices{});
#else
    th::threaded(Serial{}, th::independent(3, 5), TwoIndices{});
#endif
}
