// Turns raw ring-buffer records into model events.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "model/events.h"

namespace gpunoise::collect {

enum class DecodeResult {
  kOk,
  kTooShort,     // record smaller than its kind's layout: counted, skipped
  kUnknownKind,  // a kind this build does not know: counted, skipped
};

// `data` is one record as bpf_ringbuf_submit() wrote it; `cpu` is the ring it
// came from. A record of two events (below) is kUnknownKind here.
DecodeResult DecodeRecord(std::span<const uint8_t> data, uint32_t cpu, model::Event* out);

// A record may stand for two events: a softirq slice (struct
// gn_softirq_slice) is its entry and its exit. Decodes `data` into `out` in
// time order and returns how many events it holds (1 or 2); 0 when it cannot
// be decoded, with the reason in `*result`.
size_t DecodeRecordEvents(std::span<const uint8_t> data, uint32_t cpu, std::span<model::Event, 2> out,
                          DecodeResult* result);

// The size of a record of `kind` when every record of it has the same size
// (what a batch may hold, bpf/batch.bpf.h); 0 for variable-size and unknown
// kinds.
size_t FixedRecordSize(uint16_t kind);

// Which collector a record kind belongs to ("sched", "irq", ...), for
// per-collector event counts; empty for unknown kinds.
std::string_view CollectorOfKind(uint16_t kind);

// The tracepoint event a record kind stands for ("sched_switch"), for loss
// by kind; empty for unknown kinds.
std::string_view RecordKindName(uint16_t kind);

}  // namespace gpunoise::collect
