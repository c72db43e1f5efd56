#include "export/perfetto/trace_file_writer.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/private_file.h"
#include "export/perfetto/protos/perfetto_fields.h"

namespace gpunoise::perfetto {
namespace {

constexpr size_t kFlushThreshold = 1 << 20;
}  // namespace

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
  if (compression == TraceCompression::kZlib) {
    GN_ASSIGN_OR_RETURN(::gpunoise::compression::ZlibDeflater deflater,
                        ::gpunoise::compression::ZlibDeflater::Create(kZlibLevel));
    w.deflater_.emplace(std::move(deflater));
    w.block_.reserve(kCompressionBlockBytes);
  }
  w.path_ = path;
  std::string error;
  w.fd_ = CreatePrivateTemp(path, "tmp", &w.temp_path_, &error);
  if (!w.fd_.valid()) {
    w.temp_path_.clear();
    return MakeError("{}", error);
  }
  // Group-readable for the operator's group: set on the fd before the first
  // byte, so the file is never readable by anyone else on the way.
  if (share_gid >= 0 &&
      (::fchown(w.fd_.get(), static_cast<uid_t>(-1), static_cast<gid_t>(share_gid)) != 0 ||
       ::fchmod(w.fd_.get(), 0640) != 0)) {
    int err = errno;
    ::unlink(w.temp_path_.c_str());
    w.temp_path_.clear();
    return MakeError("failed to give {} to group {}: {}", path, share_gid, std::strerror(err));
  }

  if (reserve_bytes > 0) {
    // The reserve is unlinked at once and held open: its blocks stay
    // allocated until released, and a recording killed by SIGKILL leaves no
    // reserve file behind.
    std::string reserve_path;
    w.reserve_fd_ = CreatePrivateTemp(path, "reserve", &reserve_path, &error);
    if (w.reserve_fd_.valid()) ::unlink(reserve_path.c_str());
    int err = w.reserve_fd_.valid()
                  ? ::posix_fallocate(w.reserve_fd_.get(), 0, static_cast<off_t>(reserve_bytes))
                  : 0;
    if (!w.reserve_fd_.valid() || err != 0) {
      w.reserve_fd_.Reset();
      ::unlink(w.temp_path_.c_str());
      w.temp_path_.clear();
      if (err == 0) return MakeError("{}", error);
      return MakeError("not enough free space for {} ({} reserve): {}", path,
                       reserve_bytes, std::strerror(err));
    }
  }
  if (!w.deflater_) w.buffer_.reserve(kFlushThreshold + 64 * 1024);
  return w;
}

TraceFileWriter::TraceFileWriter(TraceFileWriter&& o) noexcept { *this = std::move(o); }

TraceFileWriter& TraceFileWriter::operator=(TraceFileWriter&& o) noexcept {
  if (this == &o) return *this;
  ReleaseReserve();
  if (!committed_ && !temp_path_.empty()) ::unlink(temp_path_.c_str());
  path_ = std::move(o.path_);
  temp_path_ = std::move(o.temp_path_);
  reserve_fd_ = std::move(o.reserve_fd_);
  fd_ = std::move(o.fd_);
  buffer_ = std::move(o.buffer_);
  packet_ends_ = std::move(o.packet_ends_);
  deflater_ = std::move(o.deflater_);
  block_ = std::move(o.block_);
  deflated_ = std::move(o.deflated_);
  block_packet_ = std::move(o.block_packet_);
  compress_gate_ = std::move(o.compress_gate_);
  blocks_sealed_ = o.blocks_sealed_;
  blocks_plain_ = o.blocks_plain_;
  bytes_written_ = o.bytes_written_;
  packet_bytes_ = o.packet_bytes_;
  accepted_ = o.accepted_;
  durable_ = o.durable_;
  block_accepted_ = o.block_accepted_;
  disk_full_ = o.disk_full_;
  committed_ = o.committed_;
  // The moved-from writer owns no files any more.
  o.temp_path_.clear();
  o.deflater_.reset();
  o.committed_ = true;
  return *this;
}

TraceFileWriter::~TraceFileWriter() {
  ReleaseReserve();
  if (!committed_ && !temp_path_.empty()) ::unlink(temp_path_.c_str());
}

void TraceFileWriter::ReleaseReserve() {
  reserve_fd_.Reset();
}

