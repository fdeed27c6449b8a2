// A kernel declares blockDomSize or BlockDomSizeND, never both.
#include <strata/core/lockstep.hpp>

namespace ls = strata::lockstep;

struct Kernel {
#if defined(STRATA_COMPILE_FAIL)
    static constexpr uint32_t blockDomSize = 32;
#endif
    using BlockDomSizeND = ls::CtUint32<8, 4>;
    template <class W>
    void operator()(W const&) const {}
};

int main() { ls::launch(strata::core::Serial{}, ls::config(1), Kernel{}); }
