# CMake 3.25 predates nvcc's C++20 support in its tables: teach it the flag so CUDA sources build as C++20 and the
# cuda_std_20 compile feature that Strata's targets carry is known. Included by Strata's build and by StrataConfig.cmake
# in a project that has enabled CUDA.
if(NOT DEFINED CMAKE_CUDA20_STANDARD_COMPILE_OPTION OR CMAKE_CUDA20_STANDARD_COMPILE_OPTION STREQUAL "")
  set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
  set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
endif()
if(NOT "cuda_std_20" IN_LIST CMAKE_CUDA_COMPILE_FEATURES)
  list(APPEND CMAKE_CUDA_COMPILE_FEATURES cuda_std_20)
endif()
