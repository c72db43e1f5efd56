// Decodes log packets (AndroidLogPacket) of the kernel's log (log_id
// LID_KERNEL, as `record` writes them: export/perfetto/kernel_log_packets.h)
// back into typed records; other logs are skipped.
#pragma once

#include "import/packet_error.h"
#include "common/proto_wire_reader.h"
#include "model/trace_sink.h"

namespace gpunoise::import {

bool DecodeKernelLog(const ProtoField& field, model::TraceSink& sink, PacketError* error);

}  // namespace gpunoise::import
