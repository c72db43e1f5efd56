// The fleet deployment files in docs/deploy: Prometheus rules pass
// `promtool check rules` and their unit tests (`promtool test rules`), the
// scrape config passes `promtool check config`, and the systemd unit and
// Kubernetes DaemonSet start the monitor with options it accepts, with the
// privileges and mounts it needs.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

#include "common/files.h"
#include "common/strings.h"
#include "integration/support/privileges.h"
#include "monitor/monitor_options.h"
#include "monitor/web_config.h"

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
// `web_config` stands in for the --web.config.file the deployment names
// (a path on the node).
Result<MonitorOptions> OptionsFromArgs(const std::vector<std::string>& args, const OptionLayer& file,
                                       const std::string& web_config = "") {
  OptionLayer cli;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "monitor") continue;
    if (!StartsWith(args[i], "--") || i + 1 >= args.size()) return MakeError("unexpected argument {}", args[i]);
    cli[args[i].substr(2)].push_back(args[i + 1]);
    ++i;
  }
  cli.erase("config");
  if (cli.count("web.config.file")) cli["web.config.file"] = {web_config};
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

// The job-level straggler rule: nodes joined to their job through
// kube-state-metrics (kube_pod_info's node, kube_pod_labels' job label,
// running pods only) and each compared with its own job's median.
TEST(DeployPrometheus, JobStragglerRuleJoinsNodesToTheirJobAndPassesPromtool) {
  if (!Have("promtool")) GN_SKIP_MISSING_TOOL("promtool is not installed (Debian package prometheus)");
  ShellRun check = Shell("promtool check rules " + kDeploy + "/prometheus/gpunoise-job-rules.yml");
  EXPECT_EQ(check.rc, 0) << check.out;
  EXPECT_NE(check.out.find("SUCCESS"), std::string::npos) << check.out;
  ShellRun test = Shell("promtool test rules " + kDeploy + "/prometheus/gpunoise-job-rules.test.yml");
  EXPECT_EQ(test.rc, 0) << test.out;
  EXPECT_NE(test.out.find("SUCCESS"), std::string::npos) << test.out;
}

// The SLURM job straggler rule: nodes joined to their job through the
// monitor's gpunoise_focus_job_processes{slurm_job_id} (the cgroup's
// job_<id>), each compared with its job's median, and the two peers
// closest to the median named in baseline_nodes for the receiver's fan-out.
TEST(DeployPrometheus, SlurmJobStragglerRuleJoinsNodesByTheirCgroupJobAndNamesBaselinePeers) {
  if (!Have("promtool")) GN_SKIP_MISSING_TOOL("promtool is not installed (Debian package prometheus)");
  ShellRun check = Shell("promtool check rules " + kDeploy + "/prometheus/gpunoise-slurm-job-rules.yml");
  EXPECT_EQ(check.rc, 0) << check.out;
  EXPECT_NE(check.out.find("SUCCESS"), std::string::npos) << check.out;
  ShellRun test = Shell("promtool test rules " + kDeploy + "/prometheus/gpunoise-slurm-job-rules.test.yml");
  EXPECT_EQ(test.rc, 0) << test.out;
  EXPECT_NE(test.out.find("SUCCESS"), std::string::npos) << test.out;
}

