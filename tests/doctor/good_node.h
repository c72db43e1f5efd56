// A fixture of a well-configured two-socket GPU node, which each check's
// test starts from and then breaks in one place.
//
//   CPUs 0-7, node 0: 0-3, node 1: 4-7; nohz_full=rcu_nocbs=2-3,6-7.
//   pci0000:00/0000:00:01.0 (root port)/0000:01:00.0 (switch up)
//     /0000:02:00.0/0000:03:00.0  GPU (node 0, IRQ 100 on CPU 1)
//     /0000:02:01.0/0000:04:00.0  NIC gnfix0 (node 0, IRQs 110, 111 on CPUs 0, 1)
//   pci0000:00/0000:00:02.0/0000:05:00.0  NVMe (IRQ 120 managed to CPU 2, 121 on CPU 0)
//   pid 500 "python" uses /dev/nvidia0, allowed on CPUs 2-3, memory on node 0;
//   pid 501 its data loader child; pid 1 systemd, pid 2 kthreadd on 0-1,4-5.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "doctor/doctor.h"
#include "doctor/fixture_tree.h"

namespace gpunoise::doctor::testing {

inline constexpr const char* kGpuBdf = "0000:03:00.0";
inline constexpr const char* kNicBdf = "0000:04:00.0";
inline constexpr const char* kNic = "gnfix0";  // no real interface has this name
inline constexpr int kNicIfindex = 4242;

void BuildGoodNode(FixtureTree& tree);

// Healthy answers for the good node's NIC and GPU.
EthtoolInfo GoodEthtool();
GpuHealth GoodGpu();

// A SystemView over the fixture and the inputs gathered through it with
// fake ethtool/NVML sources; `between_samples` runs where doctor sleeps.
struct FixtureRun {
  explicit FixtureRun(const std::string& root) : view(root), inputs(Error{"not gathered"}) {}
  SystemView view;
  Result<DoctorInputs> inputs;
};
struct FakeSources {
  std::map<std::string, EthtoolInfo> ethtool = {{kNic, GoodEthtool()}};
  std::map<std::string, GpuHealth> gpus = {{kGpuBdf, GoodGpu()}};
  std::string gpu_unavailable;  // set: NVML "could not load"
  std::function<void()> between_samples;
  // Called for the second sample's NVML reading, to simulate counters moving.
  std::map<std::string, GpuHealth> gpus_second;
  int self_pid = 0;  // doctor's own pid, as a live run sets it
};
std::unique_ptr<FixtureRun> Gather(const FixtureTree& tree, const FakeSources& fakes = {},
                                   DoctorOptions options = {});

// Runs one check by id over the inputs.
CheckResult RunOne(const DoctorInputs& inputs, const std::string& id);
// The exit status doctor would give for this one result (kStatus style).
int ExitFor(const CheckResult& result);

}  // namespace gpunoise::doctor::testing
