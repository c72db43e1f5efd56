// The black box's raw-page decoder and its collect path on live tracefs
// instances that the tests create (unique names, removed also on failure):
// a UDP flood across a veth pair, then every CPU's trace_pipe_raw decoded
// and checked against the instance's own per-CPU accounting.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include "blackbox/buffer_decoder.h"
#include "blackbox/event_set.h"
#include "blackbox/instance_reader.h"
#include "blackbox/markers.h"
#include "common/files.h"
#include "common/strings.h"
#include "integration/support/net_load.h"
#include "integration/support/privileges.h"
#include "integration/support/veth_pair.h"
#include "integration/support/workloads.h"

namespace gpunoise::blackbox {
namespace {

using namespace std::chrono_literals;
using ::gpunoise::testing::ChildProcess;
using ::gpunoise::testing::VethPair;

constexpr const char* kTracefs = "/sys/kernel/tracing";

#define GN_REQUIRE_TRACEFS_ROOT()                                                     \
  do {                                                                                \
    if (!::gpunoise::testing::IsRoot()) {                                             \
      if (::gpunoise::testing::RootTestsRequired()) FAIL() << "needs root";           \
      GTEST_SKIP() << "needs root to create tracefs instances and network namespaces"; \
    }                                                                                 \
    if (!PathExists(std::string(kTracefs) + "/instances"))                            \
      FAIL() << "tracefs is not mounted at " << kTracefs;                             \
  } while (0)

// A tracefs instance named after this process, gone when the test ends.
class ScopedInstance {
 public:
  explicit ScopedInstance(const std::string& tag)
      : name_("gnbb-" + std::to_string(::getpid()) + "-" + tag),
        dir_(std::string(kTracefs) + "/instances/" + name_) {
    ::rmdir(dir_.c_str());  // a leftover of an earlier run of this pid
    created_ = ::mkdir(dir_.c_str(), 0700) == 0;
  }
  ~ScopedInstance() {
    Instance inst(dir_);
    (void)inst.SetTracingOn(false);
    (void)inst.DisableAllEvents();
    ::rmdir(dir_.c_str());
  }
  bool created() const { return created_; }
  const std::string& name() const { return name_; }
  const std::string& dir() const { return dir_; }