TEST(DeployPrometheus, RulesCoverEveryDetector) {
  auto rules = ReadFileToString(kDeploy + "/prometheus/gpunoise-rules.yml");
  ASSERT_TRUE(rules.ok());
  for (const char* d : {"softirq_storm", "interference", "nic_trouble", "kernel_log"})
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

TEST(DeploySystemd, UnitServesTlsWithAuthBeyondLoopbackAndReloadsWithSighup) {
  auto unit = ReadFileToString(kDeploy + "/systemd/gpunoise-monitor.service");
  ASSERT_TRUE(unit.ok());
  std::string exec, reload;
  std::map<std::string, std::string> keys;
  for (std::string_view line : Split(*unit, '\n')) {
    if (StartsWith(line, "ExecStart=")) exec = std::string(line.substr(10));
    if (StartsWith(line, "ExecReload=")) reload = std::string(line.substr(11));
    if (size_t eq = line.find('='); eq != std::string_view::npos && !StartsWith(line, "#"))
      keys[std::string(line.substr(0, eq))] = std::string(line.substr(eq + 1));
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
  // The shipped web.yml stands in for /etc/gpunoise/web.yml: with it the
  // non-loopback listen address is accepted (TLS and a password).
  auto options = OptionsFromArgs(args, *conf, kDeploy + "/systemd/web.yml");
  ASSERT_TRUE(options.ok()) << options.error().message;
  EXPECT_TRUE(options->flight_recorder());
  EXPECT_EQ(options->listen, "0.0.0.0:9464");
  EXPECT_EQ(options->web_config_file, kDeploy + "/systemd/web.yml");
  auto web = ReadWebConfigFile(options->web_config_file);
  ASSERT_TRUE(web.ok()) << web.error().message;
  EXPECT_TRUE(web->tls.enabled());
  EXPECT_FALSE(web->users.empty());
  // Without the web config the same unit would be refused.
  auto bare = OptionsFromArgs({"monitor", "--listen", "0.0.0.0:9464"}, *conf);
  ASSERT_FALSE(bare.ok());
  EXPECT_NE(bare.error().message.find("beyond loopback"), std::string::npos) << bare.error().message;
  // systemd's sandboxing: only the capabilities the monitor keeps, nothing
  // writable but the state (dump) directory.
  EXPECT_EQ(keys["CapabilityBoundingSet"], "CAP_BPF CAP_PERFMON");
  EXPECT_EQ(keys["NoNewPrivileges"], "yes");
  EXPECT_EQ(keys["ProtectSystem"], "strict");
  EXPECT_EQ(keys["ProtectHome"], "yes");
  EXPECT_EQ(keys["PrivateTmp"], "yes");
  EXPECT_TRUE(StartsWith(options->dump_dir, keys["ReadWritePaths"] + "/")) << options->dump_dir;
}

// systemd's own verdict on the unit's sandboxing (`systemd-analyze
// security`, 0 = locked down, 10 = exposed). The unit before this hardening
// scored 7.3 (MEDIUM).
TEST(DeploySystemd, SystemdAnalyzeSecurityRatesTheUnitOk) {
  if (!Have("systemd-analyze")) GN_SKIP_MISSING_TOOL("systemd-analyze is not installed (Debian package systemd)");
  ShellRun r = Shell("systemd-analyze security --offline=true " + kDeploy + "/systemd/gpunoise-monitor.service");
  size_t at = r.out.find("Overall exposure level for gpunoise-monitor.service: ");
  ASSERT_NE(at, std::string::npos) << r.out;
  double level = std::stod(r.out.substr(at + 54));
  EXPECT_LE(level, 3.0) << r.out;
}

TEST(DeployKubernetes, DaemonSetIsUnprivilegedWithTwoCapabilitiesTlsAndTheMounts) {
  if (Shell("python3 -c 'import yaml'").rc != 0)
    GN_SKIP_MISSING_TOOL("python3 with PyYAML is needed to read the manifest (Debian packages python3, python3-yaml)");
  ShellRun r = Shell("python3 " + std::string(GPUNOISE_SOURCE_DIR) + "/tests/monitor/check_daemonset.py " + kDeploy +
                "/kubernetes/gpunoise-monitor-daemonset.yaml");
  ASSERT_EQ(r.rc, 0) << r.out;
  for (const char* fact : {"hostPID True\n", "privileged False\n", "automountServiceAccountToken False\n",
                           "allowPrivilegeEscalation False\n", "readOnlyRootFilesystem True\n",
                           "seccomp RuntimeDefault\n", "caps.drop ALL\n", "caps.add BPF,PERFMON\n",
                           "memory.limit 1Gi\n", "mount /sys/kernel/btf /sys/kernel/btf\n",
                           "mount /sys/kernel/tracing /sys/kernel/tracing\n", "mount /sys/fs/bpf /sys/fs/bpf\n",
                           "livenessProbe HTTPS /healthz\n", "readinessProbe HTTPS /healthz\n"})
    EXPECT_NE(r.out.find(fact), std::string::npos) << fact << r.out;
  size_t args_at = r.out.find("args:\n"), web_at = r.out.find("web:\n"), config_at = r.out.find("\nconfig:\n") + 1;
  ASSERT_NE(args_at, std::string::npos);
  ASSERT_NE(web_at, std::string::npos);
  ASSERT_NE(config_at, 0u);
  std::vector<std::string> args;
  for (std::string_view a : Split(std::string_view(r.out).substr(args_at + 6, web_at - args_at - 6), '\n'))
    if (!a.empty()) args.emplace_back(a);
  auto conf = ParseConfigText(std::string_view(r.out).substr(config_at + 8));
  ASSERT_TRUE(conf.ok()) << conf.error().message;
  std::string web_file = ::testing::TempDir() + "/gn-daemonset-web.yml";
  {
    std::ofstream(web_file) << r.out.substr(web_at + 5, config_at - web_at - 5);
  }
  auto options = OptionsFromArgs(args, *conf, web_file);
  ASSERT_TRUE(options.ok()) << options.error().message;
  EXPECT_EQ(options->listen, "0.0.0.0:9464");
  auto web = ReadWebConfigFile(web_file);
  ASSERT_TRUE(web.ok()) << web.error().message;
  EXPECT_EQ(web->tls.cert_file, "/etc/gpunoise/tls/tls.crt");
  EXPECT_FALSE(web->users.empty());
  std::remove(web_file.c_str());
}

}  // namespace
}  // namespace gpunoise::monitor
