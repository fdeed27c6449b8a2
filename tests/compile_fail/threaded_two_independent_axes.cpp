// threaded takes one independent axis: two are flattened into one and split in the body.
#include <strata/core/threaded.hpp>

#include <cstdint>

namespace th = strata::threaded;
using strata::core::Serial;

struct Flat {
    uint32_t ni;
    void operator()(uint32_t k) const {
        uint32_t const i = k % ni, j = k / ni;
        (void)i;
        (void)j;
    }
};

int main() {
#if defined(STRATA_COMPILE_FAIL)
    th::threaded(Serial{}, th::independent(3), th::independent(5), Flat{3});
#else
    th::threaded(Serial{}, th::independent(3 * 5), Flat{3});
#endif
}
