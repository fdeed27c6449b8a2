// ctx.syncInterdependent(f) calls f(i); pairs (o, i) are syncInterdependent2D's.
#include <strata/core/threaded.hpp>

#include <cstdint>

namespace th = strata::threaded;
using strata::core::Serial;

struct Steps {
    template <class Ctx>
    void operator()(Ctx& ctx, uint32_t) const {
#if defined(STRATA_COMPILE_FAIL)
        ctx.syncInterdependent([](uint32_t, uint32_t) {});
#else
        ctx.syncInterdependent2D(2, 8, [](uint32_t, uint32_t) {});
#endif
    }
};

int main() { th::threaded(Serial{}, th::independent(3), th::interdependent<16>(), Steps{}); }
