// Streams a Perfetto trace file (gpunoise's own, or one written by Perfetto's
// recorder) into a model::TraceSink, packet by packet, with a bounded buffer:
// memory does not grow with the file.
//
// A trace is a sequence of `Trace.packet` fields (tag 0x0a, varint length,
// TracePacket bytes). Packets this reader does not use are skipped by their
// length without being looked into. A file that is cut short or whose
// framing is broken gives an error naming the byte offset; with
// `partial` the reader stops there (or skips a packet whose content is
// malformed) and reports what it could read.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <unordered_set>
#include <vector>

#include "common/result.h"
#include "import/ftrace_bundle_reader.h"
#include "import/ftrace_stats_reader.h"
#include "import/track_event_reader.h"
#include "model/trace_sink.h"

namespace gpunoise::import {

struct ReadOptions {
  // Keep going past corruption: stop at broken framing, skip packets whose
  // content is malformed, and say so in ReadStats::problems.
  bool partial = false;
  // Read buffer; grows to hold the largest packet.
  size_t buffer_bytes = 4 << 20;
  // Only the packets of one machine of a merged trace (TracePacket.machine_id;
  // 0: the host's, which carry none); unset: every packet. Compressed blocks
  // are opened to look at their packets.
  std::optional<uint32_t> machine_id;
};

struct ReadStats {
  uint64_t bytes = 0;    // bytes of the file consumed
  uint64_t packets = 0;
  uint64_t ftrace_bundles = 0;
  uint64_t events = 0;   // kernel events handed on
  uint64_t net_events = 0;
  uint64_t track_events = 0;
  uint64_t skipped_packets = 0;   // packets of kinds the report does not use
  uint64_t unknown_ftrace_events = 0;
  uint64_t compressed_packets = 0;
  uint64_t malformed_packets = 0;  // skipped in partial mode
  uint64_t unseen_switches = 0;    // full-format switches whose prev broke the chain
  uint64_t first_ts = 0;
  uint64_t last_ts = 0;
  uint32_t max_sequence_id = 0;
  // TracePacket.machine_id values seen (0: the host's packets, which carry
  // none): more than one for a merged trace of several machines.
  std::set<uint32_t> machine_ids;
  // Partial mode: what was wrong, each naming a byte offset.
  std::vector<std::string> problems;
  bool truncated = false;  // partial mode: reading stopped before the end
};

class TraceReader {
 public:
  TraceReader(model::TraceSink& sink, ReadOptions options = {});

  // Reads `path` ("-": standard input) to the end.
  Result<ReadStats> ReadFile(const std::string& path);
  // Reads a whole trace held in memory (decompressed packets, tests).
  Result<ReadStats> ReadBuffer(std::span<const uint8_t> data);

 private:
  // Walks `Trace.packet` framing in [data, data+size). `base` is the offset
  // of data[0] in the file (for messages); returns how many bytes were
  // consumed: whole packets only, unless `at_eof`.
  Result<size_t> ParseFraming(const uint8_t* data, size_t size, uint64_t base, bool at_eof,
                              const std::string& where);
  Status HandlePacket(const uint8_t* data, size_t size, uint64_t offset, const std::string& where);
  Status HandleCompressed(const ProtoField& field, bool zstd, uint64_t offset,
                          const std::string& where);
  Status Problem(std::string message);
  void FinishStats();

  model::TraceSink& sink_;
  ReadOptions options_;
  FtraceBundleReader bundles_;
  TrackEventReader track_events_;
  FtraceStatsReader ftrace_stats_;
  std::unordered_set<uint32_t> sequences_seen_;  // for previous_packet_dropped
  ReadStats stats_;
  bool stop_ = false;
  int compression_depth_ = 0;
  uint64_t known_size_ = 0;  // size of a regular file being read; 0: unknown
};

}  // namespace gpunoise::import
