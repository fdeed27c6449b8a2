# Compiler flags every Strata target gets, through the interface target strata_options.
#
# Bit-for-bit results between engines and backends need a fixed floating-point contract: no contraction of a*b+c into
# an FMA in one code path and not in another. GCC/Clang get -ffp-contract=off, nvcc --fmad=false.
# STRATA_NATIVE adds -march=native to host C++ (AVX2/AVX-512 vectors where the CPU has them): -ffp-contract=off still
# forbids FMA contraction, and vector +, -, *, / round exactly like scalar ones, so results keep their bits.
add_library(strata_options INTERFACE)
target_include_directories(strata_options INTERFACE ${PROJECT_SOURCE_DIR})
target_compile_options(strata_options INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -ffp-contract=off>
  $<$<AND:$<COMPILE_LANGUAGE:CXX>,$<BOOL:${STRATA_WERROR}>>:-Werror>
  $<$<AND:$<COMPILE_LANGUAGE:CXX>,$<BOOL:${STRATA_NATIVE}>>:-march=native>
  $<$<COMPILE_LANGUAGE:CUDA>:--extended-lambda --fmad=false -Xcompiler=-Wall,-Wextra,-ffp-contract=off>
  $<$<AND:$<COMPILE_LANGUAGE:CUDA>,$<BOOL:${STRATA_WERROR}>>:-Werror=all-warnings -Xcompiler=-Werror>
  $<$<AND:$<COMPILE_LANGUAGE:CUDA>,$<BOOL:${STRATA_PTXAS_VERBOSE}>>:-Xptxas=-v>)
if(STRATA_ENABLE_CUDA)
  target_compile_definitions(strata_options INTERFACE STRATA_HAVE_CUDA=1)
endif()

# STRATA_SANITIZE: sanitizers for every C and C++ target (compile and link), e.g. "address,undefined" or "thread".
# Findings stop the program (-fno-sanitize-recover), so a test with undefined behaviour fails instead of printing a
# line. .ci/run builds build-asan/ and build-tsan/ with it; tests/sanitizers/ holds the run-time options.
if(STRATA_SANITIZE)
  if(STRATA_ENABLE_CUDA)
    message(FATAL_ERROR "STRATA_SANITIZE is for host builds: configure without STRATA_ENABLE_CUDA")
  endif()
  if(STRATA_SANITIZE MATCHES "thread" AND STRATA_SANITIZE MATCHES "address")
    message(FATAL_ERROR "STRATA_SANITIZE: thread and address cannot be combined")
  endif()
  set(strata_sanitize_flags -fsanitize=${STRATA_SANITIZE} -fno-sanitize-recover=all -fno-omit-frame-pointer)
  add_compile_options("$<$<COMPILE_LANGUAGE:C,CXX>:${strata_sanitize_flags}>")
  add_link_options(${strata_sanitize_flags})
endif()
