#include "merge/trace_merger.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <functional>
#include <span>

#include "common/proto_wire.h"
#include "compression/inflate.h"
#include "export/perfetto/protos/perfetto_fields.h"
#include "export/perfetto/trace_file_writer.h"
#include "export/perfetto/wire_fields.h"
#include "merge/machine_alignment.h"

namespace gpunoise::perfetto {
namespace {

using wire::ForEachField;
using wire::ParseVarint;
using wire::WireField;

constexpr uint64_t kTracePacketTag = pf::Trace::kPacket << 3 | static_cast<uint32_t>(WireType::kLengthDelimited);
constexpr size_t kReadChunk = 1 << 20;
// A packet larger than this is not something any Perfetto writer produces;
// treat the length as corruption rather than try to allocate it.
constexpr uint64_t kMaxPacketBytes = 256ull << 20;

}  // namespace

Result<TracePacketReader> TracePacketReader::Open(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return MakeError("failed to open {}: {}", path, std::strerror(errno));
  return FromFd(std::move(fd), path);
}

// static
Result<TracePacketReader> TracePacketReader::FromFd(UniqueFd fd, const std::string& path) {
  TracePacketReader r;
  r.path_ = path;
  r.fd_ = std::move(fd);
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
  if (tag != kTracePacketTag)
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
                                     const std::function<uint32_t(uint32_t)>& map_id,
                                     std::optional<uint32_t> machine_id) {
  std::string out;
  out.reserve(packet.size() + 8);
  size_t copied = 0;
  GN_RETURN_IF_ERROR(ForEachField(packet, [&](const WireField& f) {
    bool sequence = f.number == pf::TracePacket::kTrustedPacketSequenceId && f.wire_type == 0;
    bool machine = machine_id && f.number == pf::TracePacket::kMachineId;
    if (!sequence && !machine) return;
    out.append(packet.data() + copied, f.start - copied);
    if (sequence) {
      ProtoWriter(&out).Varint(pf::TracePacket::kTrustedPacketSequenceId, map_id(static_cast<uint32_t>(f.varint)));
    }
    copied = f.end;
  }));
  out.append(packet.data() + copied, packet.size() - copied);
  // Machine 0 is the host: the trace processor reads a packet without the
  // field as the host's, so it is written only for the other machines.
  if (machine_id && *machine_id) {
    ProtoWriter(&out).Varint(pf::TracePacket::kMachineId, *machine_id);
  }
  return out;
}

Result<std::optional<CompressedPackets>> FindCompressedPackets(std::string_view packet) {
  std::optional<CompressedPackets> found;
  GN_RETURN_IF_ERROR(ForEachField(packet, [&](const WireField& f) {
    if (f.wire_type != 2) return;
    // Fields whose bytes are more packets, compressed.
    if (f.number == pf::TracePacket::kCompressedPackets)
      found = CompressedPackets{CompressedPackets::Codec::kZlib, f.bytes};
    else if (f.number == pf::TracePacket::kZstdCompressedPackets)
      found = CompressedPackets{CompressedPackets::Codec::kZstd, f.bytes};
  }));
  return found;
}

Status ForEachPacket(std::string_view trace,
                     const std::function<Status(std::string_view packet, uint64_t offset)>& visit) {
  size_t p = 0;
  while (p < trace.size()) {
    size_t start = p;
    uint64_t tag = 0, len = 0;
    if (!ParseVarint(trace, &p, &tag) || !ParseVarint(trace, &p, &len))
      return MakeError("truncated at byte {} (in a packet header)", start);
    if (tag != kTracePacketTag)
      return MakeError("corrupt at byte {}: expected a trace packet, found field {} wire type {}", start,
                       tag >> 3, tag & 7);
    if (len > trace.size() - p)
      return MakeError("truncated at byte {}: packet of {} bytes, {} left", start, len, trace.size() - p);
    GN_RETURN_IF_ERROR(visit(trace.substr(p, len), start));
    p += len;
  }
  return OkStatus();
}

TraceMerger::TraceMerger(TraceFileWriter* out, uint32_t first_sequence_id)
    : out_(out), first_id_(first_sequence_id), next_id_(first_sequence_id) {}

Status TraceMerger::AppendSerialized(std::string_view packet) {
  GN_RETURN_IF_ERROR(out_->WriteSerializedPacket(packet));
  ++packets_;
  return OkStatus();
}

Result<TraceMerger::InputStats> TraceMerger::Append(const std::string& path, uint32_t machine_id) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return MakeError("failed to open {}: {}", path, std::strerror(errno));
  return Append(std::move(fd), path, machine_id);
}

