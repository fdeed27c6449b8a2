# Flags of Strata's own build, and the usage requirements its library targets pass to whoever links them.
#
# strata_usage_requirements(TARGET): PUBLIC on a library, so a user's code that includes Strata's headers compiles
#   the kernels the way Strata's tests checked them:
#   - C++20 (cxx_std_20; cuda_std_20 in the CUDA build);
#   - the floating-point contract that bit-identity between engines and backends rests on: no contraction of a*b+c
#     into an FMA in one code path and not in another (GCC/Clang -ffp-contract=off, nvcc --fmad=false). The kernels
#     are templates compiled in the user's translation units, so the flag must reach them there;
#   - nvcc --extended-lambda (kernel bodies are __host__ __device__ lambdas) and STRATA_HAVE_CUDA in the CUDA build;
#   - STRATA_PLATFORM_MATH with that option (strata::math then calls the platform's functions: every translation unit
#     must agree, the functions being inline).
# strata_build_flags(TARGET): PRIVATE, Strata's own targets only: warnings (errors with STRATA_WERROR),
#   -march=native with STRATA_NATIVE, ptxas statistics with STRATA_PTXAS_VERBOSE. A user's target gets none of them.
function(strata_usage_requirements target)
  target_compile_features(${target} PUBLIC cxx_std_20)
  target_compile_options(${target} PUBLIC
    $<$<COMPILE_LANGUAGE:CXX>:-ffp-contract=off>
    $<$<COMPILE_LANGUAGE:CUDA>:--extended-lambda --fmad=false -Xcompiler=-ffp-contract=off>)
  if(STRATA_PLATFORM_MATH)
    target_compile_definitions(${target} PUBLIC STRATA_PLATFORM_MATH=1)
  endif()
  if(STRATA_ENABLE_CUDA)
    target_compile_features(${target} PUBLIC cuda_std_20)
    target_compile_definitions(${target} PUBLIC STRATA_HAVE_CUDA=1)
  endif()
endfunction()

function(strata_build_flags target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic>
    $<$<AND:$<COMPILE_LANGUAGE:CXX>,$<BOOL:${STRATA_WERROR}>>:-Werror>
    $<$<AND:$<COMPILE_LANGUAGE:CXX>,$<BOOL:${STRATA_NATIVE}>>:-march=native>
    $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra>
    $<$<AND:$<COMPILE_LANGUAGE:CUDA>,$<BOOL:${STRATA_WERROR}>>:-Werror=all-warnings -Xcompiler=-Werror>
    $<$<AND:$<COMPILE_LANGUAGE:CUDA>,$<BOOL:${STRATA_PTXAS_VERBOSE}>>:-Xptxas=-v>)
endfunction()

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
