#include "record/kernel_log_recording.h"

#include <algorithm>
#include <limits>

#include "collect/console_collector.h"
#include "common/clock.h"
#include "common/log.h"
#include "export/perfetto/kernel_log_packets.h"
#include "export/perfetto/metadata_packets.h"

namespace gpunoise::record {
namespace {

// A drain at BOOTTIME t has every record of either half printed before t;
// the margin covers the kmsg times' anchor estimate (collect/kmsg_reader.h:
// microseconds) and a printk that took its time before its record landed.
constexpr uint64_t kCompleteMarginNs = 10'000'000;

}  // namespace

void ConsoleCapture::AddCollector(std::vector<std::unique_ptr<collect::Collector>>& collectors) {
  auto c = std::make_unique<collect::ConsoleCollector>();
  collector_ = c.get();
  collectors.push_back(std::move(c));
}

bool ConsoleCapture::active() const {
  return collector_ && collector_->report().state != model::CollectorState::kDisabled &&
         collector_->report().state != model::CollectorState::kNotRequested;
}

uint64_t ConsoleCapture::lost() const { return collector_ ? collector_->lost() : 0; }

void ConsoleCapture::FillReport(std::vector<model::CollectorReport>& reports) const {
  if (!collector_) return;
  for (auto& r : reports)
    if (r.name == collector_->name()) {
      r.events = read_;
      r.lost = collector_->lost();
    }
}

Status ConsoleCapture::Write(perfetto::TraceFileWriter& out, std::vector<model::KernelLogEntry> entries, bool last) {
  if (entries.empty() && !last) return OkStatus();
  perfetto::ClockReadings clocks = perfetto::ReadClocks();
  int64_t offset = static_cast<int64_t>(clocks.realtime) - static_cast<int64_t>(clocks.boottime);
  // A packet of at most this many records: log packets stay well under the
  // compressed-block size.
  constexpr size_t kPerPacket = 256;
  std::string packet;
  for (size_t start = 0;; start += kPerPacket) {
    size_t end = std::min(entries.size(), start + kPerPacket);
    packet.clear();
    std::span<const model::KernelLogEntry> part(entries.data() + start, end - start);
    // The loss goes with the very last packet (the readers add the packets'
    // counts up; the trace processor keeps the last).
    perfetto::EncodeKernelLogPacket(part, offset, last && end == entries.size() && kmsg_ ? kmsg_->lost() : 0,
                                    perfetto::kKernelLogSequenceId, &packet);
    GN_RETURN_IF_ERROR(out.WriteSerializedPacket(packet));
    if (end >= entries.size()) break;
  }
  for (model::KernelLogEntry& e : entries) {
    ++written_;
    if (e.cls != model::KernelLogClass::kNone) ++classified_;
    kept_.push_back(std::move(e));
    if (kept_.size() > kKernelLogJoinKeep) {
      kept_.pop_front();
      ++not_joined_;
    }
  }
  return OkStatus();
}

Status ConsoleCapture::Drain(perfetto::TraceFileWriter& out) {
  const uint64_t now = BoottimeNs();
  records_.clear();
  if (collector_) collector_->Drain(&records_);
  read_ += records_.size();
  std::vector<model::KernelLogEntry> entries;
  if (kmsg_) GN_RETURN_IF_ERROR(kmsg_->ReadAvailable(&entries));
  // The reader's own clock anchor is left out on the console side too.
  std::erase_if(records_, [](const model::ConsoleRecord& r) { return r.text == collect::kKmsgAnchorText; });
  matcher_.AddKmsg(std::move(entries));
  matcher_.AddConsole(std::move(records_));
  records_ = {};
  most_held_ = std::max(most_held_, matcher_.held());
  const uint64_t complete_to = now > kCompleteMarginNs ? now - kCompleteMarginNs : 0;
  if (kmsg_) return Write(out, matcher_.Take(complete_to), false);
  // No /dev/kmsg yet (it opens once the recording started, so this is the
  // console's first milliseconds) or none at all (then the recording has no
  // kernel log): held until it comes, within a bound.
  if (matcher_.held() > kKernelLogJoinKeep) not_written_ += matcher_.Take(complete_to).size();
  return OkStatus();
}

Status ConsoleCapture::Finish(perfetto::TraceFileWriter& out, std::vector<model::KernelLogEntry>* read) {
  GN_RETURN_IF_ERROR(Drain(out));
  GN_RETURN_IF_ERROR(Write(out, matcher_.Take(std::numeric_limits<uint64_t>::max()), true));
  const model::KernelLogMatchStats& stats = matcher_.stats();
  bool matched = active();
  std::string sources =
      matched ? fmt::format("; {} with the printk's time, CPU and task ({} pr_cont pieces joined), {} only in "
                            "/dev/kmsg, {} only from printk:console, {} overwritten in the console log",
                            stats.matched, stats.continuations, stats.kmsg_unmatched, stats.console_unmatched, lost())
              : std::string("; no printk:console collector: times are /dev/kmsg's, no CPU or task");
  log::Info("kernel log: {} records ({} classified), {} lost to the kernel's ring{}{}{}{}", written_, classified_,
            kmsg_ ? kmsg_->lost() : 0, sources,
            not_written_ ? fmt::format("; {} console records from before /dev/kmsg was open left out", not_written_)
                         : std::string(),
            kmsg_ && kmsg_->anchored() ? "" : "; times are the kernel's local clock (no anchor)",
            not_joined_ ? fmt::format("; the oldest {} are not joined to link events (only the newest {} are kept)",
                                      not_joined_, kKernelLogJoinKeep)
                        : std::string());
  if (read) read->assign(std::make_move_iterator(kept_.begin()), std::make_move_iterator(kept_.end()));
  kept_.clear();
  return OkStatus();
}

Status AppendKernelLog(collect::KmsgReader& reader, ConsoleCapture& console, perfetto::TraceFileWriter& out,
                       std::vector<model::KernelLogEntry>* read) {
  console.set_kmsg(&reader);
  return console.Finish(out, read);
}

}  // namespace gpunoise::record