Result<TraceMerger::InputStats> TraceMerger::Append(UniqueFd fd, const std::string& path, uint32_t machine_id) {
  machine_id_ = machine_id;
  GN_ASSIGN_OR_RETURN(TracePacketReader reader, TracePacketReader::FromFd(std::move(fd), path));
  ++inputs_;
  std::map<uint32_t, uint32_t> ids;
  IdMap map_id = [&](uint32_t old_id) {
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
    auto compressed = FindCompressedPackets(packet);
    if (!compressed.ok())
      return MakeError("{}: corrupt at byte {}: {}", path, offset, compressed.error().message);
    if (*compressed)
      GN_RETURN_IF_ERROR(AppendCompressed(**compressed, map_id, path, offset, &stats));
    else
      GN_RETURN_IF_ERROR(AppendPacket(packet, map_id, path, offset, &stats));
  }
  stats.sequences = static_cast<uint32_t>(ids.size());
  return stats;
}

Result<std::string> TraceMerger::Renumber(std::string_view packet, const IdMap& map_id) {
  if (!rewrite_) return RenumberSequence(packet, map_id, machine_id_);
  GN_ASSIGN_OR_RETURN(std::string rewritten, rewrite_(packet));
  return RenumberSequence(rewritten, map_id, machine_id_);
}

Status TraceMerger::AppendPacket(std::string_view packet, const IdMap& map_id, const std::string& path,
                                 uint64_t offset, InputStats* stats) {
  auto renumbered = Renumber(packet, map_id);
  if (!renumbered.ok())
    return MakeError("{}: corrupt at byte {}: {}", path, offset, renumbered.error().message);
  uint64_t written = 0;
  GN_RETURN_IF_ERROR(Write(*renumbered, &written));
  stats->packets += written;
  packets_ += written;
  return OkStatus();
}

Status TraceMerger::Write(std::string_view packet, uint64_t* written) {
  if (machine_id_ != 0 && remote_boottime_offset_) {
    GN_ASSIGN_OR_RETURN(auto sync, AsRemoteClockSync(packet, machine_id_, *remote_boottime_offset_));
    if (sync) {
      GN_RETURN_IF_ERROR(out_->WriteSerializedPacket(sync->sync_packet));
      ++*written;
      if (sync->rest.empty()) return OkStatus();
      GN_RETURN_IF_ERROR(out_->WriteSerializedPacket(sync->rest));
      ++*written;
      return OkStatus();
    }
  }
  GN_RETURN_IF_ERROR(out_->WriteSerializedPacket(packet));
  ++*written;
  return OkStatus();
}

Status TraceMerger::AppendCompressed(const CompressedPackets& block, const IdMap& map_id,
                                     const std::string& path, uint64_t offset, InputStats* stats) {
  std::span<const uint8_t> bytes(reinterpret_cast<const uint8_t*>(block.bytes.data()), block.bytes.size());
  Status inflated = block.codec == CompressedPackets::Codec::kZlib
                        ? compression::InflateZlib(bytes, &inflated_)
                        : compression::InflateZstd(bytes, &inflated_);
  if (!inflated.ok())
    return MakeError("{}: corrupt at byte {}: compressed packets: {}", path, offset,
                     inflated.error().message);
  ++stats->compressed_blocks;
  std::string_view trace(reinterpret_cast<const char*>(inflated_.data()), inflated_.size());
  std::optional<Error> write_error;
  Status each = ForEachPacket(trace, [&](std::string_view packet, uint64_t inner) -> Status {
    auto nested = FindCompressedPackets(packet);
    if (!nested.ok()) return MakeError("at byte {}: {}", inner, nested.error().message);
    // Perfetto never nests compressed blocks, and its trace processor does
    // not read nested ones.
    if (*nested) return MakeError("at byte {}: a compressed block inside a compressed block", inner);
    auto renumbered = Renumber(packet, map_id);
    if (!renumbered.ok()) return MakeError("at byte {}: {}", inner, renumbered.error().message);
    uint64_t written = 0;
    if (Status status = Write(*renumbered, &written); !status.ok()) {
      write_error = status.error();
      return status;
    }
    stats->packets += written;
    packets_ += written;
    return OkStatus();
  });
  if (write_error) return *write_error;
  if (!each.ok())
    return MakeError("{}: corrupt at byte {}: in its compressed packets (inflated offsets): {}", path,
                     offset, each.error().message);
  return OkStatus();
}

}  // namespace gpunoise::perfetto
