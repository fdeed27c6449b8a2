# Fault tests (tests/faults/faults.sh): the output path is the configuration, a directory, a FIFO, a device or under a
# file; two runs write one path at once; the disk fills up; a memory limit; a run whose state goes wrong; the restart
# path is the configuration, a FIFO, a device, the output path, a directory, under a file, too long, read-only, or
# held by another running job. Each wants an exit code and a message, and leaves a file that was there before
# unchanged.
set(STRATA_FAULTS_DIR ${CMAKE_BINARY_DIR}/faults)
foreach(case config_as_output directory fifo device under_a_file concurrent full_disk memory_limit state_check
             restart_config restart_fifo restart_device restart_is_output restart_unwritable restart_read_only
             restart_shared)
  add_test(NAME fault_${case}
           COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/faults/faults.sh $<TARGET_FILE:strata> ${PROJECT_SOURCE_DIR}
                   ${STRATA_FAULTS_DIR} ${case})
  set_tests_properties(fault_${case} PROPERTIES ENVIRONMENT "${STRATA_MPI_ENV}" SKIP_RETURN_CODE 77 LABELS "cli;faults")
endforeach()
