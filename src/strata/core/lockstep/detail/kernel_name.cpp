// A kernel's type name as a reader writes it, for the launch errors (launch_cfg.hpp's kernelName).
#include <strata/core/lockstep/launch_cfg.hpp>

#include <cstdlib>
#include <memory>

#if defined(__GNUG__)
#include <cxxabi.h>
#endif

namespace strata::lockstep::detail {

std::string demangle(char const* name) {
#if defined(__GNUG__)
    int status = 0;
    std::unique_ptr<char, void (*)(void*)> const readable(abi::__cxa_demangle(name, nullptr, nullptr, &status),
                                                          std::free);
    if (status == 0 && readable) return readable.get();
#endif
    return name;
}

} // namespace strata::lockstep::detail
