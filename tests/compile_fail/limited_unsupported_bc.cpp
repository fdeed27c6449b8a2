// The flux-limited product takes FirstOrderOneSided at both ends; any other condition does not compile.
#include <strata/operators/operators.hpp>

#include <memory>

using namespace strata::ops;

int main() {
    auto grid = std::make_shared<Grid const>(Grid::uniform(4, 100.0));
    Field<double, Face> w(grid, 1, strata::core::MemSpace::Host);
    Field<double, Center> q(grid, 1, strata::core::MemSpace::Host);
#if defined(STRATA_COMPILE_FAIL)
    auto e = UpwindLimitedProductC2F{ThirdOrderOneSided{}, FirstOrderOneSided{}}(w, q);
#else
    auto e = UpwindLimitedProductC2F{FirstOrderOneSided{}, FirstOrderOneSided{}}(w, q);
#endif
    (void)e;
}
