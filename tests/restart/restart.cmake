# Restarts (tests/restart/restart.sh): ERS (straight vs half + restart + half, bit for bit; again with the processes'
# tendencies as output, the first half on 2 ranks), ERP (a restart made on 2 ranks continued on 3 ranks with OpenMP,
# and on 1 rank with Threads), restarts at an interval continued after
# kill -9, signals (SIGTERM and SIGHUP to the run, SIGTERM to scripts/mpirun: exit 128 + signal, history and restart
# written, continued bit for bit; SIGTERM then SIGKILL: no history marked stopped without its restart; SIGUSR1: a
# restart, and the run goes on), the state check's stop named in the history, bad restart files, and the history
# a continuation appends to: another run's, one left under its temporary name, continued twice, still being written,
# its attributes, missing.
foreach(case ers tendencies erp interval signal sighup signal_mpirun signal_mpirun_early sigterm_then_kill sigusr1
             state_check_status bad_files foreign_history killed_before_rename twice live_writer attributes missing_history)
  add_test(NAME restart_${case}
           COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/restart/restart.sh $<TARGET_FILE:strata> ${MPIEXEC_EXECUTABLE}
                   ${PROJECT_SOURCE_DIR} ${CMAKE_BINARY_DIR}/restart ${case})
  set_tests_properties(restart_${case} PROPERTIES ENVIRONMENT "${STRATA_MPI_ENV}" PROCESSORS 2 LABELS "restart")
endforeach()

# Damaged files (tests/restart/damaged.sh): restarts cut at many points, with one bit flipped at many places, with an
# attribute edited (in place, and rewritten by ncgen): each refused with exit 2 naming it, no history written; and
# compare on files that crash libnetcdf's nc_open: exit 2, never a signal.
foreach(case truncated bit_flips edited_attribute compare_damaged)
  add_test(NAME restart_damaged_${case}
           COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/restart/damaged.sh $<TARGET_FILE:strata> ${PROJECT_SOURCE_DIR}
                   ${CMAKE_BINARY_DIR}/restart/damaged ${case})
  set_tests_properties(restart_damaged_${case} PROPERTIES ENVIRONMENT "${STRATA_MPI_ENV}" LABELS "restart")
endforeach()
