// Feeds records of the real CUPTI types (from the installed headers) to the
// converter and checks the Perfetto it writes, decoded with the full
// generated schema: tracks, names, args, flows, timestamps, loss.
#include "cupti/activity_converter.h"

#include <gtest/gtest.h>

#include <cstring>

#include "cupti/converter_test_records.h"
#include "export/perfetto/trace_view.h"
#include "model/gpu_tracks.h"

namespace gpunoise::cupti {
namespace {


TEST(ActivityConverter, KernelIsASliceOnItsStreamTrackUnderTheGpuAndProcess) {
  ActivityConverter c(Options());
  auto dev = Device(0, "NVIDIA H200");
  c.Convert(AsRecord(&dev));
  auto k = Kernel(5000, 9000, 7, 42);
  c.Convert(AsRecord(&k));
  TraceView v(c.TakeChunk(Now(10000), false));
  ASSERT_TRUE(v.parsed());

  const auto* stream = v.TrackNamed("GPU-10111213 (H200) stream 7");
  ASSERT_NE(stream, nullptr);
  EXPECT_NE(stream->description().find("CUDA device 0"), std::string::npos) << stream->description();
  const auto* proc_group = v.Track(stream->parent_uuid());
  ASSERT_NE(proc_group, nullptr);
  EXPECT_EQ(proc_group->name(), "train.py 4242");
  const auto* gpu = v.Track(proc_group->parent_uuid());
  ASSERT_NE(gpu, nullptr);
  EXPECT_EQ(gpu->name(), "GPU-10111213 (H200)");
  EXPECT_EQ(gpu->uuid(), model::GpuGroupTrackUuidByUuid(kNode, kDeviceUuid));
  EXPECT_NE(gpu->description().find("GPU-10111213-1415-1617-1819-1a1b1c1d1e1f"), std::string::npos)
      << gpu->description();

  auto slices = v.SlicesOn(stream->uuid());
  ASSERT_EQ(slices.size(), 1u);
  const Slice& s = slices[0];
  EXPECT_EQ(s.name, "void scale<float>(float*, float, int)");
  EXPECT_EQ(s.start, 5000u);
  EXPECT_EQ(s.end, 9000u);
  EXPECT_EQ(StringArg(s, "grid"), "[128, 1, 1]");
  EXPECT_EQ(StringArg(s, "block"), "[256, 1, 1]");
  EXPECT_EQ(UintArg(s, "registers_per_thread"), 32u);
  EXPECT_EQ(IntArg(s, "static_shared_memory"), 1024);
  EXPECT_EQ(IntArg(s, "dynamic_shared_memory"), 2048);
  EXPECT_EQ(UintArg(s, "correlation_id"), 42u);
  ASSERT_EQ(s.terminating_flows.size(), 1u);
  EXPECT_EQ(s.terminating_flows[0], c.FlowId(42));
  EXPECT_EQ(s.begin->correlation_id_str(), "4242/42");
  EXPECT_EQ(c.stats().kernels, 1u);
  EXPECT_EQ(v.unmatched_ends(), 0);
  EXPECT_EQ(v.unclosed(), 0u);
}

// A chunk holding a cudaLaunchKernel call on thread kTid and its kernel.
std::string LaunchAndItsKernel(ActivityConverter& c) {
  auto api = Api(CUPTI_ACTIVITY_KIND_RUNTIME, kLaunchCbid, 3000, 3500, 42);
  c.Convert(AsRecord(&api));
  auto k = Kernel(5000, 9000, 7, 42);
  c.Convert(AsRecord(&k));
  return c.TakeChunk(Now(10000), false);
}

TEST(ActivityConverter, LaunchCallOnTheRealThreadStartsTheFlowToItsKernel) {
  ActivityConverter c(Options());
  TraceView v(LaunchAndItsKernel(c));

  const auto* thread = v.Track(c.ThreadTrackUuid(kTid));
  ASSERT_NE(thread, nullptr);
  ASSERT_TRUE(thread->has_thread());
  EXPECT_EQ(thread->thread().pid(), kPid);
  EXPECT_EQ(thread->thread().tid(), kTid);
  auto slices = v.SlicesOn(thread->uuid());
  ASSERT_EQ(slices.size(), 1u);
  EXPECT_EQ(slices[0].name, "cudaLaunchKernel");
  EXPECT_EQ(slices[0].start, 3000u);
  EXPECT_EQ(slices[0].end, 3500u);
  ASSERT_EQ(slices[0].flows.size(), 1u);
  auto kernel = v.SliceNamed("void scale<float>(float*, float, int)");
  ASSERT_TRUE(kernel);
  ASSERT_EQ(kernel->terminating_flows.size(), 1u);
  EXPECT_EQ(slices[0].flows[0], kernel->terminating_flows[0]);
  EXPECT_EQ(slices[0].begin->correlation_id_str(), kernel->begin->correlation_id_str());
}

TEST(ActivityConverter, DriverLaunchAndInternalLaunchAlsoStartFlows) {
  ActivityConverter c(Options());
  auto drv = Api(CUPTI_ACTIVITY_KIND_DRIVER, kLaunchCbid, 3000, 3500, 5);
  auto internal = Api(CUPTI_ACTIVITY_KIND_INTERNAL_LAUNCH_API, 0, 4000, 4100, 6);
  c.Convert(AsRecord(&drv));
  c.Convert(AsRecord(&internal));
  TraceView v(c.TakeChunk(Now(10000), false));
  auto d = v.SliceNamed("cuLaunchKernel");
  ASSERT_TRUE(d);
  EXPECT_EQ(d->flows, std::vector<uint64_t>{c.FlowId(5)});
  EXPECT_EQ(d->categories, std::vector<std::string>{"cuda.driver"});
  auto i = v.SliceNamed("CUDA internal launch");
  ASSERT_TRUE(i);
  EXPECT_EQ(i->flows, std::vector<uint64_t>{c.FlowId(6)});
}

TEST(ActivityConverter, CallsThatLaunchNothingHaveNoFlow) {
  ActivityConverter c(Options());
  auto api = Api(CUPTI_ACTIVITY_KIND_RUNTIME, kSyncCbid, 3000, 3500, 43);
  auto unknown = Api(CUPTI_ACTIVITY_KIND_RUNTIME, 999, 4000, 4500, 44);
  c.Convert(AsRecord(&api));
  c.Convert(AsRecord(&unknown));
  TraceView v(c.TakeChunk(Now(10000), false));
  auto s = v.SliceNamed("cudaStreamSynchronize");
  ASSERT_TRUE(s);
  EXPECT_TRUE(s->flows.empty());
  auto u = v.SliceNamed("CUDA runtime call 999");
  ASSERT_TRUE(u);
  EXPECT_TRUE(u->flows.empty());
}

TEST(ActivityConverter, MemcpyCarriesKindBytesAndAchievedBandwidth) {
  ActivityConverter c(Options());
  auto m = Zeroed<CUpti_ActivityMemcpy6>();
  m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
  m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
  m.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
  m.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  m.flags = CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC;
  m.bytes = 1000000;
  m.start = 100000;
  m.end = 200000;  // 1 MB in 100 us: 10 GB/s
  m.streamId = 13;
  m.contextId = 1;
  m.correlationId = 50;
  c.Convert(AsRecord(&m));
  TraceView v(c.TakeChunk(Now(300000), false));
  auto s = v.SliceNamed("Memcpy HtoD");
  ASSERT_TRUE(s);
  EXPECT_EQ(v.Track(s->track)->name(), "GPU 0 stream 13");
  EXPECT_EQ(StringArg(*s, "kind"), "HtoD");
  EXPECT_EQ(UintArg(*s, "bytes"), 1000000u);
  ASSERT_NE(s->Arg("gb_per_s"), nullptr);
  EXPECT_DOUBLE_EQ(s->Arg("gb_per_s")->double_value(), 10.0);
  EXPECT_EQ(StringArg(*s, "src_kind"), "pinned");
  EXPECT_EQ(StringArg(*s, "dst_kind"), "device");
  ASSERT_NE(s->Arg("async"), nullptr);
  EXPECT_TRUE(s->Arg("async")->bool_value());
  EXPECT_EQ(s->terminating_flows, std::vector<uint64_t>{c.FlowId(50)});
  EXPECT_EQ(c.stats().memcpys, 1u);
}

TEST(ActivityConverter, CopyLaunchedByTheRuntimeFlowsFromTheRuntimeCall) {
  ActivityConverter c(Options());
  auto api = Api(CUPTI_ACTIVITY_KIND_RUNTIME, kMemcpyCbid, 50000, 60000, 61);
  c.Convert(AsRecord(&api));
  auto m = Zeroed<CUpti_ActivityMemcpy6>();
  m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
  m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_DTOH;
  m.bytes = 64;
  m.start = 100000;
  m.end = 100100;
  m.streamId = 13;
  m.correlationId = 60;  // the driver call's, not recorded here
  m.runtimeCorrelationId = 61;
  c.Convert(AsRecord(&m));
  TraceView v(c.TakeChunk(Now(300000), false));
  auto call = v.SliceNamed("cudaMemcpyAsync");
  auto copy = v.SliceNamed("Memcpy DtoH");
  ASSERT_TRUE(call && copy);
  ASSERT_EQ(call->flows.size(), 1u);
  EXPECT_NE(std::find(copy->terminating_flows.begin(), copy->terminating_flows.end(), call->flows[0]),
            copy->terminating_flows.end());
  EXPECT_EQ(copy->begin->correlation_id_str(), call->begin->correlation_id_str());
  EXPECT_EQ(UintArg(*copy, "runtime_correlation_id"), 61u);
}

TEST(ActivityConverter, PeerCopyNamesBothDevices) {
  ActivityConverter c(Options());
  auto m = Zeroed<CUpti_ActivityMemcpyPtoP4>();
  m.kind = CUPTI_ACTIVITY_KIND_MEMCPY2;
  m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_PTOP;
  m.bytes = 4000;
  m.start = 1000;
  m.end = 2000;
  m.deviceId = 1;
  m.srcDeviceId = 1;
  m.dstDeviceId = 0;
  m.streamId = 7;
  c.Convert(AsRecord(&m));
  TraceView v(c.TakeChunk(Now(3000), false));
  auto s = v.SliceNamed("Memcpy PtoP");
  ASSERT_TRUE(s);
  EXPECT_EQ(v.Track(s->track)->name(), "GPU 1 stream 7");
  EXPECT_EQ(UintArg(*s, "src_device"), 1u);
  EXPECT_EQ(UintArg(*s, "dst_device"), 0u);
  EXPECT_DOUBLE_EQ(s->Arg("gb_per_s")->double_value(), 4.0);
}

TEST(ActivityConverter, MemsetIsASliceWithBytes) {
  ActivityConverter c(Options());
  auto m = Zeroed<CUpti_ActivityMemset4>();
  m.kind = CUPTI_ACTIVITY_KIND_MEMSET;
  m.bytes = 2048;
  m.value = 0;
  m.start = 1000;
  m.end = 1512;
  m.streamId = 7;
  m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  c.Convert(AsRecord(&m));
  TraceView v(c.TakeChunk(Now(3000), false));
  auto s = v.SliceNamed("Memset");
  ASSERT_TRUE(s);
  EXPECT_EQ(UintArg(*s, "bytes"), 2048u);
  EXPECT_EQ(StringArg(*s, "memory_kind"), "device");
  EXPECT_EQ(c.stats().memsets, 1u);
}

TEST(ActivityConverter, GraphLaunchIsOneSliceWithAFlowFromItsLaunch) {
  ActivityConverter c(Options());
  auto g = Zeroed<CUpti_ActivityGraphTrace2>();
  g.kind = CUPTI_ACTIVITY_KIND_GRAPH_TRACE;
  g.correlationId = 9;
  g.start = 1000;
  g.end = 5000;
  g.graphId = 3;
  g.streamId = 7;
  c.Convert(AsRecord(&g));
  TraceView v(c.TakeChunk(Now(6000), false));
  auto s = v.SliceNamed("CUDA graph 3");
  ASSERT_TRUE(s);
  EXPECT_EQ(UintArg(*s, "graph_id"), 3u);
  EXPECT_EQ(s->terminating_flows, std::vector<uint64_t>{c.FlowId(9)});
  EXPECT_EQ(c.stats().graph_launches, 1u);
}

void ExpectSyncNestedInItsCall(const TraceView& v, const ActivityConverter& c) {
  auto slices = v.SlicesOn(c.ThreadTrackUuid(kTid));
  ASSERT_EQ(slices.size(), 2u);
  std::sort(slices.begin(), slices.end(),
            [](const Slice& a, const Slice& b) { return a.depth < b.depth; });
  EXPECT_EQ(slices[0].name, "cudaStreamSynchronize");
  EXPECT_EQ(slices[1].name, "Stream synchronize");
  EXPECT_EQ(slices[1].depth, 1);
  EXPECT_GT(slices[1].start, slices[0].start);
  EXPECT_LT(slices[1].end, slices[0].end);
  EXPECT_EQ(UintArg(slices[1], "stream"), 7u);
  EXPECT_EQ(v.unmatched_ends(), 0);
}

CUpti_ActivitySynchronization2 StreamSync(uint64_t start, uint64_t end, uint32_t corr) {
  auto s = Zeroed<CUpti_ActivitySynchronization2>();
  s.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
  s.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE;
  s.start = start;
  s.end = end;
  s.correlationId = corr;
  s.contextId = 1;
  s.streamId = 7;
  s.cudaEventId = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
  return s;
}

TEST(ActivityConverter, SynchronizationNestsInsideTheCallThatWaited) {
  ActivityConverter c(Options());
  auto api = Api(CUPTI_ACTIVITY_KIND_RUNTIME, kSyncCbid, 1000, 5000, 7);
  auto sync = StreamSync(1000, 5000, 7);
  c.Convert(AsRecord(&api));
  c.Convert(AsRecord(&sync));
  TraceView v(c.TakeChunk(Now(6000), false));
  ExpectSyncNestedInItsCall(v, c);
}

TEST(ActivityConverter, SynchronizationBeforeItsCallStillNests) {
  ActivityConverter c(Options());
  auto sync = StreamSync(1000, 5000, 7);
  c.Convert(AsRecord(&sync));
  auto api = Api(CUPTI_ACTIVITY_KIND_RUNTIME, kSyncCbid, 1000, 5000, 7);
  c.Convert(AsRecord(&api));
  TraceView v(c.TakeChunk(Now(6000), false));
  ExpectSyncNestedInItsCall(v, c);
}

TEST(ActivityConverter, SynchronizationWhoseCallNeverCameIsWrittenAtTheEnd) {
  ActivityConverter c(Options());
  auto sync = StreamSync(1000, 5000, 8);
  c.Convert(AsRecord(&sync));
  TraceView first(c.TakeChunk(Now(6000), false));
  EXPECT_FALSE(first.SliceNamed("Stream synchronize"));
  TraceView last(c.TakeChunk(Now(7000), true));
  auto s = last.SliceNamed("Stream synchronize");
  ASSERT_TRUE(s);
  EXPECT_EQ(last.Track(s->track)->name(), "CUDA synchronization (thread unknown)");
  EXPECT_EQ(s->start, 1000u);
  EXPECT_EQ(s->end, 5000u);
}

TEST(ActivityConverter, NvtxPushPopRangesNestOnTheCallingThread) {
  ActivityConverter c(Options());
  auto a = Marker(CUPTI_ACTIVITY_FLAG_MARKER_START, 1, 100, kTid, "step", "pytorch");
  auto b = Marker(CUPTI_ACTIVITY_FLAG_MARKER_START, 2, 200, kTid, "forward", "pytorch");
  auto b_end = Marker(CUPTI_ACTIVITY_FLAG_MARKER_END, 2, 300, kTid, nullptr);
  auto a_end = Marker(CUPTI_ACTIVITY_FLAG_MARKER_END, 1, 400, kTid, nullptr);
  for (auto* m : {&a, &b, &b_end, &a_end}) c.Convert(AsRecord(m));
  TraceView v(c.TakeChunk(Now(1000), false));
  auto slices = v.SlicesOn(c.ThreadTrackUuid(kTid));
  ASSERT_EQ(slices.size(), 2u);
  std::sort(slices.begin(), slices.end(),
            [](const Slice& x, const Slice& y) { return x.start < y.start; });
  EXPECT_EQ(slices[0].name, "step");
  EXPECT_EQ(slices[0].start, 100u);
  EXPECT_EQ(slices[0].end, 400u);
  EXPECT_EQ(slices[0].depth, 0);
  EXPECT_EQ(slices[1].name, "forward");
  EXPECT_EQ(slices[1].depth, 1);
  EXPECT_EQ(StringArg(slices[1], "domain"), "pytorch");
  EXPECT_EQ(c.stats().nvtx_ranges, 2u);
}

TEST(ActivityConverter, NvtxRangesThatDoNotNestGoToProcessLanes) {
  ActivityConverter c(Options());
  // Started on one thread, ended on another.
  auto x = Marker(CUPTI_ACTIVITY_FLAG_MARKER_START, 1, 100, kTid, "cross");
  auto x_end = Marker(CUPTI_ACTIVITY_FLAG_MARKER_END, 1, 300, kTid + 1, nullptr);
  // Overlapping on one thread: a ends while b (started later) is open.
  auto a = Marker(CUPTI_ACTIVITY_FLAG_MARKER_START, 2, 400, kTid, "a");
  auto b = Marker(CUPTI_ACTIVITY_FLAG_MARKER_START, 3, 500, kTid, "b");
  auto a_end = Marker(CUPTI_ACTIVITY_FLAG_MARKER_END, 2, 600, kTid, nullptr);
  auto b_end = Marker(CUPTI_ACTIVITY_FLAG_MARKER_END, 3, 700, kTid, nullptr);
  for (auto* m : {&x, &x_end, &a, &b, &a_end, &b_end}) c.Convert(AsRecord(m));
  TraceView v(c.TakeChunk(Now(1000), false));
  auto cross = v.SliceNamed("cross");
  ASSERT_TRUE(cross);
  const auto* lane = v.Track(cross->track);
  EXPECT_EQ(lane->name(), "NVTX ranges");
  EXPECT_EQ(lane->parent_uuid(), c.ProcessTrackUuid());
  EXPECT_EQ(UintArg(*cross, "start_tid"), kTid);
  EXPECT_EQ(UintArg(*cross, "end_tid"), kTid + 1);
  auto sa = v.SliceNamed("a");
  auto sb = v.SliceNamed("b");
  ASSERT_TRUE(sa && sb);
  EXPECT_EQ(v.Track(sa->track)->name(), "NVTX ranges");
  EXPECT_EQ(sb->track, c.ThreadTrackUuid(kTid));
  EXPECT_EQ(v.unmatched_ends(), 0);
}

TEST(ActivityConverter, NvtxMarkIsAnInstantAndUnmatchedEndsAreCounted) {
  ActivityConverter c(Options());
  auto mark = Marker(CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS, 5, 150, kTid, "checkpoint");
  auto orphan = Marker(CUPTI_ACTIVITY_FLAG_MARKER_END, 99, 160, kTid, nullptr);
  c.Convert(AsRecord(&mark));
  c.Convert(AsRecord(&orphan));
  TraceView v(c.TakeChunk(Now(1000), false));
  auto m = v.InstantNamed("checkpoint");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->track, c.ThreadTrackUuid(kTid));
  EXPECT_EQ(m->start, 150u);
  EXPECT_EQ(c.stats().nvtx_marks, 1u);
  EXPECT_EQ(c.stats().nvtx_unmatched, 1u);
}

TEST(ActivityConverter, RangeStillOpenAtTheEndIsClosedAndMarked) {
  ActivityConverter c(Options());
  auto a = Marker(CUPTI_ACTIVITY_FLAG_MARKER_START, 1, 100, kTid, "epoch");
  c.Convert(AsRecord(&a));
  TraceView v(c.TakeChunk(Now(900), true));
  auto s = v.SliceNamed("epoch");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->end, 900u);
  ASSERT_NE(s->Arg("unterminated"), nullptr);
  EXPECT_TRUE(s->Arg("unterminated")->bool_value());
}

