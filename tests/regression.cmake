# Regression: every case in configs/ runs at 1, 2 and 3 ranks; the outputs must be identical bit for bit across rank
# counts (and across backends for the default case) and agree with data/reference/<case>.nc within the tolerance
# below. `scripts/bless` regenerates the references on purpose.
#
# Tolerance against the reference: rtol 1e-10, atol 1e-12 (|a - b| <= atol + rtol |b|). The reference was written by
# this code on x86-64 with GCC; the model's exp, log, pow, sin and cos are strata::math's, not libm's, so only a
# compiler that breaks the floating-point contract (contraction into FMA, -ffast-math) changes their last bits.
set(STRATA_REGRESSION_DIR ${CMAKE_BINARY_DIR}/regression)
set(STRATA_REFERENCE_DIR ${PROJECT_SOURCE_DIR}/data/reference)

function(strata_regression_case case)
  cmake_parse_arguments(ARG "" "" "SET" ${ARGN})
  set(sets)
  foreach(s IN LISTS ARG_SET)
    list(APPEND sets --set ${s})
  endforeach()
  foreach(np 1 2 3)
    set(out ${STRATA_REGRESSION_DIR}/np${np})
    add_test(NAME regression_${case}_run_np${np}
             COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${np} --oversubscribe $<TARGET_FILE:strata> run
                     ${PROJECT_SOURCE_DIR}/configs/${case}.yaml --output ${out} ${sets})
    set_tests_properties(regression_${case}_run_np${np} PROPERTIES ENVIRONMENT "${STRATA_MPI_ENV}" PROCESSORS ${np}
                         FIXTURES_SETUP regression_${case} LABELS "regression;mpi")
  endforeach()
  foreach(np 2 3)
    add_test(NAME regression_${case}_bfb_np${np}_vs_np1
             COMMAND strata compare --bfb ${STRATA_REGRESSION_DIR}/np${np}/${case}.nc
                     ${STRATA_REGRESSION_DIR}/np1/${case}.nc)
    set_tests_properties(regression_${case}_bfb_np${np}_vs_np1 PROPERTIES FIXTURES_REQUIRED regression_${case}
                         LABELS regression)
  endforeach()
  # As a GPU would run it: host mirrors apart from the "device" arrays and poisoned by toDevice (src/strata/core/memory.hpp), so a
  # missing toHost/toDevice changes the output. Serial backend, one rank; the same bits as the normal run.
  add_test(NAME regression_${case}_separate_mirror
           COMMAND $<TARGET_FILE:strata> run ${PROJECT_SOURCE_DIR}/configs/${case}.yaml
                   --output ${STRATA_REGRESSION_DIR}/separate_mirror --set backend.type=serial ${sets})
  set_tests_properties(regression_${case}_separate_mirror PROPERTIES
                       ENVIRONMENT "${STRATA_MPI_ENV};STRATA_SEPARATE_MIRROR=1"
                       FIXTURES_SETUP regression_${case}_mirror LABELS regression)
  add_test(NAME regression_${case}_bfb_separate_mirror_vs_np1
           COMMAND strata compare --bfb ${STRATA_REGRESSION_DIR}/separate_mirror/${case}.nc
                   ${STRATA_REGRESSION_DIR}/np1/${case}.nc)
  set_tests_properties(regression_${case}_bfb_separate_mirror_vs_np1 PROPERTIES
                       FIXTURES_REQUIRED "regression_${case};regression_${case}_mirror" LABELS regression)
  add_test(NAME regression_${case}_vs_reference
           COMMAND strata compare --rtol 1e-10 --atol 1e-12 ${STRATA_REGRESSION_DIR}/np1/${case}.nc
                   ${STRATA_REFERENCE_DIR}/${case}.nc)
  set_tests_properties(regression_${case}_vs_reference PROPERTIES FIXTURES_REQUIRED regression_${case}
                       LABELS regression)
endfunction()

strata_regression_case(default)
strata_regression_case(heat_equation)
strata_regression_case(subsidence_tracer)
strata_regression_case(held_suarez)
strata_regression_case(ekman)
strata_regression_case(moist_held_suarez)
strata_regression_case(kessler_column)
strata_regression_case(user_column)

