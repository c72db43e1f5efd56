#include "doctor/fixture_tree.h"

#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <stdexcept>

#include <fmt/format.h>

namespace gpunoise::doctor::testing {
namespace {

void MakeDirs(const std::string& path) {
  for (size_t pos = 1; pos != std::string::npos;) {
    pos = path.find('/', pos + 1);
    ::mkdir(path.substr(0, pos).c_str(), 0755);
  }
}

std::string Parent(const std::string& path) { return path.substr(0, path.rfind('/')); }

}  // namespace

FixtureTree::FixtureTree() {
  std::string tmpl = fmt::format("/tmp/gpunoise-doctor-{}-XXXXXX", ::getpid());
  if (!::mkdtemp(tmpl.data())) throw std::runtime_error("failed to create fixture directory");
  root_ = tmpl;
}

FixtureTree::~FixtureTree() {
  ::nftw(
      root_.c_str(),
      [](const char* path, const struct stat*, int, struct FTW*) { return ::remove(path); }, 64,
      FTW_DEPTH | FTW_PHYS);
}

void FixtureTree::Write(const std::string& path, const std::string& text) {
  std::string host = root_ + path;
  MakeDirs(Parent(host));
  std::ofstream(host, std::ios::trunc) << text;
}

void FixtureTree::Symlink(const std::string& path, const std::string& target) {
  std::string host = root_ + path;
  MakeDirs(Parent(host));
  ::unlink(host.c_str());
  if (::symlink(target.c_str(), host.c_str()) != 0) throw std::runtime_error("failed to create symlink " + host);
}

void FixtureTree::Mkdir(const std::string& path) { MakeDirs(root_ + path); }

void FixtureTree::Remove(const std::string& path) {
  ::nftw(
      (root_ + path).c_str(),
      [](const char* p, const struct stat*, int, struct FTW*) { return ::remove(p); }, 64, FTW_DEPTH | FTW_PHYS);
}

void FixtureTree::SetCpus(int n, int nodes) {
  cpus_ = n;
  Write("/sys/devices/system/cpu/online", fmt::format("0-{}\n", n - 1));
  Write("/sys/devices/system/cpu/possible", fmt::format("0-{}\n", n - 1));
  int per_node = n / nodes;
  for (int node = 0; node < nodes; ++node)
    Write(fmt::format("/sys/devices/system/node/node{}/cpulist", node),
          fmt::format("{}-{}\n", node * per_node, (node + 1) * per_node - 1));
  WriteInterrupts();
}

std::string FixtureTree::AddPci(const Pci& pci) {
  std::string dir = fmt::format("/sys/devices/{}/{}", pci.parent, pci.bdf);
  Write(dir + "/class", fmt::format("0x{:06x}\n", pci.class_code));
  Write(dir + "/vendor", fmt::format("0x{:04x}\n", pci.vendor));
  Write(dir + "/device", "0x1234\n");
  Write(dir + "/numa_node", fmt::format("{}\n", pci.numa_node));
  Write(dir + "/local_cpulist", pci.local_cpus + "\n");
  Mkdir(dir + "/msi_irqs");
  for (int irq : pci.irqs) Write(fmt::format("{}/msi_irqs/{}", dir, irq), "msix\n");
  if (!pci.driver.empty()) Symlink(dir + "/driver", "../../../../bus/pci/drivers/" + pci.driver);
  if (pci.link) {
    Write(dir + "/current_link_speed", (*pci.link)[0] + "\n");
    Write(dir + "/max_link_speed", (*pci.link)[1] + "\n");
    Write(dir + "/current_link_width", (*pci.link)[2] + "\n");
    Write(dir + "/max_link_width", (*pci.link)[3] + "\n");
  }
  // /sys/bus/pci/devices/BDF -> ../../../devices/.../BDF, as the kernel links it.
  Symlink("/sys/bus/pci/devices/" + pci.bdf, "../../.." + dir.substr(4));
  return dir;
}

void FixtureTree::AddNic(const Nic& nic) {
  std::string dir = nic.device_path.empty() ? "/sys/devices/virtual/net/" + nic.name
                                            : nic.device_path + "/net/" + nic.name;
  Write(dir + "/ifindex", fmt::format("{}\n", nic.ifindex));
  Write(dir + "/operstate", nic.operstate + "\n");
  Write(dir + "/flags", nic.flags + "\n");
  Write(dir + "/speed", fmt::format("{}\n", nic.speed));
  Write(dir + "/duplex", nic.duplex + "\n");
  Write(dir + "/mtu", fmt::format("{}\n", nic.mtu));
  if (!nic.device_path.empty()) {
    Symlink(dir + "/device", "../../../" + nic.device_path.substr(nic.device_path.rfind('/') + 1));
    if (!nic.driver.empty()) Symlink(nic.device_path + "/driver", "../../../../bus/pci/drivers/" + nic.driver);
  }
  for (int q = 0; q < nic.rx_queues; ++q) {
    Write(fmt::format("{}/queues/rx-{}/rps_cpus", dir, q), "0\n");
    Write(fmt::format("{}/queues/rx-{}/rps_flow_cnt", dir, q), "0\n");
  }
  for (int q = 0; q < nic.tx_queues; ++q) {
    Write(fmt::format("{}/queues/tx-{}/xps_cpus", dir, q), fmt::format("{:x}\n", 1u << (q % 8)));
    Write(fmt::format("{}/queues/tx-{}/tx_timeout", dir, q), "0\n");
  }
  for (const char* counter : {"rx_errors", "tx_errors", "rx_missed_errors", "rx_crc_errors", "rx_dropped"})
    Write(fmt::format("{}/statistics/{}", dir, counter), "0\n");
  Symlink("/sys/class/net/" + nic.name, "../../" + dir.substr(5));
}

void FixtureTree::SetNicCounter(const std::string& nic, const std::string& counter, uint64_t value) {
  Write(fmt::format("/sys/class/net/{}/statistics/{}", nic, counter), fmt::format("{}\n", value));
}

void FixtureTree::AddIrq(int irq, const std::string& name, const std::string& effective, const std::string& allowed) {
  Write(fmt::format("/proc/irq/{}/effective_affinity_list", irq), effective + "\n");
  Write(fmt::format("/proc/irq/{}/smp_affinity_list", irq), allowed + "\n");
  irq_lines_[irq] = name;
  WriteInterrupts();
}

void FixtureTree::WriteInterrupts() {
  std::string text;
  for (int c = 0; c < cpus_; ++c) text += fmt::format("{:>11}", fmt::format("CPU{}", c));
  text += "\n";
  for (const auto& [irq, name] : irq_lines_) {
    text += fmt::format("{:>4}:", irq);
    for (int c = 0; c < cpus_; ++c) text += fmt::format("{:>11}", c == 0 ? 5 : 0);
    text += fmt::format("  PCI-MSIX-0000:00:00.0  {}-edge      {}\n", irq, name);
  }
  Write("/proc/interrupts", text);
}

void FixtureTree::AddProcess(const Proc& p) {
  std::string dir = fmt::format("/proc/{}", p.pid);
  // flags is field 9; PF_KTHREAD = 0x00200000.
  unsigned flags = p.kernel_thread ? 0x00208040u : 0x00400100u;
  Write(dir + "/stat", fmt::format("{} ({}) {} {} {} {} 0 -1 {} 0 0 0 0 0 0 0 0 20 0 1 0 100 0 0\n", p.pid, p.comm,
                                   p.state, p.ppid, p.pid, p.pid, flags));
  Write(dir + "/status", fmt::format("Name:\t{}\nState:\t{}\nPid:\t{}\nPPid:\t{}\nCpus_allowed_list:\t{}\n", p.comm,
                                     p.state, p.pid, p.ppid, p.cpus));
  Mkdir(dir + "/fd");
  for (size_t i = 0; i < p.fd_targets.size(); ++i) Symlink(fmt::format("{}/fd/{}", dir, i + 3), p.fd_targets[i]);
  Write(dir + "/maps", p.maps);
  Write(dir + "/numa_maps", p.numa_maps);
  Write(dir + "/environ", p.environ);
}

void FixtureTree::SetKernelLog(const std::vector<std::string>& records) {
  std::string text;
  for (const auto& r : records) text += r + "\n";
  Write("/dev/kmsg", text);
}

}  // namespace gpunoise::doctor::testing
