// Reads TracePacket.trace_stats: the tracing service's statistics, which a
// trace from Perfetto's recorder carries (gpunoise writes none). Only the
// fields that tell whether data was lost are kept (model/perfetto_stats.h).
#pragma once

#include "import/packet_error.h"
#include "common/proto_wire_reader.h"
#include "model/trace_sink.h"

namespace gpunoise::import {

bool DecodeTraceStats(const ProtoField& field, model::TraceSink& sink, PacketError* error);

}  // namespace gpunoise::import
