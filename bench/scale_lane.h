// One drain lane of the scale model (bench/scale_model.cc): a share of the
// model's rings, the record path `gpunoise record` runs on them (ring
// transport -> decode into per-CPU staging -> Perfetto encoder ->
// compression -> file), on one thread, and the producer program that writes
// into those rings.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "collect/ring_transport.h"
#include "common/result.h"
#include "export/perfetto/trace_sink.h"
#include "record/drain_lanes.h"
#include "record/record_intake.h"

struct scale_fill_bpf;

namespace gpunoise::bench {

struct LaneResult {
  uint64_t events_written = 0;  // records that reached the trace file
  uint64_t decode_errors = 0;
  uint64_t drain_cpu_ns = 0;    // the drain thread's own CPU time, and its lanes'
  uint64_t busiest_cpu_ns = 0;  // the busiest of those threads
  uint64_t deflate_cpu_ns = 0;  // the deflate thread's (--deflate-thread), 0 without one
  uint64_t drains = 0;
  uint64_t file_bytes = 0;
  std::string error;            // empty unless the record path failed
};

class ScaleLane {
 public:
  // `rings`: the ring indices (the CPUs they stand for) this lane drains.
  // `deflate_thread`: the trace's blocks are deflated and written on a
  // thread of their own, as `record --deflate-thread on` does. `lanes` >= 2:
  // the drain reads and encodes on that many threads, itself one of them,
  // as `record --drain-threads` does.
  static Result<std::unique_ptr<ScaleLane>> Create(std::vector<int> rings, uint64_t ring_bytes,
                                                   uint64_t drain_interval_ms, const std::string& path,
                                                   bool deflate_thread, size_t lanes);
  ~ScaleLane();
  ScaleLane(const ScaleLane&) = delete;
  ScaleLane& operator=(const ScaleLane&) = delete;

  // Writes up to `n` records into `ring` (one of this lane's) from the
  // kernel; returns how many fit.
  Result<uint32_t> Produce(uint32_t ring, uint32_t n, uint64_t first);

  void Start();
  std::thread& thread() { return thread_; }
  // Stops the drain thread after a last drain that empties the rings.
  LaneResult Finish();
  uint64_t lost() const;  // records the kernel counted as lost (ring full)

 private:
  ScaleLane() = default;
  void Run();
  Status DrainOnce(bool final);

  std::vector<int> rings_;
  uint64_t drain_interval_ms_ = 100;
  std::unique_ptr<record::RecordIntake> intake_;
  std::unique_ptr<collect::RingTransport> transport_;
  std::unique_ptr<perfetto::TraceSink> sink_;
  std::unique_ptr<record::DrainLanes> lanes_;
  scale_fill_bpf* skel_ = nullptr;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  LaneResult result_;
};

}  // namespace gpunoise::bench
