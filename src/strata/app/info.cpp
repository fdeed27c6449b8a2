#include <strata/app/info.hpp>

#include <strata/app/version.hpp>
#include <strata/core/backend.hpp>

#include <mpi.h>
#include <ostream>
#include <string>
#include <string_view>
#include <thread>

#if defined(_OPENMP)
#include <omp.h>
#endif

namespace strata::app {

void printInfo(std::ostream& out) {
    out << "strata " << version << " (git " << gitHash << ")\n";
    out << "backends compiled: serial";
    if (core::openmpCompiled()) out << ", openmp";
    out << ", threads";
    if (core::cudaCompiled()) out << ", cuda";
    out << "\n";
#if defined(_OPENMP)
    out << "openmp threads: " << omp_get_max_threads() << "\n";
#endif
    out << "host hardware threads: " << std::thread::hardware_concurrency() << "\n";
    if (core::cudaCompiled())
        out << "cuda devices seen: " << core::cudaDeviceCount() << "\n";
    else
        out << "cuda devices seen: none (built without CUDA)\n";
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(lib, &len);
    std::string mpi(lib, static_cast<std::size_t>(len));
    // Open MPI counts the terminating NUL in len: the first line only, without it
    if (auto end = mpi.find_first_of(std::string_view("\n\0", 2)); end != std::string::npos) mpi.resize(end);
    out << "mpi library: " << mpi << "\n";
}

} // namespace strata::app
