#include "cupti/activity_converter.h"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <type_traits>

#include "cupti/activity_names.h"
#include "model/gpu_capture.h"
#include "model/gpu_tracks.h"
#include "model/track_identity.h"

namespace gpunoise::cupti {
namespace {

constexpr size_t kMaxPendingSyncs = 1 << 12;

std::string Dims(int64_t x, int64_t y, int64_t z) {
  return "[" + std::to_string(x) + ", " + std::to_string(y) + ", " + std::to_string(z) + "]";
}

// Bytes per nanosecond is GB/s (decimal).
double GigabytesPerSecond(uint64_t bytes, uint64_t start, uint64_t end) {
  return end > start ? static_cast<double>(bytes) / static_cast<double>(end - start) : 0.0;
}

bool HasTimes(uint64_t start, uint64_t end) { return start != 0 && end >= start; }

// The bits of an enum-typed record field. Records are bytes CUPTI wrote (a
// newer CUPTI, flags combined, values this build's headers do not list):
// reading such a field as the enum type is undefined for values outside its
// range, so it is read as bytes from its offset, never named as an lvalue
// (gcc's UBSan checks even a reference to it once inlined).
uint32_t FieldBits(const void* record, size_t offset, size_t size) {
  uint32_t v = 0;
  std::memcpy(&v, static_cast<const unsigned char*>(record) + offset, std::min(size, sizeof(v)));
  return v;
}
#define GN_BITS(record, field)                                                              \
  FieldBits(&(record), offsetof(std::remove_cvref_t<decltype(record)>, field), \
            sizeof((record).field))

}  // namespace

ActivityConverter::ActivityConverter(ConverterOptions options)
    : options_(std::move(options)), builder_(options_.sequence_id, &body_) {
  salt_ = model::HashFnv1a64("gpunoise cupti " + options_.node_id + "/" +
                             std::to_string(options_.pid) + "/" +
                             std::to_string(options_.start_ts));
  EnsureProcessTrack();
}

const std::string& ActivityConverter::ApiName(bool runtime, uint32_t cbid) {
  auto key = std::make_pair(runtime, cbid);
  auto it = api_names_.find(key);
  if (it != api_names_.end()) return it->second;
  std::string raw = options_.api_name ? options_.api_name(runtime, cbid) : std::string();
  std::string name(StripApiVersion(raw));
  if (name.empty())
    name = std::string(runtime ? "CUDA runtime call " : "CUDA driver call ") + std::to_string(cbid);
  return api_names_.emplace(key, std::move(name)).first->second;
}

void ActivityConverter::Convert(const CUpti_Activity* record) {
  ++stats_.records;
  switch (GN_BITS(*record, kind)) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
      OnKernel(*reinterpret_cast<const CUpti_ActivityKernel10*>(record));
      break;
    case CUPTI_ACTIVITY_KIND_MEMCPY:
      OnMemcpy(*reinterpret_cast<const CUpti_ActivityMemcpy6*>(record));
      break;
    case CUPTI_ACTIVITY_KIND_MEMCPY2:
      OnPeerMemcpy(*reinterpret_cast<const CUpti_ActivityMemcpyPtoP4*>(record));
      break;
    case CUPTI_ACTIVITY_KIND_MEMSET:
      OnMemset(*reinterpret_cast<const CUpti_ActivityMemset4*>(record));
      break;
    case CUPTI_ACTIVITY_KIND_GRAPH_TRACE:
      OnGraph(*reinterpret_cast<const CUpti_ActivityGraphTrace2*>(record));
      break;
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER:
    case CUPTI_ACTIVITY_KIND_INTERNAL_LAUNCH_API:
      OnApi(*reinterpret_cast<const CUpti_ActivityAPI*>(record));
      break;
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
      OnSync(*reinterpret_cast<const CUpti_ActivitySynchronization2*>(record));
      break;
    case CUPTI_ACTIVITY_KIND_MARKER:
      OnMarker(*reinterpret_cast<const CUpti_ActivityMarker2*>(record));
      break;
    case CUPTI_ACTIVITY_KIND_MARKER_DATA:
      OnMarkerData(*reinterpret_cast<const CUpti_ActivityMarkerData2*>(record));
      break;
    case CUPTI_ACTIVITY_KIND_OVERHEAD:
      OnOverhead(*reinterpret_cast<const CUpti_ActivityOverhead3*>(record));
      break;
    case CUPTI_ACTIVITY_KIND_DEVICE:
      OnDevice(*reinterpret_cast<const CUpti_ActivityDevice5*>(record));
      break;
    default:
      ++stats_.skipped_records;
      break;
  }
}

