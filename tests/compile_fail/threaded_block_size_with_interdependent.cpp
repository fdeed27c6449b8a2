// With an interdependent axis the block is the axis: blockSize<B>() belongs to loops without one.
#include <strata/core/threaded.hpp>

#include <cstdint>

namespace th = strata::threaded;
using strata::core::Serial;

struct Column {
    template <class Ctx>
    void operator()(Ctx& ctx, uint32_t) const {
        ctx.syncInterdependent([](uint32_t) {});
    }
};

int main() {
#if defined(STRATA_COMPILE_FAIL)
    th::threaded(Serial{}, th::independent(3), th::interdependent<8>(), th::blockSize<64>().coarsen(2), Column{});
#else
    th::threaded(Serial{}, th::independent(3), th::interdependent<8>(), th::coarsen(2), Column{});
#endif
}
