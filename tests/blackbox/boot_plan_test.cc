#include "blackbox/boot_plan.h"

#include <gtest/gtest.h>

#include "blackbox/arm.h"
#include "blackbox/last_boot_info.h"

namespace gpunoise::blackbox {
namespace {

constexpr uint64_t kGiB = 1ull << 30;

KernelVersion V(std::string_view release) {
  auto v = ParseKernelRelease(release);
  EXPECT_TRUE(v.has_value()) << release;
  return v.value_or(KernelVersion{});
}

TEST(BootPlan, ParsesDistributionKernelReleases) {
  KernelVersion rhel = V("5.14.0-427.13.1.el9_4.x86_64");
  EXPECT_EQ(rhel.major, 5);
  EXPECT_EQ(rhel.minor, 14);
  EXPECT_EQ(rhel.patch, 0);
  EXPECT_TRUE(V("6.18.44-fc-v769").AtLeast(6, 12));
  EXPECT_FALSE(V("6.8.0-51-generic").AtLeast(6, 12));
  EXPECT_FALSE(ParseKernelRelease("linux").has_value());
}

// Documentation/admin-guide/kernel-parameters.txt:
//   reserve_mem=nn[KMG]:<align>:<label>; trace_instance=NAME^traceoff@LABEL
TEST(BootPlan, PersistentBufferLinesFollowTheDocumentedSyntax) {
  BootPlan small = PlanBootCommandLine(V("6.12.1"), 4 * kGiB, 2);
  EXPECT_EQ(small.kind, BlackBoxKind::kPersistentBuffer);
  // 2 CPUs want 4 MiB, the floor is 32 MiB, 1/128 of 4 GiB is 32 MiB.
  EXPECT_EQ(small.cmdline, "reserve_mem=32M:32M:gpunoise trace_instance=gpunoise_blackbox^traceoff@gpunoise");
  EXPECT_EQ(small.per_cpu_bytes, 16ull << 20);

  BootPlan big = PlanBootCommandLine(V("6.18.0"), 2048 * kGiB, 256);
  EXPECT_EQ(big.cmdline, "reserve_mem=512M:32M:gpunoise trace_instance=gpunoise_blackbox^traceoff@gpunoise");
  EXPECT_EQ(big.per_cpu_bytes, 2ull << 20);

  BootPlan mid = PlanBootCommandLine(V("6.14.3"), 512 * kGiB, 64);
  EXPECT_EQ(mid.cmdline, "reserve_mem=128M:32M:gpunoise trace_instance=gpunoise_blackbox^traceoff@gpunoise");

  // A small machine: capped at 1/128 of memory, with a smaller alignment.
  BootPlan tiny = PlanBootCommandLine(V("6.12.0"), 1 * kGiB, 4);
  EXPECT_EQ(tiny.cmdline, "reserve_mem=8M:2M:gpunoise trace_instance=gpunoise_blackbox^traceoff@gpunoise");

  BootPlanOptions o;
  o.size_bytes = 1 * kGiB;
  o.instance = "box";
  o.label = "bb";
  EXPECT_EQ(PlanBootCommandLine(V("6.13.0"), 64 * kGiB, 8, o).cmdline,
            "reserve_mem=1G:32M:bb trace_instance=box^traceoff@bb");
}

TEST(BootPlan, KernelsBefore614AreToldModulesAreNotSymbolized) {
  auto has = [](const BootPlan& p, std::string_view text) {
    for (const auto& n : p.notes)
      if (n.find(text) != std::string::npos) return true;
    return false;
  };
  EXPECT_TRUE(has(PlanBootCommandLine(V("6.12.9"), 64 * kGiB, 8), "modules"));
  EXPECT_FALSE(has(PlanBootCommandLine(V("6.14.0"), 64 * kGiB, 8), "modules"));
}

TEST(BootPlan, OlderKernelsGetTheKdumpReservation) {
  for (std::string_view release : {"5.14.0-427.el9.x86_64", "5.15.0-1071-aws", "6.8.0-51-generic", "6.11.11"}) {
    BootPlan p = PlanBootCommandLine(V(release), 256 * kGiB, 64);
    EXPECT_EQ(p.kind, BlackBoxKind::kKdump) << release;
    // crashkernel=<range1>:<size1>[,<range2>:<size2>,...]
    EXPECT_EQ(p.cmdline, "crashkernel=1G-4G:192M,4G-64G:256M,64G-:512M") << release;
    EXPECT_EQ(p.size_bytes, 512ull << 20);
    ASSERT_FALSE(p.notes.empty());
    EXPECT_NE(p.notes[0].find("kdump"), std::string::npos);
  }
  EXPECT_EQ(PlanBootCommandLine(V("5.15.0"), 16 * kGiB, 8).size_bytes, 256ull << 20);
}

TEST(BootPlan, GrubDropInAppendsToTheDistributionsLine) {
  std::string d = GrubDropIn("reserve_mem=32M:32M:gpunoise trace_instance=x^traceoff@gpunoise");
  EXPECT_NE(d.find("GRUB_CMDLINE_LINUX=\"${GRUB_CMDLINE_LINUX} reserve_mem=32M:32M:gpunoise "
                   "trace_instance=x^traceoff@gpunoise\""),
            std::string::npos)
      << d;
  EXPECT_EQ(d.rfind("#", 0), 0u);  // starts with a comment saying who wrote it
}

TEST(BootPlan, CommandLineChecksFindTheMappedInstance) {
  std::string booted = "BOOT_IMAGE=/vmlinuz ro quiet reserve_mem=64M:32M:gpunoise "
                       "trace_instance=gpunoise_blackbox^traceoff@gpunoise";
  EXPECT_TRUE(CmdlineMapsInstance(booted, "gpunoise_blackbox"));
  EXPECT_FALSE(CmdlineMapsInstance(booted, "other"));
  // An instance without memory of its own does not survive a reboot.
  EXPECT_FALSE(CmdlineMapsInstance("trace_instance=gpunoise_blackbox,sched", "gpunoise_blackbox"));
  // A label nobody reserved.
  EXPECT_FALSE(CmdlineMapsInstance("trace_instance=gpunoise_blackbox@nolabel", "gpunoise_blackbox"));
  // memmap= with an address (debugging.rst's first form).
  EXPECT_TRUE(CmdlineMapsInstance("memmap==12M$0x284500000 trace_instance=gpunoise_blackbox@0x284500000:12M",
                                  "gpunoise_blackbox"));
  EXPECT_TRUE(CommandLineHas(booted + " panic=10", "reserve_mem=64M:32M:gpunoise"));
  EXPECT_FALSE(CommandLineHas(booted, "reserve_mem=32M:32M:gpunoise"));
}

TEST(BootPlan, SecondsHeldIsTheBusiestCpusHistory) {
  std::vector<CpuRate> rates = {{0, 1000, 40e3}, {1, 50000, 2e6}, {2, 0, 0}};
  uint32_t busiest = 99;
  auto s = SecondsHeld(4 << 20, rates, &busiest);
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(busiest, 1u);
  EXPECT_NEAR(*s, (4 << 20) / 2e6, 1e-9);
  EXPECT_FALSE(SecondsHeld(4 << 20, {{0, 0, 0}}).has_value());
}

// last_boot_info as kernel/trace/trace.c prints it in its versions.
TEST(LastBootInfo, ParsesTheFormsOfEachKernelVersion) {
  auto current = ParseLastBootInfo("# Current\n");
  ASSERT_TRUE(current.ok());
  EXPECT_TRUE(current->current);

  // 6.12: the KASLR offset.
  auto v612 = ParseLastBootInfo("3c000000\t[kernel]\n");
  ASSERT_TRUE(v612.ok()) << v612.error().message;
  EXPECT_EQ(v612->kaslr_offset, 0x3c000000u);
  EXPECT_FALSE(v612->text_address.has_value());

  // 6.15+: the clock, _text's address and the modules.
  auto v615 = ParseLastBootInfo(
      "trace_clock: boot\nffffffffa2e00000\t[kernel]\nffffffffc0a00000\tmlx5_core\nffffffffc0900000\tice\n");
  ASSERT_TRUE(v615.ok()) << v615.error().message;
  EXPECT_FALSE(v615->current);
  EXPECT_EQ(v615->trace_clock, "boot");
  EXPECT_EQ(v615->text_address, 0xffffffffa2e00000u);
  EXPECT_EQ(v615->modules.at("mlx5_core"), 0xffffffffc0a00000u);
  EXPECT_EQ(v615->modules.size(), 2u);

  EXPECT_FALSE(ParseLastBootInfo("").ok());
  EXPECT_FALSE(ParseLastBootInfo("zz\t[kernel]\n").ok());
  EXPECT_FALSE(ParseLastBootInfo("ffffffffc0a00000\tmlx5_core\n").ok());  // no [kernel] line
}

TEST(LastBootInfo, TextDeltaMapsPreviousAddressesToThisBoot) {
  auto info = ParseLastBootInfo("ffffffffa2e00000\t[kernel]\n");
  ASSERT_TRUE(info.ok());
  auto delta = KernelTextDelta(*info, 0xffffffff9c000000ull);
  ASSERT_TRUE(delta.has_value());
  EXPECT_EQ(0xffffffffa2e12345ull + static_cast<uint64_t>(*delta), 0xffffffff9c012345ull);
#if defined(__x86_64__)
  auto offset = ParseLastBootInfo("1e00000\t[kernel]\n");
  ASSERT_TRUE(offset.ok());
  EXPECT_EQ(KernelTextDelta(*offset, kX86TextLinkAddress), -0x1e00000);
#endif
  auto cur = ParseLastBootInfo("# Current\n");
  EXPECT_FALSE(KernelTextDelta(*cur, 0xffffffff9c000000ull).has_value());
}

}  // namespace
}  // namespace gpunoise::blackbox
