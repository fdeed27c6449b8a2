// A body(ctx, j) needs an interdependent axis; without one the body is body(i).
#include <strata/core/threaded.hpp>

#include <cstdint>

namespace th = strata::threaded;
using strata::core::Serial;

struct ContextBody {
    template <class Ctx>
    void operator()(Ctx& ctx, uint32_t) const {
        ctx.syncInterdependent([](uint32_t) {});
    }
};

int main() {
#if defined(STRATA_COMPILE_FAIL)
    th::threaded(Serial{}, th::independent(3), ContextBody{});
#else
    th::threaded(Serial{}, th::independent(3), th::interdependent<16>(), ContextBody{});
#endif
}
