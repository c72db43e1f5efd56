#include "export/perfetto/trace_merger.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <functional>

#include "export/perfetto/trace_file_writer.h"

namespace gpunoise::perfetto {
namespace {

constexpr uint32_t kTracePacketField = 1;
constexpr uint32_t kSequenceIdField = 10;
constexpr size_t kReadChunk = 1 << 20;
// A packet larger than this is not something any Perfetto writer produces;
// treat the length as corruption rather than try to allocate it.
constexpr uint64_t kMaxPacketBytes = 256ull << 20;

// Parses a varint at data[*pos]; false if it runs past the end or is longer
// than ten bytes.
bool ParseVarint(std::string_view data, size_t* pos, uint64_t* value) {
  uint64_t v = 0;
  for (int shift = 0; shift < 70; shift += 7) {
    if (*pos >= data.size()) return false;
    uint8_t byte = static_cast<uint8_t>(data[(*pos)++]);
    v |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if (!(byte & 0x80)) {
      *value = v;
      return true;
    }
  }
  return false;
}

void AppendVarint(uint64_t v, std::string* out) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

}  // namespace

Result<TracePacketReader> TracePacketReader::Open(const std::string& path) {
  TracePacketReader r;
  r.path_ = path;
  r.fd_.Reset(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!r.fd_.valid()) return MakeError("failed to open {}: {}", path, std::strerror(errno));
  struct stat st;
  if (::fstat(r.fd_.get(), &st) != 0) return MakeError("failed to stat {}: {}", path, std::strerror(errno));
  if (S_ISDIR(st.st_mode)) return MakeError("failed to read {}: it is a directory", path);
  r.file_size_ = static_cast<uint64_t>(st.st_size);
  return r;
}

Result<bool> TracePacketReader::Fill(size_t n) {
  while (buffer_.size() - pos_ < n) {
    if (eof_) return false;
    if (pos_ > 0) {
      buffer_.erase(0, pos_);
      consumed_ += pos_;
      pos_ = 0;
    }
    size_t old = buffer_.size();
    size_t want = std::max(kReadChunk, n - old);
    buffer_.resize(old + want);
    ssize_t got = ::read(fd_.get(), buffer_.data() + old, want);
    if (got < 0 && errno == EINTR) {
      buffer_.resize(old);
      continue;
    }
    if (got < 0) {
      buffer_.resize(old);
      return MakeError("failed to read {}: {}", path_, std::strerror(errno));
    }
    buffer_.resize(old + static_cast<size_t>(got));
    if (got == 0) eof_ = true;
  }
  return true;
}

Result<bool> TracePacketReader::Next(std::string* packet, uint64_t* offset) {
  GN_ASSIGN_OR_RETURN(bool any, Fill(1));
  if (!any) return false;
  *offset = consumed_ + pos_;
  // The framing is at most 1 tag byte + a 10-byte length; read what is there.
  (void)Fill(11);
  std::string_view avail(buffer_.data() + pos_, buffer_.size() - pos_);
  size_t p = 0;
  uint64_t tag = 0, len = 0;
  if (!ParseVarint(avail, &p, &tag))
    return MakeError("{}: truncated at byte {} (in a packet header)", path_, *offset);
  if (tag != ((kTracePacketField << 3) | 2))
    return MakeError("{}: corrupt at byte {}: expected a trace packet, found field {} wire type {}",
                     path_, *offset, tag >> 3, tag & 7);
  if (!ParseVarint(avail, &p, &len))
    return MakeError("{}: truncated at byte {} (in a packet header)", path_, *offset);
  if (len > kMaxPacketBytes)
    return MakeError("{}: corrupt at byte {}: packet length {} is implausible", path_, *offset, len);
  uint64_t left = file_size_ > *offset + p ? file_size_ - *offset - p : 0;
  if (len > left)
    return MakeError("{}: truncated at byte {}: packet of {} bytes, {} left in the file", path_,
                     *offset, len, left);
  GN_ASSIGN_OR_RETURN(bool whole, Fill(p + len));
  if (!whole)
    return MakeError("{}: truncated at byte {}: the file shrank while being read", path_, *offset);
  packet->assign(buffer_.data() + pos_ + p, len);
  pos_ += p + len;
  return true;
}

Result<std::string> RenumberSequence(std::string_view packet,
                                     const std::function<uint32_t(uint32_t)>& map_id) {
  std::string out;
  out.reserve(packet.size() + 4);
  size_t copied = 0, p = 0;
  while (p < packet.size()) {
    size_t field_start = p;
    uint64_t tag = 0;
    if (!ParseVarint(packet, &p, &tag)) return MakeError("malformed field tag at packet byte {}", field_start);
    uint32_t field = static_cast<uint32_t>(tag >> 3);
    uint64_t value = 0;
    switch (tag & 7) {
      case 0:
        if (!ParseVarint(packet, &p, &value)) return MakeError("malformed varint at packet byte {}", field_start);
        if (field == kSequenceIdField) {
          out.append(packet.data() + copied, field_start - copied);
          AppendVarint(tag, &out);
          AppendVarint(map_id(static_cast<uint32_t>(value)), &out);
          copied = p;
        }
        break;
      case 1:
        p += 8;
        break;
      case 2:
        if (!ParseVarint(packet, &p, &value) || value > packet.size() - std::min(p, packet.size()))
          return MakeError("field {} overruns the packet at packet byte {}", field, field_start);
        p += value;
        break;
      case 5:
        p += 4;
        break;
      default:
        return MakeError("unknown wire type {} at packet byte {}", tag & 7, field_start);
    }
    if (p > packet.size()) return MakeError("field {} overruns the packet at packet byte {}", field, field_start);
  }
  out.append(packet.data() + copied, packet.size() - copied);
  return out;
}

TraceMerger::TraceMerger(TraceFileWriter* out, uint32_t first_sequence_id)
    : out_(out), first_id_(first_sequence_id), next_id_(first_sequence_id) {}

Result<TraceMerger::InputStats> TraceMerger::Append(const std::string& path) {
  GN_ASSIGN_OR_RETURN(TracePacketReader reader, TracePacketReader::Open(path));
  ++inputs_;
  std::map<uint32_t, uint32_t> ids;
  auto map_id = [&](uint32_t old_id) {
    auto [it, inserted] = ids.try_emplace(old_id, next_id_);
    if (inserted) ++next_id_;
    return it->second;
  };
  InputStats stats;
  std::string packet;
  uint64_t offset = 0;
  while (true) {
    GN_ASSIGN_OR_RETURN(bool more, reader.Next(&packet, &offset));
    if (!more) break;
    auto renumbered = RenumberSequence(packet, map_id);
    if (!renumbered.ok())
      return MakeError("{}: corrupt at byte {}: {}", path, offset, renumbered.error().message);
    GN_RETURN_IF_ERROR(out_->WriteSerializedPacket(*renumbered));
    ++stats.packets;
    ++packets_;
  }
  stats.sequences = static_cast<uint32_t>(ids.size());
  return stats;
}

}  // namespace gpunoise::perfetto
