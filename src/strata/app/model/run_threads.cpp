// The time loop on Threads, compiled here once (app/model/run_impl.hpp declares it extern; run_serial.cpp says why).
#include <strata/app/model/run_impl.hpp>

namespace strata::app {

template std::map<std::string, ProcessFactory<core::Threads>> const& processRegistry<core::Threads>();
template RunSummary runWith<core::Threads>(core::Threads const&, std::string const&, Config const&,
                                           core::Context const&, RunOptions const&, std::ostream&);

} // namespace strata::app
