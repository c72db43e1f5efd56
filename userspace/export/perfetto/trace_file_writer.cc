#include "export/perfetto/trace_file_writer.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <mutex>

#include "common/private_file.h"
#include "export/perfetto/protos/perfetto_fields.h"

namespace gpunoise::perfetto {
namespace {

constexpr size_t kFlushThreshold = 1 << 20;
// Sealed blocks that may wait for the background thread: 1 MiB of packets
// before the drain waits for it.
constexpr size_t kBackgroundBlocks = 4;

}  // namespace

// Touched by one thread at a time: the writer's caller, or (with a
// background thread) that thread alone from DeflateInBackground() on, the
// caller then reading only the atomics.
struct TraceFileWriter::Output {
  std::string path;
  std::string temp_path;
  UniqueFd reserve_fd;  // unlinked; closing it frees the reserve
  UniqueFd fd;
  std::optional<::gpunoise::compression::ZlibDeflater> deflater;
  // Framed packets (compressed blocks, when compressing) on their way to
  // the file.
  std::string buffer;
  // End offset in buffer of each packet it holds, so a disk-full error
  // keeps every whole packet that made it to the file, and how many accepted
  // packets are in the file once it is there (a block holds many).
  struct BufferedPacket {
    size_t end;
    uint64_t accepted_through;
  };
  std::vector<BufferedPacket> packet_ends;
  // A block's zlib stream, and the packet that carries it.
  std::string deflated;
  std::string block_packet;
  std::atomic<uint64_t> durable{0};        // accepted packets now in the file
  std::atomic<uint64_t> bytes_written{0};  // durable packet boundary in the file
  std::atomic<uint64_t> queued_bytes{0};  // in blocks the background thread has not written yet
  std::atomic<bool> disk_full{false};
  // The background thread's write errors, and the first one no call has
  // returned yet.
  std::atomic<uint64_t> errors{0};
  std::mutex error_mu;
  std::optional<Error> error;

