// NVML through dlopen, against a fake libnvidia-ml built by the tests (no
// GPU here): binding, nvmlInit failures, per-GPU queries, size queries.
#include "doctor/nvml_library.h"

#include <gtest/gtest.h>
#include <stdlib.h>

namespace gpunoise::doctor {
namespace {

class NvmlLibraryTest : public ::testing::Test {
 protected:
  void TearDown() override {
    for (const char* v : {"GN_FAKE_NVML_INIT_ERROR", "GN_FAKE_NVML_BDF", "GN_FAKE_NVML_PERSISTENCE",
                          "GN_FAKE_NVML_THROTTLE", "GN_FAKE_NVML_ECC_UNC", "GN_FAKE_NVML_RETIRED_DBE",
                          "GN_FAKE_NVML_REPLAYS", "GN_FAKE_NVML_REPLAY_STEP"})
      unsetenv(v);
  }
};

TEST_F(NvmlLibraryTest, ReadsEachFieldOfAKnownGpu) {
  setenv("GN_FAKE_NVML_PERSISTENCE", "0", 1);
  setenv("GN_FAKE_NVML_THROTTLE", "0x48", 1);
  setenv("GN_FAKE_NVML_ECC_UNC", "3", 1);
  setenv("GN_FAKE_NVML_RETIRED_DBE", "2", 1);
  setenv("GN_FAKE_NVML_REPLAYS", "10", 1);
  auto lib = NvmlLibrary::Load(GN_FAKE_NVML_PATH);
  ASSERT_TRUE(lib.ok()) << lib.error().message;
  auto h = (*lib)->Query("0000:03:00.0");
  ASSERT_TRUE(h.ok()) << h.error().message;
  EXPECT_EQ(h->persistence_mode, false);
  EXPECT_EQ(h->throttle_reasons, kThrottleHwSlowdown | kThrottleHwThermal);
  EXPECT_EQ(h->ecc_enabled, true);
  EXPECT_EQ(h->ecc_uncorrected_volatile, 3u);
  EXPECT_EQ(h->ecc_uncorrected_aggregate, 0u);
  EXPECT_EQ(h->retired_pages_dbe, 2u);  // from the size query (insufficient size)
  EXPECT_EQ(h->retired_pages_sbe, 0u);
  EXPECT_EQ(h->retired_pages_pending, false);
  EXPECT_FALSE(h->remapped_rows.has_value());  // "not supported"
  EXPECT_EQ(h->pcie_replays, 10u);
}

TEST_F(NvmlLibraryTest, UnknownGpuIsAnError) {
  auto lib = NvmlLibrary::Load(GN_FAKE_NVML_PATH);
  ASSERT_TRUE(lib.ok());
  auto h = (*lib)->Query("0000:99:00.0");
  ASSERT_FALSE(h.ok());
  EXPECT_EQ(h.error().message, "failed to find GPU 0000:99:00.0 in NVML: Not Found");
}

TEST_F(NvmlLibraryTest, InitFailureAndMissingLibraryAreErrors) {
  setenv("GN_FAKE_NVML_INIT_ERROR", "1", 1);
  auto lib = NvmlLibrary::Load(GN_FAKE_NVML_PATH);
  ASSERT_FALSE(lib.ok());
  EXPECT_EQ(lib.error().message, "failed to initialize NVML: Driver Not Loaded (error 9)");
  auto missing = NvmlLibrary::Load("/nonexistent/libnvidia-ml.so.1");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("failed to load NVML /nonexistent/libnvidia-ml.so.1"), std::string::npos);
  NvmlAccess access = OpenNvml("/nonexistent/libnvidia-ml.so.1");
  EXPECT_FALSE(access.query);
  EXPECT_NE(access.unavailable_reason.find("failed to load NVML"), std::string::npos);
}

TEST_F(NvmlLibraryTest, LibraryWithoutNvmlSymbolsIsRejected) {
  // libm is a real shared object that is not NVML.
  auto lib = NvmlLibrary::Load("libm.so.6");
  ASSERT_FALSE(lib.ok());
  EXPECT_NE(lib.error().message.find("missing nvmlInit"), std::string::npos);
}

}  // namespace
}  // namespace gpunoise::doctor
