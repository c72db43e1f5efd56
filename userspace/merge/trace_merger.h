// Merges Perfetto trace files by appending their packets (a trace is a
// concatenation of packets), giving each input's packet sequences new,
// distinct trusted_packet_sequence_ids: two inputs that both used sequence 1
// would otherwise be read as one writer, and the trace processor would
// mix their incremental state. An input of another machine gets that
// machine's TracePacket.machine_id on every packet (machine_alignment.h says
// which input is which machine), and its clock snapshots become
// RemoteClockSync packets when the caller gives the machine's clock offset
// (set_remote_boottime_offset). Everything else in a packet is copied byte
// for byte, so fields this project's schema subset does not know survive.
//
// A compressed block of an input (compressed_packets, zstd_compressed_packets)
// is inflated and its packets are renumbered and written one by one in its
// place, since the sequence ids are inside; the output writer compresses
// them again if it was asked to.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/result.h"
#include "common/unique_fd.h"

namespace gpunoise::perfetto {

class TraceFileWriter;

// Reads a trace file one packet at a time, checking the framing: a
// truncated or corrupt file is an error naming the file and byte offset.
class TracePacketReader {
 public:
  static Result<TracePacketReader> Open(const std::string& path);
  // Reads `fd`, already opened (and checked) by the caller; `path` names it
  // in errors.
  static Result<TracePacketReader> FromFd(UniqueFd fd, const std::string& path);

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
// TracePacket through `map_id` and, when `machine_id` is given, sets field 98
// (machine_id) to it (0: the field is removed, the host's packets carry
// none); leaves every other byte as it was. Returns an error (with the
// offset inside the packet) if the packet is malformed.
Result<std::string> RenumberSequence(std::string_view packet,
                                     const std::function<uint32_t(uint32_t)>& map_id,
                                     std::optional<uint32_t> machine_id = std::nullopt);

// The compressed payload of a serialized TracePacket, if it carries one.
struct CompressedPackets {
  enum class Codec { kZlib, kZstd };
  Codec codec;
  std::string_view bytes;
};
Result<std::optional<CompressedPackets>> FindCompressedPackets(std::string_view packet);

// Calls `visit` with each packet of a serialized Trace held in memory (an
// inflated block) and its offset there; stops at the first error, which
// names the offset.
Status ForEachPacket(std::string_view trace,
                     const std::function<Status(std::string_view packet, uint64_t offset)>& visit);

class TraceMerger {
 public:
  // Sequence ids below `first_sequence_id` are left to the caller (the
  // recorder keeps its own sequence 1).
  explicit TraceMerger(TraceFileWriter* out, uint32_t first_sequence_id = 1);

  struct InputStats {
    uint64_t packets = 0;  // packets inside compressed blocks count one by one
    uint32_t sequences = 0;
    uint64_t compressed_blocks = 0;
  };
  // Appends every packet of `path`. On an error the packets before the bad
  // one have been appended (each is complete); the error names the file and
  // byte offset.
  // Every packet of the input, those inside compressed blocks included,
  // gets `machine_id` (TracePacket.machine_id; 0 is the host machine).
  Result<InputStats> Append(const std::string& path, uint32_t machine_id = 0);
  // The same for a file the caller opened: a fragment checked on its open
  // fd is the file read (record/gpu/gpu_fragments.cc).
  Result<InputStats> Append(UniqueFd fd, const std::string& path, uint32_t machine_id = 0);
  // Writes one packet the merger made itself (a machine's clock sync).
  Status AppendSerialized(std::string_view packet);
  // Applied to each packet of the inputs appended while it is set, before
  // the renumbering (GPU fragments of a container: namespace-local pids to
  // host pids, record/gpu/fragment_pid_translator.h). Empty: packets as they are.
  using PacketRewrite = std::function<Result<std::string>(std::string_view packet)>;
  void set_rewrite(PacketRewrite rewrite) { rewrite_ = std::move(rewrite); }

  // For inputs of another machine (machine_id != 0) appended while it is
  // set: the host's BOOTTIME minus that machine's (0: it keeps its own axis).
  // Their clock snapshots are then written as RemoteClockSync packets,
  // which the trace processor needs (AsRemoteClockSync in
  // machine_alignment.h says why). Unset: copied as they are.
  void set_remote_boottime_offset(std::optional<int64_t> host_minus_client_ns) {
    remote_boottime_offset_ = host_minus_client_ns;
  }

  uint64_t packets() const { return packets_; }
  uint32_t sequences() const { return next_id_ - first_id_; }

 private:
  using IdMap = std::function<uint32_t(uint32_t)>;
  // Renumbers and writes one packet of `path` (at file byte `offset`; for a
  // packet inside a compressed block, the block's offset).
  Status AppendPacket(std::string_view packet, const IdMap& map_id, const std::string& path,
                      uint64_t offset, InputStats* stats);
  Status AppendCompressed(const CompressedPackets& block, const IdMap& map_id,
                          const std::string& path, uint64_t offset, InputStats* stats);

  TraceFileWriter* out_;
  uint32_t first_id_;
  uint32_t next_id_;
  std::vector<uint8_t> inflated_;  // the compressed block being copied
  size_t inputs_ = 0;
  uint32_t machine_id_ = 0;  // of the input being appended
  PacketRewrite rewrite_;
  // The packet after rewrite_ (or `packet` itself without one).
  Result<std::string> Renumber(std::string_view packet, const IdMap& map_id);
  // Writes a renumbered packet; another machine's clock snapshot goes out
  // as a RemoteClockSync (set_remote_boottime_offset). `written`: how many
  // packets went out.
  Status Write(std::string_view packet, uint64_t* written);
  std::optional<int64_t> remote_boottime_offset_;
  uint64_t packets_ = 0;
};

}  // namespace gpunoise::perfetto
