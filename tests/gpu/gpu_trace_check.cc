#include "gpu/gpu_trace_check.h"

#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "export/perfetto/trace_view.h"

namespace gpunoise::testing {
namespace {

struct KernelLine {
  std::string name, label;
  uint64_t count = 0;
  int64_t tid = 0;
};
struct CopyLine {
  std::string kind;
  uint64_t bytes = 0, count = 0;
};
struct RangeLine {
  std::string name;
  uint64_t count = 0;
  int64_t tid = 0;
};

// The last `n` whitespace-separated fields of `line`, and what precedes them.
bool SplitTail(const std::string& line, size_t n, std::string* head, std::vector<std::string>* tail) {
  std::vector<std::string> words;
  std::istringstream in(line);
  for (std::string w; in >> w;) words.push_back(w);
  if (words.size() < n + 1) return false;
  tail->assign(words.end() - static_cast<ptrdiff_t>(n), words.end());
  head->clear();
  for (size_t i = 0; i + n < words.size(); ++i) *head += (i ? " " : "") + words[i];
  return true;
}

uint64_t Uint(const Slice& s, const std::string& arg) {
  const auto* a = s.Arg(arg);
  if (!a) return ~0ull;
  return a->has_uint_value() ? a->uint_value() : static_cast<uint64_t>(a->int_value());
}

}  // namespace

CheckReport CheckGpuTrace(const perfetto::Trace& trace, const std::string& manifest) {
  CheckReport report;
  auto pass = [&](std::string s) { report.passed.push_back(std::move(s)); };
  auto fail = [&](std::string s) { report.failed.push_back(std::move(s)); };

  std::vector<KernelLine> kernels;
  std::vector<CopyLine> copies;
  std::vector<RangeLine> ranges;
  bool expect_nvml = false;
  std::istringstream lines(manifest);
  for (std::string line; std::getline(lines, line);) {
    if (line == "expect nvml") expect_nvml = true;
    std::string head;
    std::vector<std::string> tail;
    if (line.rfind("kernel ", 0) == 0 && SplitTail(line.substr(7), 3, &head, &tail)) {
      kernels.push_back({head, tail[2], std::stoull(tail[0]), std::stoll(tail[1])});
    } else if (line.rfind("copy ", 0) == 0 && SplitTail(line.substr(5), 2, &head, &tail)) {
      copies.push_back({head, std::stoull(tail[0]), std::stoull(tail[1])});
    } else if (line.rfind("range ", 0) == 0 && SplitTail(line.substr(6), 2, &head, &tail)) {
      ranges.push_back({head, std::stoull(tail[0]), std::stoll(tail[1])});
    }
  }
  if (kernels.empty()) {
    fail("the manifest lists no kernels");
    return report;
  }

  TraceView view(trace.SerializeAsString());
  // The recording window, from the recorder's session summary.
  uint64_t start = 0, end = 0;
  if (auto summary = view.InstantNamed("gpunoise recording")) {
    start = Uint(*summary, "start_ts");
    end = Uint(*summary, "end_ts");
  }
  if (!start || !end || end <= start) {
    fail("no recording window (session summary) in the trace");
    return report;
  }

  // Kernel-side scheduling: which tids were ever switched in.
  std::map<int64_t, uint64_t> switch_ins;
  for (const auto& p : trace.packet()) {
    if (!p.has_ftrace_events()) continue;
    for (int32_t pid : p.ftrace_events().compact_sched().switch_next_pid()) ++switch_ins[pid];
    for (const auto& e : p.ftrace_events().event())
      if (e.has_sched_switch()) ++switch_ins[e.sched_switch().next_pid()];
  }

  // Flow sources by flow id.
  std::map<uint64_t, Slice> flow_sources;
  for (const auto& [uuid, d] : view.tracks())
    for (const Slice& s : view.SlicesOn(uuid))
      for (uint64_t f : s.flows) flow_sources[f] = s;

  // "GPU-5f2a1c3e (H200) stream 7" (by UUID), or "GPU 3 (H200) stream 7"
  // for a device record without one.
  static const std::regex kStreamTrack(R"(^GPU(-[0-9a-f]{8}| \d+)( \(.*\))? stream \d+( \(overlap \d+\))?$)");
  std::set<uint64_t> stream_gpus;  // the GPU groups the kernels' streams sit under
  std::map<std::string, std::set<std::string>> stream_of_label;  // label -> base stream track names
  for (const KernelLine& k : kernels) {
    std::vector<Slice> found;
    for (const auto& [uuid, d] : view.tracks())
      for (const Slice& s : view.SlicesOn(uuid))
        if (s.name == k.name) found.push_back(s);
    if (found.size() != k.count) {
      fail("kernel " + k.name + ": " + std::to_string(found.size()) + " slices, launched " +
           std::to_string(k.count));
      continue;
    }
    pass("kernel " + k.name + ": each of " + std::to_string(k.count) + " launches appears once");
    size_t outside = 0, bad_flow = 0, wrong_tid = 0;
    std::set<std::string> tracks;
    for (const Slice& s : found) {
      if (s.start < start || s.end > end) ++outside;
      const auto* track = view.Track(s.track);
      std::string name = track ? track->name() : "?";
      if (!std::regex_match(name, kStreamTrack)) {
        fail("kernel " + k.name + " is on track '" + name + "', not a stream track");
        break;
      }
      tracks.insert(name.substr(0, name.find(" (overlap")));
      if (const auto* group = view.Track(track->parent_uuid())) stream_gpus.insert(group->parent_uuid());
      if (s.terminating_flows.size() != 1 || !flow_sources.count(s.terminating_flows[0])) {
        ++bad_flow;
        continue;
      }
      const Slice& launch = flow_sources[s.terminating_flows[0]];
      const auto* thread = view.Track(launch.track);
      if (!thread || !thread->has_thread() || thread->thread().tid() != k.tid ||
          launch.name.find("Launch") == std::string::npos)
        ++wrong_tid;
    }
    if (outside) fail("kernel " + k.name + ": " + std::to_string(outside) + " slices outside the recording window");
    else pass("kernel " + k.name + ": all inside the recording window");
    if (bad_flow) fail("kernel " + k.name + ": " + std::to_string(bad_flow) + " slices without a flow from a launch call");
    else if (wrong_tid) fail("kernel " + k.name + ": " + std::to_string(wrong_tid) + " flows not from a launch call on thread " + std::to_string(k.tid));
    else pass("kernel " + k.name + ": every launch flows from a launch call on thread " + std::to_string(k.tid));
    if (tracks.size() != 1) fail("kernel " + k.name + ": on " + std::to_string(tracks.size()) + " stream tracks, launched on one stream");
    else pass("kernel " + k.name + ": on " + *tracks.begin());
    stream_of_label[k.label].insert(tracks.begin(), tracks.end());
    if (switch_ins[k.tid] == 0) fail("launching thread " + std::to_string(k.tid) + " never appears in the kernel-side scheduling data");
    else pass("launching thread " + std::to_string(k.tid) + " is in the kernel-side trace (" + std::to_string(switch_ins[k.tid]) + " switch-ins)");
  }
  std::map<std::string, std::string> label_of_track;
  for (const auto& [label, names] : stream_of_label)
    for (const auto& name : names) {
      auto [it, inserted] = label_of_track.emplace(name, label);
      if (!inserted && it->second != label)
        fail("streams '" + it->second + "' and '" + label + "' share the track " + name);
    }

  for (const CopyLine& c : copies) {
    std::vector<Slice> found;
    for (const auto& [uuid, d] : view.tracks())
      for (const Slice& s : view.SlicesOn(uuid))
        if (s.name == "Memcpy " + c.kind && Uint(s, "bytes") == c.bytes) found.push_back(s);
    if (found.size() != c.count)
      fail("copy " + c.kind + " of " + std::to_string(c.bytes) + " bytes: " + std::to_string(found.size()) +
           " slices, expected " + std::to_string(c.count));
    else
      pass("copy " + c.kind + ": " + std::to_string(c.count) + " slices of " + std::to_string(c.bytes) + " bytes");
    for (const Slice& s : found)
      if (!s.Arg("gb_per_s") || s.Arg("gb_per_s")->double_value() <= 0)
        fail("copy " + c.kind + " without an achieved bandwidth");
  }

  for (const RangeLine& r : ranges) {
    size_t on_thread = 0;
    for (const auto& [uuid, d] : view.tracks()) {
      if (!d->has_thread() || d->thread().tid() != r.tid) continue;
      for (const Slice& s : view.SlicesOn(uuid)) on_thread += s.name == r.name;
    }
    if (on_thread != r.count)
      fail("NVTX range '" + r.name + "': " + std::to_string(on_thread) + " on thread " + std::to_string(r.tid) +
           ", expected " + std::to_string(r.count));
    else
      pass("NVTX range '" + r.name + "': " + std::to_string(r.count) + " on thread " + std::to_string(r.tid));
  }
  if (expect_nvml) {
    // NVML's SM clock sits under a GPU group, beside that GPU's streams.
    // Both key the group by the GPU's UUID: the kernels' GPU has NVML's clock.
    size_t clock_tracks = 0, points = 0, beside_kernels = 0;
    for (const auto& [uuid, d] : view.tracks()) {
      if (d->name() != "SM clock" || !d->has_counter()) continue;
      const auto* gpu = view.Track(d->parent_uuid());
      if (!gpu || gpu->name().rfind("GPU", 0) != 0) continue;
      ++clock_tracks;
      if (stream_gpus.count(gpu->uuid())) ++beside_kernels;
      points += view.Counter(uuid).size();
    }
    if (!clock_tracks || !points) fail("no NVML SM clock counter under a GPU group");
    else if (!kernels.empty() && !beside_kernels)
      fail("NVML's counters and the kernels' streams are under different GPU groups (UUID join failed)");
    else pass("NVML: " + std::to_string(clock_tracks) + " GPUs with SM clock counters (" + std::to_string(points) + " samples)");
  }
  if (view.unmatched_ends()) fail(std::to_string(view.unmatched_ends()) + " slice ends without a begin");
  return report;
}

}  // namespace gpunoise::testing
