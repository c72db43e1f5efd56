// gpunoise doctor on this machine for real: it runs, exits with the
// documented code for its worst verdict, gives every check a verdict and a
// reason, and never crashes, whatever the machine lacks (here: no GPU, a
// virtio NIC, no cpufreq or cpuidle). ethtool over netlink is compared with
// the ethtool command's own answer.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "common/cpu_list.h"
#include "common/files.h"
#include "common/strings.h"
#include "doctor/doctor.h"
#include "doctor/ethtool_netlink.h"
#include "doctor/inventory.h"
#include "doctor/run_command.h"
#include "integration/support/privileges.h"

namespace gpunoise::doctor::testing {
namespace {

std::string TempFile(const std::string& name) {
  return "/tmp/gpunoise-doctor-it-" + std::to_string(getpid()) + "-" + name;
}

// Checks a JSON report with Python's json module and prints "id verdict"
// lines for the test to look at.
CommandResult Summarize(const std::string& json) {
  std::string path = TempFile("report.json");
  std::ofstream(path) << json;
  CommandResult r = RunCommand(
      {"python3", "-c",
       "import json,sys\n"
       "d=json.load(open(sys.argv[1]))\n"
       "for c in d['checks']:\n"
       "  assert c['verdict'] in ('ok','warn','fail','unknown'), c\n"
       "  assert c['saw'].strip(), c\n"
       "  print(c['id'], c['verdict'])\n"
       "print('exit_code', d['exit_code'])\n"
       "print('worst', d['worst'])\n",
       path});
  ::unlink(path.c_str());
  return r;
}

int ExpectedExit(const std::string& worst) { return worst == "fail" ? 2 : worst == "warn" ? 1 : 0; }

TEST(DoctorOnThisMachine, EveryCheckHasAVerdictAndTheExitCodeMatchesTheWorst) {
  CommandResult r = RunCommand({GpunoiseBinary(), "doctor", "--json", "--sample-interval", "200ms"});
  ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 1 || r.exit_code == 2) << r.exit_code << r.err;
  EXPECT_EQ(r.err, "");
  CommandResult s = Summarize(r.out);
  ASSERT_EQ(s.exit_code, 0) << s.err << r.out;
  std::set<std::string> ids;
  std::string worst;
  int reported_exit = -1;
  std::istringstream lines(s.out);
  for (std::string id, verdict; lines >> id >> verdict;) {
    if (id == "exit_code") reported_exit = std::stoi(verdict);
    else if (id == "worst") worst = verdict;
    else ids.insert(id);
  }
  EXPECT_EQ(ids.size(), CheckIds().size());
  EXPECT_EQ(reported_exit, r.exit_code);
  EXPECT_EQ(r.exit_code, ExpectedExit(worst));
  // No GPU on this machine: the GPU checks say so.
  SystemView view("/");
  if (ReadInventory(view).OfKind(PciKind::kGpu).empty()) {
    EXPECT_NE(s.out.find("gpu.ecc unknown"), std::string::npos) << s.out;
    EXPECT_NE(r.out.find("no NVIDIA GPU"), std::string::npos);
  }
}

TEST(DoctorOnThisMachine, TextHasOneLinePerCheck) {
  CommandResult r = RunCommand({GpunoiseBinary(), "doctor", "--sample-interval", "100ms"});
  ASSERT_LE(r.exit_code, 2);
  std::vector<std::string> lines;
  for (std::string_view l : Split(r.out, '\n'))
    if (!l.empty()) lines.emplace_back(l);
  ASSERT_EQ(lines.size(), CheckIds().size() + 2) << r.out;  // header, checks, summary
  std::regex line(R"(^(ok|warn|fail|unknown) +[a-z_.]+ +\S.*$)");
  for (size_t i = 1; i + 1 < lines.size(); ++i) EXPECT_TRUE(std::regex_match(lines[i], line)) << lines[i];
  EXPECT_EQ(lines.back().rfind("summary: ", 0), 0u);
}

TEST(DoctorOnThisMachine, FocusOnEveryCpuPutsNicIrqsOnIt) {
  SystemView view("/");
  Inventory inv = ReadInventory(view);
  size_t nic_irqs = 0;
  for (const NetInterface* nic : inv.PhysicalNics())
    if (const PciDevice* d = inv.FindPci(nic->pci_bdf)) nic_irqs += d->irqs.size();
  if (nic_irqs == 0) GTEST_SKIP() << "no physical NIC with MSI IRQs on this machine";
  std::string all = FormatCpuList(inv.online_cpus);
  CommandResult r =
      RunCommand({GpunoiseBinary(), "doctor", "--focus-cpus", all, "--sample-interval", "0", "--skip", "gpu"});
  EXPECT_EQ(r.exit_code, 1) << r.out;  // at least the IRQ placement warns
  std::regex placement("warn +irq\\.placement +[0-9]+ of [0-9]+ device IRQs run on focus CPUs " + all + ": ");
  EXPECT_TRUE(std::regex_search(r.out, placement)) << r.out;
  // With no housekeeping CPU left, the fix says to pin the training first.
  EXPECT_NE(r.out.find("first pin the training processes"), std::string::npos);
}

TEST(DoctorOnThisMachine, NeverCrashesWhateverTheOptions) {
  const std::vector<std::vector<std::string>> variants = {
      {"--log-since", "10m"},
      {"--summary", "--exit-codes", "npd"},
      {"--exit-codes", "npd", "--problem-at", "warn", "--strict"},
      {"--strict", "-v", "--log-since", "1h"},
      {"--focus", std::to_string(getpid())},
      {"--focus-cpus", "0", "--skip", "cpu,mem", "--nvml", "none"},
      {"--root", "/", "--json", "--nvml", "/nonexistent/libnvidia-ml.so.1"},
  };
  for (const auto& v : variants) {
    std::vector<std::string> argv = {GpunoiseBinary(), "doctor", "--sample-interval", "50ms"};
    argv.insert(argv.end(), v.begin(), v.end());
    CommandResult r = RunCommand(argv);
    EXPECT_GE(r.exit_code, 0) << v[0];
    EXPECT_LE(r.exit_code, 2) << v[0] << ": " << r.err;  // never a signal (128+N)
    EXPECT_EQ(r.err, "") << v[0];
    EXPECT_FALSE(r.out.empty()) << v[0];
  }
}

// "RX:\t\t256" under the heading `section` of `ethtool -g` output.
std::optional<uint32_t> EthtoolCliValue(const std::string& text, const std::string& section, const std::string& key) {
  auto at = text.find(section);
  if (at == std::string::npos) return std::nullopt;
  std::regex re("\\n" + key + ":\\s+([0-9]+)");
  std::smatch m;
  std::string rest = text.substr(at);
  if (!std::regex_search(rest, m, re)) return std::nullopt;
  return static_cast<uint32_t>(std::stoul(m[1]));
}

TEST(EthtoolNetlinkOnThisMachine, RingSizesMatchTheEthtoolCommand) {
  SystemView view("/");
  Inventory inventory = ReadInventory(view);
  auto nics = inventory.PhysicalNics();
  if (nics.empty()) GTEST_SKIP() << "no physical NIC";
  if (!PathExists("/usr/sbin/ethtool") && !PathExists("/sbin/ethtool")) GN_SKIP_MISSING_TOOL("no ethtool command (Debian package ethtool)");
  auto nl = EthtoolNetlink::Open();
  ASSERT_TRUE(nl.ok()) << nl.error().message;
  for (const NetInterface* nic : nics) {
    auto ours = (*nl)->Rings(nic->name);
    CommandResult cli = RunCommand({"ethtool", "-g", nic->name});
    if (!ours.ok()) {
      EXPECT_NE(cli.exit_code, 0) << nic->name << ": netlink says '" << ours.error().message << "'\n" << cli.out;
      continue;
    }
    ASSERT_EQ(cli.exit_code, 0) << cli.err;
    EXPECT_EQ(EthtoolCliValue(cli.out, "Pre-set maximums", "RX"), ours->rx_max) << cli.out;
    EXPECT_EQ(EthtoolCliValue(cli.out, "Current hardware settings", "RX"), ours->rx) << cli.out;
    EXPECT_EQ(EthtoolCliValue(cli.out, "Current hardware settings", "TX"), ours->tx) << cli.out;
    auto co = (*nl)->CoalesceParams(nic->name);
    CommandResult cli_co = RunCommand({"ethtool", "-c", nic->name});
    if (co.ok() && cli_co.exit_code == 0 && co->rx_usecs) {
      std::smatch m;
      ASSERT_TRUE(std::regex_search(cli_co.out, m, std::regex("\\nrx-usecs: ([0-9]+)"))) << cli_co.out;
      EXPECT_EQ(static_cast<uint32_t>(std::stoul(m[1])), *co->rx_usecs);
    }
  }
}

}  // namespace
}  // namespace gpunoise::doctor::testing
