// gpunoise doctor: is this node configured to be quiet? One line per check,
// with an exit status that SLURM health checks and node-problem-detector use.
#include <boost/program_options.hpp>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cstdio>
#include <iostream>

#include "commands.h"
#include "common/cpu_list.h"
#include "common/log.h"
#include "common/strings.h"
#include "doctor/doctor.h"
#include "doctor/nvml_library.h"
#include "doctor/report.h"
#include "model/kernel_log.h"

namespace po = boost::program_options;

namespace gpunoise::cli {
namespace {

constexpr const char* kUsage =
    "gpunoise doctor: check that this node is configured to be quiet for GPU training: IRQ placement,\n"
    "NUMA locality of GPUs and NICs, CPU isolation, NIC health, kernel health and GPU health.\n"
    "One line per check: verdict (ok/warn/fail/unknown), what it saw, why it matters, the fix.\n\n"
    "USAGE: gpunoise doctor [--focus-cpus LIST | --focus PID...] [--json | --summary] [--root DIR]\n\n"
    "EXIT STATUS: 0 all ok, 1 warnings, 2 failures (unknown counts as ok unless --strict);\n"
    "  with --exit-codes npd: 0 ok, 1 problem, 2 unknown (node-problem-detector's convention).\n"
    "  Bad usage exits 2 with a line starting 'usage:'.\n";

constexpr const char* kExamples =
    "\nEXAMPLES:\n"
    "  sudo gpunoise doctor                         # focus: CPUs of processes using GPUs, else isolated CPUs\n"
    "  sudo gpunoise doctor --focus-cpus 8-63       # judge against the CPUs training will run on\n"
    "  sudo gpunoise doctor --focus $(pgrep -f train.py)  # ... or against running processes\n"
    "  sudo gpunoise doctor --json > doctor.json     # machine-readable (schema gpunoise.doctor/1)\n"
    "  gpunoise doctor --root /host --summary       # a node's files mounted in a container, one line\n"
    "  gpunoise doctor --exit-codes npd --problem-at warn   # as a node-problem-detector plugin\n"
    "  gpunoise doctor --skip gpu,cpu.daemons       # leave out checks (ids or families)\n";

std::string ReadHostName(const doctor::SystemView& view) {
  if (view.IsLive()) {
    char buf[256] = {};
    if (gethostname(buf, sizeof(buf) - 1) == 0) return buf;
  }
  if (auto h = view.ReadTrimmed("/proc/sys/kernel/hostname")) return *h;
  if (auto h = view.ReadTrimmed("/etc/hostname")) return *h;
  return "unknown-host";
}

std::string ReadKernelRelease(const doctor::SystemView& view) {
  if (auto r = view.ReadTrimmed("/proc/sys/kernel/osrelease")) return *r;
  if (view.IsLive()) {
    utsname u;
    if (uname(&u) == 0) return u.release;
  }
  return "unknown";
}

int Usage(const std::string& message) {
  std::fprintf(stderr, "usage: gpunoise doctor: %s (see gpunoise doctor --help)\n", message.c_str());
  return 2;
}

}  // namespace

int RunDoctor(int argc, char** argv) {
  std::string focus_cpus_text, root = "/", interval_text = "1s", since_text, nvml = doctor::kDefaultNvmlLibrary;
  std::string skip_text, exit_codes = "status", problem_at = "fail";
  std::vector<int> focus_pids;
  bool json = false, summary = false, verbose = false, strict = false, list_checks = false, print_npd = false;

  po::options_description opts("OPTIONS");
  opts.add_options()
      ("help,h", "show this help")
      ("focus-cpus", po::value(&focus_cpus_text), "the CPUs training runs on, e.g. 8-63 (default: see --focus)")
      ("focus", po::value(&focus_pids)->multitoken(),
       "PIDs of the training processes: their allowed CPUs are the focus (default: processes using GPUs, "
       "else isolcpus/nohz_full CPUs)")
      ("json", po::bool_switch(&json), "print JSON (schema gpunoise.doctor/1, see docs/doctor.md)")
      ("summary", po::bool_switch(&summary), "print one summary line (for drain reasons and NPD messages)")
      ("print-npd-kernel-monitor", po::bool_switch(&print_npd),
       "print node-problem-detector's kernel monitor config for gpunoise's kernel log classes and exit")
      ("verbose,v", po::bool_switch(&verbose), "text output: list each check's evidence below it")
      ("root", po::value(&root), "read /sys, /proc, /dev/kmsg and /etc under this directory (default: /)")
      ("sample-interval", po::value(&interval_text),
       "time between the two samples of error counters, e.g. 500ms; 0 takes one sample (default: 1s)")
      ("log-since", po::value(&since_text), "only count kernel log records this recent, e.g. 1h (default: all)")
      ("nvml", po::value(&nvml), "NVML library to dlopen, or 'none' (default: libnvidia-ml.so.1)")
      ("skip", po::value(&skip_text), "comma-separated check ids or families to leave out, e.g. gpu,cpu.daemons")
      ("strict", po::bool_switch(&strict), "count 'unknown' as a warning (NPD style: as unknown)")
      ("exit-codes", po::value(&exit_codes), "status (0 ok, 1 warn, 2 fail; default) or npd (0 ok, 1 problem, 2 unknown)")
      ("problem-at", po::value(&problem_at), "with --exit-codes npd: warn or fail (default) is a problem")
      ("list-checks", po::bool_switch(&list_checks), "print the check ids and exit");

  po::variables_map vm;
  try {
    po::store(po::command_line_parser(argc, argv).options(opts).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    return Usage(e.what());
  }
  if (vm.count("help")) {
    std::cout << kUsage << "\n" << opts << kExamples;
    return 0;
  }
  if (print_npd) {
    std::fputs(model::RenderNpdKernelMonitorConfig().c_str(), stdout);
    return 0;
  }
  if (list_checks) {
    for (const auto& id : doctor::CheckIds()) std::printf("%s\n", id.c_str());
    return 0;
  }

  doctor::DoctorOptions options;
  if (!focus_cpus_text.empty() && !focus_pids.empty()) return Usage("--focus-cpus and --focus are exclusive");
  if (vm.count("focus-cpus")) {
    auto cpus = ParseCpuList(focus_cpus_text);
    if (!cpus.ok()) return Usage("--focus-cpus: " + cpus.error().message);
    options.focus.cpus = *cpus;
  }
  for (int pid : focus_pids)
    if (pid <= 0) return Usage("invalid PID " + std::to_string(pid));
  if (vm.count("focus") && focus_pids.empty()) return Usage("--focus needs at least one PID");
  options.focus.pids = focus_pids;
  if (json && summary) return Usage("--json and --summary are exclusive");
  auto interval = ParseDuration(interval_text);
  if (!interval.ok()) return Usage("invalid --sample-interval '" + interval_text + "'");
  if (*interval > 60'000'000'000ull) return Usage("--sample-interval is at most 60s");
  options.sample_interval_ns = *interval;
  if (!since_text.empty()) {
    auto since = ParseDuration(since_text);
    if (!since.ok() || *since == 0) return Usage("invalid --log-since '" + since_text + "'");
    options.log_since_ns = *since;
  }
  options.nvml_library = nvml == "none" ? "" : nvml;
  for (std::string_view s : Split(skip_text, ',')) {
    s = Trim(s);
    if (s.empty()) continue;
    bool known = false;
    for (const auto& id : doctor::CheckIds()) known |= id == s || StartsWith(id, std::string(s) + ".");
    if (!known) return Usage("--skip: unknown check '" + std::string(s) + "' (see --list-checks)");
    options.skip.emplace_back(s);
  }
  doctor::ExitPolicy policy;
  policy.strict = strict;
  if (exit_codes == "npd") policy.style = doctor::ExitCodeStyle::kNpd;
  else if (exit_codes != "status") return Usage("--exit-codes must be status or npd");
  if (problem_at == "warn") policy.problem_at = doctor::Verdict::kWarn;
  else if (problem_at != "fail") return Usage("--problem-at must be warn or fail");
  if (vm.count("problem-at") && policy.style != doctor::ExitCodeStyle::kNpd)
    return Usage("--problem-at needs --exit-codes npd");
  struct stat st;
  if (::stat(root.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return Usage("--root " + root + " is not a directory");

  doctor::SystemView view(root);
  auto inputs = doctor::GatherInputs(view, options);
  if (!inputs.ok()) {
    log::Error("{}", inputs.error().message);
    return 2;
  }
  std::vector<doctor::CheckResult> results = doctor::RunChecks(*inputs, options.skip);
  doctor::ReportContext ctx;
  ctx.host = ReadHostName(view);
  ctx.root = view.root();
  ctx.kernel = ReadKernelRelease(view);
  ctx.focus = &inputs->focus;
  ctx.sample_interval_ns = options.sample_interval_ns;
  ctx.exit_code = doctor::ExitCode(results, policy);
  std::string out = json      ? doctor::FormatJson(results, ctx)
                    : summary ? doctor::FormatSummary(results) + "\n"
                              : doctor::FormatText(results, ctx, verbose);
  std::fwrite(out.data(), 1, out.size(), stdout);
  std::fflush(stdout);
  return ctx.exit_code;
}

}  // namespace gpunoise::cli
