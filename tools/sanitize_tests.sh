#!/usr/bin/env bash
# The unit tests built with AddressSanitizer and UndefinedBehaviorSanitizer
# (clang; build-asan/, -DGPUNOISE_SANITIZE=ON), among them the CUPTI injection
# library loaded into fake_cuda_app and into test processes under the
# stand-in libcupti. Any sanitizer report aborts the test that made it.
# Run through `tools/test.sh --sanitize` (which runs tools/setup.sh first);
# extra arguments go to ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
build_type=${GPUNOISE_BUILD_TYPE:-RelWithDebInfo}
# clang, like the fuzz build: at -O0 with the sanitizers it compiles a file
# in half gcc's time (analysis.cc 6.5 -> 3.4 s), the sanitizer build being
# CI's longest step, and its UBSan also checks the type of every call
# through a function pointer (-fsanitize=function), which gcc's does not.
# A build-asan/ configured with another compiler is made anew.
if [[ -f build-asan/CMakeCache.txt ]] && ! grep -q '^CMAKE_CXX_COMPILER:[A-Z]*=.*clang++' build-asan/CMakeCache.txt; then
  rm -rf build-asan
fi
CC=clang CXX=clang++ cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE="$build_type" -DGPUNOISE_SANITIZE=ON \
  ${GPUNOISE_CMAKE_ARGS:-} >/dev/null
ninja -C build-asan ${GPUNOISE_NINJA_ARGS:-} unit_tests
built=$SECONDS
# abort_on_error: a report is a crash, which ctest shows as a failure with
# the report above it. LeakSanitizer is on (the default).
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_stack_use_after_return=1:strict_string_checks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
rc=0
ctest --test-dir build-asan -L unit --output-on-failure --timeout 600 -j"$(nproc)" "$@" || rc=$?
echo "sanitize: build $((built - start)) s, unit tests $((SECONDS - built)) s"
exit "$rc"
