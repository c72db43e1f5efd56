// Decodes the packets that describe a recording rather than its events:
// process_tree, interrupt_info and system_info (ftrace_stats and
// trace_stats: ftrace_stats_reader.h, trace_stats_reader.h).
#pragma once

#include "import/packet_error.h"
#include "common/proto_wire_reader.h"
#include "model/trace_sink.h"

namespace gpunoise::import {

bool DecodeProcessTree(const ProtoField& field, model::TraceSink& sink, PacketError* error);
bool DecodeInterruptInfo(const ProtoField& field, model::TraceSink& sink, PacketError* error);
bool DecodeSystemInfo(const ProtoField& field, model::TraceSink& sink, PacketError* error);

}  // namespace gpunoise::import
