// Events and bundles the trace reader's tests (trace_reader*_test.cc) build
// their inputs from, as the recorder writes them.
#pragma once

#include <string>
#include <vector>

#include "export/perfetto/ftrace_bundle_encoder.h"
#include "import/test_trace.h"
#include "import/trace_reader.h"

namespace gpunoise::import::reader_test {

using testing::RecordingSink;
using testing::TestTrace;

class FixedIrqNames : public perfetto::IrqNameSource {
 public:
  std::string_view IrqName(int32_t irq) override { return irq == 30 ? "eth0-TxRx-0" : "other"; }
};

inline model::Event Switch(uint64_t ts, uint32_t cpu, int32_t prev, int32_t next, int64_t state, const char* comm) {
  model::SchedSwitch s;
  s.prev_tid = prev;
  s.prev_state = state;
  s.next_tid = next;
  s.next_comm = model::TaskComm(comm);
  return {ts, cpu, prev, s};
}

inline model::Event Waking(uint64_t ts, uint32_t cpu, int32_t waker, int32_t tid, int32_t target) {
  model::SchedWaking w;
  w.tid = tid;
  w.target_cpu = target;
  w.comm = model::TaskComm("wakee");
  return {ts, cpu, waker, w};
}

template <typename P>
inline model::Event Ev(uint64_t ts, uint32_t cpu, int32_t tid, P payload) {
  return {ts, cpu, tid, payload};
}

// One gpunoise bundle per call, as the recorder writes it.
inline void AddGpunoiseBundle(TestTrace& trace, uint32_t cpu, const std::vector<model::Event>& events, bool lost = false,
                       uint64_t previous_end = 0) {
  perfetto::FtraceBundleEncoder encoder;
  FixedIrqNames names;
  perfetto::TracePacket packet;
  encoder.Encode({cpu, lost, previous_end}, events, names, &packet);
  trace.Add(packet);
}

inline Result<ReadStats> ReadBytes(const std::string& bytes, RecordingSink& sink, ReadOptions options = {}) {
  TraceReader reader(sink, options);
  return reader.ReadBuffer({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()});
}

}  // namespace gpunoise::import::reader_test
