// A fake sysfs/procfs tree in a temporary directory, for doctor tests. Paths
// given to it are kernel paths ("/sys/class/net/eth0/mtu"); it writes them
// under its root and removes everything when it goes away.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace gpunoise::doctor::testing {

class FixtureTree {
 public:
  FixtureTree();
  ~FixtureTree();
  FixtureTree(const FixtureTree&) = delete;
  FixtureTree& operator=(const FixtureTree&) = delete;

  const std::string& root() const { return root_; }

  void Write(const std::string& path, const std::string& text);
  void Symlink(const std::string& path, const std::string& target);
  void Mkdir(const std::string& path);
  void Remove(const std::string& path);  // a file or a whole directory

  // CPUs 0..n-1 online, split evenly over `nodes` NUMA nodes.
  void SetCpus(int n, int nodes);

  struct Pci {
    std::string bdf;                   // "0000:03:00.0"
    std::string parent = "pci0000:00"; // path below /sys/devices, e.g. "pci0000:00/0000:00:01.0"
    unsigned class_code = 0;
    unsigned vendor = 0x8086;
    int numa_node = -1;
    std::string local_cpus;            // "0-3"
    std::vector<int> irqs;             // msi_irqs
    std::string driver;
    // current_link_speed, max_link_speed, current_link_width, max_link_width
    std::optional<std::vector<std::string>> link;
  };
  // Returns the device's kernel path (/sys/devices/.../BDF).
  std::string AddPci(const Pci& pci);

  struct Nic {
    std::string name;
    int ifindex = 0;
    std::string device_path;  // kernel path of the PCI device; empty for a virtual NIC
    std::string operstate = "up";
    std::string flags = "0x1003";  // IFF_UP | IFF_BROADCAST | IFF_MULTICAST
    int speed = -1;
    std::string duplex = "full";
    int mtu = 1500;
    int rx_queues = 1;
    int tx_queues = 1;
    std::string driver;
  };
  void AddNic(const Nic& nic);
  // /sys/class/net/IF/statistics/COUNTER
  void SetNicCounter(const std::string& nic, const std::string& counter, uint64_t value);

  // /proc/irq/N/{effective_affinity_list,smp_affinity_list} and a line in
  // /proc/interrupts (written by every call).
  void AddIrq(int irq, const std::string& name, const std::string& effective, const std::string& allowed);

  struct Proc {
    int pid = 0;
    int ppid = 1;
    std::string comm;
    std::string cpus;  // Cpus_allowed_list
    bool kernel_thread = false;
    char state = 'S';
    std::vector<std::string> fd_targets;  // symlinks under /proc/PID/fd
    std::string maps;
    std::string numa_maps;
    std::string environ;  // NUL-separated
  };
  void AddProcess(const Proc& proc);

  void SetCmdline(const std::string& cmdline) { Write("/proc/cmdline", cmdline + "\n"); }
  // kmsg-format records ("6,1,1000,-;text"), one per line.
  void SetKernelLog(const std::vector<std::string>& records);

 private:
  void WriteInterrupts();
  std::string root_;
  int cpus_ = 0;
  std::map<int, std::string> irq_lines_;
};

}  // namespace gpunoise::doctor::testing
