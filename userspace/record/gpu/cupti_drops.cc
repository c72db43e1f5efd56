#include "record/gpu/cupti_drops.h"

#include <algorithm>
#include <unordered_set>

#include "import/trace_reader.h"
#include "model/gpu_capture.h"

namespace gpunoise::gpu {
namespace {

class DropsSink : public model::TraceSink {
 public:
  void OnEvent(const model::Event&) override {}
  void OnTrack(const model::TrackInfo& track) override {
    if (track.name == model::kCuptiDroppedRecordsTrack) counter_tracks_.insert(track.uuid);
  }
  void OnTrackEvent(const model::TrackEventRecord& e) override {
    if (e.type == model::TrackEventType::kCounter && counter_tracks_.count(e.track_uuid)) {
      Note(e.counter_value > 0 ? static_cast<uint64_t>(e.counter_value) : 0);
    } else if (e.type == model::TrackEventType::kInstant && e.name == model::kCuptiCaptureSummaryEvent) {
      int64_t v = 0;
      if (const auto* a = e.FindArg(model::kCuptiDroppedRecordsArg); a && a->AsInt64(&v))
        Note(v > 0 ? static_cast<uint64_t>(v) : 0);
      if (const auto* a = e.FindArg(model::kCuptiChunksNotWrittenArg); a && a->AsInt64(&v) && v > 0)
        counts_.chunks_not_written = std::max(counts_.chunks_not_written, static_cast<uint64_t>(v));
    }
  }
  const CuptiLossCounts& counts() const { return counts_; }

 private:
  void Note(uint64_t v) { counts_.dropped_records = std::max(counts_.dropped_records.value_or(0), v); }
  std::unordered_set<uint64_t> counter_tracks_;
  CuptiLossCounts counts_;
};

class CaptureOffSink : public model::TraceSink {
 public:
  void OnEvent(const model::Event&) override {}
  void OnTrackEvent(const model::TrackEventRecord& e) override {
    if (e.type != model::TrackEventType::kInstant || e.name != model::kCuptiCaptureOffEvent) return;
    const auto* pid = e.FindArg("pid");
    const auto* reason = e.FindArg("reason");
    note_ = "pid " + (pid ? pid->ToString() : std::string("?")) + ": " +
            (reason ? reason->ToString() : std::string("capture off"));
  }
  std::optional<std::string> note() const { return note_; }

 private:
  std::optional<std::string> note_;
};

}  // namespace

std::optional<std::string> CaptureOffIn(const std::string& path) {
  CaptureOffSink sink;
  import::ReadOptions options;
  options.partial = true;
  options.buffer_bytes = 64 << 10;
  import::TraceReader reader(sink, options);
  (void)reader.ReadFile(path);
  return sink.note();
}

CuptiLossCounts CuptiLossIn(const std::string& path) {
  DropsSink sink;
  import::ReadOptions options;
  options.partial = true;  // the merger reports the damage; here, what is readable counts
  options.buffer_bytes = 256 << 10;
  import::TraceReader reader(sink, options);
  (void)reader.ReadFile(path);
  return sink.counts();
}

}  // namespace gpunoise::gpu