# The default case on every CPU backend gives the same bits as on Serial, each backend named, not `auto` (which picks
# Cuda on a machine with a GPU). OpenMP runs 3 threads, unbound, and the run must say so (a one-thread OpenMP run
# would compare nothing parallel); the Threads backend runs its workers per block.
add_test(NAME regression_default_backend_serial
         COMMAND $<TARGET_FILE:strata> run ${PROJECT_SOURCE_DIR}/configs/default.yaml
                 --output ${STRATA_REGRESSION_DIR}/serial --set backend.type=serial)
set_tests_properties(regression_default_backend_serial PROPERTIES ENVIRONMENT "${STRATA_MPI_ENV}"
                     FIXTURES_SETUP regression_default_backends LABELS regression)
add_test(NAME regression_default_backend_openmp
         COMMAND ${CMAKE_COMMAND} "-DCOMMAND=$<TARGET_FILE:strata>;run;${PROJECT_SOURCE_DIR}/configs/default.yaml;--output;${STRATA_REGRESSION_DIR}/openmp;--set;backend.type=openmp"
                 -DEXPECT_CODE=0 "-DEXPECT_OUTPUT=backend openmp .3 threads." -P ${PROJECT_SOURCE_DIR}/cmake/ExpectExit.cmake)
set_tests_properties(regression_default_backend_openmp PROPERTIES
                     ENVIRONMENT "${STRATA_MPI_ENV};OMP_NUM_THREADS=3;OMP_PROC_BIND=false" PROCESSORS 2
                     FIXTURES_SETUP regression_default_backends LABELS regression)
add_test(NAME regression_default_backend_threads
         COMMAND $<TARGET_FILE:strata> run ${PROJECT_SOURCE_DIR}/configs/default.yaml
                 --output ${STRATA_REGRESSION_DIR}/threads --set backend.type=threads)
set_tests_properties(regression_default_backend_threads PROPERTIES ENVIRONMENT "${STRATA_MPI_ENV}"
                     FIXTURES_SETUP regression_default_backends LABELS regression)
foreach(backend openmp threads)
  add_test(NAME regression_default_bfb_${backend}_vs_serial
           COMMAND strata compare --bfb ${STRATA_REGRESSION_DIR}/${backend}/default.nc
                   ${STRATA_REGRESSION_DIR}/serial/default.nc)
  set_tests_properties(regression_default_bfb_${backend}_vs_serial PROPERTIES
                       FIXTURES_REQUIRED regression_default_backends LABELS regression)
endforeach()
add_test(NAME regression_default_bfb_serial_vs_np1
         COMMAND strata compare --bfb ${STRATA_REGRESSION_DIR}/serial/default.nc ${STRATA_REGRESSION_DIR}/np1/default.nc)
set_tests_properties(regression_default_bfb_serial_vs_np1 PROPERTIES
                     FIXTURES_REQUIRED "regression_default_backends;regression_default" LABELS regression)

# Must fail: a perturbed run differs from the reference, and compare says so (exit 1, and T's row of the table says
# DIFFERENT: the row is the name padded with spaces, then the status).
add_test(NAME regression_compare_detects_perturbation
         COMMAND ${CMAKE_COMMAND} "-DCOMMAND=$<TARGET_FILE:strata>;run;${PROJECT_SOURCE_DIR}/configs/default.yaml;--output;${STRATA_REGRESSION_DIR}/perturbed;--set;initial_conditions.surface_temperature=288.000001"
                 -DEXPECT_CODE=0 -P ${PROJECT_SOURCE_DIR}/cmake/ExpectExit.cmake)
set_tests_properties(regression_compare_detects_perturbation PROPERTIES ENVIRONMENT "${STRATA_MPI_ENV}"
                     FIXTURES_SETUP regression_perturbed LABELS regression)
add_test(NAME regression_compare_reports_perturbation
         COMMAND ${CMAKE_COMMAND}
                 "-DCOMMAND=$<TARGET_FILE:strata>;compare;--rtol;1e-10;${STRATA_REGRESSION_DIR}/perturbed/default.nc;${STRATA_REFERENCE_DIR}/default.nc"
                 -DEXPECT_CODE=1 "-DEXPECT_OUTPUT=[^A-Za-z0-9_]T +DIFFERENT " -P ${PROJECT_SOURCE_DIR}/cmake/ExpectExit.cmake)
set_tests_properties(regression_compare_reports_perturbation PROPERTIES FIXTURES_REQUIRED regression_perturbed
                     LABELS regression)
