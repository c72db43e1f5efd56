// Decodes the packets that describe a recording rather than its events:
// process_tree, interrupt_info, system_info and ftrace_stats.
#pragma once

#include "import/packet_error.h"
#include "import/proto_wire.h"
#include "model/trace_sink.h"

namespace gpunoise::import {

bool DecodeProcessTree(const ProtoField& field, model::TraceSink& sink, PacketError* error);
bool DecodeInterruptInfo(const ProtoField& field, model::TraceSink& sink, PacketError* error);
bool DecodeSystemInfo(const ProtoField& field, model::TraceSink& sink, PacketError* error);
// Only the end-of-trace phase is passed on: its per-CPU counts cover the
// whole recording.
bool DecodeFtraceStats(const ProtoField& field, model::TraceSink& sink, PacketError* error);

}  // namespace gpunoise::import