Status TraceFileWriter::WritePacket(const TracePacketBuilder& packet) {
  return WriteSerializedPacket(packet.bytes());
}

Status TraceFileWriter::WriteSerializedPacket(std::string_view serialized) {
  size_t framed = FramedPacketSize(serialized.size());
  packet_bytes_ += framed;
  ++accepted_;
  if (deflater_) {
    // Seal first if this packet would overflow the block, so that blocks
    // stay within kCompressionBlockBytes unless one packet alone is larger.
    // If that write fails, this packet is dropped with the block, as an
    // uncompressed writer drops its unwritten buffer.
    if (!block_.empty() && block_.size() + framed > kCompressionBlockBytes)
      GN_RETURN_IF_ERROR(SealBlock());
    AppendFramedPacket(serialized, &block_);
    block_accepted_ = accepted_;
    if (block_.size() >= kCompressionBlockBytes) return SealBlock();
    return OkStatus();
  }
  AppendFramedPacket(serialized, &buffer_);
  packet_ends_.push_back({buffer_.size(), accepted_});
  if (buffer_.size() >= kFlushThreshold) return WriteBuffer();
  return OkStatus();
}

Status TraceFileWriter::Flush() {
  if (deflater_) return SealBlock();
  return WriteBuffer();
}

Status TraceFileWriter::SealBlock() {
  if (block_.empty()) return WriteBuffer();
  ++blocks_sealed_;
  if (compress_gate_ && !compress_gate_()) {
    // The block is framed packets already: in the file they are the same
    // packets, in the same place, uncompressed.
    ++blocks_plain_;
    // Under a storm every block goes this way: hand its bytes over rather
    // than copy them (a third of the recorder's memcpy under a NET_RX flood).
    if (buffer_.empty()) buffer_.swap(block_);
    else buffer_.append(block_);
    block_.clear();
    packet_ends_.push_back({buffer_.size(), block_accepted_});
    return WriteBuffer();
  }
  deflated_.clear();
  Status compressed = deflater_->Compress(block_, &deflated_);
  block_.clear();
  if (!compressed.ok())
    return MakeError("failed to compress packets for {}: {}", path_, compressed.error().message);
  block_packet_.clear();
  ProtoWriter(&block_packet_).Bytes(pf::TracePacket::kCompressedPackets, deflated_);
  AppendFramedPacket(block_packet_, &buffer_);
  packet_ends_.push_back({buffer_.size(), block_accepted_});
  // A block is already a large write (tens of KiB): write it now, so what
  // reaches the file is never more than one block behind.
  return WriteBuffer();
}

Status TraceFileWriter::WriteBuffer() {
  size_t done = 0;
  while (done < buffer_.size()) {
    ssize_t n = ::write(fd_.get(), buffer_.data() + done, buffer_.size() - done);
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
    for (const BufferedPacket& p : packet_ends_)
      if (p.end <= done) {
        kept = p.end;
        durable_ = p.accepted_through;
      }
    bytes_written_ += kept;
    if (::ftruncate(fd_.get(), static_cast<off_t>(bytes_written_)) != 0) {
      // Nothing more we can do; the reader tolerates a truncated last packet.
    }
    ::lseek(fd_.get(), static_cast<off_t>(bytes_written_), SEEK_SET);
    buffer_.clear();
    packet_ends_.clear();
    bool first = !disk_full_;
    if (err == ENOSPC || err == EDQUOT) {
      disk_full_ = true;
      ReleaseReserve();
      if (first)
        return MakeError("disk full while writing {}: kept {} bytes", path_, bytes_written_);
      return MakeError("disk full while writing {}", path_);
    }
    return MakeError("failed to write {}: {}", temp_path_, std::strerror(err));
  }
  bytes_written_ += buffer_.size();
  if (!packet_ends_.empty()) durable_ = packet_ends_.back().accepted_through;
  buffer_.clear();
  packet_ends_.clear();
  return OkStatus();
}

Status TraceFileWriter::Commit() {
  Status flushed = Flush();
  if (::fsync(fd_.get()) != 0 && errno != EINVAL && errno != EROFS) {
    // fsync failing on a full disk still leaves the data in the page cache.
  }
  ReleaseReserve();
  std::string error;
  if (!RenameIntoPlace(temp_path_, path_, &error)) return MakeError("{}", error);
  committed_ = true;
  return flushed;
}

}  // namespace gpunoise::perfetto