void ActivityConverter::OnKernel(const CUpti_ActivityKernel10& k) {
  if (!HasTimes(k.start, k.end)) {
    ++stats_.skipped_records;
    return;
  }
  ++stats_.kernels;
  uint64_t track = EnsureStreamTrack(k.deviceId, k.contextId, k.streamId, k.start, k.end);
  {
    EventPacket e = builder_.SliceBegin(k.start, track, kernel_names_.Demangled(k.name), "cuda.kernel");
    e.Arg("grid", Dims(k.gridX, k.gridY, k.gridZ))
        .Arg("block", Dims(k.blockX, k.blockY, k.blockZ))
        .Arg("registers_per_thread", uint32_t{k.registersPerThread})
        .Arg("static_shared_memory", k.staticSharedMemory)
        .Arg("dynamic_shared_memory", k.dynamicSharedMemory)
        .Arg("correlation_id", k.correlationId)
        .Arg("device", k.deviceId)
        .Arg("stream", k.streamId);
    if (k.graphId) e.Arg("graph_id", k.graphId);
    LinkToLaunch(e, k.correlationId);
  }
  builder_.SliceEnd(k.end, track);
}

void ActivityConverter::OnMemcpy(const CUpti_ActivityMemcpy6& m) {
  if (!HasTimes(m.start, m.end)) {
    ++stats_.skipped_records;
    return;
  }
  ++stats_.memcpys;
  uint64_t track = EnsureStreamTrack(m.deviceId, m.contextId, m.streamId, m.start, m.end);
  std::string_view kind = MemcpyKindName(m.copyKind);
  {
    EventPacket e = builder_.SliceBegin(m.start, track, "Memcpy " + std::string(kind), "cuda.memcpy");
    e.Arg("kind", kind)
        .Arg("bytes", m.bytes)
        .Arg("gb_per_s", GigabytesPerSecond(m.bytes, m.start, m.end))
        .Arg("src_kind", MemoryKindName(m.srcKind))
        .Arg("dst_kind", MemoryKindName(m.dstKind))
        .Arg("async", (m.flags & CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC) != 0)
        .Arg("correlation_id", m.correlationId)
        .Arg("device", m.deviceId)
        .Arg("stream", m.streamId);
    // A copy carries the driver call's correlation id and, when the runtime
    // launched it, the runtime call's too; whichever call was recorded
    // starts the flow (a flow ending with no start is ignored).
    if (m.correlationId) e.TerminatingFlow(FlowId(m.correlationId));
    if (m.runtimeCorrelationId && m.runtimeCorrelationId != m.correlationId) {
      e.Arg("runtime_correlation_id", m.runtimeCorrelationId);
      e.TerminatingFlow(FlowId(m.runtimeCorrelationId));
    }
    uint32_t shown = m.runtimeCorrelationId ? m.runtimeCorrelationId : m.correlationId;
    if (shown) e.Correlation(CorrelationName(shown));
  }
  builder_.SliceEnd(m.end, track);
}

