#include "model/switch_chain.h"

#include <gtest/gtest.h>

namespace gpunoise::model {
namespace {

Event Switch(uint32_t cpu, int32_t prev, int32_t next) {
  Event e;
  e.cpu = cpu;
  SchedSwitch s;
  s.prev_tid = prev;
  s.next_tid = next;
  e.payload = s;
  return e;
}

TEST(SwitchChain, UnbrokenChainHasNoBreaks) {
  SwitchChain c;
  c.Observe(Switch(0, 5, 0));
  c.Observe(Switch(0, 0, 7));
  c.Observe(Switch(0, 7, 0));
  EXPECT_EQ(c.total_breaks(), 0u);
}

TEST(SwitchChain, CountsASwitchThatNeverArrived) {
  SwitchChain c;
  c.Observe(Switch(1, 5, 0));
  // 0 -> 9 was never delivered; 9 -> 0 arrives.
  c.Observe(Switch(1, 9, 0));
  EXPECT_EQ(c.breaks(1), 1u);
  EXPECT_EQ(c.breaks(0), 0u);
}

TEST(SwitchChain, CpusAreIndependentAndTheFirstSwitchIsNeverABreak) {
  SwitchChain c;
  c.Observe(Switch(0, 5, 6));
  c.Observe(Switch(3, 8, 9));
  c.Observe(Switch(0, 6, 5));
  c.Observe(Switch(3, 9, 8));
  EXPECT_EQ(c.total_breaks(), 0u);
}

TEST(SwitchChain, IgnoresOtherEvents) {
  SwitchChain c;
  Event e;
  e.payload = SoftirqEntry{3};
  c.Observe(e);
  EXPECT_EQ(c.total_breaks(), 0u);
}

}  // namespace
}  // namespace gpunoise::model
