#include "record/kernel_log_recording.h"

#include <algorithm>

#include "common/log.h"
#include "export/perfetto/kernel_log_packets.h"
#include "export/perfetto/metadata_packets.h"

namespace gpunoise::record {

Status AppendKernelLog(collect::KmsgReader& reader, perfetto::TraceFileWriter& out,
                       std::vector<model::KernelLogEntry>* read) {
  std::vector<model::KernelLogEntry> entries;
  GN_RETURN_IF_ERROR(reader.ReadAvailable(&entries));
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
  log::Info("kernel log: {} records ({} classified), {} lost to the kernel's ring{}", entries.size(), classified,
            reader.lost(), reader.anchored() ? "" : "; times are the kernel's local clock (no anchor)");
  if (read) *read = std::move(entries);
  return OkStatus();
}

}  // namespace gpunoise::record