 private:
  std::string name_, dir_;
  bool created_ = false;
};

struct Decoded {
  std::vector<CpuPages> pages;
  std::vector<CpuDecodeStats> stats;
  uint64_t irq = 0, softirq = 0, napi = 0, receive = 0, transmit = 0;
};

Decoded DecodeInstance(const std::string& dir) {
  Decoded d;
  auto layout = ParsePageLayout(*ReadFileToString(std::string(kTracefs) + "/events/header_page"));
  EXPECT_TRUE(layout.ok());
  std::string events_dir = std::string(kTracefs) + "/events";
  EventTable table = LoadEventTable(events_dir, NodeEventSet(events_dir), nullptr);
  auto pages = ReadInstancePages(dir, *layout);
  EXPECT_TRUE(pages.ok()) << pages.error().message;
  if (!pages.ok()) return d;
  d.pages = std::move(*pages);
  DecodeCallbacks cb;
  cb.on_events = [&](uint32_t, std::span<const model::Event> events, bool) {
    for (const model::Event& e : events) {
      if (std::holds_alternative<model::IrqEntry>(e.payload)) ++d.irq;
      if (std::holds_alternative<model::SoftirqEntry>(e.payload)) ++d.softirq;
      if (std::holds_alternative<model::NapiPoll>(e.payload)) ++d.napi;
      if (std::holds_alternative<model::NetReceive>(e.payload)) ++d.receive;
      if (std::holds_alternative<model::NetTransmit>(e.payload)) ++d.transmit;
    }
  };
  for (const CpuPages& c : d.pages) d.stats.push_back(DecodeCpuPages(c.cpu, c.pages, *layout, table, cb));
  return d;
}

void Flood(std::chrono::milliseconds duration) {
  std::string error;
  auto pair = VethPair::Create({}, &error);
  ASSERT_TRUE(pair) << error;
  ::gpunoise::testing::UdpFloodOptions flood;
  flood.duration = duration;
  auto r = ::gpunoise::testing::RunUdpFlood(*pair, flood);
  ASSERT_GT(r.sent, 1000u);
}

TEST(BlackboxLive, EveryCpusDecodedRecordsAreWhatItsStatsCountInTimeOrder) {
  GN_REQUIRE_TRACEFS_ROOT();
  ScopedInstance instance("count");
  ASSERT_TRUE(instance.created()) << instance.dir();
  Instance inst(instance.dir());
  ASSERT_TRUE(inst.SetClock("boot").ok());
  ASSERT_TRUE(inst.SetBufferSizeKb(8192).ok());
  std::vector<std::string> missing;
  auto enabled = inst.EnableEvents(BaseEventSet(), &missing);
  ASSERT_TRUE(enabled.ok()) << enabled.error().message;
  ASSERT_TRUE(inst.SetTracingOn(true).ok());
  Flood(2s);
  ASSERT_TRUE(inst.SetTracingOn(false).ok());

  Decoded d = DecodeInstance(instance.dir());
  ASSERT_FALSE(d.stats.empty());
  uint64_t total = 0, loss = 0, overrun = 0;
  for (size_t i = 0; i < d.stats.size(); ++i) {
    const CpuDecodeStats& s = d.stats[i];
    const CpuBufferStats& k = d.pages[i].stats_before;
    SCOPED_TRACE("cpu " + std::to_string(s.cpu));
    // What the kernel says the buffer holds is what the pages hold.
    EXPECT_EQ(s.records, k.entries);
    EXPECT_EQ(s.backwards, 0u);
    EXPECT_EQ(s.damaged_pages, 0u);
    EXPECT_EQ(s.unknown_ids, 0u);
    // The flood wraps an 8 MiB ring (overwrite mode): what was overwritten
    // is flagged on the first page the reader got, with its count.
    if (k.overrun) EXPECT_GT(s.pages_with_loss, 0u);
    EXPECT_EQ(LostRecords(s, k), k.overrun + k.commit_overrun + k.dropped_events);
    total += s.records;
    loss += s.loss();
    overrun += k.overrun;
  }
  EXPECT_GT(total, 10000u);
  EXPECT_GT(d.irq + d.softirq, 1000u);
  EXPECT_GT(d.napi, 100u);
  EXPECT_GT(d.receive, 100u);
  EXPECT_GT(d.transmit, 100u);
  if (overrun) EXPECT_GT(loss, 0u);
  std::printf("decoded %llu records; kernel overrun %llu, decoder loss %llu\n",
              static_cast<unsigned long long>(total), static_cast<unsigned long long>(overrun),
              static_cast<unsigned long long>(loss));
}

TEST(BlackboxLive, ATinyBufferThatOverflowsShowsItsLossCounted) {
  GN_REQUIRE_TRACEFS_ROOT();
  ScopedInstance instance("tiny");
  ASSERT_TRUE(instance.created()) << instance.dir();
  Instance inst(instance.dir());
  ASSERT_TRUE(inst.SetClock("boot").ok());
  ASSERT_TRUE(inst.SetBufferSizeKb(16).ok());
  ASSERT_TRUE(inst.EnableEvents(BaseEventSet(), nullptr).ok());
  ASSERT_TRUE(inst.SetTracingOn(true).ok());
  Flood(500ms);
  ASSERT_TRUE(inst.SetTracingOn(false).ok());

  Decoded d = DecodeInstance(instance.dir());
  uint64_t overrun = 0, loss = 0, flagged = 0, stored = 0;
  for (size_t i = 0; i < d.stats.size(); ++i) {
    overrun += d.pages[i].stats_before.overrun;
    loss += d.stats[i].loss();
    flagged += d.stats[i].pages_with_loss;
    stored += d.stats[i].lost_records;
    // Full pages leave no room for the count: the instance's counters give it.
    EXPECT_EQ(LostRecords(d.stats[i], d.pages[i].stats_before), d.pages[i].stats_before.overrun);
    EXPECT_EQ(d.stats[i].records, d.pages[i].stats_before.entries);
    // The kernel stores how many it overwrote since the last read when the
    // page has room: then the count is the stats file's overrun exactly.
    if (d.stats[i].lost_records && !d.stats[i].loss_uncounted_pages)
      EXPECT_EQ(d.stats[i].lost_records, d.pages[i].stats_before.overrun);
  }
  ASSERT_GT(overrun, 10000u);
  EXPECT_GT(flagged, 0u);
  EXPECT_GT(loss, 0u);
  std::printf("tiny buffer: overrun %llu, flagged pages %llu, stored counts %llu\n",
              static_cast<unsigned long long>(overrun), static_cast<unsigned long long>(flagged),
              static_cast<unsigned long long>(stored));
}

}  // namespace
}  // namespace gpunoise::blackbox
