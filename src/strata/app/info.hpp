// `strata info`: what this build is and what it can see (version, git hash, backends, devices, MPI library).
#pragma once

#include <iosfwd>

namespace strata::app {

void printInfo(std::ostream& out);

} // namespace strata::app
