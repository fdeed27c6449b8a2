# Restarts (tests/restart/restart.sh): ERS (straight vs half + restart + half, bit for bit), ERP (a restart made on 2
# ranks continued on 3 ranks with OpenMP, and on 1 rank with Threads), restarts at an interval continued after
# kill -9, SIGTERM (exit 143, history and restart written, continued bit for bit), and bad restart files.
foreach(case ers erp interval signal bad_files)
  add_test(NAME restart_${case}
           COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/restart/restart.sh $<TARGET_FILE:strata> ${MPIEXEC_EXECUTABLE}
                   ${PROJECT_SOURCE_DIR} ${CMAKE_BINARY_DIR}/restart ${case})
  set_tests_properties(restart_${case} PROPERTIES ENVIRONMENT "${STRATA_MPI_ENV}" PROCESSORS 2 LABELS "restart")
endforeach()