TEST(ActivityConverter, OverlappingWorkOnOneStreamGetsAnOverlapLane) {
  ActivityConverter c(Options());
  auto k1 = Kernel(100, 300, 7, 1);
  auto k2 = Kernel(200, 400, 7, 2);  // programmatic dependent launch overlaps
  auto k3 = Kernel(500, 600, 7, 3);
  for (auto* k : {&k1, &k2, &k3}) c.Convert(AsRecord(k));
  TraceView v(c.TakeChunk(Now(1000), false));
  EXPECT_EQ(v.SlicesOn(c.StreamTrackUuid(0, 1, 7, 0)).size(), 2u);
  auto lane = v.SlicesOn(c.StreamTrackUuid(0, 1, 7, 1));
  ASSERT_EQ(lane.size(), 1u);
  EXPECT_EQ(lane[0].start, 200u);
  EXPECT_EQ(v.Track(c.StreamTrackUuid(0, 1, 7, 1))->name(), "GPU 0 stream 7 (overlap 1)");
}

TEST(ActivityConverter, DroppedRecordsBecomeACounterAndTheFinalSummary) {
  ActivityConverter c(Options());
  auto k = Kernel(100, 300, 7, 1);
  c.Convert(AsRecord(&k));
  c.AddDroppedRecords(5);
  TraceView first(c.TakeChunk(Now(1000), false));
  const auto* counter = first.TrackNamed("CUPTI dropped records");
  ASSERT_NE(counter, nullptr);
  ASSERT_TRUE(counter->has_counter());
  EXPECT_EQ(counter->parent_uuid(), c.ProcessTrackUuid());
  auto values = first.Counter(counter->uuid());
  ASSERT_EQ(values.size(), 1u);
  EXPECT_EQ(values[0].first, 1000u);
  EXPECT_DOUBLE_EQ(values[0].second, 5.0);
  EXPECT_FALSE(first.InstantNamed("gpunoise GPU capture"));

  c.AddDroppedRecords(2);
  TraceView last(c.TakeChunk(Now(2000), true));
  values = last.Counter(counter->uuid());
  ASSERT_EQ(values.size(), 1u);
  EXPECT_DOUBLE_EQ(values[0].second, 7.0);
  auto summary = last.InstantNamed("gpunoise GPU capture");
  ASSERT_TRUE(summary);
  EXPECT_EQ(summary->track, c.ProcessTrackUuid());
  EXPECT_EQ(UintArg(*summary, "dropped_records"), 7u);
  EXPECT_EQ(UintArg(*summary, "kernels"), 1u);
  EXPECT_EQ(c.stats().dropped_records, 7u);
}