  // A sealed block: deflated (unless `plain`) and written.
  Status WriteBlock(std::string& block, uint64_t accepted_through, bool plain);
  Status WriteBuffer();
};

Result<TraceFileWriter> TraceFileWriter::Create(const std::string& path, uint64_t reserve_bytes,
                                                TraceCompression compression, int share_gid) {
  if (path.empty()) return MakeError("no output path given");
  // Before anything is created: a symlink at the path, or a directory where
  // other users can swap entries, is refused with nothing written.
  if (std::string refused = CheckOutputPath(path); !refused.empty()) return MakeError("{}", refused);
  std::string dir = PrivateFileDirName(path);
  if (::access(dir.c_str(), W_OK) != 0)
    return MakeError("output path {} is not writable: {}: {}", path, dir, std::strerror(errno));

  TraceFileWriter w;
  Output& out = *w.out_;
  if (compression == TraceCompression::kZlib) {
    GN_ASSIGN_OR_RETURN(::gpunoise::compression::ZlibDeflater deflater,
                        ::gpunoise::compression::ZlibDeflater::Create(kZlibLevel));
    out.deflater.emplace(std::move(deflater));
    w.compression_ = TraceCompression::kZlib;
    w.block_.reserve(kCompressionBlockBytes);
  }
  out.path = path;
  std::string error;
  out.fd = CreatePrivateTemp(path, "tmp", &out.temp_path, &error);
  if (!out.fd.valid()) {
    out.temp_path.clear();
    return MakeError("{}", error);
  }
  // Group-readable for the operator's group: set on the fd before the first
  // byte, so the file is never readable by anyone else on the way.
  if (share_gid >= 0 &&
      (::fchown(out.fd.get(), static_cast<uid_t>(-1), static_cast<gid_t>(share_gid)) != 0 ||
       ::fchmod(out.fd.get(), 0640) != 0)) {
    int err = errno;
    ::unlink(out.temp_path.c_str());
    out.temp_path.clear();
    return MakeError("failed to give {} to group {}: {}", path, share_gid, std::strerror(err));
  }

  if (reserve_bytes > 0) {
    // The reserve is unlinked at once and held open: its blocks stay
    // allocated until released, and a recording killed by SIGKILL leaves no
    // reserve file behind.
    std::string reserve_path;
    out.reserve_fd = CreatePrivateTemp(path, "reserve", &reserve_path, &error);
    if (out.reserve_fd.valid()) ::unlink(reserve_path.c_str());
    int err = out.reserve_fd.valid()
                  ? ::posix_fallocate(out.reserve_fd.get(), 0, static_cast<off_t>(reserve_bytes))
                  : 0;
    if (!out.reserve_fd.valid() || err != 0) {
      out.reserve_fd.Reset();
      ::unlink(out.temp_path.c_str());
      out.temp_path.clear();
      if (err == 0) return MakeError("{}", error);
      return MakeError("not enough free space for {} ({} reserve): {}", path,
                       reserve_bytes, std::strerror(err));
    }
  }
  if (!out.deflater) out.buffer.reserve(kFlushThreshold + 64 * 1024);
  return w;
}

TraceFileWriter::TraceFileWriter() : out_(std::make_unique<Output>()) {}

TraceFileWriter::TraceFileWriter(TraceFileWriter&& o) noexcept { *this = std::move(o); }

TraceFileWriter& TraceFileWriter::operator=(TraceFileWriter&& o) noexcept {
  if (this == &o) return *this;
  background_.reset();  // runs what it was given first
  if (out_ && !committed_ && !out_->temp_path.empty()) ::unlink(out_->temp_path.c_str());
  // The background thread, if any, finds the output where it was.
  out_ = std::move(o.out_);
  background_ = std::move(o.background_);
  errors_returned_ = o.errors_returned_;
  disk_full_returned_ = o.disk_full_returned_;
  accepted_ = o.accepted_;
  block_accepted_ = o.block_accepted_;
  compression_ = o.compression_;
  block_ = std::move(o.block_);
  compress_gate_ = std::move(o.compress_gate_);
  blocks_sealed_ = o.blocks_sealed_;
  blocks_plain_ = o.blocks_plain_;
  packet_bytes_ = o.packet_bytes_;
  committed_ = o.committed_;
  // The moved-from writer owns no files any more.
  o.out_ = std::make_unique<Output>();
  o.committed_ = true;
  return *this;
}

TraceFileWriter::~TraceFileWriter() {
  background_.reset();
  if (out_ && !committed_ && !out_->temp_path.empty()) ::unlink(out_->temp_path.c_str());
}

Status TraceFileWriter::DeflateInBackground() {
  if (!out_->deflater || background_) return OkStatus();
  GN_ASSIGN_OR_RETURN(background_, SerialWorker::Start("gn-deflate", kBackgroundBlocks));
  return OkStatus();
}

uint64_t TraceFileWriter::durable_packets() const { return out_->durable; }
bool TraceFileWriter::disk_full() const { return background_ ? disk_full_returned_ : out_->disk_full.load(); }
const std::string& TraceFileWriter::path() const { return out_->path; }
const std::string& TraceFileWriter::temp_path() const { return out_->temp_path; }

uint64_t TraceFileWriter::bytes_written() const {
  // The buffer is the background thread's, and empty between its blocks.
  const uint64_t buffered = background_ ? out_->queued_bytes.load() : out_->buffer.size();
  return out_->bytes_written + buffered + block_.size();
}

Status TraceFileWriter::WritePacket(const TracePacketBuilder& packet) {
  return WriteSerializedPacket(packet.bytes());
}

Status TraceFileWriter::WriteSerializedPacket(std::string_view serialized) {
  size_t framed = FramedPacketSize(serialized.size());
  packet_bytes_ += framed;
  ++accepted_;
  if (out_->deflater) {
    // Seal first if this packet would overflow the block, so that blocks
    // stay within kCompressionBlockBytes unless one packet alone is larger.
    // If that write fails, this packet is dropped with the block, as an
    // uncompressed writer drops its unwritten buffer.
    if (!block_.empty() && block_.size() + framed > kCompressionBlockBytes)
      GN_RETURN_IF_ERROR(SealBlock());
    AppendFramedPacket(serialized, &block_);
    block_accepted_ = accepted_;
    if (block_.size() >= kCompressionBlockBytes) return SealBlock();
    return TakeBackgroundError(false);
  }
  Output& out = *out_;
  AppendFramedPacket(serialized, &out.buffer);
  out.packet_ends.push_back({out.buffer.size(), accepted_});
  if (out.buffer.size() >= kFlushThreshold) return out.WriteBuffer();
  return OkStatus();
}

Status TraceFileWriter::Flush() {
  if (out_->deflater) {
    GN_RETURN_IF_ERROR(SealBlock());
    return TakeBackgroundError(true);
  }
  return out_->WriteBuffer();
}

Status TraceFileWriter::SealBlock() {
  if (block_.empty()) {
    if (background_) return TakeBackgroundError(false);
    return out_->WriteBuffer();
  }
  ++blocks_sealed_;
  // Asked here, on the caller's thread: the gate reads the node's idle
  // time as the drain sees it.
  const bool plain = compress_gate_ && !compress_gate_();
  if (plain) ++blocks_plain_;
  if (!background_) {
    Status st = out_->WriteBlock(block_, block_accepted_, plain);
    block_.clear();
    return st;
  }
  out_->queued_bytes += block_.size();
  background_->Post([out = out_.get(), block = std::move(block_), through = block_accepted_, plain,
                     returned = errors_returned_]() mutable {
    const size_t size = block.size();
    // Sealed before the caller heard of the last error: dropped, as the
    // caller's own writes after a failed one would have been.
    Status st = out->errors > returned ? OkStatus() : out->WriteBlock(block, through, plain);
    out->queued_bytes -= size;
    if (st.ok()) return;
    std::lock_guard lock(out->error_mu);
    if (!out->error) out->error = st.error();
    ++out->errors;
  });
  block_ = std::string();
  block_.reserve(kCompressionBlockBytes);
  return TakeBackgroundError(false);
}

Status TraceFileWriter::TakeBackgroundError(bool wait) {
  if (!background_) return OkStatus();
  if (wait) background_->Wait();
  Output& out = *out_;
  if (out.errors == errors_returned_) return OkStatus();
  std::lock_guard lock(out.error_mu);
  errors_returned_ = out.errors;
  disk_full_returned_ = out.disk_full;
  std::optional<Error> error = std::move(out.error);
  out.error.reset();
  // The packets gathered since are dropped with the blocks sealed since, as
  // a writer without the thread drops those after its failed block: else
  // the file would go on after a gap, and take the footer's reserve.
  block_.clear();
  return error ? Status(*error) : OkStatus();
}

Status TraceFileWriter::Output::WriteBlock(std::string& block, uint64_t accepted_through, bool plain) {
  if (plain) {
    // The block is framed packets already: in the file they are the same
    // packets, in the same place, uncompressed. Under a storm every block
    // goes this way: hand its bytes over rather than copy them (a third of
    // the recorder's memcpy under a NET_RX flood).
    if (buffer.empty()) buffer.swap(block);
    else buffer.append(block);
    block.clear();
    packet_ends.push_back({buffer.size(), accepted_through});
    return WriteBuffer();
  }
  deflated.clear();
  Status compressed = deflater->Compress(block, &deflated);
  block.clear();
  if (!compressed.ok())
    return MakeError("failed to compress packets for {}: {}", path, compressed.error().message);
  block_packet.clear();
  ProtoWriter(&block_packet).Bytes(pf::TracePacket::kCompressedPackets, deflated);
  AppendFramedPacket(block_packet, &buffer);
  packet_ends.push_back({buffer.size(), accepted_through});
  // A block is already a large write (tens of KiB): write it now, so what
  // reaches the file is never more than one block behind.
  return WriteBuffer();
}

Status TraceFileWriter::Output::WriteBuffer() {
  size_t done = 0;
  while (done < buffer.size()) {
    ssize_t n = ::write(fd.get(), buffer.data() + done, buffer.size() - done);
    if (n > 0) {
      done += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    int err = n < 0 ? errno : ENOSPC;
    // Keep every whole packet that reached the file and cut the partial one,
    // so the file stays a valid trace; then free the reserve so the closing
    // metadata can still be written.
    size_t kept = 0;
    for (const BufferedPacket& p : packet_ends)
      if (p.end <= done) {
        kept = p.end;
        durable = p.accepted_through;
      }
    bytes_written += kept;
    if (::ftruncate(fd.get(), static_cast<off_t>(bytes_written.load())) != 0) {
      // Nothing more we can do; the reader tolerates a truncated last packet.
    }
    ::lseek(fd.get(), static_cast<off_t>(bytes_written.load()), SEEK_SET);
    buffer.clear();
    packet_ends.clear();
    bool first = !disk_full;
    if (err == ENOSPC || err == EDQUOT) {
      disk_full = true;
      reserve_fd.Reset();
      if (first)
        return MakeError("disk full while writing {}: kept {} bytes", path, bytes_written.load());
      return MakeError("disk full while writing {}", path);
    }
    return MakeError("failed to write {}: {}", temp_path, std::strerror(err));
  }
  bytes_written += buffer.size();
  if (!packet_ends.empty()) durable = packet_ends.back().accepted_through;
  buffer.clear();
  packet_ends.clear();
  return OkStatus();
}

Status TraceFileWriter::Commit() {
  Status flushed = Flush();
  background_.reset();  // nothing left to run: Flush waited
  Output& out = *out_;
  if (::fsync(out.fd.get()) != 0 && errno != EINVAL && errno != EROFS) {
    // fsync failing on a full disk still leaves the data in the page cache.
  }
  out.reserve_fd.Reset();
  std::string error;
  if (!RenameIntoPlace(out.temp_path, out.path, &error)) return MakeError("{}", error);
  committed_ = true;
  return flushed;
}

}  // namespace gpunoise::perfetto
