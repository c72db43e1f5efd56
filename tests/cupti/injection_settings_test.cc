#include "cupti/injection_settings.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "cupti/activity_names.h"
#include "model/gpu_capture.h"

namespace gpunoise::cupti {
namespace {

TEST(InjectionSettings, VisibleDevicesMapOrdinalsAndStopLikeCuda) {
  EXPECT_TRUE(ParseVisibleDevices(nullptr).empty());
  EXPECT_EQ(ParseVisibleDevices("3,1"), (std::vector<int>{3, 1}));
  EXPECT_EQ(ParseVisibleDevices(" 2 , 0"), (std::vector<int>{2, 0}));
  EXPECT_EQ(ParseVisibleDevices("GPU-8a1b,4"), (std::vector<int>{-1, 4}));
  EXPECT_EQ(ParseVisibleDevices("0,-1,2"), (std::vector<int>{0}));
}

TEST(InjectionSettings, ReadsTheEnvironmentTheRecorderSets) {
  std::map<std::string, std::string> env = {
      {model::kGpuDirEnv, "/tmp/frag"},
      {model::kGpuFlushMsEnv, "250"},
      {model::kGpuKeepSecondsEnv, "600"},
      {model::kGpuApiEnv, "all"},
      {model::kGpuGraphNodesEnv, "1"},
      {model::kGpuBufferMbEnv, "32"},
      {"CUDA_VISIBLE_DEVICES", "5"},
  };
  auto s = ReadInjectionSettings([&](const char* name) -> const char* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  });
  EXPECT_EQ(s.dir, "/tmp/frag");
  EXPECT_EQ(s.flush_ns, 250000000u);
  EXPECT_EQ(s.keep_ns, 600000000000u);
  EXPECT_TRUE(s.all_api);
  EXPECT_TRUE(s.graph_nodes);
  EXPECT_EQ(s.max_buffers * s.buffer_bytes, 32u << 20);
  EXPECT_EQ(s.visible_devices, std::vector<int>{5});
}

TEST(InjectionSettings, DefaultsWhenUnsetOrMalformed) {
  std::map<std::string, std::string> env = {{model::kGpuFlushMsEnv, "fast"}};
  auto s = ReadInjectionSettings([&](const char* name) -> const char* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  });
  EXPECT_TRUE(s.dir.empty());
  EXPECT_EQ(s.flush_ns, model::kDefaultFlushMs * 1000000u);
  EXPECT_EQ(s.keep_ns, 0u);
  EXPECT_FALSE(s.all_api);
  EXPECT_FALSE(s.graph_nodes);
}

TEST(InjectionSettings, DefaultApiSelectionKeepsLaunchesCopiesAndWaits) {
  for (const char* name : {"cudaLaunchKernel_v7000", "cuLaunchKernelEx", "cudaGraphLaunch_v10000",
                           "cudaMemcpyAsync_v3020", "cuMemsetD8Async", "cudaStreamSynchronize_v3020",
                           "cuCtxSynchronize", "cudaEventSynchronize_v3020", "cudaStreamWaitEvent_v3020"})
    EXPECT_TRUE(IsRecordedByDefault(name)) << name;
  for (const char* name : {"cudaGetDevice_v3020", "cudaMalloc_v3020", "cuCtxGetCurrent", "cudaEventRecord_v3020"})
    EXPECT_FALSE(IsRecordedByDefault(name)) << name;
}

TEST(ActivityNames, ApiVersionSuffixIsStripped) {
  EXPECT_EQ(StripApiVersion("cudaLaunchKernel_v7000"), "cudaLaunchKernel");
  EXPECT_EQ(StripApiVersion("cuLaunchKernel"), "cuLaunchKernel");
  EXPECT_EQ(StripApiVersion("cuMemcpyHtoD_v2"), "cuMemcpyHtoD");
  EXPECT_EQ(StripApiVersion("odd_vx"), "odd_vx");
  EXPECT_EQ(StripApiVersion("_v"), "_v");
}

TEST(GpuCapture, FragmentNamesSortByTimeAndParseBack) {
  std::string a = model::FragmentFileName(42, 999);
  std::string b = model::FragmentFileName(42, 1000);
  EXPECT_LT(a, b);
  auto parsed = model::ParseFragmentFileName(b);
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->pid, 42);
  EXPECT_EQ(parsed->flush_ts, 1000u);
  EXPECT_FALSE(model::ParseFragmentFileName("." + b + ".tmp"));
  EXPECT_FALSE(model::ParseFragmentFileName("gpunoise-gpu-x-1.pftrace"));
  EXPECT_FALSE(model::ParseFragmentFileName("other.pftrace"));
}

TEST(InjectionSettings, ContainerOrdinalsMapThroughNvidiaVisibleDevices) {
  // The runtime exposed physical GPUs 3 and 5 as ordinals 0 and 1.
  EXPECT_EQ(ComposeVisibleDevices("3,5", nullptr, true), (std::vector<int>{3, 5}));
  // ... and CUDA_VISIBLE_DEVICES=1 inside picks the second of them.
  EXPECT_EQ(ComposeVisibleDevices("3,5", "1", true), (std::vector<int>{5}));
  EXPECT_EQ(ComposeVisibleDevices("3,5", "7", true), (std::vector<int>{-1}));
  // UUIDs: no index (the device record's UUID names the GPU).
  EXPECT_EQ(ComposeVisibleDevices("GPU-0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0", nullptr, true),
            (std::vector<int>{-1}));
  // "all", unset, and any value outside a container: the ordinals as CUDA says.
  EXPECT_EQ(ComposeVisibleDevices("all", "2", true), (std::vector<int>{2}));
  EXPECT_TRUE(ComposeVisibleDevices(nullptr, nullptr, true).empty());
  EXPECT_EQ(ComposeVisibleDevices("3,5", "1", false), (std::vector<int>{1}));
}

}  // namespace
}  // namespace gpunoise::cupti
