// An operator fed the wrong staggering does not compile, and the message names the operator.
#include <strata/operators/operators.hpp>

#include <memory>

using namespace strata::ops;

int main() {
    auto grid = std::make_shared<Grid const>(Grid::uniform(4, 100.0));
    Field<double, Face> w(grid, 1, strata::core::MemSpace::Host);
    Field<double, Center> theta(grid, 1, strata::core::MemSpace::Host);
#if defined(STRATA_COMPILE_FAIL)
    auto e = GradientC2F{SetValue{0.0}, SetValue{0.0}}(w); // faces into a C2F operator
#else
    auto e = GradientC2F{SetValue{0.0}, SetValue{0.0}}(theta);
#endif
    (void)e;
}
