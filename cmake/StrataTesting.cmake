# Test helpers.
#
# strata_add_catch_test(NAME SOURCES... [LIBS ...])
#   A Catch2 executable; every TEST_CASE becomes its own CTest test (catch_discover_tests), labelled by NAME.
# strata_add_mpi_test(NAME COMMAND exe args... RANKS 1 2 3 [LABELS ...])
#   Registers NAME_npN for every N, run with mpiexec. Open MPI refuses to run as root and to oversubscribe 2 cores
#   with 3 ranks unless told: the flags and environment are set here, not in users' heads.
find_package(Catch2 REQUIRED)
include(Catch)

add_library(strata_catch_main OBJECT ${PROJECT_SOURCE_DIR}/tests/catch_main.cpp)
target_link_libraries(strata_catch_main PUBLIC Catch2::Catch2 strata_core)

# Strata's warnings for a test target, and the repository root as an include root for the tests' own helpers
# (#include "tests/core/backends.hpp").
function(strata_test_target name)
  strata_build_flags(${name})
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR})
endfunction()

# OMP_WAIT_POLICY=passive: OpenMP threads sleep between kernels instead of spinning, which with 3 ranks of 2 threads
# on 2 cores (and CTest running tests side by side) took the cores from the threads with work (5x slower runs).
set(STRATA_MPI_ENV "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;OMPI_MCA_rmaps_base_oversubscribe=1;OMPI_MCA_mpi_yield_when_idle=1;OMPI_MCA_btl_vader_single_copy_mechanism=none;OMP_WAIT_POLICY=passive")

function(strata_add_catch_test name)
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE strata_catch_main ${ARG_LIBS})
  strata_test_target(${name})
  catch_discover_tests(${name} TEST_PREFIX "${name}:" PROPERTIES LABELS ${name})
  # Not through PROPERTIES: catch_discover_tests flattens a list value, so ENVIRONMENT would get only its first entry
  # (the rest became bogus property names). This CTest include file runs after Catch's and sets the whole list.
  set(env_file "${CMAKE_CURRENT_BINARY_DIR}/${name}_environment.cmake")
  file(WRITE "${env_file}" "if(${name}_TESTS)\n  set_tests_properties(\${${name}_TESTS} PROPERTIES ENVIRONMENT \"${STRATA_MPI_ENV}\")\nendif()\n")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES "${env_file}")
endfunction()

function(strata_add_mpi_test name)
  cmake_parse_arguments(ARG "" "" "COMMAND;RANKS;LABELS" ${ARGN})
  foreach(np IN LISTS ARG_RANKS)
    add_test(NAME ${name}_np${np}
             COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${np} --oversubscribe ${MPIEXEC_PREFLAGS}
                     ${ARG_COMMAND} ${MPIEXEC_POSTFLAGS})
    # STRATA_EXPECTED_RANKS: the test asserts it runs on that many ranks (N one-rank processes would pass otherwise).
    set_tests_properties(${name}_np${np} PROPERTIES ENVIRONMENT "${STRATA_MPI_ENV};STRATA_EXPECTED_RANKS=${np}"
                         PROCESSORS ${np} LABELS "mpi;${name};${ARG_LABELS}")
  endforeach()
endfunction()

# strata_add_compile_fail_test(NAME SOURCE file EXPECT regex)
#   The source must compile as it is and must fail to compile, with a message matching regex, when
#   STRATA_COMPILE_FAIL is defined: proof that a misuse is a compile error with a readable message.
function(strata_add_compile_fail_test name)
  cmake_parse_arguments(ARG "" "SOURCE;EXPECT" "" ${ARGN})
  add_test(NAME ${name}
           COMMAND ${CMAKE_COMMAND} -DCOMPILER=${CMAKE_CXX_COMPILER} -DSOURCE=${CMAKE_CURRENT_SOURCE_DIR}/${ARG_SOURCE}
                   -DINCLUDE=${PROJECT_SOURCE_DIR}/src "-DEXPECT=${ARG_EXPECT}"
                   -P ${PROJECT_SOURCE_DIR}/cmake/CompileFailCheck.cmake)
  set_tests_properties(${name} PROPERTIES LABELS compile_fail)
endfunction()