TEST(ActivityConverter, EveryChunkStandsAlone) {
  ActivityConverter c(Options());
  auto k = Kernel(100, 300, 7, 1);
  c.Convert(AsRecord(&k));
  std::string first = c.TakeChunk(Now(1000), false);
  auto k2 = Kernel(1100, 1300, 7, 2);
  c.Convert(AsRecord(&k2));
  TraceView second(c.TakeChunk(Now(2000), false));
  ASSERT_TRUE(second.parsed());
  const auto& packets = second.trace().packet();
  ASSERT_GT(packets.size(), 0);
  // Opens with the clocks and a fresh sequence ...
  const auto& p0 = packets[0];
  ASSERT_TRUE(p0.has_clock_snapshot());
  EXPECT_TRUE(p0.first_packet_on_sequence());
  EXPECT_EQ(p0.sequence_flags(), 1u);
  EXPECT_EQ(p0.timestamp(), 2000u);
  bool has_boottime = false;
  for (const auto& clock : p0.clock_snapshot().clocks())
    has_boottime |= clock.clock_id() == 6 && clock.timestamp() == 2000;
  EXPECT_TRUE(has_boottime);
  EXPECT_EQ(p0.clock_snapshot().primary_trace_clock(), perfetto::BUILTIN_CLOCK_BOOTTIME);
  // ... declares every track again, and holds only the new events.
  EXPECT_NE(second.Track(c.StreamTrackUuid(0, 1, 7, 0)), nullptr);
  EXPECT_NE(second.Track(c.ProcessTrackUuid()), nullptr);
  EXPECT_EQ(second.Track(c.ProcessTrackUuid())->process().pid(), kPid);
  auto slices = second.SlicesOn(c.StreamTrackUuid(0, 1, 7, 0));
  ASSERT_EQ(slices.size(), 1u);
  EXPECT_EQ(slices[0].start, 1100u);
  for (const auto& p : packets) EXPECT_EQ(p.trusted_packet_sequence_id(), 77u);
}

