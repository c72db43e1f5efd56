// Integration tests need root and real eBPF. Without them they skip with the
// reason, unless GPUNOISE_REQUIRE_ROOT_TESTS=1 (set by .ci/run), where a skip
// would hide a test that CI must run, so it fails instead.
#pragma once

#include <gtest/gtest.h>

#include <string>

namespace gpunoise::testing {

bool IsRoot();
bool RootTestsRequired();
// Empty when the test can run; else the reason it cannot.
std::string MissingForRealEbpf();

}  // namespace gpunoise::testing

#define GN_REQUIRE_REAL_EBPF()                                                  \
  do {                                                                          \
    std::string gn_missing_ = ::gpunoise::testing::MissingForRealEbpf();        \
    if (!gn_missing_.empty()) {                                                 \
      if (::gpunoise::testing::RootTestsRequired()) FAIL() << gn_missing_;      \
      GTEST_SKIP() << gn_missing_;                                              \
    }                                                                           \
  } while (0)
