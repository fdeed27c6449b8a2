# The regression outputs (one rank) as climate tools read them: ncdump, cdo and xarray, and the CF conventions the
# files claim (tests/cf/cf_check.py). Needs Debian's cdo and python3-xarray (scripts/setup).
find_program(STRATA_PYTHON3 python3 PATHS /usr/bin NO_DEFAULT_PATH)
file(GLOB strata_cf_cases RELATIVE ${PROJECT_SOURCE_DIR}/configs ${PROJECT_SOURCE_DIR}/configs/*.yaml)
foreach(file IN LISTS strata_cf_cases)
  string(REPLACE ".yaml" "" case ${file})
  add_test(NAME cf_${case} COMMAND ${STRATA_PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/cf/cf_check.py
                                   ${CMAKE_BINARY_DIR}/regression/np1/${case}.nc)
  set_tests_properties(cf_${case} PROPERTIES FIXTURES_REQUIRED regression_${case} LABELS cf)
endforeach()

# Interval means that xarray and cdo average to the whole-run mean the run prints, and labels that say what each
# variable is in the case that wrote it (tests/cf/output_meaning.py; it also proves its interval checks can fail).
add_test(NAME cf_output_meaning COMMAND ${STRATA_PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/cf/output_meaning.py
                                        $<TARGET_FILE:strata> ${PROJECT_SOURCE_DIR} ${CMAKE_BINARY_DIR}/cf_output_meaning)
set_tests_properties(cf_output_meaning PROPERTIES ENVIRONMENT "${STRATA_MPI_ENV}" LABELS cf)

# The .partial history read while the run writes it: with output.format 64bit_offset every read sees whole records
# (docs/config.md, output.format; netCDF-4's HDF5 gives no such promise to a reader, which live_read.py measures
# when run by hand with netcdf4).
add_test(NAME cf_live_read_64bit_offset
         COMMAND ${STRATA_PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/cf/live_read.py $<TARGET_FILE:strata> ${PROJECT_SOURCE_DIR}
                 ${CMAKE_BINARY_DIR}/cf_live_read 64bit_offset --reads 30 --must-succeed)
set_tests_properties(cf_live_read_64bit_offset PROPERTIES ENVIRONMENT "${STRATA_MPI_ENV}" LABELS cf)
