// Adding a face field to a center field does not compile: interpolate one of them first.
#include <strata/operators/operators.hpp>

#include <memory>

using namespace strata::ops;

int main() {
    auto grid = std::make_shared<Grid const>(Grid::uniform(4, 100.0));
    Field<double, Face> w(grid, 1, strata::core::MemSpace::Host);
    Field<double, Center> theta(grid, 1, strata::core::MemSpace::Host);
#if defined(STRATA_COMPILE_FAIL)
    auto e = w + theta;
#else
    auto e = InterpolateF2C{}(w) + theta;
#endif
    (void)e;
}
