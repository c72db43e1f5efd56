#include "report/annotated_trace.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "common/private_file.h"
#include "common/unique_fd.h"
#include "export/perfetto/protos/perfetto_fields.h"
#include "export/perfetto/trace_file_writer.h"
#include "export/perfetto/track_event_writer.h"

namespace gpunoise::report_export {
namespace {

Status WriteAll(int fd, const char* data, size_t size, const std::string& path) {
  while (size) {
    ssize_t n = ::write(fd, data, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      return MakeError("failed to write {}: {}", path, std::strerror(errno));
    }
    data += n;
    size -= static_cast<size_t>(n);
  }
  return OkStatus();
}

}  // namespace

std::vector<std::string> FindingsPackets(const std::vector<analyze::Finding>& findings, uint32_t sequence_id,
                                         uint64_t salt) {
  std::vector<std::string> out;
  perfetto::TrackEventWriter writer(sequence_id, salt);
  perfetto::TracePacketBuilder packet;
  auto emit = [&]() { out.emplace_back(packet.bytes()); };

  uint64_t root = writer.TrackUuid(kFindingsTrackName);
  writer.FillTrackDescriptor(&packet, root, kFindingsTrackName, 0,
                             "what gpunoise report found, most costly first");
  emit();
  int rank = 0;
  for (const analyze::Finding& f : findings) {
    ++rank;
    uint64_t track = writer.TrackUuid(fmt::format("gpunoise finding {}", rank));
    writer.FillTrackDescriptor(&packet, track, fmt::format("#{} {}: {}", rank, f.detector, f.culprit), root, f.title);
    packet.In(pf::TracePacket::kTrackDescriptor).Int(pf::TrackDescriptor::kSiblingOrderRank, rank);
    emit();
    uint64_t start = f.start, end = std::max(f.end, f.start + 1);
    auto e = writer.FillSliceBegin(&packet, start, track, f.title, "gpunoise.finding");
    perfetto::AddArg(e, "rank", static_cast<int64_t>(rank));
    perfetto::AddArg(e, "detector", f.detector);
    perfetto::AddArg(e, "kind", f.kind);
    perfetto::AddArg(e, "culprit", f.culprit);
    if (!f.device.empty()) perfetto::AddArg(e, "device", f.device);
    if (f.queue >= 0) perfetto::AddArg(e, "queue", static_cast<int64_t>(f.queue));
    std::string cpus;
    for (uint32_t c : f.cpus) cpus += (cpus.empty() ? "" : ",") + std::to_string(c);
    if (!cpus.empty()) perfetto::AddArg(e, "cpus", cpus);
    perfetto::AddArg(e, "cost_ns", f.cost_ns);
    perfetto::AddArg(e, "cost_share", f.cost_share);
    for (const auto& [k, v] : f.metrics) perfetto::AddArg(e, "metric." + k, v);
    for (size_t i = 0; i < f.evidence.size(); ++i) perfetto::AddArg(e, fmt::format("evidence.{}", i), f.evidence[i]);
    emit();
    // Worst windows nest inside the span; in time order so slices nest.
    std::vector<analyze::FindingWindow> windows = f.windows;
    std::sort(windows.begin(), windows.end(), [](const auto& a, const auto& b) { return a.start < b.start; });
    uint64_t last_end = start;
    for (const auto& w : windows) {
      uint64_t ws = std::max({w.start, start, last_end}), we = std::min(w.end, end);
      if (we <= ws) continue;
      auto we_event = writer.FillSliceBegin(&packet, ws, track, w.note, "gpunoise.window");
      perfetto::AddArg(we_event, "cost_ns", w.cost_ns);
      emit();
      writer.FillSliceEnd(&packet, we, track);
      emit();
      last_end = we;
    }
    writer.FillSliceEnd(&packet, end, track);
    emit();
  }
  return out;
}

Status WriteAnnotatedCopy(const std::string& source, uint64_t source_bytes, const std::string& out,
                          const std::vector<std::string>& packets) {
  UniqueFd in(::open(source.c_str(), O_RDONLY | O_CLOEXEC));
  if (!in.valid()) return MakeError("failed to open {}: {}", source, std::strerror(errno));
  struct stat src{}, dst{};
  if (::fstat(in.get(), &src) == 0 && ::stat(out.c_str(), &dst) == 0 && src.st_dev == dst.st_dev &&
      src.st_ino == dst.st_ino)
    return MakeError("failed to annotate: {} is the trace being read; name a new file", out);
  // A trace is private whoever writes it (common/private_file.h).
  if (std::string refused = CheckOutputPath(out); !refused.empty()) return MakeError("{}", refused);
  std::string temp, error;
  UniqueFd fd = CreatePrivateTemp(out, "tmp", &temp, &error);
  if (!fd.valid()) return MakeError("{}", error);
  auto fail = [&](Error e) {
    ::unlink(temp.c_str());
    return e;
  };
  std::vector<char> buf(1 << 20);
  uint64_t left = source_bytes;
  while (left) {
    ssize_t n = ::read(in.get(), buf.data(), std::min<uint64_t>(left, buf.size()));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return fail(MakeError("failed to read {}: {}", source, n < 0 ? std::strerror(errno) : "file shrank"));
    if (Status st = WriteAll(fd.get(), buf.data(), static_cast<size_t>(n), out); !st.ok()) return fail(st.error());
    left -= static_cast<uint64_t>(n);
  }
  std::string framed;
  for (const auto& p : packets) AppendFramedPacket(p, &framed);
  if (Status st = WriteAll(fd.get(), framed.data(), framed.size(), out); !st.ok()) return fail(st.error());
  if (::fsync(fd.get()) != 0) return fail(MakeError("failed to write {}: {}", out, std::strerror(errno)));
  fd.Reset();
  if (!RenameIntoPlace(temp, out, &error)) return fail(MakeError("{}", error));
  return OkStatus();
}

}  // namespace gpunoise::report_export
