# Run by CTest (cmake -P): runs COMMAND (a ;-list) and checks its exit code is EXPECT_CODE and, when given, that its
# output (stdout + stderr) matches every regex in EXPECT_OUTPUT (a ;-list). Used for must-fail CLI tests, where a
# plain WILL_FAIL would also accept a crash.
execute_process(COMMAND ${COMMAND} RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE out)
message("${out}")
if(NOT "${code}" STREQUAL "${EXPECT_CODE}")
  message(FATAL_ERROR "exit code ${code}, expected ${EXPECT_CODE}")
endif()
foreach(regex IN LISTS EXPECT_OUTPUT)
  if(NOT out MATCHES "${regex}")
    message(FATAL_ERROR "output does not match '${regex}'")
  endif()
endforeach()
