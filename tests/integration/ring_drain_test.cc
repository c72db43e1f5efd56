// The ring transport's bounded drain, on a real BPF ring filled from the
// kernel by bench/ring_fill.bpf.c (run with BPF_PROG_TEST_RUN, never
// attached, so nothing else on the machine adds records).
#include <gtest/gtest.h>
#include <poll.h>
#include <sched.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include "bpf/record.h"
#include "collect/doorbell.h"
#include "collect/record_decoder.h"
#include "collect/ring_transport.h"
#include "integration/support/privileges.h"
#include "ring_filler.h"

namespace gpunoise::testing {
namespace {

class RingDrainTest : public ::testing::Test {
 protected:
  void SetUp() override {
    GN_REQUIRE_REAL_EBPF();
    cpu_set_t set;
    CPU_ZERO(&set);
    ASSERT_EQ(::sched_getaffinity(0, sizeof(set), &set), 0);
    while (cpu_ < CPU_SETSIZE - 1 && !CPU_ISSET(cpu_, &set)) ++cpu_;
    auto transport = collect::RingTransport::Create({cpu_}, 4ull << 20, [this](uint32_t cpu, std::span<const uint8_t> data) {
      model::Event ev;
      ASSERT_EQ(collect::DecodeRecord(data, cpu, &ev), collect::DecodeResult::kOk);
      EXPECT_GE(ev.ts, last_ts_) << "records come out in the order they were written";
      last_ts_ = ev.ts;
      ++seen_;
      // What the record took in the ring: its 8-byte header, rounded up to 8.
      ring_bytes_ += 8 + ((data.size() + 7) & ~size_t{7});
    });
    ASSERT_TRUE(transport.ok()) << transport.error().message;
    transport_ = std::move(*transport);
    auto filler = bench::RingFiller::Load(*transport_, cpu_);
    ASSERT_TRUE(filler.ok()) << filler.error().message;
    filler_ = std::move(*filler);
  }

  void Fill(uint32_t n) {
    Status st = filler_->Fill(n);
    ASSERT_TRUE(st.ok()) << st.error().message;
  }

  uint64_t Drain(uint64_t bound) {
    auto n = transport_->DrainAll(bound);
    EXPECT_TRUE(n.ok()) << n.error().message;
    return n.ok() ? *n : 0;
  }

  int cpu_ = 0;
  uint64_t seen_ = 0;
  uint64_t ring_bytes_ = 0;
  uint64_t last_ts_ = 0;
  std::unique_ptr<collect::RingTransport> transport_;
  std::unique_ptr<bench::RingFiller> filler_;
};

TEST_F(RingDrainTest, ABoundedDrainStopsAtItsBoundAndSaysRecordsAreLeft) {
  Fill(12000);
  EXPECT_EQ(Drain(5000), 5000u);
  EXPECT_TRUE(transport_->backlog());
  EXPECT_EQ(Drain(5000), 5000u);
  EXPECT_TRUE(transport_->backlog());
  EXPECT_EQ(Drain(5000), 2000u);
  EXPECT_FALSE(transport_->backlog());
  EXPECT_EQ(seen_, 12000u) << "every record is handed over exactly once";
  EXPECT_EQ(Drain(5000), 0u);
}

TEST_F(RingDrainTest, AnUnboundedDrainEmptiesTheRing) {
  Fill(30000);
  EXPECT_EQ(Drain(0), 30000u);
  EXPECT_FALSE(transport_->backlog());
  EXPECT_EQ(seen_, 30000u);
}

TEST_F(RingDrainTest, AClosedGateStopsProducersWithoutCountingLoss) {
  ASSERT_TRUE(transport_->Pause().ok());
  ASSERT_TRUE(filler_->Run(1000).ok());
  EXPECT_EQ(filler_->failed(), 1u) << "the first reservation behind the gate fails";
  EXPECT_EQ(filler_->lost(), 0u) << "events behind a closed gate are not lost events";
  EXPECT_EQ(Drain(0), 0u);

  ASSERT_TRUE(transport_->Resume().ok());
  filler_->reset_failed();
  Fill(1000);
  EXPECT_EQ(Drain(0), 1000u);
  EXPECT_EQ(filler_->lost(), 0u);
}

TEST_F(RingDrainTest, ALostRecordIsCountedInItsKindAndInThePerCpuTotal) {
  // 4 MiB of records fill the ring; each run after that stops at its first
  // failed reservation, which the kernel counts lost.
  while (filler_->failed() == 0) ASSERT_TRUE(filler_->Run(50000).ok());
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(filler_->Run(10).ok());
  const auto cpu = static_cast<size_t>(cpu_);
  auto by_kind = transport_->LostByCpuAndKind();
  ASSERT_GT(by_kind.size(), cpu);
  uint64_t kinds_sum = 0;
  for (uint64_t n : by_kind[cpu]) kinds_sum += n;
  EXPECT_EQ(kinds_sum, filler_->failed());
  EXPECT_EQ(by_kind[cpu][GN_REC_INVALID], 0u) << "the total's slot is not reported as a kind";
  EXPECT_EQ(transport_->LostPerCpu()[cpu], kinds_sum) << "the one-key total a drain reads";
  EXPECT_EQ(filler_->lost(), 4u);
}

bool Rang(const collect::Doorbell& doorbell) {
  pollfd p{doorbell.fd(), POLLIN, 0};
  return ::poll(&p, 1, 0) > 0;
}

TEST_F(RingDrainTest, ARingCrossingHalfFullRingsTheDrainsDoorbellOncePerCrossing) {
  auto doorbell = collect::OpenRingDoorbell(transport_->doorbell_map_fd());
  ASSERT_TRUE(doorbell.ok()) << doorbell.error().message;
  const uint64_t half = transport_->bytes_per_cpu() / 2;
  // Steps of 500 records until it rings: the ring then holds half of its
  // bytes, less than one step past.
  constexpr uint32_t kStep = 500;
  uint64_t filled = 0;
  while (!Rang(**doorbell) && filled < 200'000) {
    Fill(kStep);
    filled += kStep;
  }
  ASSERT_TRUE(Rang(**doorbell)) << "no ring after " << filled << " records";
  (*doorbell)->Clear();
  EXPECT_FALSE(Rang(**doorbell));
  Fill(kStep);
  EXPECT_FALSE(Rang(**doorbell)) << "once a crossing: the ring is still above half";
  EXPECT_EQ(Drain(0), filled + kStep);
  // The filler's records repeat one mix: its mean size says where it rang.
  const double mean = static_cast<double>(ring_bytes_) / static_cast<double>(filled + kStep);
  EXPECT_NEAR(mean * static_cast<double>(filled), static_cast<double>(half), mean * kStep);
  // Drained, it rings again at the next crossing, and not before.
  Fill(kStep);
  EXPECT_FALSE(Rang(**doorbell));
  for (uint64_t n = kStep; n <= filled + kStep && !Rang(**doorbell); n += kStep) Fill(kStep);
  EXPECT_TRUE(Rang(**doorbell));
}

}  // namespace
}  // namespace gpunoise::testing
