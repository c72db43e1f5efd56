// The GPU check script's verdict must be right before it ever runs on a
// GPU: a trace built from synthetic CUPTI records plus kernel-side
// scheduling passes; each kind of damage fails.
#include "gpu/gpu_trace_check.h"

#include <gtest/gtest.h>

#include <cstring>

#include "cupti/activity_converter.h"

namespace gpunoise::testing {
namespace {

constexpr int kPid = 500, kTidA = 501, kTidB = 502;
constexpr uint64_t kStart = 1'000'000, kEnd = 9'000'000;

template <typename T>
T Zeroed() {
  T t;
  std::memset(&t, 0, sizeof(t));
  return t;
}

struct Launch {
  const char* name;
  uint32_t stream;
  uint32_t tid;
  uint64_t at;
};

std::string Manifest() {
  return "pid 500\n"
         "kernel stream_a_work(float*, int) 2 501 a\n"
         "kernel stream_b_work(float*, int) 1 502 b\n"
         "copy HtoD 4096 1\n"
         "range iteration a 1 501\n";
}

// GPU side via the real converter, kernel side as a compact-sched bundle,
// and the recorder's session summary.
perfetto::Trace BuildTrace(std::vector<Launch> launches, bool with_switches = true,
                           uint64_t window_end = kEnd) {
  cupti::ConverterOptions o;
  o.pid = kPid;
  o.node_id = "n";
  o.api_name = [](bool, uint32_t) { return std::string("cudaLaunchKernel_v7000"); };
  cupti::ActivityConverter c(o);
  auto dev = Zeroed<CUpti_ActivityDevice5>();
  dev.kind = CUPTI_ACTIVITY_KIND_DEVICE;
  dev.name = "NVIDIA H200";
  c.Convert(reinterpret_cast<CUpti_Activity*>(&dev));
  uint32_t corr = 1;
  for (const Launch& l : launches) {
    auto a = Zeroed<CUpti_ActivityAPI>();
    a.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
    a.start = l.at;
    a.end = l.at + 100;
    a.threadId = l.tid;
    a.correlationId = corr;
    c.Convert(reinterpret_cast<CUpti_Activity*>(&a));
    auto k = Zeroed<CUpti_ActivityKernel10>();
    k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    k.start = l.at + 1000;
    k.end = l.at + 2000;
    k.streamId = l.stream;
    k.correlationId = corr++;
    k.name = l.name;
    c.Convert(reinterpret_cast<CUpti_Activity*>(&k));
  }
  auto m = Zeroed<CUpti_ActivityMemcpy6>();
  m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
  m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
  m.bytes = 4096;
  m.start = kStart + 10;
  m.end = kStart + 20;
  m.streamId = 13;
  c.Convert(reinterpret_cast<CUpti_Activity*>(&m));
  auto r0 = Zeroed<CUpti_ActivityMarker2>();
  r0.kind = CUPTI_ACTIVITY_KIND_MARKER;
  r0.flags = CUPTI_ACTIVITY_FLAG_MARKER_START;
  r0.id = 1;
  r0.timestamp = kStart + 5;
  r0.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
  r0.objectId.pt.threadId = kTidA;
  r0.name = "iteration a";
  auto r1 = r0;
  r1.flags = CUPTI_ACTIVITY_FLAG_MARKER_END;
  r1.timestamp = kStart + 50;
  r1.name = nullptr;
  c.Convert(reinterpret_cast<CUpti_Activity*>(&r0));
  c.Convert(reinterpret_cast<CUpti_Activity*>(&r1));

  perfetto::Trace trace;
  trace.ParseFromString(c.TakeChunk({kEnd, kEnd, kEnd}, true));
  auto* bundle = trace.add_packet()->mutable_ftrace_events();
  bundle->set_cpu(0);
  auto* cs = bundle->mutable_compact_sched();
  if (with_switches) {
    for (int tid : {kTidA, kTidB}) {
      cs->add_switch_timestamp(10);
      cs->add_switch_next_pid(tid);
      cs->add_switch_prev_state(0);
      cs->add_switch_next_prio(120);
      cs->add_switch_next_comm_index(0);
    }
    cs->add_intern_table("gpu_workload");
  }
  auto* summary = trace.add_packet();
  summary->set_timestamp(window_end);
  auto* e = summary->mutable_track_event();
  e->set_type(perfetto::TrackEvent::TYPE_INSTANT);
  e->set_name("gpunoise recording");
  auto* s = e->add_debug_annotations();
  s->set_name("start_ts");
  s->set_uint_value(kStart);
  auto* en = e->add_debug_annotations();
  en->set_name("end_ts");
  en->set_uint_value(window_end);
  return trace;
}

std::vector<Launch> GoodLaunches() {
  return {{"_Z13stream_a_workPfi", 7, kTidA, 2'000'000},
          {"_Z13stream_a_workPfi", 7, kTidA, 3'000'000},
          {"_Z13stream_b_workPfi", 14, kTidB, 2'500'000}};
}

std::string Failures(const CheckReport& r) {
  std::string out;
  for (const auto& f : r.failed) out += f + "\n";
  return out;
}

TEST(GpuTraceCheck, AGoodTracePasses) {
  CheckReport r = CheckGpuTrace(BuildTrace(GoodLaunches()), Manifest());
  EXPECT_TRUE(r.ok()) << Failures(r);
  EXPECT_GE(r.passed.size(), 10u);
}

TEST(GpuTraceCheck, AMissingKernelFails) {
  auto launches = GoodLaunches();
  launches.pop_back();
  CheckReport r = CheckGpuTrace(BuildTrace(launches), Manifest());
  EXPECT_FALSE(r.ok());
  EXPECT_NE(Failures(r).find("stream_b_work(float*, int): 0 slices, launched 1"), std::string::npos) << Failures(r);
}

TEST(GpuTraceCheck, ADuplicatedKernelFails) {
  auto launches = GoodLaunches();
  launches.push_back(launches.back());
  CheckReport r = CheckGpuTrace(BuildTrace(launches), Manifest());
  EXPECT_NE(Failures(r).find("stream_b_work(float*, int): 2 slices, launched 1"), std::string::npos) << Failures(r);
}

TEST(GpuTraceCheck, KernelOutsideTheWindowFails) {
  CheckReport r = CheckGpuTrace(BuildTrace(GoodLaunches(), true, 2'600'000), Manifest());
  EXPECT_NE(Failures(r).find("outside the recording window"), std::string::npos) << Failures(r);
}

TEST(GpuTraceCheck, KernelOnTwoStreamsFails) {
  auto launches = GoodLaunches();
  launches[1].stream = 8;
  CheckReport r = CheckGpuTrace(BuildTrace(launches), Manifest());
  EXPECT_NE(Failures(r).find("on 2 stream tracks"), std::string::npos) << Failures(r);
}

TEST(GpuTraceCheck, TwoLabelsOnOneStreamFail) {
  auto launches = GoodLaunches();
  launches[2].stream = 7;
  CheckReport r = CheckGpuTrace(BuildTrace(launches), Manifest());
  EXPECT_NE(Failures(r).find("share the track"), std::string::npos) << Failures(r);
}

TEST(GpuTraceCheck, LaunchFromAnotherThreadFails) {
  auto launches = GoodLaunches();
  launches[0].tid = kTidB;
  CheckReport r = CheckGpuTrace(BuildTrace(launches), Manifest());
  EXPECT_NE(Failures(r).find("flows not from a launch call on thread 501"), std::string::npos) << Failures(r);
}

TEST(GpuTraceCheck, ThreadMissingFromKernelSideFails) {
  CheckReport r = CheckGpuTrace(BuildTrace(GoodLaunches(), false), Manifest());
  EXPECT_NE(Failures(r).find("never appears in the kernel-side scheduling data"), std::string::npos) << Failures(r);
}

}  // namespace
}  // namespace gpunoise::testing

namespace gpunoise::testing {
namespace {

TEST(GpuTraceCheck, ExpectedNvmlCountersMustBeThere) {
  CheckReport r = CheckGpuTrace(BuildTrace(GoodLaunches()), Manifest() + "expect nvml\n");
  EXPECT_NE(Failures(r).find("no NVML SM clock counter under a GPU group"), std::string::npos) << Failures(r);
}

}  // namespace
}  // namespace gpunoise::testing
