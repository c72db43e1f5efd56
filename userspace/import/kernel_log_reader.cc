#include "import/kernel_log_reader.h"

#include "export/perfetto/protos/perfetto_fields.h"

namespace gpunoise::import {
namespace {


bool Malformed(const ProtoReader& r, const char* what, PacketError* error) {
  *error = {r.error_offset(), what};
  return false;
}

}  // namespace

bool DecodeKernelLog(const ProtoField& field, model::TraceSink& sink, PacketError* error) {
  ProtoReader r(field);
  ProtoField m;
  while (r.Next(&m)) {
    if (m.type != WireType::kLengthDelimited) continue;
    if (m.id == pf::AndroidLogPacket::kStats) {
      ProtoReader sr(m);
      ProtoField s;
      while (sr.Next(&s))
        if (s.id == pf::AndroidLogPacket::Stats::kNumFailed && s.int_value) sink.OnKernelLogLoss(static_cast<uint64_t>(s.int_value));
      if (sr.error()) return Malformed(sr, "AndroidLogPacket.Stats is malformed", error);
      continue;
    }
    if (m.id != pf::AndroidLogPacket::kEvents) continue;
    model::KernelLogEntry e;
    bool kernel = false, has_ts = false;
    ProtoReader er(m);
    ProtoField ef;
    while (er.Next(&ef)) {
      switch (ef.id) {
        case pf::AndroidLogPacket::LogEvent::kLogId: kernel = ef.int_value == pf::LID_KERNEL; break;
        case pf::AndroidLogPacket::LogEvent::kPid: e.pid = static_cast<int32_t>(ef.int_value); break;
        case pf::AndroidLogPacket::LogEvent::kTid: e.tid = static_cast<int32_t>(ef.int_value); break;
        case pf::AndroidLogPacket::LogEvent::kMessage: e.text = std::string(ef.as_string()); break;
        case pf::AndroidLogPacket::LogEvent::kArgs: {
          if (ef.type != WireType::kLengthDelimited) break;
          std::string_view name, str;
          int64_t num = 0;
          ProtoReader ar(ef);
          ProtoField a;
          while (ar.Next(&a)) {
            if (a.id == pf::AndroidLogPacket::LogEvent::Arg::kName) name = a.as_string();
            else if (a.id == pf::AndroidLogPacket::LogEvent::Arg::kIntValue) num = a.int_value;
            else if (a.id == pf::AndroidLogPacket::LogEvent::Arg::kStringValue) str = a.as_string();
          }
          if (ar.error()) return Malformed(ar, "AndroidLogPacket arg is malformed", error);
          if (name == "seq") e.seq = static_cast<uint64_t>(num);
          else if (name == "level") e.level = static_cast<uint8_t>(num);
          else if (name == "facility") e.facility = static_cast<uint8_t>(num);
          else if (name == "usec") e.usec = static_cast<uint64_t>(num);
          else if (name == "ts_boot") { e.ts = static_cast<uint64_t>(num); has_ts = true; }
          else if (name == "device") e.device = std::string(str);
          else if (name == "subsystem") e.subsystem = std::string(str);
          else if (name == "about") e.about = std::string(str);
          else if (name == "cpu") e.cpu = static_cast<int32_t>(num);
          else if (name == "tid") e.tid = static_cast<int32_t>(num);
          else if (name == "comm") e.comm = std::string(str);
          else if (name == "source") e.source = model::ParseKernelLogSource(str).value_or(model::KernelLogSource::kKmsg);
          break;
        }
        default: break;
      }
    }
    if (er.error()) return Malformed(er, "AndroidLogPacket.LogEvent is malformed", error);
    if (!kernel || !has_ts) continue;
    // The class is the reader's: the same table classifies again, so a trace
    // recorded before a pattern was added still gets it.
    e.cls = model::ClassifyKernelLog(e.text).cls;
    sink.OnKernelLog(e);
  }
  if (r.error()) return Malformed(r, "AndroidLogPacket is malformed", error);
  return true;
}

}  // namespace gpunoise::import
