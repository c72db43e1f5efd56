#include "analyze/gpu_gap_detector.h"

#include <gtest/gtest.h>

#include "analyze/synthetic.h"

namespace gpunoise::analyze {
namespace {

using namespace gpunoise::testing;

constexpr int32_t kPid = 500, kLauncher = 501, kHog = 600;

// Tracks as the CUPTI library writes them (docs/gpu.md): a group per GPU
// with NVML's tracks and a subgroup "<process> <pid>" holding the stream
// tracks; the CUDA calls on the launching thread's own track.
void GpuTracks(Synth& s) {
  auto& b = s.builder();
  b.OnTrack({10, 0, "python3", kPid, 0, false});        // process track
  b.OnTrack({11, 10, "python3", kPid, kLauncher, false});  // thread track
  b.OnTrack({20, 0, "GPU 0 (H200)", 0, 0, false});
  b.OnTrack({21, 20, "python3 500", 0, 0, false});
  b.OnTrack({12, 21, "GPU 0 (H200) stream 7", 0, 0, false});
  b.OnTrack({22, 20, "Clock throttling", 0, 0, false});
  b.OnTrack({23, 20, "SM clock", 0, 0, true});
  // NVML's throttle-reason slices sit under the GPU but are not GPU work.
  model::TrackEventRecord e;
  e.ts = kBase;
  e.track_uuid = 22;
  e.type = model::TrackEventType::kSliceBegin;
  e.name = "power cap";
  b.OnTrackEvent(e);
  e.ts = kBase + 900 * kMs;
  e.type = model::TrackEventType::kSliceEnd;
  b.OnTrackEvent(e);
}

void Slice(Synth& s, uint64_t track, uint64_t start, uint64_t end, const char* name, uint64_t flow,
           bool terminating) {
  model::TrackEventRecord e;
  e.ts = start;
  e.track_uuid = track;
  e.type = model::TrackEventType::kSliceBegin;
  e.name = name;
  (terminating ? e.terminating_flow_ids : e.flow_ids).push_back(flow);
  s.builder().OnTrackEvent(e);
  model::TrackEventRecord end_event;
  end_event.ts = end;
  end_event.track_uuid = track;
  end_event.type = model::TrackEventType::kSliceEnd;
  s.builder().OnTrackEvent(end_event);
}

// 100 iterations of 10 ms: the launcher launches at +0, the kernel runs
// +0.1..+6 ms; then the GPU idles 4 ms until the next launch. With `hog`,
// the launcher is preempted by it for the first 3 ms of each gap.
Synth Training(bool hog, uint64_t hog_ns = 3 * kMs) {
  Synth s;
  s.Process(kPid, "python3").Thread(kLauncher, kPid, "pt_main_thread");
  s.Process(kHog, "hog").Thread(kHog, kHog, "hog");
  GpuTracks(s);
  s.Switch(kBase, 0, 0, kLauncher);
  for (int i = 0; i < 100; ++i) {
    uint64_t t = kBase + i * 10 * kMs;
    Slice(s, 11, t, t + 50 * kUs, "cudaLaunchKernel", i + 1, false);
    Slice(s, 12, t + 100 * kUs, t + 6 * kMs, "gemm", i + 1, true);
    if (hog) {
      // The launcher syncs until the kernel ends, then is preempted.
      s.Switch(t + 6 * kMs, 0, kLauncher, kHog, 256);
      s.Switch(t + 6 * kMs + hog_ns, 0, kHog, kLauncher, 256);
    }
  }
  s.Switch(kBase + 1000 * kMs, 0, kLauncher, 0, 1);
  return s;
}

TEST(GpuIdleGaps, GapsWhileTheLauncherWaitedNameWhatHeldItUp) {
  Synth s = Training(/*hog=*/true);
  Timeline t = s.Build();
  Analysis a = AnalyzeOrDie(t);
  EXPECT_TRUE(a.has_gpu_data);
  EXPECT_NE(a.focus.how.find("GPU"), std::string::npos) << "default focus: threads that launch GPU work";
  EXPECT_EQ(a.focus.tids, std::set<int32_t>{kLauncher});
  auto found = FindingsOf(a, "gpu_idle_gap");
  ASSERT_EQ(found.size(), 1u);
  const Finding& f = found[0];
  EXPECT_EQ(f.kind, "launcher_delayed");
  EXPECT_EQ(f.culprit_tid, kHog);
  // 99 gaps of 4.1 ms; the launcher waited 3 ms of each behind the hog.
  EXPECT_EQ(f.Metric("gaps"), 99);
  EXPECT_NEAR(f.Metric("launcher_waiting_ns"), 99 * 3.0 * kMs, 0.5 * kMs);
  EXPECT_NEAR(f.Metric("idle_share"), 0.41, 0.01);
  EXPECT_NEAR(static_cast<double>(f.cost_ns), 99 * 3.0 * kMs, 0.5 * kMs);
  EXPECT_NE(f.title.find("python3 (pid 500)"), std::string::npos) << f.title;
}

TEST(GpuIdleGaps, GpuWorkWithoutALaunchLinkStillBelongsToItsProcess) {
  Synth s;
  s.Process(kPid, "python3").Thread(kLauncher, kPid, "pt_main_thread");
  GpuTracks(s);
  s.Switch(kBase, 0, 0, kLauncher);
  for (int i = 0; i < 100; ++i) {
    uint64_t t = kBase + i * 10 * kMs;
    Slice(s, 12, t + 100 * kUs, t + 5 * kMs, "gemm", 1000 + i, true);  // flows to nothing
  }
  s.Switch(kBase + 1000 * kMs, 0, kLauncher, 0, 1);
  Timeline t = s.Build();
  GpuModel gpu = BuildGpuModel(t);
  ASSERT_EQ(gpu.work.size(), 100u) << "the throttling slice is not GPU work";
  EXPECT_EQ(gpu.work[0].pid, kPid) << "from the \"python3 500\" group";
  EXPECT_EQ(gpu.work[0].launch_tid, 0);
  auto found = FindingsOf(AnalyzeOrDie(t, {"pt_main_thread"}), "gpu_idle_gap");
  ASSERT_EQ(found.size(), 1u);
  bool unknown = false;
  for (const auto& e : found[0].evidence) unknown |= e.find("launching thread is unknown") != std::string::npos;
  EXPECT_TRUE(unknown);
}

TEST(GpuIdleGaps, GpuWorkOnATrackWithoutADescriptorIsNamedByItsUuid) {
  // A damaged trace: the stream's identity survived, its descriptor did not
  // (the report threw std::out_of_range on such a file).
  Synth s;
  s.Process(kPid, "python3").Thread(kLauncher, kPid, "pt_main_thread");
  GpuTracks(s);
  Slice(s, 12, kBase + 100 * kUs, kBase + 5 * kMs, "gemm", 1, true);
  Timeline t = s.Build();
  t.tracks.tracks.erase(12);
  model::TrackIdentity stream;
  stream.kind = model::TrackKind::kGpuStream;
  t.tracks.identities[12] = stream;
  GpuModel gpu = BuildGpuModel(t);
  ASSERT_EQ(gpu.work.size(), 1u);
  EXPECT_EQ(gpu.gpu_names.at(12), "GPU track 0xc");
}

TEST(GpuIdleGaps, BackToBackGpuWorkHasNoFinding) {
  Synth s;
  s.Process(kPid, "python3").Thread(kLauncher, kPid, "pt_main_thread");
  GpuTracks(s);
  s.Switch(kBase, 0, 0, kLauncher);
  for (int i = 0; i < 100; ++i) {
    uint64_t t = kBase + i * 10 * kMs;
    Slice(s, 11, t, t + 50 * kUs, "cudaLaunchKernel", i + 1, false);
    Slice(s, 12, t + 50 * kUs, t + 10 * kMs + 20 * kUs, "gemm", i + 1, true);
  }
  s.Switch(kBase + 1000 * kMs, 0, kLauncher, 0, 1);
  Timeline t = s.Build();
  Analysis a = AnalyzeOrDie(t);
  EXPECT_TRUE(FindingsOf(a, "gpu_idle_gap").empty());
}

TEST(GpuIdleGaps, IdleGpusWithABusyLauncherAreReportedWithoutACulprit) {
  Synth s = Training(/*hog=*/false);
  Timeline t = s.Build();
  auto found = FindingsOf(AnalyzeOrDie(t), "gpu_idle_gap");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].kind, "gpu_idle");
  EXPECT_EQ(found[0].cost_ns, 0u);
  EXPECT_NEAR(found[0].Metric("launcher_running_ns"), 99 * 4.0 * kMs, 0.5 * kMs);
}

TEST(GpuIdleGaps, ALauncherRunningThroughTheGapsIsItsOwnCulpritDespiteSmallInterference) {
  // 0.2 ms of each 4 ms gap behind the hog: 20 ms in all, above
  // gpu.min_delay, but 5% of the launcher's gap time.
  Synth s = Training(/*hog=*/true, 200 * kUs);
  Timeline t = s.Build();
  auto found = FindingsOf(AnalyzeOrDie(t), "gpu_idle_gap");
  ASSERT_EQ(found.size(), 1u);
  const Finding& f = found[0];
  EXPECT_EQ(f.kind, "gpu_idle");
  EXPECT_EQ(f.culprit, "launching thread");
  EXPECT_NEAR(static_cast<double>(f.cost_ns), 99 * 0.2 * kMs, 0.2 * kMs) << "the delay is still counted";
  EXPECT_NE(f.title.find("held up by others only"), std::string::npos) << f.title;
}

}  // namespace
}  // namespace gpunoise::analyze
