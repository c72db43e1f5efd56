# Sanitizer and fuzzing builds, each in its own build directory so the
# normal build is untouched (tools/test.sh --sanitize / --fuzz make them):
#
#   GPUNOISE_SANITIZE=ON  (build-asan/, clang; gcc works too): every target with
#     AddressSanitizer and UndefinedBehaviorSanitizer; any report aborts, so
#     a unit test that trips one fails.
#   GPUNOISE_FUZZ=ON      (build-fuzz/, clang only): the same sanitizers plus
#     libFuzzer's coverage instrumentation on the project's code, and the
#     fuzz targets of tests/fuzz.
#
# Must be included before the add_subdirectory() calls: add_compile_options
# applies to the directories added after it. The BPF objects are built by
# custom commands with their own flags and are not affected.
option(GPUNOISE_SANITIZE "Build with AddressSanitizer and UndefinedBehaviorSanitizer" OFF)
option(GPUNOISE_FUZZ "Build the libFuzzer targets of tests/fuzz (clang; implies the sanitizers)" OFF)

if(GPUNOISE_SANITIZE OR GPUNOISE_FUZZ)
  # -fno-sanitize-recover: UBSan's findings abort like ASan's instead of
  # printing and going on, so neither a test nor a fuzz run can miss one.
  set(GPUNOISE_SANITIZER_FLAGS -fsanitize=address,undefined -fno-sanitize-recover=undefined
      -fno-omit-frame-pointer)
  add_compile_options(${GPUNOISE_SANITIZER_FLAGS})
  # Line tables are all a sanitizer's stack trace needs, and the unit tests
  # need no optimizer: they run in about a minute, while the sanitizer build
  # is CI's longest step (1339 s at -O1 in CI). -O0 compiles a test file 2.5x
  # faster than -O1 (kernel_log_test.cc 5.7 -> 2.2 s) and a library file 1.5x,
  # and hides no access from ASan (at -O2 it missed a dangling string_view
  # that -O1 found). The fuzz targets keep -O2: their runs per second are
  # their coverage.
  if(GPUNOISE_FUZZ)
    add_compile_options(-g1)
  else()
    add_compile_options(-O0 -g1)
  endif()
  add_link_options(-fsanitize=address,undefined)
  message(STATUS "Sanitizers: address, undefined")
endif()

if(GPUNOISE_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "GPUNOISE_FUZZ needs clang (libFuzzer): configure with "
                        "CC=clang CXX=clang++ (Debian: clang and libclang-rt-14-dev)")
  endif()
  # Coverage feedback for every library a fuzz target links; only the
  # targets themselves link libFuzzer's main (tests/fuzz/CMakeLists.txt).
  add_compile_options(-fsanitize=fuzzer-no-link)
endif()
