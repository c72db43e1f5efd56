// NodeTrackWriter::WriteKernelWork: the kwork collector's IPI sends, IPI
// callbacks, work items and hrtimer callbacks (export/perfetto/node_tracks.h).
#include <fmt/format.h>

#include "export/perfetto/node_tracks.h"
#include "export/perfetto/track_event_writer.h"

namespace gpunoise::perfetto {

Status NodeTrackWriter::WriteKernelWork(const model::KernelWork& work, std::string_view function,
                                        std::string_view callsite, int32_t pid, std::string_view thread_name) {
  TracePacketBuilder packet;
  const bool send = work.kind == model::KernelWorkKind::kIpiSend;
  // A send from the idle task (an interrupt on an idle CPU) has no thread
  // to go on, and one whose process is unknown (a thread that exited before
  // the drain, from a log without the kernel's tgid; a made-up process would
  // be a second thread of that tid in the trace processor): both go on the
  // CPU's track like the rest, with the tid in the args.
  const bool on_thread = send && work.tid != 0 && pid != 0;
  // A send belongs to the thread that sent it; the rest to the CPU it ran
  // on, one track per kind so that slices of one track nest (a hard hrtimer
  // may interrupt a work item).
  auto key = on_thread ? std::make_pair(work.tid, -1) : std::make_pair(static_cast<int32_t>(work.cpu),
                                                                   static_cast<int>(work.kind));
  auto it = kwork_tracks_.find(key);
  if (it == kwork_tracks_.end()) {
    if (on_thread) {
      uint64_t uuid = writer_.TrackUuid(fmt::format("gpunoise kwork send {}", work.tid));
      writer_.FillThreadTrackDescriptor(&packet, uuid, pid, work.tid, thread_name);
      GN_RETURN_IF_ERROR(out_(packet));
      it = kwork_tracks_.emplace(key, uuid).first;
    } else {
      if (!root_track_) {
        root_track_ = writer_.TrackUuid("gpunoise node root");
        writer_.FillTrackDescriptor(&packet, root_track_, kNodeRootTrackName, 0,
                                    "steal time and CPU-quota throttling (gpunoise record)");
        GN_RETURN_IF_ERROR(out_(packet));
      }
      uint64_t uuid = writer_.TrackUuid(fmt::format("gpunoise kwork cpu {} {}", work.cpu, static_cast<int>(work.kind)));
      writer_.FillTrackDescriptor(&packet, uuid, fmt::format("CPU {} {}s", work.cpu, model::KernelWorkName(work.kind)),
                                  root_track_, "kernel work on this CPU (kwork collector)");
      GN_RETURN_IF_ERROR(out_(packet));
      it = kwork_tracks_.emplace(key, uuid).first;
    }
  }
  // Interned: under a NET_RX flood there is a send and a callback per
  // remote wakeup (18k/s here), and their repeated strings (function and
  // arg names, the category) were half the trace's bytes before
  // compression (docs/performance.md).
  EventRef e = send ? writer_.FillInternedInstant(&packet, work.begin, it->second, model::KernelWorkName(work.kind),
                                                  kKernelWorkCategory)
                    : writer_.FillInternedSliceBegin(&packet, work.begin, it->second, function, kKernelWorkCategory);
  writer_.AddInternedArg(e, "kind", model::KernelWorkName(work.kind));
  writer_.AddInternedArg(e, "cpu", uint64_t{work.cpu});
  writer_.AddInternedArg(e, "tid", int64_t{work.tid});
  writer_.AddInternedArg(e, "function", function);
  if (work.csd) writer_.AddInternedArg(e, "csd", uint64_t{work.csd});
  if (send) {
    writer_.AddInternedArg(e, "callsite", callsite);
    writer_.AddInternedArg(e, "targets", uint64_t{work.targets});
    if (work.context != model::KernelWorkContext::kTask)
      writer_.AddInternedArg(e, "context", work.context == model::KernelWorkContext::kHardirq ? "hardirq" : "softirq");
  }
  writer_.FinishInterned(&packet);
  GN_RETURN_IF_ERROR(out_(packet));
  if (send) return OkStatus();
  writer_.FillSliceEnd(&packet, work.end, it->second);
  return out_(packet);
}

}  // namespace gpunoise::perfetto