void ActivityConverter::OnPeerMemcpy(const CUpti_ActivityMemcpyPtoP4& m) {
  if (!HasTimes(m.start, m.end)) {
    ++stats_.skipped_records;
    return;
  }
  ++stats_.memcpys;
  uint64_t track = EnsureStreamTrack(m.deviceId, m.contextId, m.streamId, m.start, m.end);
  std::string_view kind = MemcpyKindName(m.copyKind);
  {
    EventPacket e = builder_.SliceBegin(m.start, track, "Memcpy " + std::string(kind), "cuda.memcpy");
    e.Arg("kind", kind)
        .Arg("bytes", m.bytes)
        .Arg("gb_per_s", GigabytesPerSecond(m.bytes, m.start, m.end))
        .Arg("src_device", m.srcDeviceId)
        .Arg("dst_device", m.dstDeviceId)
        .Arg("src_kind", MemoryKindName(m.srcKind))
        .Arg("dst_kind", MemoryKindName(m.dstKind))
        .Arg("correlation_id", m.correlationId)
        .Arg("device", m.deviceId)
        .Arg("stream", m.streamId);
    LinkToLaunch(e, m.correlationId);
  }
  builder_.SliceEnd(m.end, track);
}

void ActivityConverter::OnMemset(const CUpti_ActivityMemset4& m) {
  if (!HasTimes(m.start, m.end)) {
    ++stats_.skipped_records;
    return;
  }
  ++stats_.memsets;
  uint64_t track = EnsureStreamTrack(m.deviceId, m.contextId, m.streamId, m.start, m.end);
  {
    EventPacket e = builder_.SliceBegin(m.start, track, "Memset", "cuda.memset");
    e.Arg("bytes", m.bytes)
        .Arg("gb_per_s", GigabytesPerSecond(m.bytes, m.start, m.end))
        .Arg("value", m.value)
        .Arg("memory_kind", MemoryKindName(m.memoryKind))
        .Arg("correlation_id", m.correlationId)
        .Arg("device", m.deviceId)
        .Arg("stream", m.streamId);
    LinkToLaunch(e, m.correlationId);
  }
  builder_.SliceEnd(m.end, track);
}

void ActivityConverter::OnGraph(const CUpti_ActivityGraphTrace2& g) {
  if (!HasTimes(g.start, g.end)) {
    ++stats_.skipped_records;
    return;
  }
  ++stats_.graph_launches;
  uint64_t track = EnsureStreamTrack(g.deviceId, g.contextId, g.streamId, g.start, g.end);
  {
    EventPacket e =
        builder_.SliceBegin(g.start, track, "CUDA graph " + std::to_string(g.graphId), "cuda.graph");
    e.Arg("graph_id", g.graphId)
        .Arg("correlation_id", g.correlationId)
        .Arg("device", g.deviceId)
        .Arg("end_device", g.endDeviceId)
        .Arg("stream", g.streamId);
    LinkToLaunch(e, g.correlationId);
  }
  builder_.SliceEnd(g.end, track);
}

void ActivityConverter::RememberApiCall(uint32_t correlation_id, const ApiCall& call) {
  if (api_calls_.size() >= kApiCallsKept && !api_call_order_.empty()) {
    api_calls_.erase(api_call_order_.front());
    api_call_order_.pop_front();
  }
  if (api_calls_.insert_or_assign(correlation_id, call).second)
    api_call_order_.push_back(correlation_id);
}

void ActivityConverter::OnApi(const CUpti_ActivityAPI& a) {
  if (!HasTimes(a.start, a.end)) {
    ++stats_.skipped_records;
    return;
  }
  ++stats_.api_calls;
  bool runtime = a.kind == CUPTI_ACTIVITY_KIND_RUNTIME;
  // Internal launches (outside any public API function) leave cbid unused.
  bool internal = a.kind == CUPTI_ACTIVITY_KIND_INTERNAL_LAUNCH_API;
  std::string_view shown =
      internal ? std::string_view("CUDA internal launch") : std::string_view(ApiName(runtime, a.cbid));
  uint64_t track = EnsureThreadTrack(a.threadId);
  {
    EventPacket e = builder_.SliceBegin(a.start, track, shown, runtime ? "cuda.runtime" : "cuda.driver");
    e.Arg("correlation_id", a.correlationId);
    if (a.returnValue) e.Arg("return_value", a.returnValue);
    if (a.correlationId && (internal || IsLaunchLikeApi(shown))) {
      e.Flow(FlowId(a.correlationId));
      e.Correlation(CorrelationName(a.correlationId));
    }
  }
  builder_.SliceEnd(a.end, track);

  ApiCall call{a.threadId, a.start, a.end};
  RememberApiCall(a.correlationId, call);
  auto pending = pending_syncs_.find(a.correlationId);
  if (pending != pending_syncs_.end()) {
    EmitSync(pending->second, &call);
    pending_syncs_.erase(pending);
  }
}

