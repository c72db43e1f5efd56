#include "record/kernel_log_recording.h"

#include <algorithm>

#include "collect/console_collector.h"
#include "common/log.h"
#include "export/perfetto/kernel_log_packets.h"
#include "export/perfetto/metadata_packets.h"

namespace gpunoise::record {

void ConsoleCapture::AddCollector(std::vector<std::unique_ptr<collect::Collector>>& collectors) {
  auto c = std::make_unique<collect::ConsoleCollector>();
  collector_ = c.get();
  collectors.push_back(std::move(c));
}

void ConsoleCapture::Drain() {
  if (!collector_) return;
  size_t before = records_.size();
  collector_->Drain(&records_);
  read_ += records_.size() - before;
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

Status AppendKernelLog(collect::KmsgReader& reader, ConsoleCapture* console, perfetto::TraceFileWriter& out,
                       std::vector<model::KernelLogEntry>* read) {
  std::vector<model::KernelLogEntry> entries;
  GN_RETURN_IF_ERROR(reader.ReadAvailable(&entries));
  bool matched = console && console->active();
  model::KernelLogMatchStats stats;
  if (matched) {
    std::vector<model::ConsoleRecord> records = console->Take();
    // The reader's own clock anchor is left out on the kmsg side too.
    std::erase_if(records, [](const model::ConsoleRecord& r) { return r.text == collect::kKmsgAnchorText; });
    entries = model::MergeKernelLog(std::move(entries), std::move(records), model::kKernelLogMatchWindowNs, &stats);
  }
  perfetto::ClockReadings clocks = perfetto::ReadClocks();
  int64_t offset = static_cast<int64_t>(clocks.realtime) - static_cast<int64_t>(clocks.boottime);
  // A packet of at most this many records: log packets stay well under the
  // compressed-block size.
  constexpr size_t kPerPacket = 256;
  std::string packet;
  for (size_t start = 0; start < entries.size() || start == 0; start += kPerPacket) {
    size_t end = std::min(entries.size(), start + kPerPacket);
    packet.clear();
    std::span<const model::KernelLogEntry> part(entries.data() + start, end - start);
    // The loss goes with the last packet (the stats are cumulative).
    perfetto::EncodeKernelLogPacket(part, offset, end == entries.size() ? reader.lost() : 0,
                                    kKernelLogSequenceId, &packet);
    GN_RETURN_IF_ERROR(out.WriteSerializedPacket(packet));
    if (end >= entries.size()) break;
  }
  size_t classified = static_cast<size_t>(std::count_if(
      entries.begin(), entries.end(), [](const auto& e) { return e.cls != model::KernelLogClass::kNone; }));
  std::string sources =
      matched ? fmt::format("; {} with the printk's time, CPU and task ({} pr_cont pieces joined), {} only in "
                            "/dev/kmsg, {} only from printk:console, {} overwritten in the console log",
                            stats.matched, stats.continuations, stats.kmsg_unmatched, stats.console_unmatched,
                            console->lost())
              : std::string("; no printk:console collector: times are /dev/kmsg's, no CPU or task");
  log::Info("kernel log: {} records ({} classified), {} lost to the kernel's ring{}{}", entries.size(), classified,
            reader.lost(), sources, reader.anchored() ? "" : "; times are the kernel's local clock (no anchor)");
  if (read) *read = std::move(entries);
  return OkStatus();
}

}  // namespace gpunoise::record
