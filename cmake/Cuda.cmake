# HWARO_CUDA=AUTO|ON|OFF -> HWARO_WITH_CUDA. AUTO turns CUDA on where nvcc is found
# (on PATH or at /usr/local/cuda/bin/nvcc).
set(HWARO_WITH_CUDA OFF)
if(NOT HWARO_CUDA STREQUAL "OFF")
  if(NOT CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      # Ampere, Hopper (the H100/H200 of gpu-check.sh), and PTX for newer cards.
      set(CMAKE_CUDA_ARCHITECTURES 80-real 90)
    endif()
    enable_language(CUDA)
    # CMake 3.25 does not know nvcc's C++20 flag (nvcc 12 and later have it), so tell it.
    set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
    set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
    set(CMAKE_CUDA_STANDARD 20)
    set(CMAKE_CUDA_STANDARD_REQUIRED ON)
    # The constexpr helpers of src/kernels/ and <limits> are called from device code.
    string(APPEND CMAKE_CUDA_FLAGS " --expt-relaxed-constexpr")
    find_package(CUDAToolkit REQUIRED)
    # The fused optimiser step passes up to 17 KB of kernel arguments (cuda/multi_tensor_apply.cuh):
    # CUDA 12.1 raised the limit from 4 KB to 32 KB.
    if(CUDAToolkit_VERSION VERSION_LESS 12.1)
      message(FATAL_ERROR "hwaro needs CUDA 12.1 or newer, found ${CUDAToolkit_VERSION}; or configure with -DHWARO_CUDA=OFF")
    endif()
    set(HWARO_WITH_CUDA ON)
  elseif(HWARO_CUDA STREQUAL "ON")
    message(FATAL_ERROR "HWARO_CUDA=ON but no CUDA compiler (nvcc) was found")
  endif()
endif()
message(STATUS "hwaro: CUDA backend ${HWARO_WITH_CUDA}")
