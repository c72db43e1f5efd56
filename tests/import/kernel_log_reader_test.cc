// The kernel log packets `record` writes, read back: the caller the
// printk:console tracepoint saw (pid/tid fields, cpu and comm args) and the
// record's source survive the trip, and the trace loads in the reader.
#include <gtest/gtest.h>

#include "export/perfetto/kernel_log_packets.h"
#include "export/perfetto/protos/perfetto_trace_subset.pb.h"
#include "import/test_trace.h"
#include "import/trace_reader.h"

namespace gpunoise::import {
namespace {

class LogSink : public model::TraceSink {
 public:
  void OnEvent(const model::Event&) override {}
  void OnKernelLog(const model::KernelLogEntry& e) override { entries.push_back(e); }
  void OnKernelLogLoss(uint64_t lost) override { this->lost += lost; }
  std::vector<model::KernelLogEntry> entries;
  uint64_t lost = 0;
};

TEST(KernelLogReader, CallerAndSourceRoundTrip) {
  model::KernelLogEntry both;
  both.ts = 5'000'000'000;
  both.seq = 41;
  both.level = 4;
  both.text = "NETDEV WATCHDOG: eth0 (mlx5_core): transmit queue 3 timed out 5120 ms";
  both.device = "+pci:0000:3b:00.0";
  both.about = both.device;
  both.source = model::KernelLogSource::kBoth;
  both.cpu = 3;
  both.tid = 0;  // the idle task: an interrupt on an idle CPU
  both.pid = 0;
  both.comm = "swapper/3";
  model::KernelLogEntry kmsg_only;
  kmsg_only.ts = 6'000'000'000;
  kmsg_only.seq = 42;
  kmsg_only.text = "plain";
  model::KernelLogEntry console_only;  // the black box: the ring has the tid, not the process
  console_only.ts = 7'000'000'000;
  console_only.text = "from a preserved ring";
  console_only.source = model::KernelLogSource::kConsole;
  console_only.cpu = 1;
  console_only.tid = 812;
  std::vector<model::KernelLogEntry> entries = {both, kmsg_only, console_only};
  std::string packet;
  perfetto::EncodeKernelLogPacket(entries, 1'000'000'000'000, 2, 7, &packet);

  // libprotobuf, as the trace processor would see the fields.
  perfetto::TracePacket decoded;
  ASSERT_TRUE(decoded.ParseFromString(packet));
  ASSERT_EQ(decoded.android_log().events_size(), 3);
  EXPECT_TRUE(decoded.android_log().events(0).has_tid());
  EXPECT_EQ(decoded.android_log().events(0).tid(), 0);
  EXPECT_EQ(decoded.android_log().events(0).pid(), 0);
  EXPECT_FALSE(decoded.android_log().events(1).has_tid());  // no caller known: no thread claimed
  EXPECT_FALSE(decoded.android_log().events(2).has_tid());  // no process known: no thread claimed

  testing::ScopedTempDir dir;
  testing::TestTrace trace;
  trace.AddSerialized(packet);
  LogSink sink;
  TraceReader reader(sink, {});
  ASSERT_TRUE(reader.ReadFile(trace.Write(dir.path(), "log.pftrace")).ok());
  ASSERT_EQ(sink.entries.size(), 3u);
  const auto& a = sink.entries[0];
  EXPECT_EQ(a.ts, both.ts);
  EXPECT_EQ(a.source, model::KernelLogSource::kBoth);
  EXPECT_EQ(a.cpu, 3);
  EXPECT_EQ(a.tid, 0);
  EXPECT_EQ(a.pid, 0);
  EXPECT_EQ(a.comm, "swapper/3");
  EXPECT_EQ(a.device, both.device);
  EXPECT_EQ(a.cls, model::KernelLogClass::kTxTimeout);
  const auto& b = sink.entries[1];
  EXPECT_EQ(b.source, model::KernelLogSource::kKmsg);
  EXPECT_EQ(b.cpu, -1);
  EXPECT_EQ(b.tid, -1);
  const auto& c = sink.entries[2];
  EXPECT_EQ(c.source, model::KernelLogSource::kConsole);
  EXPECT_EQ(c.tid, 812);  // from the args
  EXPECT_EQ(c.pid, -1);
  EXPECT_EQ(c.cpu, 1);
  EXPECT_EQ(sink.lost, 2u);
}

}  // namespace
}  // namespace gpunoise::import
