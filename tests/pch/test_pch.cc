// The target the test precompiled header is built with (tests/CMakeLists.txt):
// gtest's main and no test. Test executables reuse its header.
