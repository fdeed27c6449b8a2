// A file that launches on core::OpenMP, compiled without the OpenMP flag against a Strata built with OpenMP (which
// defines STRATA_HAVE_OPENMP for its users), does not compile: its blocks would run on one thread without a word.
// The control build stands for a Strata built without OpenMP, where the backend runs serially by design.
#if defined(STRATA_COMPILE_FAIL)
#define STRATA_HAVE_OPENMP 1
#endif
#include <strata/core/threaded.hpp>

#include <cstdint>
#include <vector>

struct Fill {
    double* out;
    void operator()(uint32_t i) const { out[i] = i; }
};

int main() {
    std::vector<double> v(1000);
    strata::threaded::threaded(strata::core::OpenMP{}, strata::threaded::independent(1000u), Fill{v.data()});
}
