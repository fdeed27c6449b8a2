# The strata command line on bad input: every class of usage and configuration error exits with 2 and a message that
# names the key, the value and what was expected, before any output exists.
set(STRATA_CLI_DIR ${CMAKE_BINARY_DIR}/cli)
file(MAKE_DIRECTORY ${STRATA_CLI_DIR})
file(WRITE ${STRATA_CLI_DIR}/unknown_key.yaml "grid:\n  vertical: {levles: 10}\ntime: {steps: 2}\n")
file(WRITE ${STRATA_CLI_DIR}/wrong_type.yaml "grid:\n  vertical: {levels: ten}\ntime: {steps: 2}\n")
file(WRITE ${STRATA_CLI_DIR}/out_of_range.yaml "time: {dt: -5, steps: 2}\n")
file(WRITE ${STRATA_CLI_DIR}/syntax.yaml "grid:\n  vertical: {levels: 10\ntime: {steps: 2}\n")
file(WRITE ${STRATA_CLI_DIR}/unstable.yaml
     "grid:\n  vertical: {levels: 100, top: 1000.0}\n  horizontal: {type: columns, ncol: 2}\ntime: {dt: 600.0, steps: 2}\nprocesses:\n  - vertical_diffusion: {mode: explicit, kappa: 10.0}\noutput: {path: ${STRATA_CLI_DIR}/unstable/never.nc, interval: 600.0}\n")

function(strata_cli_test name code)
  cmake_parse_arguments(ARG "" "" "ARGS;EXPECT" ${ARGN})
  string(REPLACE ";" "\\;" expect "${ARG_EXPECT}")
  add_test(NAME cli_${name}
           COMMAND ${CMAKE_COMMAND} "-DCOMMAND=$<TARGET_FILE:strata>;${ARG_ARGS}" -DEXPECT_CODE=${code}
                   "-DEXPECT_OUTPUT=${ARG_EXPECT}" -P ${PROJECT_SOURCE_DIR}/cmake/ExpectExit.cmake)
  set_tests_properties(cli_${name} PROPERTIES ENVIRONMENT "${STRATA_MPI_ENV}" LABELS cli)
endfunction()

strata_cli_test(unknown_key 2 ARGS validate ${STRATA_CLI_DIR}/unknown_key.yaml
                EXPECT "grid.vertical.levles" "did you mean 'levels'")
strata_cli_test(wrong_type 2 ARGS validate ${STRATA_CLI_DIR}/wrong_type.yaml
                EXPECT "grid.vertical.levels" "'ten' is not an integer")
strata_cli_test(out_of_range 2 ARGS validate ${STRATA_CLI_DIR}/out_of_range.yaml EXPECT "time.dt" "-5")
strata_cli_test(yaml_syntax 2 ARGS validate ${STRATA_CLI_DIR}/syntax.yaml EXPECT "syntax.yaml:[0-9]+:[0-9]+")
strata_cli_test(missing_file 2 ARGS run ${STRATA_CLI_DIR}/does_not_exist.yaml EXPECT "does_not_exist.yaml")
strata_cli_test(bad_override 2 ARGS validate ${PROJECT_SOURCE_DIR}/configs/default.yaml --set grid.vertical.levels
                EXPECT "--set grid.vertical.levels" "key.path=value")
strata_cli_test(override_out_of_range 2 ARGS validate ${PROJECT_SOURCE_DIR}/configs/default.yaml --set
                grid.vertical.levels=0 EXPECT "grid.vertical.levels" "'0'")
strata_cli_test(unknown_subcommand 2 ARGS frobnicate)
strata_cli_test(compare_missing_file 2 ARGS compare ${STRATA_CLI_DIR}/nope_a.nc ${STRATA_CLI_DIR}/nope_b.nc
                EXPECT "nope_a.nc")
strata_cli_test(valid_config 0 ARGS validate ${PROJECT_SOURCE_DIR}/configs/default.yaml EXPECT "is valid")
# The stability check stops before stepping, names the limit and where it is exceeded, and creates no output.
strata_cli_test(unstable_explicit_diffusion 2 ARGS run ${STRATA_CLI_DIR}/unstable.yaml
                EXPECT "K dt / dz\\^2" "stability limit 0.5" "column 0")
add_test(NAME cli_unstable_left_no_output
         COMMAND ${CMAKE_COMMAND} -E rm ${STRATA_CLI_DIR}/unstable/never.nc ${STRATA_CLI_DIR}/unstable/never.nc.partial)
set_tests_properties(cli_unstable_left_no_output PROPERTIES WILL_FAIL TRUE DEPENDS cli_unstable_explicit_diffusion
                     LABELS cli)
