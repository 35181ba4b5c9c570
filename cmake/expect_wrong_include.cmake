# ctest script (tests/CMakeLists.txt, layer_compile_*): builds one planted object target whose source
# includes a header of a layer its target does not link, and passes only when the compile fails on
# that include. A compile that succeeds, or fails on anything else (the allowed include before it
# included), fails the test, so it shows both that the layer's own view works and that the wrong
# include is refused by the compiler, not only by tools/check_layers.py.
#
#   cmake -DBUILD_DIR=<build> -DTARGET=<planted target> -DHEADER=<layer/file.h> -P expect_wrong_include.cmake
foreach(var BUILD_DIR TARGET HEADER)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "expect_wrong_include.cmake: -D${var}= is missing")
  endif()
endforeach()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${BUILD_DIR} --target ${TARGET} RESULT_VARIABLE rc
                OUTPUT_VARIABLE out ERROR_VARIABLE out)
message("${out}")
if(rc EQUAL 0)
  message(FATAL_ERROR "FAIL: ${TARGET} compiled: \"${HEADER}\" was found although the layer does not link its layer")
endif()
# GCC: `fatal error: report/x.h: No such file or directory`; clang: `fatal error: 'report/x.h' file not found`.
string(REPLACE "." "\\." header_re "${HEADER}")
if(NOT out MATCHES "${header_re}'?(: No such file or directory| file not found)")
  message(FATAL_ERROR "FAIL: ${TARGET} failed to compile, but not on the planted include \"${HEADER}\"")
endif()
message("PASS: ${TARGET}: the compiler refuses \"${HEADER}\" (docs/architecture.md, \"Layers\")")
