# The adversarial probe of restarts and the files around them (tests/probe/probe.py), reduced to 60 cases for the
# suite: damaged restarts, SIGTERM to scripts/mpirun at random moments, concurrent runs, ranks with different
# configurations, restart paths that are not the run's to replace, continuations onto foreign histories. The full
# probe is `tests/probe/probe.py build/bin/strata scripts/mpirun . /tmp/probe` (400 cases). A fixed seed: the same
# cases every run.
add_test(NAME probe_restarts
         COMMAND ${STRATA_PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/probe/probe.py $<TARGET_FILE:strata>
                 ${PROJECT_SOURCE_DIR}/scripts/mpirun ${PROJECT_SOURCE_DIR} ${CMAKE_BINARY_DIR}/probe --cases 60 --seed 1)
set_tests_properties(probe_restarts PROPERTIES ENVIRONMENT "${STRATA_MPI_ENV}" PROCESSORS 2 TIMEOUT 600
                     LABELS "restart;probe")
