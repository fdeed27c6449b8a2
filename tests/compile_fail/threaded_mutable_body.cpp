// Every worker calls the one body: its call operator must be const (no mutable lambda).
#include <strata/core/threaded.hpp>

#include <cstdint>

namespace th = strata::threaded;
using strata::core::Serial;

int main() {
    double* out = nullptr;
#if defined(STRATA_COMPILE_FAIL)
    th::threaded(Serial{}, th::independent(0), [out](uint32_t i) mutable { out[i] = i; });
#else
    th::threaded(Serial{}, th::independent(0), [out](uint32_t i) { out[i] = i; });
#endif
}
