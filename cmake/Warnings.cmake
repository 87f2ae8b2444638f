# Warnings for hwaro's own targets (hwaro_warnings is linked privately by each).
add_library(hwaro_warnings INTERFACE)
target_compile_options(hwaro_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wcast-align -Woverloaded-virtual -Wno-missing-field-initializers>
  $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra>)
if(DEFINED ENV{CI})
  target_compile_options(hwaro_warnings INTERFACE $<$<COMPILE_LANGUAGE:CXX>:-Werror>)
endif()