void ActivityConverter::OnSync(const CUpti_ActivitySynchronization2& s) {
  if (!HasTimes(s.start, s.end)) {
    ++stats_.skipped_records;
    return;
  }
  ++stats_.synchronizations;
  PendingSync p{s.correlationId, GN_BITS(s, type), s.start, s.end,
                s.contextId, s.streamId, s.cudaEventId};
  auto api = api_calls_.find(s.correlationId);
  if (api != api_calls_.end()) {
    EmitSync(p, &api->second);
  } else if (pending_syncs_.size() < kMaxPendingSyncs) {
    // The API call that waited usually comes in the same buffer, but not
    // always first.
    pending_syncs_.emplace(s.correlationId, p);
  } else {
    EmitSync(p, nullptr);
  }
}

void ActivityConverter::EmitSync(const PendingSync& s, const ApiCall* api) {
  uint64_t start = s.start, end = s.end, track;
  if (api) {
    // Drawn inside the call that waited, strictly, so it nests under that
    // call's slice whatever order the two are read in.
    track = EnsureThreadTrack(api->tid);
    if (api->end > api->start + 1) {
      start = std::clamp(start, api->start + 1, api->end - 1);
      end = std::clamp(end, start, api->end - 1);
    } else {
      start = api->start;
      end = api->end;
    }
  } else {
    track = EnsureProcessLane("CUDA synchronization (thread unknown)", sync_lanes_, start, end);
  }
  {
    EventPacket e = builder_.SliceBegin(start, track, SyncTypeName(GN_BITS(s, type)), "cuda.sync");
    if (s.stream != CUPTI_SYNCHRONIZATION_INVALID_VALUE) e.Arg("stream", s.stream);
    if (s.event != CUPTI_SYNCHRONIZATION_INVALID_VALUE) e.Arg("cuda_event_id", s.event);
    e.Arg("context", s.context).Arg("correlation_id", s.correlation_id);
  }
  builder_.SliceEnd(end, track);
}

void ActivityConverter::OnMarker(const CUpti_ActivityMarker2& m) {
  uint32_t tid = GN_BITS(m, objectKind) == CUPTI_ACTIVITY_OBJECT_THREAD ? m.objectId.pt.threadId : 0;
  if (m.timestamp == 0) {
    ++stats_.skipped_records;
    return;
  }
  if (GN_BITS(m, flags) & CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS) {
    ++stats_.nvtx_marks;
    uint64_t track = tid ? EnsureThreadTrack(tid) : EnsureProcessTrack();
    EventPacket e = builder_.Instant(m.timestamp, track, m.name ? m.name : "(unnamed mark)", "nvtx");
    if (m.domain) e.Arg("domain", m.domain);
    return;
  }
  if (GN_BITS(m, flags) & CUPTI_ACTIVITY_FLAG_MARKER_START) {
    if (open_ranges_.size() >= kMaxOpenRanges) {
      ++stats_.nvtx_unmatched;
      return;
    }
    OpenRange r{m.name ? m.name : "(unnamed range)", m.domain ? m.domain : "", m.timestamp, tid};
    if (auto pending = pending_nccl_.find(tid); tid && pending != pending_nccl_.end()) {
      // The latest call on this thread at or before the range's start is
      // the one whose push made it; earlier ones never got a range.
      std::deque<NcclCall>& q = pending->second;
      while (!q.empty() && q.front().ts <= m.timestamp) {
        if (r.nccl) ++stats_.nccl_payloads_unmatched;
        r.nccl = std::move(q.front().params);
        q.pop_front();
        --pending_nccl_count_;
      }
      if (r.nccl) ++stats_.nccl_payloads;
      if (q.empty()) pending_nccl_.erase(pending);
    }
    open_ranges_[m.id] = std::move(r);
    thread_range_stacks_[tid].push_back(m.id);
    return;
  }
  if (GN_BITS(m, flags) & CUPTI_ACTIVITY_FLAG_MARKER_END) {
    EndRange(m.id, m.timestamp, tid);
    return;
  }
  ++stats_.skipped_records;  // synchronization markers
}

