#include "import/trace_reader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/unique_fd.h"
#include "compression/inflate.h"
#include "import/kernel_log_reader.h"
#include "import/metadata_reader.h"
#include "export/perfetto/protos/perfetto_fields.h"
#include "import/trace_stats_reader.h"

namespace gpunoise::import {
namespace {


// Header of one Trace.packet field: the tag byte and up to 10 length bytes.
constexpr size_t kMaxHeader = 11;
// No writer produces packets anywhere near this; a length beyond it is
// corruption, not a packet to allocate a buffer for.
constexpr uint64_t kMaxPacketBytes = 1ull << 30;

}  // namespace

TraceReader::TraceReader(model::TraceSink& sink, ReadOptions options)
    : sink_(sink), options_(options), bundles_(sink), track_events_(sink) {}

Status TraceReader::Problem(std::string message) {
  if (!options_.partial) return Error{std::move(message)};
  stats_.problems.push_back(std::move(message));
  return OkStatus();
}

void TraceReader::FinishStats() {
  const BundleStats& b = bundles_.stats();
  stats_.events = b.events;
  stats_.net_events = b.net_events;
  stats_.unknown_ftrace_events = b.unknown_events;
  stats_.unseen_switches = b.unseen_switches;
  stats_.first_ts = b.first_ts;
  stats_.last_ts = b.last_ts;
  stats_.track_events = track_events_.events();
}

Result<size_t> TraceReader::ParseFraming(const uint8_t* data, size_t size, uint64_t base,
                                         bool at_eof, const std::string& where) {
  size_t pos = 0;
  while (pos < size && !stop_) {
    const uint8_t* p = data + pos;
    const uint8_t* end = data + size;
    uint64_t tag;
    const uint8_t* q = ReadVarint(p, end, &tag);
    if (!q) {
      if (!at_eof && size - pos < kMaxHeader) return pos;  // header continues in the next read
      stop_ = true;
      stats_.truncated = true;
      GN_RETURN_IF_ERROR(Problem(
          at_eof && size - pos < kMaxHeader
              ? fmt::format("failed to read trace {}: truncated at byte {}: the file ends inside "
                            "the header of a packet at byte {}",
                            where, base + size, base + pos)
              : fmt::format("failed to read trace {}: corrupt data at byte {}: not a packet header",
                            where, base + pos)));
      return pos;
    }
    uint32_t id = static_cast<uint32_t>(tag >> 3);
    auto type = static_cast<WireType>(tag & 7);
    uint64_t len = 0;
    const uint8_t* payload = q;
    bool length_delimited = type == WireType::kLengthDelimited;
    if (id == 0 || (type != WireType::kVarint && type != WireType::kFixed64 &&
                    type != WireType::kFixed32 && !length_delimited)) {
      stop_ = true;
      stats_.truncated = true;
      GN_RETURN_IF_ERROR(Problem(fmt::format(
          "failed to read trace {}: corrupt data at byte {}: 0x{:02x} does not start a packet",
          where, base + pos, data[pos])));
      return pos;
    }
    if (length_delimited) {
      payload = ReadVarint(q, end, &len);
      if (!payload) {
        if (!at_eof && size - pos < kMaxHeader) return pos;
        stop_ = true;
        stats_.truncated = true;
        GN_RETURN_IF_ERROR(Problem(fmt::format(
            "failed to read trace {}: {} at byte {}: packet length is cut short or corrupt", where,
            at_eof ? "truncated" : "corrupt data", base + pos)));
        return pos;
      }
      if (len > kMaxPacketBytes) {
        stop_ = true;
        stats_.truncated = true;
        GN_RETURN_IF_ERROR(Problem(fmt::format(
            "failed to read trace {}: corrupt data at byte {}: a packet length of {} bytes", where,
            base + pos, len)));
        return pos;
      }
      size_t header = static_cast<size_t>(payload - p);
      if (known_size_ && base + pos + header + len > known_size_) {
        stop_ = true;
        stats_.truncated = true;
        GN_RETURN_IF_ERROR(Problem(fmt::format(
            "failed to read trace {}: truncated at byte {}: the packet at byte {} needs {} bytes, "
            "the file has {} left",
            where, known_size_, base + pos, header + len, known_size_ - (base + pos))));
        return pos;
      }
      if (len > static_cast<uint64_t>(end - payload)) {
        if (!at_eof) return pos;  // the packet continues in the next read
        stop_ = true;
        stats_.truncated = true;
        GN_RETURN_IF_ERROR(Problem(fmt::format(
            "failed to read trace {}: truncated at byte {}: the packet at byte {} needs {} bytes, "
            "{} are left",
            where, base + size, base + pos, header + len, size - pos)));
        return pos;
      }
      if (id == pf::Trace::kPacket) {
        ++stats_.packets;
        GN_RETURN_IF_ERROR(HandlePacket(payload, static_cast<size_t>(len), base + pos + header, where));
      } else {
        ++stats_.skipped_packets;
      }
      pos += header + static_cast<size_t>(len);
    } else {
      // Well-formed but not a packet: skip it, as protobuf parsers do.
      ProtoReader r(p, end);
      ProtoField field;
      if (!r.Next(&field)) {
        if (!at_eof) return pos;
        stop_ = true;
        stats_.truncated = true;
        GN_RETURN_IF_ERROR(Problem(
            fmt::format("failed to read trace {}: truncated at byte {}", where, base + size)));
        return pos;
      }
      ++stats_.skipped_packets;
      pos += r.offset();
    }
  }
  return pos;
}

Status TraceReader::HandleCompressed(const ProtoField& field, bool zstd, uint64_t offset,
                                     const std::string& where) {
  ++stats_.compressed_packets;
  if (compression_depth_ > 0)
    return Problem(fmt::format("failed to read trace {}: nested compressed packets at byte {}",
                               where, offset));
  std::vector<uint8_t> inflated;
  Status st = zstd ? compression::InflateZstd({field.data, field.size}, &inflated)
                   : compression::InflateZlib({field.data, field.size}, &inflated);
  if (!st.ok()) {
    ++stats_.malformed_packets;
    return Problem(fmt::format("failed to read trace {}: compressed packets at byte {}: {}", where,
                               offset, st.error().message));
  }
  ++compression_depth_;
  std::string inner = fmt::format("{} (compressed packets at byte {}, inflated offsets)", where, offset);
  bool saved_stop = stop_;
  uint64_t saved_size = known_size_;
  known_size_ = 0;
  auto consumed = ParseFraming(inflated.data(), inflated.size(), 0, true, inner);
  --compression_depth_;
  known_size_ = saved_size;
  // A broken compressed block ends that block only, not the file.
  stop_ = saved_stop;
  if (!consumed.ok()) return consumed.error();
  return OkStatus();
}

Status TraceReader::HandlePacket(const uint8_t* data, size_t size, uint64_t offset,
                                 const std::string& where) {
  PacketContext ctx;
  ProtoField payload, interned, defaults;
  bool has_payload = false, has_interned = false, has_defaults = false;
  uint32_t dropped_reasons = 0;
  uint32_t machine_id = 0;
  ProtoReader r(data, size);
  ProtoField field;
  while (r.Next(&field)) {
    switch (field.id) {
      case pf::TracePacket::kMachineId: machine_id = field.as_uint32(); break;
      case pf::TracePacket::kTimestamp: ctx.timestamp = field.int_value; break;
      case pf::TracePacket::kTrustedPacketSequenceId: ctx.sequence_id = field.as_uint32(); break;
      case pf::TracePacket::kSequenceFlags:
        ctx.incremental_state_cleared |= (field.int_value & pf::TracePacket::SEQ_INCREMENTAL_STATE_CLEARED) != 0;
        break;
      case pf::TracePacket::kIncrementalStateCleared: ctx.incremental_state_cleared |= field.as_bool(); break;
      case pf::TracePacket::kPreviousPacketDropped: dropped_reasons = field.as_uint32(); break;
      case pf::TracePacket::kInternedData:
        interned = field;
        has_interned = field.type == WireType::kLengthDelimited;
        break;
      case pf::TracePacket::kTracePacketDefaults:
        defaults = field;
        has_defaults = field.type == WireType::kLengthDelimited;
        break;
      case pf::TracePacket::kFtraceEvents:
      case pf::TracePacket::kProcessTree:
      case pf::TracePacket::kTrackEvent:
      case pf::TracePacket::kFtraceStats:
      case pf::TracePacket::kTraceStats:
      case pf::TracePacket::kSystemInfo:
      case pf::TracePacket::kTrackDescriptor:
      case pf::TracePacket::kInterruptInfo:
      case pf::TracePacket::kAndroidLog:
      case pf::TracePacket::kCompressedPackets:
      case pf::TracePacket::kZstdCompressedPackets:
        if (field.type == WireType::kLengthDelimited) {
          payload = field;
          has_payload = true;
        }
        break;
      default: break;
    }
  }
  if (r.error()) {
    ++stats_.malformed_packets;
    return Problem(fmt::format("failed to read trace {}: corrupt packet at byte {} (field at byte {})",
                               where, offset, offset + r.error_offset()));
  }
  if (ctx.sequence_id > stats_.max_sequence_id) stats_.max_sequence_id = ctx.sequence_id;
  // Another machine's packet (a compressed block is looked into: its packets
  // carry their own machine ids).
  const bool container =
      has_payload && (payload.id == pf::TracePacket::kCompressedPackets || payload.id == pf::TracePacket::kZstdCompressedPackets);
  if (!container) stats_.machine_ids.insert(machine_id);
  if (options_.machine_id && machine_id != *options_.machine_id && !container) {
    ++stats_.skipped_packets;
    return OkStatus();
  }
  if (ctx.sequence_id) {
    // The service flags the first packet of every sequence as following a
    // loss; like the trace processor, count the flag only after that one.
    bool first = sequences_seen_.insert(ctx.sequence_id).second;
    if (!first && dropped_reasons) sink_.OnPacketLoss(ctx.sequence_id, dropped_reasons);
  }

  PacketError error;
  bool ok = true;
  const uint8_t* error_base = data;
  if (ctx.sequence_id && (has_interned || has_defaults || ctx.incremental_state_cleared)) {
    ctx.interned_data = has_interned ? &interned : nullptr;
    ctx.defaults = has_defaults ? &defaults : nullptr;
    ok = track_events_.UpdateSequence(ctx, &error);
    error_base = has_interned ? interned.data : data;
  }
  if (ok && !has_payload) {
    ++stats_.skipped_packets;
    return OkStatus();
  }
  if (ok) {
    error_base = payload.data;
    switch (payload.id) {
      case pf::TracePacket::kFtraceEvents:
        ++stats_.ftrace_bundles;
        ok = bundles_.Decode(payload.data, payload.size, &error);
        break;
      case pf::TracePacket::kProcessTree: ok = DecodeProcessTree(payload, sink_, &error); break;
      case pf::TracePacket::kInterruptInfo: ok = DecodeInterruptInfo(payload, sink_, &error); break;
      case pf::TracePacket::kAndroidLog: ok = DecodeKernelLog(payload, sink_, &error); break;
      case pf::TracePacket::kSystemInfo: ok = DecodeSystemInfo(payload, sink_, &error); break;
      case pf::TracePacket::kFtraceStats: ok = ftrace_stats_.Decode(payload, sink_, &error); break;
      case pf::TracePacket::kTraceStats: ok = DecodeTraceStats(payload, sink_, &error); break;
      case pf::TracePacket::kTrackDescriptor: ok = track_events_.DecodeDescriptor(payload, &error); break;
      case pf::TracePacket::kTrackEvent: ok = track_events_.DecodeEvent(ctx, payload, &error); break;
      case pf::TracePacket::kCompressedPackets:
      case pf::TracePacket::kZstdCompressedPackets:
        return HandleCompressed(payload, payload.id == pf::TracePacket::kZstdCompressedPackets,
                                offset + static_cast<uint64_t>(payload.data - data), where);
      default: break;
    }
  }
  if (!ok) {
    ++stats_.malformed_packets;
    uint64_t at = offset + static_cast<uint64_t>(error_base - data) + error.offset;
    return Problem(fmt::format("failed to read trace {}: corrupt packet at byte {}: {} (at byte {})",
                               where, offset, error.what, at));
  }
  return OkStatus();
}

Result<ReadStats> TraceReader::ReadBuffer(std::span<const uint8_t> data) {
  stats_ = {};
  ftrace_stats_ = {};
  sequences_seen_.clear();
  stop_ = false;
  known_size_ = 0;
  auto consumed = ParseFraming(data.data(), data.size(), 0, true, "(memory)");
  if (!consumed.ok()) return consumed.error();
  stats_.bytes = *consumed;
  FinishStats();
  return stats_;
}

Result<ReadStats> TraceReader::ReadFile(const std::string& path) {
  stats_ = {};
  ftrace_stats_ = {};
  sequences_seen_.clear();
  stop_ = false;
  UniqueFd owned;
  int fd = 0;
  if (path != "-") {
    owned = UniqueFd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (!owned.valid()) return MakeError("failed to open trace {}: {}", path, std::strerror(errno));
    fd = owned.get();
    ::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  }
  struct stat st {};
  known_size_ = 0;
  if (::fstat(fd, &st) == 0) {
    if (S_ISDIR(st.st_mode)) return MakeError("failed to read trace {}: it is a directory", path);
    if (S_ISREG(st.st_mode)) known_size_ = static_cast<uint64_t>(st.st_size);
  }

  std::vector<uint8_t> buf(std::max<size_t>(options_.buffer_bytes, 64 << 10));
  size_t used = 0;     // bytes in buf
  uint64_t base = 0;   // file offset of buf[0]
  bool eof = false;
  while (!stop_) {
    // Fill what is free; a packet bigger than the buffer makes it grow.
    if (used == buf.size()) buf.resize(buf.size() * 2);
    while (!eof && used < buf.size()) {
      ssize_t n = ::read(fd, buf.data() + used, buf.size() - used);
      if (n < 0) {
        if (errno == EINTR) continue;
        return MakeError("failed to read trace {}: {} at byte {}", path, std::strerror(errno), base + used);
      }
      if (n == 0) eof = true;
      used += static_cast<size_t>(n);
    }
    GN_ASSIGN_OR_RETURN(size_t consumed, ParseFraming(buf.data(), used, base, eof, path));
    if (eof && (consumed == used || stop_)) {
      base += consumed;
      break;
    }
    if (consumed == 0 && used < buf.size()) continue;  // cannot happen without eof
    std::memmove(buf.data(), buf.data() + consumed, used - consumed);
    used -= consumed;
    base += consumed;
  }
  stats_.bytes = base;
  FinishStats();
  return stats_;
}

}  // namespace gpunoise::import
