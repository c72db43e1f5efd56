// Writes a Perfetto trace file: a sequence of length-delimited TracePackets
// (field 1 of perfetto.protos.Trace), so a file cut at any packet boundary is
// still a valid trace.
//
// With TraceCompression::kZlib, packets are gathered into blocks of at most
// kCompressionBlockBytes and each block is written as one TracePacket whose
// only field is compressed_packets (a zlib stream of the block's framed
// packets). Readers inflate a block in its place, so packet order, and with
// it the order of clock snapshots and interned data, is what it would have
// been without compression. A block the compression gate refuses
// (CompressOnlyWhen) is written as its packets, plain, in its place.
//
// Data goes to a temporary file beside the target and is renamed over it only
// by Commit(): a reader never sees a half-written trace under the final name.
// The temporary and reserve files are private (common/private_file.h: 0600,
// O_EXCL|O_NOFOLLOW, random names), and Create() refuses a symlinked output
// path or a directory others can write into without the sticky bit.
// A small reserve file is preallocated at Create(); if the disk fills up
// mid-record, the partial packet (or block) is cut off, the reserve is
// released, and the closing metadata (stats, process names) still fits.
//
// DeflateInBackground() moves the deflate and the writes of sealed blocks to
// a thread of their own (common/serial_worker.h), in the same order: the
// writer's caller (the recorder's drain) only gathers packets. A write
// error there is returned by the next call after it happened, and the blocks
// sealed in between are dropped (never written into the reserve that the
// closing metadata needs), so accepted_packets() - durable_packets() still
// counts what the file never got.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/proto_wire.h"  // AppendFramedPacket, FramedPacketSize
#include "common/result.h"
#include "common/serial_worker.h"
#include "common/unique_fd.h"
#include "compression/zlib_deflater.h"
#include "export/perfetto/trace_compression.h"
#include "export/perfetto/trace_packet_builder.h"

namespace gpunoise::perfetto {


class TraceFileWriter {
 public:
  static constexpr uint64_t kDefaultReserveBytes = 4 << 20;
  // Packets (framed) per compressed block, before compression. Perfetto asks
  // for compressed_packets packets under 512 KiB; 256 KiB of packets stays
  // under that even if nothing compresses, deflate's gain from larger blocks
  // is small (a 32 KiB window), and a block is also what a disk-full error or
  // a SIGKILL can cost. A single larger packet gets a block of its own.
  static constexpr size_t kCompressionBlockBytes = 256 << 10;
  // zlib level 1: on a recorded sched-heavy trace it writes 3% more bytes
  // than level 6 at 43% of its CPU time, and compression CPU grows with the
  // event rate (docs/record.md, "Compression").
  static constexpr int kZlibLevel = 1;

  // `share_gid` >= 0: the file is 0640 and of that group (an operator's
  // choice, e.g. the group of the people who read traces on this node)
  // instead of 0600; the caller must be allowed to give it to that group
  // (CAP_CHOWN, or a member of it: common/privilege_drop.h JoinGroup).
  static Result<TraceFileWriter> Create(const std::string& path,
                                        uint64_t reserve_bytes = kDefaultReserveBytes,
                                        TraceCompression compression = TraceCompression::kNone,
                                        int share_gid = -1);

  TraceFileWriter(TraceFileWriter&&) noexcept;
  TraceFileWriter& operator=(TraceFileWriter&&) noexcept;
  ~TraceFileWriter();  // removes the temporary file unless committed

  // Appends one packet. After a disk-full error the writer keeps what was
  // written, switches to the reserve, and reports the error once; callers
  // should then stop recording and only write closing metadata.
  Status WritePacket(const TracePacketBuilder& packet);
  // A packet built with libprotobuf's classes: for tests, which craft input
  // traces with them (an encoder independent of this project's). A template,
  // so that no product code links libprotobuf.
  template <typename ProtobufMessage>
  Status WritePacket(const ProtobufMessage& packet) {
    return WriteSerializedPacket(packet.SerializeAsString());
  }
  // `serialized` is a TracePacket already encoded.
  Status WriteSerializedPacket(std::string_view serialized);
  // Writes every packet handed in so far to the file (sealing the current
  // compressed block, however small).
  Status Flush();

  // Flushes, fsyncs and renames onto the final path.
  Status Commit();

  // Asked as each block is sealed: false writes the block's packets plain
  // instead of deflating them (the recorder's `--compress auto`: deflate
  // only with CPU to spare, record/spare_cpu.h). Without a gate every block
  // is compressed.
  void CompressOnlyWhen(std::function<bool()> gate) { compress_gate_ = std::move(gate); }
  // Sealed blocks are deflated and written on a thread of their own from
  // here on (see above); a writer without compression has no blocks, and
  // stays as it is. Call it after the process dropped its capabilities or
  // before: the thread holds none either way.
  Status DeflateInBackground();
  // That thread's id (0: none), so that the drain's scheduling policy can
  // apply to it too (record/drain_priority.h).
  pid_t background_tid() const { return background_ ? background_->tid() : 0; }
  // Blocks sealed so far, and of them those written plain by the gate.
  uint64_t blocks_sealed() const { return blocks_sealed_; }
  uint64_t blocks_plain() const { return blocks_plain_; }

  // Packets accepted so far, and how many of them are in the file: after a
  // write error the difference was dropped with the buffer, so a caller that
  // numbers what it wrote can count what never reached the file.
  uint64_t accepted_packets() const { return accepted_; }
  uint64_t durable_packets() const;
  bool disk_full() const;
  TraceCompression compression() const { return compression_; }
  // Bytes in the file plus packets still held in memory (before
  // compression); the file's size once committed.
  uint64_t bytes_written() const;
  // Bytes of framed packets handed in, as an uncompressed file would hold them.
  uint64_t packet_bytes() const { return packet_bytes_; }
  const std::string& path() const;
  const std::string& temp_path() const;

 private:
  struct Output;
  TraceFileWriter();
  // Hands block_ to the output: deflated into one compressed_packets packet,
  // or (the gate refused) its packets plain.
  Status SealBlock();
  // The first write error the background thread hit that no call has
  // returned yet; waits for the thread first when `wait`.
  Status TakeBackgroundError(bool wait);

  // The file and what reaches it; on the heap, where a background thread
  // can find it however the writer moves.
  std::unique_ptr<Output> out_;
  std::unique_ptr<SerialWorker> background_;
  // Write errors of the background thread that a call has returned, and
  // whether the disk was full by then: the caller learns of a full disk
  // with the error, never before (it then stops writing events, and the
  // error must not come back on its closing metadata instead).
  uint64_t errors_returned_ = 0;
  bool disk_full_returned_ = false;
  uint64_t accepted_ = 0;        // packets handed to Write*Packet
  uint64_t block_accepted_ = 0;  // accepted_ when the current block's last packet came
  TraceCompression compression_ = TraceCompression::kNone;
  // Framed packets of the block being gathered (compression only).
  std::string block_;
  std::function<bool()> compress_gate_;
  uint64_t blocks_sealed_ = 0;
  uint64_t blocks_plain_ = 0;
  uint64_t packet_bytes_ = 0;
  bool committed_ = false;
};

}  // namespace gpunoise::perfetto
