// The independent axis comes before the interdependent one.
#include <strata/core/threaded.hpp>

#include <cstdint>

namespace th = strata::threaded;
using strata::core::Serial;

struct ContextBody {
    template <class Ctx>
    void operator()(Ctx&, uint32_t) const {}
};

int main() {
#if defined(STRATA_COMPILE_FAIL)
    th::threaded(Serial{}, th::interdependent<16>(), th::independent(3), ContextBody{});
#else
    th::threaded(Serial{}, th::independent(3), th::interdependent<16>(), ContextBody{});
#endif
}
