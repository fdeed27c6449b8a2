// A boundary condition an operator does not support does not compile, and the message names both.
#include <strata/operators/operators.hpp>

#include <memory>

using namespace strata::ops;

int main() {
    auto grid = std::make_shared<Grid const>(Grid::uniform(4, 100.0));
    Field<double, Face> flux(grid, 1, strata::core::MemSpace::Host);
#if defined(STRATA_COMPILE_FAIL)
    auto e = DivergenceF2C{SetGradient{0.0}, SetValue{0.0}}(flux);
#else
    auto e = DivergenceF2C{SetValue{0.0}, SetValue{0.0}}(flux);
#endif
    (void)e;
}
