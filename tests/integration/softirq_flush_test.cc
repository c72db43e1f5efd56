// A softirq entry waits in the kernel for its exit (bpf/irq.bpf.c): one still
// open when the recording ends is written by the irq collector's last flush,
// which runs its program on that CPU. Real eBPF: the collector attaches,
// then the gate closes and it detaches, as at the end of a recording; the
// open entry is planted in the shared CPU context map, as the entry program
// leaves it.
#include <gtest/gtest.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <sched.h>

#include <memory>
#include <vector>

#include "collect/irq_collector.h"
#include "collect/record_decoder.h"
#include "collect/records.h"
#include "collect/ring_transport.h"
#include "collect/tracepoint_catalog.h"
#include "collect/system_checks.h"
#include "integration/support/privileges.h"

namespace gpunoise::testing {
namespace {

class SoftirqFlushTest : public ::testing::Test {
 protected:
  void SetUp() override {
    GN_REQUIRE_REAL_EBPF();
    cpu_set_t set;
    CPU_ZERO(&set);
    ASSERT_EQ(::sched_getaffinity(0, sizeof(set), &set), 0);
    while (cpu_ < CPU_SETSIZE - 1 && !CPU_ISSET(cpu_, &set)) ++cpu_;
    auto transport = collect::RingTransport::Create({cpu_}, 1ull << 20, [this](uint32_t cpu, std::span<const uint8_t> data) {
      records_.emplace_back(data.begin(), data.end());
      cpus_.push_back(cpu);
    });
    ASSERT_TRUE(transport.ok()) << transport.error().message;
    transport_ = std::move(*transport);
    auto tracefs = collect::EnsureTracefs();
    ASSERT_TRUE(tracefs.ok()) << tracefs.error().message;
    auto catalog = collect::TracepointCatalog::Open(*tracefs);
    ASSERT_TRUE(catalog.ok()) << catalog.error().message;
    catalog_ = std::make_unique<collect::TracepointCatalog>(std::move(*catalog));
    collect::CollectorContext context;
    context.catalog = catalog_.get();
    transport_->ShareWith(&context);
    irq_ = std::make_unique<collect::IrqCollector>(false, true);
    irq_->Start(context);
    ASSERT_NE(irq_->report().state, model::CollectorState::kDisabled) << irq_->report().reason;
    ASSERT_TRUE(irq_->defers_softirq_entries());
    // The end of a recording: gate closed, programs detached, rings read.
    ASSERT_TRUE(transport_->Pause().ok());
    irq_->Stop();
    Drain();
    records_.clear();
    cpus_.clear();
  }

  void Drain() {
    auto n = transport_->DrainAll();
    ASSERT_TRUE(n.ok()) << n.error().message;
  }

  // Every CPU's context as the map holds it.
  std::vector<gn_cpu_context> Contexts() {
    std::vector<gn_cpu_context> all(static_cast<size_t>(libbpf_num_possible_cpus()));
    uint32_t zero = 0;
    EXPECT_EQ(bpf_map_lookup_elem(transport_->cpu_context_map_fd(), &zero, all.data()), 0);
    return all;
  }

  void SetContexts(const std::vector<gn_cpu_context>& all) {
    uint32_t zero = 0;
    ASSERT_EQ(bpf_map_update_elem(transport_->cpu_context_map_fd(), &zero, all.data(), BPF_ANY), 0);
  }

  int cpu_ = 0;
  std::vector<std::vector<uint8_t>> records_;
  std::vector<uint32_t> cpus_;
  std::unique_ptr<collect::RingTransport> transport_;
  std::unique_ptr<collect::TracepointCatalog> catalog_;
  std::unique_ptr<collect::IrqCollector> irq_;
};

TEST_F(SoftirqFlushTest, AnEntryStillOpenAtTheEndIsWrittenByTheLastFlush) {
  std::vector<gn_cpu_context> contexts = Contexts();
  gn_cpu_context& c = contexts[static_cast<size_t>(cpu_)];
  c.softirq = 1;
  c.softirq_open_ts = 5'000'000'000;
  c.softirq_open_raised = 5'000'000'000 - 700;
  c.softirq_open_vec = GN_SOFTIRQ_NET_RX;
  SetContexts(contexts);

  EXPECT_EQ(irq_->FlushHeldRecords(std::vector<int>{cpu_}), 0u);
  Drain();
  ASSERT_EQ(records_.size(), 1u);
  EXPECT_EQ(cpus_[0], static_cast<uint32_t>(cpu_));
  model::Event ev;
  ASSERT_EQ(collect::DecodeRecord(records_[0], cpus_[0], &ev), collect::DecodeResult::kOk);
  EXPECT_EQ(ev.ts, 5'000'000'000u);
  EXPECT_EQ(ev.common_flags, GN_FLAG_SOFTIRQ);
  const auto* entry = std::get_if<model::SoftirqEntry>(&ev.payload);
  ASSERT_NE(entry, nullptr);
  EXPECT_EQ(entry->vec, static_cast<uint32_t>(GN_SOFTIRQ_NET_RX));
  EXPECT_EQ(entry->raise_wait_ns, 700u);
  EXPECT_EQ(Contexts()[static_cast<size_t>(cpu_)].softirq_open_ts, 0u) << "written once";

  // Nothing open any more: a second flush writes nothing.
  records_.clear();
  EXPECT_EQ(irq_->FlushHeldRecords(std::vector<int>{cpu_}), 0u);
  Drain();
  EXPECT_TRUE(records_.empty());
}

}  // namespace
}  // namespace gpunoise::testing
