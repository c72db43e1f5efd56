// The kernel log of a recording, appended to its trace: every /dev/kmsg
// record logged since the recording started, classified, as Perfetto log
// packets (export/perfetto/kernel_log_packets.h) with the loss counted.
#pragma once

#include "collect/kmsg_reader.h"
#include "common/result.h"
#include "export/perfetto/trace_file_writer.h"

namespace gpunoise::record {

// Sequence id of the kernel log packets (track events use 1).
inline constexpr uint32_t kKernelLogSequenceId = 7;

// `read`, when given, receives the records (for the link events' join).
Status AppendKernelLog(collect::KmsgReader& reader, perfetto::TraceFileWriter& out,
                       std::vector<model::KernelLogEntry>* read = nullptr);

}  // namespace gpunoise::record
