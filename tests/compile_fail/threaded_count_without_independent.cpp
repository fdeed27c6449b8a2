// The independent range is given as independent(n), not as a bare count.
#include <strata/core/threaded.hpp>

#include <cstdint>

namespace th = strata::threaded;
using strata::core::Serial;

struct Plain {
    void operator()(uint32_t) const {}
};

int main() {
#if defined(STRATA_COMPILE_FAIL)
    th::threaded(Serial{}, 100u, Plain{});
#else
    th::threaded(Serial{}, th::independent(100u), Plain{});
#endif
}
