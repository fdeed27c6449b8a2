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
strata_cli_test(compare_bad_tolerance 2 ARGS compare ${PROJECT_SOURCE_DIR}/data/reference/default.nc
                ${PROJECT_SOURCE_DIR}/data/reference/default.nc --rtol T=ten EXPECT "--rtol T" "'ten'" "number >= 0")
strata_cli_test(compare_misspelt_variable 2 ARGS compare ${PROJECT_SOURCE_DIR}/data/reference/default.nc
                ${PROJECT_SOURCE_DIR}/data/reference/default.nc --atol Tt=1 EXPECT "'Tt', which neither file has")
strata_cli_test(manifest_in_missing_folder 2 ARGS run ${PROJECT_SOURCE_DIR}/configs/default.yaml --manifest
                ${STRATA_CLI_DIR}/no_such_folder/manifest EXPECT "--manifest" "an existing folder")
strata_cli_test(valid_config 0 ARGS validate ${PROJECT_SOURCE_DIR}/configs/default.yaml EXPECT "is valid")
# A tendency of a process the case does not enable, or of a variable the process does not change.
strata_cli_test(tendency_of_disabled_process 2 ARGS validate ${PROJECT_SOURCE_DIR}/configs/default.yaml --set
                output.variables=[T,tendency_of_qr_due_to_kessler]
                EXPECT "output.variables.1.: 'tendency_of_qr_due_to_kessler'" "not enabled")
strata_cli_test(tendency_of_unchanged_variable 2 ARGS validate ${PROJECT_SOURCE_DIR}/configs/default.yaml --set
                output.variables=[tendency_of_T_due_to_coriolis]
                EXPECT "output.variables.0.: 'tendency_of_T_due_to_coriolis'" "neither adds a tendency to 'T' nor adjusts it" "u, v")
# The stability check stops before stepping, names the limit and where it is exceeded, and creates no output.
strata_cli_test(unstable_explicit_diffusion 2 ARGS run ${STRATA_CLI_DIR}/unstable.yaml
                EXPECT "lowest eigenvalue of the diffusion operator" "stability limit 2.51275" "column 0")
# No file at all in the output folder (neither never.nc nor any partial or temporary file), checked file by file;
# the check then removes the folder, so that every run starts without one.
file(WRITE ${STRATA_CLI_DIR}/expect_no_files.cmake [=[
file(GLOB_RECURSE found LIST_DIRECTORIES true "${DIR}/*")
file(REMOVE_RECURSE "${DIR}")
if(found)
  message(FATAL_ERROR "expected no file in ${DIR}, found: ${found}")
endif()
message("no file in ${DIR}")
]=])
set_tests_properties(cli_unstable_explicit_diffusion PROPERTIES FIXTURES_SETUP cli_unstable)
add_test(NAME cli_unstable_left_no_output
         COMMAND ${CMAKE_COMMAND} -DDIR=${STRATA_CLI_DIR}/unstable -P ${STRATA_CLI_DIR}/expect_no_files.cmake)
set_tests_properties(cli_unstable_left_no_output PROPERTIES FIXTURES_REQUIRED cli_unstable LABELS cli)

# The bad-configuration corpus: each file in tests/configs/bad exits with 2 (or its '# exit:') and the message its
# header names, and creates no file (tests/configs/run_bad_configs.sh; the cases per class are printed).
add_test(NAME cli_bad_configs
         COMMAND ${PROJECT_SOURCE_DIR}/tests/configs/run_bad_configs.sh $<TARGET_FILE:strata>
                 ${PROJECT_SOURCE_DIR}/tests/configs/bad ${STRATA_CLI_DIR}/bad_configs)
set_tests_properties(cli_bad_configs PROPERTIES ENVIRONMENT "${STRATA_MPI_ENV}" LABELS cli)

# scripts/quicklook on small outputs of the strata binary: a lat-lon case (cross sections, surface fields, time series)
# and a column case (profiles). The check script runs it into a fresh folder and wants exit 0, every expected PNG (a
# real PNG, named in what it printed) and no other failure. Needs Debian's python3-netcdf4, -matplotlib, -numpy.
set(STRATA_QUICKLOOK ${PROJECT_SOURCE_DIR}/scripts/quicklook)
file(WRITE ${STRATA_CLI_DIR}/quicklook_check.cmake [=[
file(REMOVE_RECURSE "${OUT}")
execute_process(COMMAND "${QUICKLOOK}" "${FILE}" --out "${OUT}" RESULT_VARIABLE code OUTPUT_VARIABLE out
                ERROR_VARIABLE err)
message("${out}${err}")
if(NOT "${code}" STREQUAL "0")
  message(FATAL_ERROR "scripts/quicklook exited with ${code}, expected 0")
endif()
file(GLOB pngs "${OUT}/*.png")
list(LENGTH pngs n)
if(n LESS 1)
  message(FATAL_ERROR "no PNG in ${OUT}")
endif()
string(REPLACE "," ";" expect "${EXPECT_PNGS}")
foreach(name IN LISTS expect)
  if(NOT EXISTS "${OUT}/${name}")
    message(FATAL_ERROR "${OUT}/${name} was not written")
  endif()
endforeach()
foreach(png IN LISTS pngs)
  file(READ "${png}" magic LIMIT 8 HEX)
  if(NOT magic STREQUAL "89504e470d0a1a0a")
    message(FATAL_ERROR "${png} is not a PNG")
  endif()
  string(FIND "${out}" "${png}" printed)
  if(printed EQUAL -1)
    message(FATAL_ERROR "${png} is not among the paths scripts/quicklook printed")
  endif()
endforeach()
message("${n} PNGs in ${OUT}")
]=])

