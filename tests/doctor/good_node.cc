#include "doctor/good_node.h"

#include <stdexcept>

#include <fmt/format.h>

namespace gpunoise::doctor::testing {

void BuildGoodNode(FixtureTree& t) {
  t.SetCpus(8, 2);
  t.SetCmdline("BOOT_IMAGE=/vmlinuz root=/dev/sda1 nohz_full=2-3,6-7 rcu_nocbs=2-3,6-7 irqaffinity=0-1,4-5");
  t.Write("/sys/devices/system/cpu/isolated", "\n");
  t.Write("/sys/devices/system/cpu/nohz_full", "2-3,6-7\n");
  t.Write("/proc/sys/kernel/hostname", "fixture-node\n");
  t.Write("/proc/sys/kernel/osrelease", "6.8.0-fixture\n");
  t.Write("/proc/uptime", "10000.00 70000.00\n");

  t.AddPci({.bdf = "0000:00:01.0", .class_code = 0x060400, .numa_node = 0, .local_cpus = "0-3"});
  t.AddPci({.bdf = "0000:01:00.0", .parent = "pci0000:00/0000:00:01.0", .class_code = 0x060400, .numa_node = 0,
            .local_cpus = "0-3"});
  t.AddPci({.bdf = "0000:02:00.0", .parent = "pci0000:00/0000:00:01.0/0000:01:00.0", .class_code = 0x060400,
            .numa_node = 0, .local_cpus = "0-3"});
  t.AddPci({.bdf = "0000:02:01.0", .parent = "pci0000:00/0000:00:01.0/0000:01:00.0", .class_code = 0x060400,
            .numa_node = 0, .local_cpus = "0-3"});
  t.AddPci({.bdf = kGpuBdf,
            .parent = "pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:00.0",
            .class_code = 0x030200,
            .vendor = 0x10de,
            .numa_node = 0,
            .local_cpus = "0-3",
            .irqs = {100},
            .driver = "nvidia",
            .link = std::vector<std::string>{"16.0 GT/s PCIe", "16.0 GT/s PCIe", "16", "16"}});
  std::string nic_dir = t.AddPci({.bdf = kNicBdf,
                                  .parent = "pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:01.0",
                                  .class_code = 0x020000,
                                  .vendor = 0x15b3,
                                  .numa_node = 0,
                                  .local_cpus = "0-3",
                                  .irqs = {110, 111},
                                  .driver = "mlx5_core",
                                  .link = std::vector<std::string>{"16.0 GT/s PCIe", "16.0 GT/s PCIe", "16", "16"}});
  t.AddPci({.bdf = "0000:05:00.0",
            .parent = "pci0000:00/0000:00:02.0",
            .class_code = 0x010802,
            .vendor = 0x144d,
            .numa_node = 0,
            .local_cpus = "0-3",
            .irqs = {120, 121},
            .driver = "nvme"});
  t.AddNic({.name = kNic,
            .ifindex = kNicIfindex,
            .device_path = nic_dir,
            .speed = 100000,
            .mtu = 9000,
            .rx_queues = 2,
            .tx_queues = 2,
            .driver = "mlx5_core"});
  t.AddNic({.name = "lo", .ifindex = 1, .flags = "0x9", .mtu = 65536});
  t.Write("/proc/sys/net/core/rps_sock_flow_entries", "0\n");

  t.AddIrq(100, "nvidia", "1", "0-1");
  t.AddIrq(110, "mlx5_comp0@pci:0000:04:00.0", "0", "0-1");
  t.AddIrq(111, "mlx5_comp1@pci:0000:04:00.0", "1", "0-1");
  t.AddIrq(120, "nvme0q1", "2", "2");  // managed: only CPU 2 submits to this queue
  t.AddIrq(121, "nvme0q2", "0", "0-1");

  t.AddProcess({.pid = 1, .ppid = 0, .comm = "systemd", .cpus = "0-1,4-5"});
  t.AddProcess({.pid = 2, .ppid = 0, .comm = "kthreadd", .cpus = "0-1,4-5", .kernel_thread = true});
  t.AddProcess({.pid = 12, .ppid = 2, .comm = "ksoftirqd/2", .cpus = "2", .kernel_thread = true});
  t.AddProcess({.pid = 13, .ppid = 2, .comm = "rcu_preempt", .cpus = "0-1,4-5", .kernel_thread = true});
  t.AddProcess({.pid = 300, .ppid = 1, .comm = "sshd", .cpus = "0-1,4-5"});
  t.AddProcess({.pid = 500,
                .ppid = 300,
                .comm = "python",
                .cpus = "2-3",
                .fd_targets = {"/dev/nvidiactl", "/dev/nvidia0", "/dev/nvidia-uvm", "/tmp/data.bin"},
                .numa_maps = "7f0000000000 default anon=5000 dirty=5000 N0=5000 kernelpagesize_kB=4\n"
                             "7f1000000000 bind:0 anon=512 N0=512 kernelpagesize_kB=2048\n"});
  t.AddProcess({.pid = 501, .ppid = 500, .comm = "pt_data_worker", .cpus = "2-3"});
  t.Write("/proc/driver/nvidia/gpus/0000:03:00.0/information", "Model: \t\t NVIDIA H100\nDevice Minor: \t 0\n");
  t.Write("/sys/devices/virtual/workqueue/cpumask", "33\n");

  for (int cpu = 0; cpu < 8; ++cpu) {
    std::string dir = fmt::format("/sys/devices/system/cpu/cpu{}", cpu);
    t.Write(dir + "/cpufreq/scaling_governor", "performance\n");
    const char* names[] = {"POLL", "C1", "C6"};
    const int latency[] = {0, 2, 133};
    for (int s = 0; s < 3; ++s) {
      t.Write(fmt::format("{}/cpuidle/state{}/name", dir, s), std::string(names[s]) + "\n");
      t.Write(fmt::format("{}/cpuidle/state{}/latency", dir, s), fmt::format("{}\n", latency[s]));
      t.Write(fmt::format("{}/cpuidle/state{}/disable", dir, s), s == 2 ? "1\n" : "0\n");
    }
  }
  t.Write("/sys/devices/system/cpu/cpuidle/current_driver", "intel_idle\n");

  t.Write("/proc/sys/kernel/numa_balancing", "0\n");
  t.Write("/proc/sys/kernel/hung_task_detect_count", "0\n");
  // Crashes end in a reboot with evidence (kernel.panic, kernel.evidence,
  // kernel.blackbox).
  t.Write("/proc/sys/kernel/panic", "10\n");
  t.Write("/proc/sys/kernel/panic_on_oops", "1\n");
  t.Write("/sys/module/pstore/parameters/backend", "ramoops\n");
  t.Write("/sys/kernel/kexec_crash_loaded", "1\n");
  t.Write("/sys/kernel/kexec_crash_size", "268435456\n");
  t.Write("/sys/kernel/tracing/instances/gpunoise_blackbox/last_boot_info", "# Current\n");
  t.Write("/sys/kernel/tracing/instances/gpunoise_blackbox/tracing_on", "1\n");
  t.Write("/proc/sys/kernel/hung_task_timeout_secs", "120\n");
  t.Write("/sys/kernel/mm/transparent_hugepage/enabled", "always [madvise] never\n");
  t.Write("/sys/kernel/mm/transparent_hugepage/defrag", "always defer defer+madvise [madvise] never\n");
  t.Write("/proc/swaps", "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n");
  t.Write("/proc/sys/vm/swappiness", "60\n");
  for (const char* c : {"softlockup_count", "hardlockup_count", "rcu_stall_count", "warn_count", "oops_count"})
    t.Write(std::string("/sys/kernel/") + c, "0\n");
  t.SetKernelLog({"5,0,0,-;Linux version 6.8.0-fixture",
                  "6,1,1000,-;Command line: BOOT_IMAGE=/vmlinuz nohz_full=2-3,6-7",
                  "6,2,5000000,-;mlx5_core 0000:04:00.0: Link up"});
}

EthtoolInfo GoodEthtool() {
  EthtoolInfo e;
  e.rings = RingSizes{4096, 8192, 4096, 8192};
  Coalesce c;
  c.rx_usecs = 8;
  c.rx_max_frames = 128;
  c.adaptive_rx = true;
  e.coalesce = c;
  LinkModes m;
  m.supported = {*ParseLinkModeName("25000baseCR/Full"), *ParseLinkModeName("100000baseCR4/Full")};
  m.speed_mbps = 100000;
  m.full_duplex = true;
  e.link_modes = m;
  return e;
}

GpuHealth GoodGpu() {
  GpuHealth g;
  g.persistence_mode = true;
  g.throttle_reasons = kThrottleGpuIdle;
  g.ecc_enabled = true;
  g.ecc_uncorrected_volatile = 0;
  g.ecc_uncorrected_aggregate = 0;
  g.ecc_corrected_volatile = 3;
  g.retired_pages_pending = false;
  g.remapped_rows = RemappedRows{0, 0, false, false};
  g.pcie_replays = 7;
  return g;
}

std::unique_ptr<FixtureRun> Gather(const FixtureTree& tree, const FakeSources& fakes, DoctorOptions options) {
  auto run = std::make_unique<FixtureRun>(tree.root());
  DoctorSources sources;
  auto ethtool = fakes.ethtool;
  sources.ethtool = [ethtool](const std::string& ifname) {
    auto it = ethtool.find(ifname);
    if (it != ethtool.end()) return it->second;
    EthtoolInfo none;
    none.rings = Error{"no such interface in this network namespace"};
    none.coalesce = Error{"no such interface in this network namespace"};
    none.link_modes = Error{"no such interface in this network namespace"};
    return none;
  };
  if (fakes.gpu_unavailable.empty()) {
    auto samples = std::make_shared<int>(0);
    auto first = fakes.gpus, second = fakes.gpus_second.empty() ? fakes.gpus : fakes.gpus_second;
    size_t gpu_count = 0;
    for (const auto& d : ReadPciDevices(run->view)) gpu_count += d.kind == PciKind::kGpu;
    sources.gpu_health = [first, second, samples, gpu_count](const std::string& bdf) -> Result<GpuHealth> {
      // The first `gpu_count` calls are the first sample.
      const auto& table = (*samples)++ < static_cast<int>(gpu_count) ? first : second;
      auto it = table.find(bdf);
      if (it == table.end()) return MakeError("failed to find GPU {} in NVML: Not Found", bdf);
      return it->second;
    };
  }
  sources.gpu_health_unavailable = fakes.gpu_unavailable;
  sources.self_pid = fakes.self_pid;
  auto between = fakes.between_samples;
  sources.sleep = [between](uint64_t) {
    if (between) between();
  };
  run->inputs = GatherInputs(run->view, options, sources);
  return run;
}

CheckResult RunOne(const DoctorInputs& inputs, const std::string& id) {
  std::vector<std::string> skip;
  for (const auto& other : CheckIds())
    if (other != id) skip.push_back(other);
  auto results = RunChecks(inputs, skip);
  if (results.size() != 1) throw std::runtime_error("no check " + id);
  return results.front();
}

int ExitFor(const CheckResult& result) { return ExitCode({result}, ExitPolicy{}); }

}  // namespace gpunoise::doctor::testing