// CUPTI writes a range's payload as its own record after the start record.
// Only scalar payloads are kept: an extended payload (NCCL's schema'd
// structs) is a pointer into the process's memory, gone by the time the
// buffer is read.
void ActivityConverter::OnMarkerData(const CUpti_ActivityMarkerData2& m) {
  auto it = open_ranges_.find(m.id);
  if (it == open_ranges_.end() || (m.payloadKind != CUPTI_METRIC_VALUE_KIND_UINT64 &&
                                   m.payloadKind != CUPTI_METRIC_VALUE_KIND_INT64)) {
    ++stats_.skipped_records;
    return;
  }
  it->second.has_payload = true;
  it->second.payload = m.payloadKind == CUPTI_METRIC_VALUE_KIND_UINT64
                           ? m.payload.metricValueUint64
                           : static_cast<uint64_t>(m.payload.metricValueInt64);
}

// Ranges are written when they end: only then is it known whether they nest
// on their thread (push/pop) or cross threads or each other (start/end).
void ActivityConverter::EndRange(uint32_t id, uint64_t ts, uint32_t tid) {
  auto it = open_ranges_.find(id);
  if (it == open_ranges_.end()) {
    ++stats_.nvtx_unmatched;
    return;
  }
  OpenRange range = std::move(it->second);
  open_ranges_.erase(it);
  std::vector<uint32_t>& stack = thread_range_stacks_[range.tid];
  bool nests = range.tid == tid && !stack.empty() && stack.back() == id;
  if (nests) {
    stack.pop_back();
  } else {
    stack.erase(std::remove(stack.begin(), stack.end(), id), stack.end());
  }
  EmitRange(range, std::max(ts, range.start), tid, nests && tid != 0, false);
}

void ActivityConverter::EmitRange(const OpenRange& range, uint64_t end, uint32_t end_tid,
                                  bool on_thread, bool unterminated) {
  ++stats_.nvtx_ranges;
  uint64_t track = on_thread ? EnsureThreadTrack(range.tid)
                             : EnsureProcessLane("NVTX ranges", nvtx_lanes_, range.start, end);
  {
    EventPacket e = builder_.SliceBegin(range.start, track, range.name, "nvtx");
    if (!range.domain.empty()) e.Arg("domain", range.domain);
    if (range.nccl) {
      const NcclCallParams& p = *range.nccl;
      e.Arg("nccl_comm", p.comm);
      if (!p.schema.empty()) e.Arg("nccl_schema", p.schema);
      if (p.has_bytes) e.Arg("nccl_bytes", p.bytes);
      if (p.op >= 0) e.Arg("nccl_op", p.op);
      if (p.root >= 0) e.Arg("nccl_root", p.root);
      if (p.peer >= 0) e.Arg("nccl_peer", p.peer);
    } else if (range.has_payload) {
      e.Arg("payload", range.payload);
    }
    if (!on_thread) {
      e.Arg("start_tid", range.tid);
      if (!unterminated) e.Arg("end_tid", end_tid);
    }
    if (unterminated) e.Arg("unterminated", true);
  }
  builder_.SliceEnd(end, track);
}

