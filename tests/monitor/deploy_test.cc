// The fleet deployment files in docs/deploy: Prometheus rules pass
// `promtool check rules` and their unit tests (`promtool test rules`), the
// scrape config passes `promtool check config`, and the systemd unit and
// Kubernetes DaemonSet start the monitor with options it accepts, with the
// privileges and mounts it needs.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <sstream>

#include "common/files.h"
#include "common/strings.h"
#include "integration/support/privileges.h"
#include "monitor/monitor_options.h"

namespace gpunoise::monitor {
namespace {

const std::string kDeploy = std::string(GPUNOISE_SOURCE_DIR) + "/docs/deploy";

struct ShellRun {
  int rc = -1;
  std::string out;
};

ShellRun Shell(const std::string& cmd) {
  ShellRun r;
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  if (!p) return r;
  char buf[1024];
  while (fgets(buf, sizeof(buf), p)) r.out += buf;
  int status = pclose(p);
  r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

bool Have(const std::string& tool) { return Shell("command -v " + tool).rc == 0; }

// The monitor's options from a command line ("monitor --listen X ...").
Result<MonitorOptions> OptionsFromArgs(const std::vector<std::string>& args, const OptionLayer& file) {
  OptionLayer cli;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "monitor") continue;
    if (!StartsWith(args[i], "--") || i + 1 >= args.size()) return MakeError("unexpected argument {}", args[i]);
    cli[args[i].substr(2)].push_back(args[i + 1]);
    ++i;
  }
  cli.erase("config");
  return ResolveOptions(file, cli);
}

TEST(DeployPrometheus, AlertRulesPassPromtoolCheckAndUnitTests) {
  if (!Have("promtool")) GN_SKIP_MISSING_TOOL("promtool is not installed (Debian package prometheus)");
  ShellRun check = Shell("promtool check rules " + kDeploy + "/prometheus/gpunoise-rules.yml");
  EXPECT_EQ(check.rc, 0) << check.out;
  EXPECT_NE(check.out.find("SUCCESS"), std::string::npos) << check.out;
  ShellRun test = Shell("promtool test rules " + kDeploy + "/prometheus/gpunoise-rules.test.yml");
  EXPECT_EQ(test.rc, 0) << test.out;
  EXPECT_NE(test.out.find("SUCCESS"), std::string::npos) << test.out;
}

TEST(DeployPrometheus, RulesCoverEveryDetector) {
  auto rules = ReadFileToString(kDeploy + "/prometheus/gpunoise-rules.yml");
  ASSERT_TRUE(rules.ok());
  for (const char* d : {"softirq_storm", "interference", "nic_trouble"})
    EXPECT_NE(rules->find(std::string("gpunoise_finding_active{detector=\"") + d + "\"}"), std::string::npos) << d;
}

TEST(DeployPrometheus, ScrapeConfigPassesPromtool) {
  if (!Have("promtool")) GN_SKIP_MISSING_TOOL("promtool is not installed (Debian package prometheus)");
  ShellRun check = Shell("promtool check config " + kDeploy + "/prometheus/prometheus-scrape.yml");
  EXPECT_EQ(check.rc, 0) << check.out;
  ShellRun k8s = Shell("promtool check config " + kDeploy + "/prometheus/prometheus-scrape-kubernetes.yml");
  if (k8s.out.find("kubernetes_sd_configs not found") != std::string::npos) {
    std::cerr << "this promtool has no Kubernetes discovery: the Kubernetes scrape config was not checked\n";
  } else {
    EXPECT_EQ(k8s.rc, 0) << k8s.out;
  }
}

TEST(DeploySystemd, UnitRunsTheMonitorWithValidOptionsAndReloadsWithSighup) {
  auto unit = ReadFileToString(kDeploy + "/systemd/gpunoise-monitor.service");
  ASSERT_TRUE(unit.ok());
  std::string exec, reload;
  for (std::string_view line : Split(*unit, '\n')) {
    if (StartsWith(line, "ExecStart=")) exec = std::string(line.substr(10));
    if (StartsWith(line, "ExecReload=")) reload = std::string(line.substr(11));
  }
  ASSERT_FALSE(exec.empty());
  EXPECT_NE(reload.find("-HUP"), std::string::npos) << reload;
  std::vector<std::string> args;
  std::istringstream in(exec);
  for (std::string w; in >> w;) args.push_back(w);
  ASSERT_GE(args.size(), 2u);
  EXPECT_NE(args[0].find("gpunoise"), std::string::npos);
  args.erase(args.begin());
  auto conf = ReadConfigFile(kDeploy + "/systemd/monitor.conf");
  ASSERT_TRUE(conf.ok()) << conf.error().message;
  auto options = OptionsFromArgs(args, *conf);
  ASSERT_TRUE(options.ok()) << options.error().message;
  EXPECT_TRUE(options->flight_recorder());
  EXPECT_EQ(options->listen, "0.0.0.0:9464");
}

TEST(DeployKubernetes, DaemonSetIsPrivilegedWithHostPidAndTheMounts) {
  if (Shell("python3 -c 'import yaml'").rc != 0)
    GN_SKIP_MISSING_TOOL("python3 with PyYAML is needed to read the manifest (Debian packages python3, python3-yaml)");
  ShellRun r = Shell("python3 " + std::string(GPUNOISE_SOURCE_DIR) + "/tests/monitor/check_daemonset.py " + kDeploy +
                "/kubernetes/gpunoise-monitor-daemonset.yaml");
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find("hostPID True\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("privileged True\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("mount /sys/kernel/btf /sys/kernel/btf\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("mount /sys/kernel/tracing /sys/kernel/tracing\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("mount /sys/fs/bpf /sys/fs/bpf\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("liveness /healthz\n"), std::string::npos) << r.out;
  size_t args_at = r.out.find("args:\n"), config_at = r.out.find("config:\n");
  ASSERT_NE(args_at, std::string::npos);
  ASSERT_NE(config_at, std::string::npos);
  std::vector<std::string> args;
  for (std::string_view a : Split(std::string_view(r.out).substr(args_at + 6, config_at - args_at - 6), '\n'))
    if (!a.empty()) args.emplace_back(a);
  auto conf = ParseConfigText(std::string_view(r.out).substr(config_at + 8));
  ASSERT_TRUE(conf.ok()) << conf.error().message;
  auto options = OptionsFromArgs(args, *conf);
  ASSERT_TRUE(options.ok()) << options.error().message;
  EXPECT_EQ(options->listen, "0.0.0.0:9464");
}

}  // namespace
}  // namespace gpunoise::monitor