function(strata_quicklook_test name config)
  cmake_parse_arguments(ARG "" "" "SET;EXPECT_PNGS" ${ARGN})
  set(dir ${STRATA_CLI_DIR}/quicklook_${name})
  set(sets)
  foreach(s IN LISTS ARG_SET)
    list(APPEND sets --set ${s})
  endforeach()
  add_test(NAME cli_quicklook_${name}_run
           COMMAND $<TARGET_FILE:strata> run ${PROJECT_SOURCE_DIR}/configs/${config}.yaml --output ${dir} ${sets})
  set_tests_properties(cli_quicklook_${name}_run PROPERTIES ENVIRONMENT "${STRATA_MPI_ENV}"
                       FIXTURES_SETUP cli_quicklook_${name} LABELS cli)
  string(REPLACE ";" "," expect "${ARG_EXPECT_PNGS}")  # a ;-list would not survive the command line
  add_test(NAME cli_quicklook_${name}
           COMMAND ${CMAKE_COMMAND} -DQUICKLOOK=${STRATA_QUICKLOOK} -DFILE=${dir}/${config}.nc -DOUT=${dir}/png
                   "-DEXPECT_PNGS=${expect}" -P ${STRATA_CLI_DIR}/quicklook_check.cmake)
  set_tests_properties(cli_quicklook_${name} PROPERTIES FIXTURES_REQUIRED cli_quicklook_${name} LABELS cli)
endfunction()

strata_quicklook_test(latlon default SET time.days=0.25
                      EXPECT_PNGS cross_section_T.png cross_section_q.png surface_water.png timeseries.png)
strata_quicklook_test(columns subsidence_tracer SET time.days=0.25 EXPECT_PNGS profile_tracer.png timeseries.png)

# Must fail with 2 and name the file: a file that does not exist, one that is not NetCDF (a config).
add_test(NAME cli_quicklook_missing_file
         COMMAND ${CMAKE_COMMAND} "-DCOMMAND=${STRATA_QUICKLOOK};${STRATA_CLI_DIR}/does_not_exist.nc" -DEXPECT_CODE=2
                 "-DEXPECT_OUTPUT=does_not_exist.nc: no such file" -P ${PROJECT_SOURCE_DIR}/cmake/ExpectExit.cmake)
add_test(NAME cli_quicklook_not_netcdf
         COMMAND ${CMAKE_COMMAND} "-DCOMMAND=${STRATA_QUICKLOOK};${PROJECT_SOURCE_DIR}/configs/default.yaml"
                 -DEXPECT_CODE=2 "-DEXPECT_OUTPUT=default.yaml: cannot be read as NetCDF"
                 -P ${PROJECT_SOURCE_DIR}/cmake/ExpectExit.cmake)
# --out naming an existing file: exit 2 and a message, not a traceback (the latlon case's output as input).
add_test(NAME cli_quicklook_out_is_a_file
         COMMAND ${CMAKE_COMMAND}
                 "-DCOMMAND=${STRATA_QUICKLOOK};${STRATA_CLI_DIR}/quicklook_latlon/default.nc;--out;${PROJECT_SOURCE_DIR}/configs/default.yaml"
                 -DEXPECT_CODE=2 "-DEXPECT_OUTPUT=--out .*default.yaml: exists and is not a folder"
                 -P ${PROJECT_SOURCE_DIR}/cmake/ExpectExit.cmake)
set_tests_properties(cli_quicklook_out_is_a_file PROPERTIES FIXTURES_REQUIRED cli_quicklook_latlon)
set_tests_properties(cli_quicklook_missing_file cli_quicklook_not_netcdf cli_quicklook_out_is_a_file
                     PROPERTIES LABELS cli)
strata_cli_test(compare_nan_tolerance 2 ARGS compare ${PROJECT_SOURCE_DIR}/data/reference/default.nc
                ${PROJECT_SOURCE_DIR}/data/reference/default.nc --rtol nan EXPECT "'nan' is not a tolerance")

# Ranks started with different configurations (an MPMD launch: the same file, one rank with another time.days) are
# refused on every rank with exit 2 before anything runs, instead of stepping different physics or deadlocking.
add_test(NAME cli_ranks_with_different_configs
         COMMAND ${CMAKE_COMMAND}
                 "-DCOMMAND=${MPIEXEC_EXECUTABLE};--oversubscribe;-n;1;$<TARGET_FILE:strata>;validate;${PROJECT_SOURCE_DIR}/configs/default.yaml;:;-n;1;$<TARGET_FILE:strata>;validate;${PROJECT_SOURCE_DIR}/configs/default.yaml;--set;time.days=1"
                 -DEXPECT_CODE=2 "-DEXPECT_OUTPUT=started with different configurations"
                 -P ${PROJECT_SOURCE_DIR}/cmake/ExpectExit.cmake)
set_tests_properties(cli_ranks_with_different_configs PROPERTIES ENVIRONMENT "${STRATA_MPI_ENV}" PROCESSORS 2
                     LABELS "cli;mpi")
