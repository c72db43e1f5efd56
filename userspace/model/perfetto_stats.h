// What a Perfetto trace says about its own losses, in Perfetto's own fields:
// the ftrace data source's per-CPU kernel ring stats (FtraceStats), the
// tracing service's buffer stats (TraceStats) and the packets a writer marked
// as following a loss (TracePacket.previous_packet_dropped). Traces written
// by Perfetto's recorder (traced, traced_probes) carry these and no gpunoise
// session summary; the report reads them so such a trace is not called
// loss-free when it is not (DESIGN.md decision 3).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gpunoise::model {

// One CPU's FtraceCpuStats, END_OF_TRACE minus START_OF_TRACE: what the trace
// processor's stats table calls ftrace_cpu_*_delta.
struct FtraceCpuDelta {
  uint32_t cpu = 0;
  // Without a START phase for this CPU the END values stand as the deltas:
  // the kernel's counts since the ring was last reset (traced_probes resets
  // it when tracing starts).
  bool has_start = false;
  uint64_t overrun = 0;         // overwritten before they were read (ring in overwrite mode)
  uint64_t dropped_events = 0;  // refused because the ring was full (overwrite off)
  uint64_t commit_overrun = 0;  // lost to the ring wrapping over uncommitted events (an irq storm)
  uint64_t read_events = 0;     // read by the recorder
  int64_t entries = 0;          // change in events left in the ring
  int64_t bytes = 0;            // change in bytes left in the ring ("bytes_read" upstream)
  // Events the kernel ring lost on this CPU. The three causes are counted
  // apart by the kernel, so they add.
  uint64_t lost() const { return overrun + dropped_events + commit_overrun; }
};

// An FtraceStats pair (the latest START, the latest END), as the trace
// processor keeps it.
struct FtraceStatsSummary {
  std::vector<FtraceCpuDelta> cpus;
  // Setup trouble (trace processor: ftrace_setup_errors, a notice): events
  // the config asked for that were not recorded at all.
  std::vector<std::string> failed_events;   // present but could not be enabled
  std::vector<std::string> unknown_events;  // not on this kernel
  std::string atrace_errors;
  std::string exclusive_feature_error;
  // FtraceParseStatus codes met while reading the kernel ring (a bug in
  // Perfetto or the kernel; the trace processor refuses such a trace).
  std::vector<uint32_t> parse_errors;
  bool preserve_ftrace_buffer = false;  // events from before the trace's start were kept
  // kretprobe misses during the trace (ftrace_kprobe_misses_delta, data loss).
  bool has_kprobe_stats = false;
  int64_t kprobe_misses = 0;
};

// One TraceStats.BufferStats: a buffer of the tracing service.
struct TraceBufferStats {
  uint32_t index = 0;  // as in the trace config's buffer list
  uint64_t buffer_size = 0, bytes_written = 0, chunks_written = 0;
  uint64_t bytes_overwritten = 0;   // overwritten before read: lost (ring buffer)
  uint64_t chunks_overwritten = 0;  // the same in chunks
  uint64_t chunks_discarded = 0;    // refused with the buffer full: lost (DISCARD buffer)
  uint64_t patches_failed = 0;      // packets whose size could not be patched in: lost or cut
  uint64_t abi_violations = 0;      // a producer broke the shared-memory ABI
  uint64_t trace_writer_packet_loss = 0;  // times a writer reported lost packets
  uint64_t readaheads_failed = 0;   // a few are normal (the last packet still being written)
  uint64_t chunks_rewritten = 0;    // not loss: a chunk written again with more packets
};

struct TraceServiceStats {
  std::vector<TraceBufferStats> buffers;
  uint64_t chunks_discarded = 0;   // before any buffer (an invalid buffer id)
  uint64_t patches_discarded = 0;  // the same for patches
  uint64_t invalid_packets = 0;    // failed the service's validation: a producer bug
  uint64_t flushes_requested = 0, flushes_succeeded = 0;
  uint64_t flushes_failed = 0;     // data of a flush that timed out may be missing
  bool final_flush_failed = false;
  uint64_t filter_errors = 0;      // the trace filter failed on packets
};

// Packets flagged previous_packet_dropped, the first packet of each sequence
// left out (the service flags that one too, as the trace processor knows).
struct PacketLoss {
  uint64_t packets = 0;    // losses: each is one or more packets lost before it
  uint64_t sequences = 0;  // writers that lost packets
};

}  // namespace gpunoise::model
