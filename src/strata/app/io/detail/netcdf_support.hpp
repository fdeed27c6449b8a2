// Small NetCDF-C++ helpers shared by the output writer, the restart files and the comparator.
#pragma once

#include <netcdf.h>
#include <netcdf>

#include <string>

namespace strata::app::detail {

// The NetCDF library's text for the error (NetCDF-C++'s what() adds the wrapper's own source file and line, which
// mean nothing to a user).
inline std::string netcdfMessage(netCDF::exceptions::NcException const& e) {
    int const code = e.errorCode();
    return code != 0 ? std::string(nc_strerror(code)) : std::string(e.what());
}

// Throws NetCDF-C++'s exception type for a failed NetCDF-C call (so the callers' handlers name it the same way).
inline void ncCheck(int status, std::string const& what) {
    if (status != NC_NOERR) throw netCDF::exceptions::NcException(status, what.c_str(), __FILE__, __LINE__);
}

// A global text attribute, or "" when the file has none of that name.
inline std::string globalText(netCDF::NcFile const& file, std::string const& name) {
    netCDF::NcGroupAtt const att = file.getAtt(name);
    if (att.isNull()) return "";
    std::string value;
    att.getValues(value);
    return value;
}

} // namespace strata::app::detail
