#include "export/perfetto/trace_file_writer.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "export/perfetto/protos/perfetto_trace_subset.pb.h"

namespace gpunoise::perfetto {
namespace {

constexpr size_t kFlushThreshold = 1 << 20;

std::string DirName(const std::string& path) {
  auto slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

std::string BaseName(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

void AppendFramedPacket(std::string_view serialized, std::string* out) {
  out->push_back(static_cast<char>((1 << 3) | 2));  // Trace.packet, length-delimited
  uint64_t len = serialized.size();
  while (len >= 0x80) {
    out->push_back(static_cast<char>((len & 0x7f) | 0x80));
    len >>= 7;
  }
  out->push_back(static_cast<char>(len));
  out->append(serialized);
}

Result<TraceFileWriter> TraceFileWriter::Create(const std::string& path, uint64_t reserve_bytes) {
  if (path.empty()) return MakeError("no output path given");
  struct stat st;
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
    return MakeError("output path {} is a directory", path);
  std::string dir = DirName(path);
  if (::access(dir.c_str(), W_OK) != 0)
    return MakeError("output path {} is not writable: {}: {}", path, dir, std::strerror(errno));

  TraceFileWriter w;
  w.path_ = path;
  std::string base = BaseName(path);
  std::string pid = std::to_string(::getpid());
  w.temp_path_ = dir + "/." + base + ".tmp-" + pid;
  w.reserve_path_ = dir + "/." + base + ".reserve-" + pid;

  w.fd_.Reset(::open(w.temp_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  if (!w.fd_.valid())
    return MakeError("failed to create {}: {}", w.temp_path_, std::strerror(errno));

  if (reserve_bytes > 0) {
    UniqueFd reserve(::open(w.reserve_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
    int err = reserve.valid() ? ::posix_fallocate(reserve.get(), 0, static_cast<off_t>(reserve_bytes))
                              : errno;
    if (err != 0) {
      ::unlink(w.reserve_path_.c_str());
      ::unlink(w.temp_path_.c_str());
      w.temp_path_.clear();
      return MakeError("not enough free space for {} ({} reserve): {}", path,
                       reserve_bytes, std::strerror(err));
    }
  }
  w.buffer_.reserve(kFlushThreshold + 64 * 1024);
  return w;
}

TraceFileWriter::TraceFileWriter(TraceFileWriter&& o) noexcept { *this = std::move(o); }

TraceFileWriter& TraceFileWriter::operator=(TraceFileWriter&& o) noexcept {
  path_ = std::move(o.path_);
  temp_path_ = std::move(o.temp_path_);
  reserve_path_ = std::move(o.reserve_path_);
  fd_ = std::move(o.fd_);
  buffer_ = std::move(o.buffer_);
  bytes_written_ = o.bytes_written_;
  disk_full_ = o.disk_full_;
  committed_ = o.committed_;
  o.temp_path_.clear();
  o.reserve_path_.clear();
  o.committed_ = true;
  return *this;
}

TraceFileWriter::~TraceFileWriter() {
  ReleaseReserve();
  if (!committed_ && !temp_path_.empty()) ::unlink(temp_path_.c_str());
}

void TraceFileWriter::ReleaseReserve() {
  if (!reserve_path_.empty()) {
    ::unlink(reserve_path_.c_str());
    reserve_path_.clear();
  }
}

Status TraceFileWriter::WritePacket(const TracePacket& packet) {
  scratch_.clear();
  if (!packet.AppendToString(&scratch_)) return MakeError("failed to encode a trace packet");
  return WriteSerializedPacket(scratch_);
}

Status TraceFileWriter::WriteSerializedPacket(std::string_view serialized) {
  AppendFramedPacket(serialized, &buffer_);
  packet_ends_.push_back(buffer_.size());
  if (buffer_.size() >= kFlushThreshold) return WriteBuffer();
  return OkStatus();
}

Status TraceFileWriter::Flush() { return WriteBuffer(); }

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
    for (size_t end : packet_ends_)
      if (end <= done) kept = end;
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
  buffer_.clear();
  packet_ends_.clear();
  return OkStatus();
}

Status TraceFileWriter::Commit() {
  Status flushed = WriteBuffer();
  if (::fsync(fd_.get()) != 0 && errno != EINVAL && errno != EROFS) {
    // fsync failing on a full disk still leaves the data in the page cache.
  }
  ReleaseReserve();
  if (::rename(temp_path_.c_str(), path_.c_str()) != 0)
    return MakeError("failed to rename {} to {}: {}", temp_path_, path_, std::strerror(errno));
  committed_ = true;
  return flushed;
}

}  // namespace gpunoise::perfetto