// On the chunk's sequence, the trace processor would take the thread for the
// sequence's own and tie the GPU tracks' events to it
// (export/perfetto/sequence_ids.h).
TEST(ActivityConverter, AThreadTrackDescriptorIsOnNoSequenceAndEverythingElseOnTheChunks) {
  ActivityConverter c(Options());
  TraceView v(LaunchAndItsKernel(c));
  ASSERT_TRUE(v.parsed());
  int thread_descriptors = 0;
  for (const auto& p : v.trace().packet()) {
    if (p.has_track_descriptor() && p.track_descriptor().has_thread()) {
      ++thread_descriptors;
      EXPECT_FALSE(p.has_trusted_packet_sequence_id());
      EXPECT_FALSE(p.has_sequence_flags());
    } else {
      EXPECT_EQ(p.trusted_packet_sequence_id(), 77u);
    }
  }
  EXPECT_EQ(thread_descriptors, 1);
  EXPECT_TRUE(v.trace().packet(0).first_packet_on_sequence());
}

TEST(ActivityConverter, RecordsWithoutTimesOrOfOtherKindsAreSkippedAndCounted) {
  ActivityConverter c(Options());
  auto k = Kernel(0, 0, 7, 1);
  auto other = Zeroed<CUpti_ActivityCudaEvent2>();
  other.kind = CUPTI_ACTIVITY_KIND_CUDA_EVENT;
  c.Convert(AsRecord(&k));
  c.Convert(AsRecord(&other));
  EXPECT_EQ(c.stats().skipped_records, 2u);
  EXPECT_EQ(c.stats().kernels, 0u);
  EXPECT_FALSE(c.has_events());
}

