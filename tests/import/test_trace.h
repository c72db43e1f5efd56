// Builds trace files for reader tests: packets from the project's subset
// proto (libprotobuf), plus a hand wire writer for fields the subset does not
// declare (compressed packets, ftrace clock pairs) and for broken data.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "export/perfetto/protos/perfetto_trace_subset.pb.h"
#include "model/trace_sink.h"

namespace gpunoise::testing {

// Protobuf wire format by hand.
class Wire {
 public:
  Wire& Varint(uint32_t field, uint64_t value);
  Wire& Bytes(uint32_t field, std::string_view bytes);
  Wire& Fixed64(uint32_t field, uint64_t value);
  Wire& Raw(std::string_view bytes);
  const std::string& str() const { return out_; }

  static std::string EncodeVarint(uint64_t v);

 private:
  std::string out_;
};

class TestTrace {
 public:
  void Add(const perfetto::TracePacket& packet) { AddSerialized(packet.SerializeAsString()); }
  void AddSerialized(const std::string& packet);  // framed as Trace.packet
  void AddRaw(const std::string& bytes) { bytes_ += bytes; }
  const std::string& bytes() const { return bytes_; }
  // Writes `dir`/`name` and returns its path.
  std::string Write(const std::string& dir, const std::string& name) const;

 private:
  std::string bytes_;
};

// An ftrace bundle of full-format sched_switch events on `cpu`, as
// Perfetto's recorder writes them (each switch: ts, prev tid -> next tid).
struct SwitchSpec {
  uint64_t ts;
  int32_t prev, next;
};
perfetto::TracePacket SwitchBundle(uint32_t cpu, const std::vector<SwitchSpec>& switches);

// A temporary directory removed (with its files) when the test ends.
class ScopedTempDir {
 public:
  ScopedTempDir();
  ~ScopedTempDir();
  ScopedTempDir(const ScopedTempDir&) = delete;
  ScopedTempDir& operator=(const ScopedTempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Records what a reader hands on, by value.
class RecordingSink : public model::TraceSink {
 public:
  struct Net {
    model::NetTraceEvent event;
    std::string device, reason;
  };
  struct Loss {
    uint32_t cpu;
    uint64_t from, to;
  };
  void OnEvent(const model::Event& e) override { events.push_back(e); }
  void OnNetEvent(const model::NetTraceEvent& e) override {
    net.push_back({e, std::string(e.device), std::string(e.reason)});
  }
  void OnCpuLoss(uint32_t cpu, uint64_t from, uint64_t to) override { losses.push_back({cpu, from, to}); }
  void OnThread(int32_t tid, int32_t tgid, std::string_view name) override {
    threads.push_back({tid, tgid, std::string(name)});
  }
  void OnIrqName(int32_t irq, std::string_view name) override { irq_names.emplace_back(irq, std::string(name)); }
  void OnTrack(const model::TrackInfo& t) override { tracks.push_back(t); }
  void OnFtraceStats(const model::FtraceStatsSummary& s) override { ftrace_stats.push_back(s); }
  void OnTraceStats(const model::TraceServiceStats& s) override { trace_stats.push_back(s); }
  void OnPacketLoss(uint32_t sequence_id, uint32_t reasons) override {
    packet_losses.emplace_back(sequence_id, reasons);
  }
  void OnTrackEvent(const model::TrackEventRecord& e) override {
    track_events.push_back(e);
    track_event_names.emplace_back(e.name);
  }

  struct Thread {
    int32_t tid, tgid;
    std::string name;
  };
  std::vector<model::Event> events;
  std::vector<Net> net;
  std::vector<Loss> losses;
  std::vector<Thread> threads;
  std::vector<std::pair<int32_t, std::string>> irq_names;
  std::vector<model::TrackInfo> tracks;
  std::vector<model::FtraceStatsSummary> ftrace_stats;
  std::vector<model::TraceServiceStats> trace_stats;
  std::vector<std::pair<uint32_t, uint32_t>> packet_losses;  // sequence id, reasons
  std::vector<model::TrackEventRecord> track_events;  // name/category views dangle: use track_event_names
  std::vector<std::string> track_event_names;
};

}  // namespace gpunoise::testing
