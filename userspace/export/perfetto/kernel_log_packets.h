// The kernel log of a recording as Perfetto log packets (AndroidLogPacket,
// log_id LID_KERNEL): the trace processor fills its android_logs table from
// them and the UI shows them in its log panel, each at its own time. The
// tag is the message's class ("tx_timeout", "link_down", ...) or "kernel";
// args carry the sequence number, the facility, DEVICE=, SUBSYSTEM= and the
// device the message is about, so the report reads them back typed.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "export/perfetto/sequence_ids.h"
#include "model/kernel_log.h"

namespace gpunoise::perfetto {

// Log timestamps are CLOCK_REALTIME in this packet (the trace processor
// converts them with the trace's clock snapshots): `realtime_minus_boottime`
// is that offset at the recording's clock snapshot.
void EncodeKernelLogPacket(std::span<const model::KernelLogEntry> entries, int64_t realtime_minus_boottime,
                           uint64_t lost, uint32_t sequence_id, std::string* packet);

// kmsg levels 0 emerg .. 7 debug as Android priorities.
uint32_t AndroidPriorityOfLevel(uint8_t level);

}  // namespace gpunoise::perfetto