TEST(ActivityConverter, OverheadGoesToAProcessTrack) {
  ActivityConverter c(Options());
  auto o = Zeroed<CUpti_ActivityOverhead3>();
  o.kind = CUPTI_ACTIVITY_KIND_OVERHEAD;
  o.overheadKind = CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH;
  o.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
  o.objectId.pt.threadId = kTid;
  o.start = 100;
  o.end = 200;
  c.Convert(AsRecord(&o));
  TraceView v(c.TakeChunk(Now(1000), false));
  auto s = v.SliceNamed("CUPTI buffer flush");
  ASSERT_TRUE(s);
  EXPECT_EQ(v.Track(s->track)->name(), "CUPTI overhead");
  EXPECT_EQ(UintArg(*s, "tid"), kTid);
}

TEST(ActivityConverter, UuidsDifferBetweenProcessesAndNodes) {
  ActivityConverter a(Options());
  ConverterOptions o = Options();
  o.pid = kPid + 1;
  ActivityConverter b(o);
  o = Options();
  o.node_id = "another-node";
  ActivityConverter n(o);
  EXPECT_NE(a.ThreadTrackUuid(kTid), b.ThreadTrackUuid(kTid));
  EXPECT_NE(a.FlowId(1), b.FlowId(1));
  EXPECT_NE(a.ProcessTrackUuid(), n.ProcessTrackUuid());
  EXPECT_NE(model::GpuGroupTrackUuid(kNode, 0), model::GpuGroupTrackUuid("another-node", 0));
  EXPECT_NE(model::GpuGroupTrackUuidByUuid(kNode, kDeviceUuid),
            model::GpuGroupTrackUuidByUuid("another-node", kDeviceUuid));
}

}  // namespace
}  // namespace gpunoise::cupti
