# The example's check (CTest runs it): own_process runs case.yaml into OUT and must exit 0, which it does only when
# the heat budget closed; the log must show the driver's budget line; the output file must hold newtonian_heating.
# Then the run again, stopped after 21 hours (within an output interval) and continued from its restart file: the same
# history, bit for bit.
#   cmake -DPROGRAM=... -DCASE=... -DOUT=... -DNCDUMP=... -DSTRATA=... -P check.cmake
file(REMOVE_RECURSE "${OUT}")
file(MAKE_DIRECTORY "${OUT}")
execute_process(COMMAND "${PROGRAM}" "${CASE}" "${OUT}" RESULT_VARIABLE rc OUTPUT_VARIABLE log ERROR_VARIABLE err)
message("${log}${err}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "own_process exited with ${rc}: the run failed or its heat budget did not close")
endif()
if(NOT log MATCHES "budgets over the whole run \\(largest column residual\\): heat ([^ ]+)")
  message(FATAL_ERROR "own_process printed no budget line")
endif()
set(file "${OUT}/own_process.nc")
if(NOT EXISTS "${file}")
  message(FATAL_ERROR "no output file ${file}")
endif()
if(NOT NCDUMP)
  message(FATAL_ERROR "no ncdump (netcdf-bin) to read the output's variables with")
endif()
execute_process(COMMAND "${NCDUMP}" -h "${file}" RESULT_VARIABLE rc OUTPUT_VARIABLE header)
if(NOT rc EQUAL 0 OR NOT header MATCHES "(double|float) newtonian_heating\\(")
  message(FATAL_ERROR "${file} holds no variable newtonian_heating:\n${header}")
endif()
message("own_process: ${file} holds newtonian_heating")

# A restart: 21 hours (half way through an output interval), then on to the end from the restart file. The running
# mean of newtonian_heating must travel in it: without the process's restartEntries the files differ.
if(NOT STRATA)
  message(FATAL_ERROR "no strata program next to the package, for strata compare")
endif()
file(MAKE_DIRECTORY "${OUT}/restarted")
execute_process(COMMAND "${PROGRAM}" "${CASE}" "${OUT}/restarted" time.days=0.875 RESULT_VARIABLE rc OUTPUT_QUIET)
if(rc EQUAL 0)
  execute_process(COMMAND "${PROGRAM}" "${CASE}" "${OUT}/restarted" "--restart=${OUT}/restarted/own_process.restart.nc"
                  RESULT_VARIABLE rc OUTPUT_QUIET)
endif()
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the run stopped after 21 hours and continued from its restart exited with ${rc}")
endif()
execute_process(COMMAND "${STRATA}" compare --bfb "${OUT}/restarted/own_process.nc" "${file}" RESULT_VARIABLE rc
                OUTPUT_VARIABLE comparison)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the restarted run differs from the uninterrupted one:\n${comparison}")
endif()
message("own_process: stopped after 21 hours and continued from the restart: the same file, bit for bit")
