// Merges Perfetto trace files by appending their packets (a trace is a
// concatenation of packets), giving each input's packet sequences new,
// distinct trusted_packet_sequence_ids: two inputs that both used sequence 1
// would otherwise be read as one writer, and the trace processor would
// mix their incremental state. Everything else in a packet, clock snapshots
// included, is copied byte for byte, so fields this project's schema subset
// does not know survive.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <utility>

#include "common/result.h"
#include "common/unique_fd.h"

namespace gpunoise::perfetto {

class TraceFileWriter;

// Reads a trace file one packet at a time, checking the framing: a
// truncated or corrupt file is an error naming the file and byte offset.
class TracePacketReader {
 public:
  static Result<TracePacketReader> Open(const std::string& path);

  // True with `packet` set (and `offset`, where its framing starts); false
  // at the end of the file.
  Result<bool> Next(std::string* packet, uint64_t* offset);

  const std::string& path() const { return path_; }

 private:
  TracePacketReader() = default;
  // Makes `n` bytes available at buffer_[pos_]; false at end of file.
  Result<bool> Fill(size_t n);
  Result<uint64_t> ReadVarint(uint64_t at, bool* eof);

  std::string path_;
  UniqueFd fd_;
  std::string buffer_;
  size_t pos_ = 0;
  uint64_t consumed_ = 0;  // file offset of buffer_[0]
  uint64_t file_size_ = 0;
  bool eof_ = false;
};

// Rewrites field 10 (trusted_packet_sequence_id) of a serialized
// TracePacket through `map_id`; leaves every other byte as it was. Returns
// an error (with the offset inside the packet) if the packet is malformed.
Result<std::string> RenumberSequence(std::string_view packet,
                                     const std::function<uint32_t(uint32_t)>& map_id);

class TraceMerger {
 public:
  // Sequence ids below `first_sequence_id` are left to the caller (the
  // recorder keeps its own sequence 1).
  explicit TraceMerger(TraceFileWriter* out, uint32_t first_sequence_id = 1);

  struct InputStats {
    uint64_t packets = 0;
    uint32_t sequences = 0;
  };
  // Appends every packet of `path`. On an error the packets before the bad
  // one have been appended (each is complete); the error names the file and
  // byte offset.
  Result<InputStats> Append(const std::string& path);

  uint64_t packets() const { return packets_; }
  uint32_t sequences() const { return next_id_ - first_id_; }

 private:
  TraceFileWriter* out_;
  uint32_t first_id_;
  uint32_t next_id_;
  size_t inputs_ = 0;
  uint64_t packets_ = 0;
};

}  // namespace gpunoise::perfetto
