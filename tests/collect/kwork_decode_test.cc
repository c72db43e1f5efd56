#include <gtest/gtest.h>

#include "collect/kwork_collector.h"

extern "C" {
#include "bpf/kwork.h"
}

namespace gpunoise::collect {
namespace {

TEST(KworkDecode, AnIpiSendCarriesTheSendersTidAndProcess) {
  gn_kwork e{};
  e.seq = 1;
  e.begin = e.end = 5000;
  e.func = 0xffffffff81001000ull;
  e.callsite = 0xffffffff81002000ull;
  e.targets = 1ull << 0;
  e.csd = 0xffff888000001000ull;
  e.tid = 5316;
  e.tgid = 5314;
  e.kind = GN_KW_IPI_SEND;
  e.flags = 0;
  e.cpu = 1;
  model::KernelWork w = KworkCollector::Decode(e);
  EXPECT_EQ(w.kind, model::KernelWorkKind::kIpiSend);
  EXPECT_EQ(w.tid, 5316);
  EXPECT_EQ(w.tgid, 5314);
  EXPECT_EQ(w.cpu, 1u);
  EXPECT_EQ(w.targets, 1u);
  EXPECT_EQ(w.csd, 0xffff888000001000ull);
  EXPECT_EQ(w.context, model::KernelWorkContext::kTask);
}

TEST(KworkDecode, ASendFromAnInterruptIsTheInterrupts) {
  gn_kwork e{};
  e.begin = e.end = 1;
  e.kind = GN_KW_IPI_SEND;
  e.flags = GN_KW_IN_SOFTIRQ;
  EXPECT_EQ(KworkCollector::Decode(e).context, model::KernelWorkContext::kSoftirq);
  e.flags = GN_KW_IN_HARDIRQ | GN_KW_IN_SOFTIRQ;
  EXPECT_EQ(KworkCollector::Decode(e).context, model::KernelWorkContext::kHardirq);
}

}  // namespace
}  // namespace gpunoise::collect
