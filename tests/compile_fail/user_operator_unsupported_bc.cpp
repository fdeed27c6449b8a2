// A boundary condition a user-defined operator does not accept does not compile, and the message names the operator
// (its `name`) and the conditions its rule accepts, as for the built-in operators.
#include "../../examples/custom_operator/second_difference.hpp"

#include <memory>

using namespace strata::ops;

int main() {
    auto grid = std::make_shared<Grid const>(Grid::uniform(4, 100.0));
    Field<double, Center> x(grid, 1, strata::core::MemSpace::Host);
#if defined(STRATA_COMPILE_FAIL)
    auto e = my_physics::SecondDifference{SetValue{0.0}, SetGradient{0.0}}(x);
#else
    auto e = my_physics::SecondDifference{SetGradient{0.0}, SetGradient{0.0}}(x);
#endif
    (void)e;
}