void ActivityConverter::OnOverhead(const CUpti_ActivityOverhead3& o) {
  if (!HasTimes(o.start, o.end)) {
    ++stats_.skipped_records;
    return;
  }
  ++stats_.overheads;
  uint64_t track = EnsureProcessLane("CUPTI overhead", overhead_lanes_, o.start, o.end);
  {
    EventPacket e = builder_.SliceBegin(o.start, track, OverheadKindName(GN_BITS(o, overheadKind)), "cupti.overhead");
    if (GN_BITS(o, objectKind) == CUPTI_ACTIVITY_OBJECT_THREAD) e.Arg("tid", o.objectId.pt.threadId);
    if (GN_BITS(o, objectKind) == CUPTI_ACTIVITY_OBJECT_DEVICE || GN_BITS(o, objectKind) == CUPTI_ACTIVITY_OBJECT_CONTEXT ||
        GN_BITS(o, objectKind) == CUPTI_ACTIVITY_OBJECT_STREAM)
      e.Arg("device", o.objectId.dcs.deviceId);
    if (GN_BITS(o, objectKind) == CUPTI_ACTIVITY_OBJECT_STREAM) e.Arg("stream", o.objectId.dcs.streamId);
    if (o.correlationId) e.Arg("correlation_id", o.correlationId);
  }
  builder_.SliceEnd(o.end, track);
}

void ActivityConverter::OnDevice(const CUpti_ActivityDevice5& d) {
  ++stats_.devices;
  unsigned char uuid[16];
  static_assert(sizeof(d.uuid.bytes) == sizeof(uuid));
  std::memcpy(uuid, d.uuid.bytes, sizeof(uuid));
  // Tracks made before the record keep the group they were made under (a
  // track never changes its parent): remember it before the UUID moves the
  // device's new tracks to the UUID's group.
  uint64_t old_group = GroupUuid(d.id);
  Device& dev = devices_[d.id];
  dev.model = d.name ? d.name : "";
  dev.uuid = model::FormatGpuUuid(uuid);
  // Shared by every process that uses the GPU: nothing of this process's
  // view (its CUDA ordinal is on the stream tracks).
  dev.description = dev.model + ", " + (dev.uuid.empty() ? "no UUID" : dev.uuid) + ", " +
                    std::to_string(d.numMultiprocessors) + " SMs, compute capability " +
                    std::to_string(d.computeCapabilityMajor) + "." +
                    std::to_string(d.computeCapabilityMinor) + ", " +
                    std::to_string(d.globalMemorySize >> 20) + " MiB";
  if (d.isMigEnabled) dev.description += ", MIG instance";
  RenameDeviceTracks(d.id, old_group);
}

void ActivityConverter::Close(uint64_t now) {
  std::vector<std::pair<uint32_t, OpenRange>> open(open_ranges_.begin(), open_ranges_.end());
  std::sort(open.begin(), open.end(),
            [](const auto& a, const auto& b) { return a.second.start < b.second.start; });
  for (const auto& [id, range] : open) EmitRange(range, std::max(now, range.start), 0, false, true);
  open_ranges_.clear();
  thread_range_stacks_.clear();
  for (const auto& [corr, sync] : pending_syncs_) EmitSync(sync, nullptr);
  pending_syncs_.clear();
}

