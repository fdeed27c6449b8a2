# cmake --install: headers under include/strata/, libraries, the CMake package lib/cmake/Strata/ and lib/pkgconfig/strata.pc.
#
# Three export sets, so that a project that uses the kernels and operators finds no MPI or NetCDF:
#   StrataTargets.cmake       Strata::core, Strata::operators
#   StrataCommsTargets.cmake  Strata::comms        (find_package(Strata COMPONENTS comms))
#   StrataAppTargets.cmake    Strata::app          (find_package(Strata COMPONENTS app))
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(STRATA_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/Strata)

install(TARGETS strata_core strata_operators EXPORT StrataTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(EXPORT StrataTargets NAMESPACE Strata:: DESTINATION ${STRATA_INSTALL_CMAKEDIR})
foreach(layer core operators)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/src/strata/${layer} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/strata
          FILES_MATCHING PATTERN "*.hpp" PATTERN "*.cuh")
endforeach()
if(TARGET strata_comms)
  install(TARGETS strata_comms EXPORT StrataCommsTargets ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
  install(EXPORT StrataCommsTargets NAMESPACE Strata:: DESTINATION ${STRATA_INSTALL_CMAKEDIR})
endif()
if(TARGET strata_app)
  install(TARGETS strata_app EXPORT StrataAppTargets ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
  install(EXPORT StrataAppTargets NAMESPACE Strata:: DESTINATION ${STRATA_INSTALL_CMAKEDIR})
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/src/strata/app DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/strata
          FILES_MATCHING PATTERN "*.hpp" PATTERN "bench" EXCLUDE PATTERN "cli" EXCLUDE)
  install(FILES ${PROJECT_BINARY_DIR}/generated/strata/app/version.hpp
          DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/strata/app)
  install(TARGETS strata RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()

# What the package was built with, for StrataConfig.cmake and strata.pc.
set(STRATA_BACKENDS Serial Threads)
if(STRATA_ENABLE_OPENMP)
  list(APPEND STRATA_BACKENDS OpenMP)
endif()
if(STRATA_ENABLE_CUDA)
  list(APPEND STRATA_BACKENDS Cuda)
endif()
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/StrataConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/package/StrataConfig.cmake
                              INSTALL_DESTINATION ${STRATA_INSTALL_CMAKEDIR})
# 0.x: a minor version may change the API, so a request for 0.2 accepts 0.2.z only.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/package/StrataConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/package/StrataConfig.cmake ${PROJECT_BINARY_DIR}/package/StrataConfigVersion.cmake
              ${PROJECT_SOURCE_DIR}/cmake/StrataCudaCxx20.cmake
        DESTINATION ${STRATA_INSTALL_CMAKEDIR})

# strata.pc: core and operators for Makefile builds. OpenMP is a compile and a link flag (-fopenmp): -lgomp alone
# would link the runtime but leave the parallel regions serial.
set(STRATA_PC_CFLAGS "-std=c++20 -ffp-contract=off")
if(STRATA_ENABLE_OPENMP)
  string(APPEND STRATA_PC_CFLAGS " -DSTRATA_HAVE_OPENMP=1")
endif()
if(STRATA_PLATFORM_MATH)
  string(APPEND STRATA_PC_CFLAGS " -DSTRATA_PLATFORM_MATH=1")
endif()
set(STRATA_PC_LIBS "-lstrata_operators -lstrata_core")
if(STRATA_ENABLE_OPENMP)
  string(APPEND STRATA_PC_CFLAGS " ${OpenMP_CXX_FLAGS}")
  string(APPEND STRATA_PC_LIBS " ${OpenMP_CXX_FLAGS}")
endif()
string(APPEND STRATA_PC_LIBS " -pthread")
if(STRATA_ENABLE_CUDA)
  string(APPEND STRATA_PC_CFLAGS " -DSTRATA_HAVE_CUDA=1")
  string(APPEND STRATA_PC_LIBS " -L${CUDAToolkit_LIBRARY_DIR} -lcudart")
endif()
# The prefix as a path from the .pc file's folder (lib/pkgconfig -> ../.., lib/x86_64-linux-gnu/pkgconfig -> ../../..);
# an absolute include or library folder stays absolute.
file(RELATIVE_PATH STRATA_PC_UP "/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/")
string(REGEX REPLACE "/$" "" STRATA_PC_UP "${STRATA_PC_UP}")
foreach(kind INCLUDEDIR LIBDIR)
  if(IS_ABSOLUTE "${CMAKE_INSTALL_${kind}}")
    set(STRATA_PC_${kind} "${CMAKE_INSTALL_${kind}}")
  else()
    set(STRATA_PC_${kind} "\${prefix}/${CMAKE_INSTALL_${kind}}")
  endif()
endforeach()
configure_file(${PROJECT_SOURCE_DIR}/cmake/strata.pc.in ${PROJECT_BINARY_DIR}/package/strata.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/package/strata.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
