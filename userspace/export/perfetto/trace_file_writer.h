// Writes a Perfetto trace file: a sequence of length-delimited TracePackets
// (field 1 of perfetto.protos.Trace), so a file cut at any packet boundary is
// still a valid trace.
//
// Data goes to a temporary file beside the target and is renamed over it only
// by Commit(): a reader never sees a half-written trace under the final name.
// A small reserve file is preallocated at Create(); if the disk fills up
// mid-record, the partial packet is cut off, the reserve is released, and the
// closing metadata (stats, process names) still fits.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "common/unique_fd.h"

namespace gpunoise::perfetto {

class TracePacket;

class TraceFileWriter {
 public:
  static constexpr uint64_t kDefaultReserveBytes = 4 << 20;

  static Result<TraceFileWriter> Create(const std::string& path,
                                        uint64_t reserve_bytes = kDefaultReserveBytes);

  TraceFileWriter(TraceFileWriter&&) noexcept;
  TraceFileWriter& operator=(TraceFileWriter&&) noexcept;
  ~TraceFileWriter();  // removes the temporary file unless committed

  // Appends one packet. After a disk-full error the writer keeps what was
  // written, switches to the reserve, and reports the error once; callers
  // should then stop recording and only write closing metadata.
  Status WritePacket(const TracePacket& packet);
  // `serialized` is a TracePacket already encoded.
  Status WriteSerializedPacket(std::string_view serialized);
  Status Flush();

  // Flushes, fsyncs and renames onto the final path.
  Status Commit();

  bool disk_full() const { return disk_full_; }
  uint64_t bytes_written() const { return bytes_written_ + buffer_.size(); }
  const std::string& path() const { return path_; }
  const std::string& temp_path() const { return temp_path_; }

 private:
  TraceFileWriter() = default;
  Status WriteBuffer();
  void ReleaseReserve();

  std::string path_;
  std::string temp_path_;
  std::string reserve_path_;
  UniqueFd fd_;
  std::string buffer_;
  // End offset in buffer_ of each packet it holds, so a disk-full error
  // keeps every whole packet that made it to the file.
  std::vector<size_t> packet_ends_;
  std::string scratch_;
  uint64_t bytes_written_ = 0;  // durable packet boundary in the file
  bool disk_full_ = false;
  bool committed_ = false;
};

// Frames `serialized` as a Trace.packet field: tag, varint length, bytes.
void AppendFramedPacket(std::string_view serialized, std::string* out);

}  // namespace gpunoise::perfetto