void ActivityConverter::WriteSummary(uint64_t now) {
  EventPacket e = builder_.Instant(now, EnsureProcessTrack(), model::kCuptiCaptureSummaryEvent, "gpunoise");
  e.Arg("pid", options_.pid);
  if (options_.rank >= 0) e.Arg("rank", options_.rank);
  if (options_.local_rank >= 0) e.Arg("local_rank", options_.local_rank);
  e.Arg("records", stats_.records)
      .Arg("kernels", stats_.kernels)
      .Arg("memcpys", stats_.memcpys)
      .Arg("memsets", stats_.memsets)
      .Arg("graph_launches", stats_.graph_launches)
      .Arg("synchronizations", stats_.synchronizations)
      .Arg("api_calls", stats_.api_calls)
      .Arg("nvtx_ranges", stats_.nvtx_ranges)
      .Arg("nvtx_marks", stats_.nvtx_marks)
      .Arg("overheads", stats_.overheads)
      .Arg(model::kCuptiDroppedRecordsArg, stats_.dropped_records)
      .Arg("skipped_records", stats_.skipped_records)
      .Arg("nvtx_unmatched", stats_.nvtx_unmatched);
  if (stats_.chunks_not_written) e.Arg(model::kCuptiChunksNotWrittenArg, stats_.chunks_not_written);
  if (stats_.nccl_payloads || stats_.nccl_payloads_unmatched || stats_.nccl_payloads_dropped || pending_nccl_count_) {
    e.Arg("nccl_payloads", stats_.nccl_payloads)
        .Arg("nccl_payloads_unmatched", stats_.nccl_payloads_unmatched + pending_nccl_count_)
        .Arg("nccl_payloads_dropped", stats_.nccl_payloads_dropped);
  }
}

void ActivityConverter::AddNcclCalls(std::vector<NcclCall> calls, uint64_t dropped) {
  stats_.nccl_payloads_dropped += dropped;
  for (NcclCall& c : calls) {
    if (pending_nccl_count_ >= kMaxPendingNcclCalls) {
      ++stats_.nccl_payloads_dropped;
      continue;
    }
    pending_nccl_[c.tid].push_back(std::move(c));
    ++pending_nccl_count_;
  }
}

std::string ActivityConverter::TakeChunk(const ClockReadings& now, bool final) {
  if (final) Close(now.boottime);
  if (stats_.dropped_records != last_dropped_written_) {
    uint64_t uuid = Key("dropped records");
    if (!track_index_.count(uuid)) {
      TrackSpec t;
      t.uuid = uuid;
      t.parent_uuid = EnsureProcessTrack();
      t.name = std::string(model::kCuptiDroppedRecordsTrack);
      t.description = "activity records CUPTI could not store for lack of buffer space";
      t.counter = true;
      Register(std::move(t));
    }
    builder_.Counter(now.boottime, uuid, static_cast<double>(stats_.dropped_records));
    last_dropped_written_ = stats_.dropped_records;
  }
  if (final) WriteSummary(now.boottime);

  bool typed = false;
  for (const TrackSpec& t : tracks_) typed |= !t.identity_kind.empty();
  const uint64_t identity_track = typed ? EnsureProcessTrack() : 0;

  std::string chunk;
  chunk.reserve(body_.size() + 256 * tracks_.size() + 256);
  builder_.set_out(&chunk);
  builder_.StartSequence();
  builder_.ClockSnapshot(now);
  for (const TrackSpec& t : tracks_) builder_.TrackDescriptor(t);
  // What the GPU tracks are, for the report (model/track_identity.h); again
  // in every chunk, which reads on its own.
  for (const TrackSpec& t : tracks_) {
    if (t.identity_kind.empty()) continue;
    EventPacket e = builder_.Instant(now.boottime, identity_track, model::kTrackIdentityEventName,
                                     model::kTrackIdentityCategory);
    e.Arg("track_uuid", t.uuid).Arg("kind", t.identity_kind);
    if (t.identity_process_track) e.Arg("process_track", t.identity_process_track);
    if (!t.identity_gpu_uuid.empty()) e.Arg("gpu_uuid", t.identity_gpu_uuid);
    if (t.identity_gpu_index >= 0) e.Arg("gpu_index", t.identity_gpu_index);
    if (!t.identity_gpu_model.empty()) e.Arg("gpu_model", t.identity_gpu_model);
  }
  builder_.set_out(&body_);
  chunk.append(body_);
  body_.clear();
  return chunk;
}

}  // namespace gpunoise::cupti
