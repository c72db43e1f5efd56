#include "record/gpu/fragment_pid_translator.h"

#include <fmt/format.h>

#include "common/proto_wire.h"
#include "export/perfetto/protos/perfetto_fields.h"
#include "export/perfetto/wire_fields.h"

namespace gpunoise::gpu {
namespace {

using perfetto::wire::ForEachField;
using perfetto::wire::WireField;
using TrackDescriptor = pf::TrackDescriptor;
// ProcessDescriptor.pid and ThreadDescriptor.pid are both field 1.
constexpr uint32_t kDescriptorPid = pf::ProcessDescriptor::kPid;
static_assert(pf::ThreadDescriptor::kPid == kDescriptorPid);

void AppendBytes(uint32_t field, std::string_view bytes, std::string* out) { ProtoWriter(out).Bytes(field, bytes); }

// int32 on the wire: negative values are ten-byte varints.
void AppendInt32(uint32_t field, int32_t value, std::string* out) { ProtoWriter(out).Int(field, value); }

// `message` with each varint field in `values` set to its new value (fields
// not in it copied byte for byte).
Result<std::string> SetVarints(std::string_view message, const std::map<uint32_t, int32_t>& values) {
  std::string out;
  GN_RETURN_IF_ERROR(ForEachField(message, [&](const WireField& f) {
    auto it = values.find(f.number);
    if (it != values.end() && f.wire_type == 0) AppendInt32(f.number, it->second, &out);
    else out.append(message.substr(f.start, f.end - f.start));
  }));
  return out;
}

Result<int32_t> VarintField(std::string_view message, uint32_t number) {
  int32_t value = 0;
  GN_RETURN_IF_ERROR(ForEachField(message, [&](const WireField& f) {
    if (f.number == number && f.wire_type == 0) value = static_cast<int32_t>(f.varint);
  }));
  return value;
}

}  // namespace

bool FragmentPidTranslator::Select(const model::FragmentName& name, uint64_t window_from) {
  current_ = nullptr;
  if (!name.has_pid_ns || name.pid_ns == model::kInitPidNsInode) return false;
  ns_ = name.pid_ns;
  ns_pid_ = name.pid;
  from_ = window_from;
  to_ = name.flush_ts;
  auto [it, inserted] = processes_.try_emplace({name.pid_ns, name.pid});
  current_ = &it->second;
  if (!inserted) return true;
  Process& p = it->second;
  int32_t host = 0;
  model::PidNsMap::Match m = name.pid_ns && map_
                                 ? map_->HostPid(name.pid_ns, name.pid, from_, to_, &host)
                                 : model::PidNsMap::Match::kUnknown;
  if (m == model::PidNsMap::Match::kFound) {
    p.mapped = true;
    p.host_pid = host;
    ++stats_.processes_translated;
  } else {
    ++stats_.processes_unmapped;
    std::string why = name.pid_ns == 0 ? "its library could not read its pid namespace"
                      : m == model::PidNsMap::Match::kAmbiguous
                          ? "more than one host process had that pid in the window"
                      : map_ && map_->KnowsNamespace(name.pid_ns)
                          ? "no host process had that pid in the window"
                          : "no task of that namespace was seen (it started and ended outside the recording?)";
    stats_.problems.push_back(fmt::format("pid {} in pid namespace {}: {}; its GPU data is kept on "
                                          "tracks of its own, attached to no host thread",
                                          name.pid, name.pid_ns, why));
  }
  return true;
}

std::optional<int32_t> FragmentPidTranslator::HostTid(int32_t ns_tid) {
  auto [it, inserted] = current_->threads.try_emplace(ns_tid);
  if (!inserted) return it->second;
  std::optional<int32_t> host;
  if (current_->mapped) {
    if (ns_tid == ns_pid_) {
      host = current_->host_pid;
    } else {
      int32_t tid = 0;
      if (map_->HostTid(ns_, ns_tid, current_->host_pid, from_, to_, &tid) == model::PidNsMap::Match::kFound)
        host = tid;
    }
  }
  if (host) {
    ++stats_.threads_translated;
  } else {
    ++stats_.threads_unmapped;
    if (current_->mapped) ++stats_.threads_unmapped_of_mapped;
  }
  it->second = host;
  return host;
}

Result<std::string> FragmentPidTranslator::RewriteTrack(std::string_view track) {
  std::string out;
  bool has_name = false;
  std::string unmapped_name;
  // The library names a process's stream group "<comm> <pid>", described
  // "GPU work of process <pid>" (cupti/activity_converter.cc): both get the
  // host pid, for people (the report takes the pid from the process
  // descriptor that the group's identity names, analyze/gpu_model.cc).
  std::string ns_pid = std::to_string(ns_pid_);
  bool group = false;
  GN_RETURN_IF_ERROR(ForEachField(track, [&](const WireField& f) {
    if (f.number == TrackDescriptor::kDescription && f.wire_type == 2 && f.bytes == "GPU work of process " + ns_pid) group = true;
  }));
  bool rename_group = group && current_->mapped;
  Status walked = ForEachField(track, [&](const WireField& f) {
    if (f.number == TrackDescriptor::kName) has_name = true;
    if (rename_group && f.wire_type == 2 && (f.number == TrackDescriptor::kName || f.number == TrackDescriptor::kDescription)) {
      std::string_view text = f.bytes;
      std::string suffix = " " + ns_pid;
      if (text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix) {
        AppendBytes(f.number, std::string(text.substr(0, text.size() - suffix.size())) + " " +
                                  std::to_string(current_->host_pid), &out);
        return;
      }
    }
    if (f.wire_type == 2 && f.number == TrackDescriptor::kProcess) {
      if (current_->mapped) {
        auto rewritten = SetVarints(f.bytes, {{kDescriptorPid, current_->host_pid}});
        if (rewritten.ok()) AppendBytes(TrackDescriptor::kProcess, *rewritten, &out);
        else unmapped_name = "(malformed process descriptor)";
        return;
      }
      unmapped_name = fmt::format("process {} in pid namespace {} (no host process known)", ns_pid_, ns_);
      return;  // no process binding: never a wrong one
    }
    if (f.wire_type == 2 && f.number == TrackDescriptor::kThread) {
      auto tid = VarintField(f.bytes, pf::ThreadDescriptor::kTid);
      std::optional<int32_t> host = tid.ok() ? HostTid(*tid) : std::nullopt;
      if (host) {
        auto rewritten = SetVarints(f.bytes, {{kDescriptorPid, current_->host_pid}, {pf::ThreadDescriptor::kTid, *host}});
        if (rewritten.ok()) AppendBytes(TrackDescriptor::kThread, *rewritten, &out);
        else unmapped_name = "(malformed thread descriptor)";
        return;
      }
      unmapped_name = fmt::format("thread {} of pid {} in pid namespace {} (no host thread known)",
                                  tid.ok() ? *tid : 0, ns_pid_, ns_);
      return;
    }
    out.append(track.substr(f.start, f.end - f.start));
  });
  GN_RETURN_IF_ERROR(walked);
  if (!unmapped_name.empty() && !has_name) AppendBytes(TrackDescriptor::kName, unmapped_name, &out);
  return out;
}

Result<std::string> FragmentPidTranslator::Rewrite(std::string_view packet) {
  if (!current_) return std::string(packet);
  std::string out;
  Status status = OkStatus();
  Status walked = ForEachField(packet, [&](const WireField& f) {
    if (f.number != pf::TracePacket::kTrackDescriptor || f.wire_type != 2 || !status.ok()) {
      out.append(packet.substr(f.start, f.end - f.start));
      return;
    }
    auto track = RewriteTrack(f.bytes);
    if (!track.ok()) {
      status = track.error();
      return;
    }
    AppendBytes(pf::TracePacket::kTrackDescriptor, *track, &out);
  });
  GN_RETURN_IF_ERROR(walked);
  GN_RETURN_IF_ERROR(status);
  return out;
}

}  // namespace gpunoise::gpu
