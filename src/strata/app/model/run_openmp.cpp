// The time loop on OpenMP, compiled here once (app/model/run_impl.hpp declares it extern; run_serial.cpp says why).
#include <strata/app/model/run_impl.hpp>

namespace strata::app {

template std::map<std::string, ProcessFactory<core::OpenMP>> const& processRegistry<core::OpenMP>();
template RunSummary runWith<core::OpenMP>(core::OpenMP const&, std::string const&, Config const&, core::Context const&,
                                          RunOptions const&, std::ostream&);

} // namespace strata::app
