// With an interdependent axis the body takes the context first: body(ctx, j), not body(j).
#include <strata/core/threaded.hpp>

#include <cstdint>

namespace th = strata::threaded;
using strata::core::Serial;

struct PlainBody {
    void operator()(uint32_t) const {}
};
struct ContextBody {
    template <class Ctx>
    void operator()(Ctx&, uint32_t) const {}
};

int main() {
#if defined(STRATA_COMPILE_FAIL)
    th::threaded(Serial{}, th::independent(3), th::interdependent<16>(), PlainBody{});
#else
    th::threaded(Serial{}, th::independent(3), th::interdependent<16>(), ContextBody{});
#endif
}
