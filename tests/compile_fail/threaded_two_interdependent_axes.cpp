// threaded takes one interdependent axis; a 2-D block is one axis walked with syncInterdependent2D.
#include <strata/core/threaded.hpp>

#include <cstdint>

namespace th = strata::threaded;
using strata::core::Serial;

struct Tile {
    template <class Ctx>
    void operator()(Ctx& ctx, uint32_t) const {
        ctx.syncInterdependent2D(4, 8, [](uint32_t, uint32_t) {});
    }
};

int main() {
#if defined(STRATA_COMPILE_FAIL)
    th::threaded(Serial{}, th::independent(3), th::interdependent<4>(), th::interdependent<8>(), Tile{});
#else
    th::threaded(Serial{}, th::independent(3), th::interdependent<4 * 8>(), Tile{});
#endif
}
