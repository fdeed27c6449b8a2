// The interdependent index is used inside ctx.syncInterdependent steps, not taken as a parameter of the body.
#include <strata/core/threaded.hpp>

#include <cstdint>

namespace th = strata::threaded;
using strata::core::Serial;

struct IndexAsParameter {
    template <class Ctx>
    void operator()(Ctx&, uint32_t, uint32_t) const {}
};
struct IndexInStep {
    template <class Ctx>
    void operator()(Ctx& ctx, uint32_t) const {
        ctx.syncInterdependent([](uint32_t) {});
    }
};

int main() {
#if defined(STRATA_COMPILE_FAIL)
    th::threaded(Serial{}, th::independent(3), th::interdependent<16>(), IndexAsParameter{});
#else
    th::threaded(Serial{}, th::independent(3), th::interdependent<16>(), IndexInStep{});
#endif
}
