// gpunoise blackbox: a trace buffer that survives a warm reboot, armed with
// the events that tell a NIC-induced crash, collected after the reboot.
#include <boost/program_options.hpp>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <thread>

#include "blackbox/arm.h"
#include "blackbox/boot_plan.h"
#include "blackbox/collect.h"
#include "blackbox/event_set.h"
#include "blackbox/saved_table.h"
#include "blackbox/text_import.h"
#include "cli_util.h"
#include "commands.h"
#include "common/files.h"
#include "common/log.h"
#include "common/private_file.h"
#include "common/strings.h"
#include "report/report_session.h"

namespace po = boost::program_options;

namespace gpunoise::cli {
namespace {

constexpr const char* kUsage =
    "gpunoise blackbox: keep the last seconds before a kernel panic or hang in a trace buffer that\n"
    "survives a warm reboot (Linux 6.12+), and turn them into a trace and a report after it.\n\n"
    "USAGE: gpunoise blackbox arm [--print] [--install] [--size BYTES] [--force] [--keep-anchoring INTERVAL]\n"
    "       gpunoise blackbox collect [-o FILE.pftrace] [--no-report]\n"
    "       gpunoise blackbox status\n"
    "       gpunoise blackbox import-text FILE [-o FILE.pftrace] [--no-report]\n\n"
    "  arm      checks this kernel, prints the kernel command line that reserves the buffer (--install\n"
    "           writes it as a GRUB drop-in); on a kernel booted with it, enables the NIC-crash events\n"
    "           and writes the decoding markers, and says how many seconds the buffer holds\n"
    "  collect  after the reboot: decodes the previous boot's buffer into a .pftrace and reports on it\n"
    "  status   armed, recording, or holding uncollected data\n"
    "  import-text  kernels before 6.12: the ring as ftrace_dump_on_oops printed it (serial console,\n"
    "           netconsole, pstore) or a tracefs 'trace' file, into the same .pftrace and report\n\n"
    "EXIT STATUS: 0 done, 1 error (one line on stderr), 2 usage error\n";

constexpr const char* kExamples =
    "\nEXAMPLES:\n"
    "  gpunoise blackbox arm --print              # the command line this kernel and memory need\n"
    "  sudo gpunoise blackbox arm --install       # write /etc/default/grub.d/60-gpunoise-blackbox.cfg\n"
    "  sudo gpunoise blackbox arm                 # after that reboot: start recording into the buffer\n"
    "  sudo gpunoise blackbox arm --keep-anchoring 60s   # ... and refresh the markers every minute (service)\n"
    "  sudo gpunoise blackbox collect -o crash.pftrace   # after a crash and warm reboot\n"
    "  sudo gpunoise blackbox status              # armed? holding data?\n"
    "  sudo gpunoise blackbox arm --live-instance gn_drill --buffer-kb 4096  # a drill on a plain instance\n"
    "  sudo gpunoise blackbox collect --live-instance gn_drill -o drill.pftrace\n"
    "  gpunoise blackbox import-text console-ramoops-0 -o crash.pftrace   # an oops' dump, after the reboot\n";

struct Common {
  std::string tracefs = "/sys/kernel/tracing";
  std::string state_dir = std::string(blackbox::kDefaultStateDir);
  std::string instance = std::string(blackbox::kDefaultInstance);
  std::string live_instance;
};

void AddCommon(po::options_description& opts, Common* c) {
  opts.add_options()
      ("tracefs", po::value(&c->tracefs)->default_value(c->tracefs), "where tracefs is mounted")
      ("instance", po::value(&c->instance)->default_value(c->instance), "the persistent instance's name")
      ("state-dir", po::value(&c->state_dir)->default_value(c->state_dir),
       "where arm saves (and collect finds) the event-id table on disk")
      ("live-instance", po::value(&c->live_instance),
       "use this plain instance of the running boot instead (drills and tests; created by arm if missing)");
}

bool Parse(int argc, char** argv, const po::options_description& opts, po::variables_map* vm,
           const char* verb) {
  try {
    po::store(po::command_line_parser(argc, argv).options(opts).run(), *vm);
    po::notify(*vm);
  } catch (const po::error& e) {
    std::fprintf(stderr, "usage: gpunoise blackbox %s: %s (see gpunoise blackbox --help)\n", verb, e.what());
    return false;
  }
  return true;
}

uint64_t MemTotalBytes() {
  auto text = ReadFileToString("/proc/meminfo");
  if (!text.ok()) return 0;
  for (std::string_view line : Split(*text, '\n'))
    if (StartsWith(line, "MemTotal:")) {
      std::string_view v = Trim(line.substr(9));
      if (auto kb = ParseUint64(v.substr(0, v.find(' ')))) return *kb * 1024;
    }
  return 0;
}

volatile std::sig_atomic_t g_stop = 0;
void OnSignal(int) { g_stop = 1; }

int RunArm(int argc, char** argv) {
  Common common;
  bool print = false, install = false, force = false;
  std::string size_text, keep_anchoring, install_root, measure = "1s";
  uint64_t buffer_kb = 0;
  po::options_description opts("OPTIONS");
  opts.add_options()
      ("help,h", "show this help")
      ("print", po::bool_switch(&print), "only print the kernel command line and what this kernel supports")
      ("install", po::bool_switch(&install), "write the command line as a GRUB drop-in (never edits /etc/default/grub)")
      ("install-root", po::value(&install_root), "write the drop-in under this directory instead of / (tests)")
      ("size", po::value(&size_text), "buffer size for the command line (default: 2 MiB per CPU, 32 MiB to 1/128 of memory)")
      ("force", po::bool_switch(&force), "arm even over uncollected data of the previous boot (discards it)")
      ("measure", po::value(&measure)->default_value(measure), "how long to measure the event rate")
      ("keep-anchoring", po::value(&keep_anchoring), "stay running, rewriting markers and a wall-clock anchor every INTERVAL")
      ("buffer-kb", po::value(&buffer_kb), "per-CPU buffer size of a --live-instance (KiB)");
  AddCommon(opts, &common);
  po::variables_map vm;
  if (!Parse(argc, argv, opts, &vm, "arm")) return 2;
  if (vm.count("help")) {
    std::cout << kUsage << "\n" << opts << kExamples;
    return 0;
  }

  struct utsname u {};
  ::uname(&u);
  auto kernel = blackbox::ParseKernelRelease(u.release);
  if (!kernel) {
    log::Error("failed to parse the kernel release '{}'", u.release);
    return 1;
  }
  blackbox::BootPlanOptions plan_options;
  plan_options.instance = common.instance;
  if (!size_text.empty()) {
    auto bytes = ParseByteSize(size_text);
    if (!bytes.ok()) {
      std::fprintf(stderr, "usage: gpunoise blackbox arm: --size: %s\n", bytes.error().message.c_str());
      return 2;
    }
    plan_options.size_bytes = *bytes;
  }
  uint32_t cpus = static_cast<uint32_t>(sysconf(_SC_NPROCESSORS_CONF));
  blackbox::BootPlan plan = blackbox::PlanBootCommandLine(*kernel, MemTotalBytes(), cpus, plan_options);
  auto cmdline = ReadFileToString("/proc/cmdline");
  bool booted_with = cmdline.ok() && blackbox::CmdlineMapsInstance(*cmdline, common.instance);

  if (print || install || (!booted_with && common.live_instance.empty())) {
    std::printf("kernel %s: %s\n", u.release,
                plan.kind == blackbox::BlackBoxKind::kPersistentBuffer
                    ? "has persistent trace buffers (reserve_mem= + trace_instance=)"
                    : "has no persistent trace buffer");
    std::printf("kernel command line to add:\n  %s\n", plan.cmdline.c_str());
    if (plan.kind == blackbox::BlackBoxKind::kPersistentBuffer)
      std::printf("  reserves %s: %s per CPU on %u CPUs\n", blackbox::KernelSize(plan.size_bytes).c_str(),
                  HumanBytes(plan.per_cpu_bytes).c_str(), cpus);
    for (const std::string& n : plan.notes) std::printf("  note: %s\n", n.c_str());
    if (install) {
      std::string dir = install_root + "/etc/default/grub.d";
      if (!PathExists(dir)) {
        log::Error("no {} (GRUB's drop-in directory): add the line above to your boot loader's "
                   "configuration yourself (systemd-boot: /etc/kernel/cmdline, then kernel-install)",
                   dir);
        return 1;
      }
      std::string path = dir + "/60-gpunoise-blackbox.cfg";
      std::ofstream out(path, std::ios::trunc);
      out << blackbox::GrubDropIn(plan.cmdline);
      if (!out) {
        log::Error("failed to write {}", path);
        return 1;
      }
      std::printf("wrote %s: run update-grub (Debian, Ubuntu) or grub2-mkconfig -o /boot/grub2/grub.cfg, then "
                  "reboot\n",
                  path.c_str());
    } else if (!booted_with && !print) {
      log::Error("this boot was not started with that command line: 'gpunoise blackbox arm --install' writes a "
                 "GRUB drop-in; reboot, then run 'gpunoise blackbox arm' again");
    }
    if (print || install || !booted_with) return print || install ? 0 : 1;
  }

  blackbox::ArmOptions options;
  options.tracefs = common.tracefs;
  options.instance = common.live_instance.empty() ? common.instance : common.live_instance;
  options.live = !common.live_instance.empty();
  options.force = force;
  options.buffer_kb = buffer_kb;
  options.state_dir = common.state_dir;
  auto m = ParseDuration(measure);
  if (!m.ok()) {
    std::fprintf(stderr, "usage: gpunoise blackbox arm: --measure: %s\n", m.error().message.c_str());
    return 2;
  }
  options.measure = std::chrono::milliseconds(*m / 1000000);
  auto result = blackbox::Arm(options);
  if (!result.ok()) {
    log::Error("{}", result.error().message);
    return 1;
  }
  std::fputs(blackbox::FormatArmResult(*result).c_str(), stdout);
  std::fflush(stdout);
  if (keep_anchoring.empty()) return 0;
  auto every = ParseDuration(keep_anchoring);
  if (!every.ok() || *every < 1000000000ull) {
    std::fprintf(stderr, "usage: gpunoise blackbox arm: --keep-anchoring needs an interval of 1s or more\n");
    return 2;
  }
  std::signal(SIGINT, OnSignal);
  std::signal(SIGTERM, OnSignal);
  std::string instance_dir = options.tracefs + "/instances/" + options.instance;
  std::vector<std::string> events = result->enabled;
  events.push_back("ftrace/print");
  auto next = std::chrono::steady_clock::now();
  while (!g_stop) {
    next += std::chrono::nanoseconds(*every);
    while (!g_stop && std::chrono::steady_clock::now() < next) std::this_thread::sleep_for(std::chrono::milliseconds(200));
    if (g_stop) break;
    if (auto n = blackbox::WriteMarkers(instance_dir, options.tracefs + "/events", events); !n.ok()) {
      log::Error("{}", n.error().message);
      return 1;
    }
  }
  return 0;
}

// gpunoise-blackbox-HOST-DATE.pftrace unless the user named the trace;
// "" after saying why when the path is refused.
std::string BlackboxOutput(std::string output) {
  if (output.empty()) {
    output = DefaultTraceName();
    if (auto pos = output.find("gpunoise-"); pos != std::string::npos) output.insert(pos + 9, "blackbox-");
  }
  if (std::string why = CheckOutputPath(output); !why.empty()) {
    log::Error("{}", why);
    return "";
  }
  return output;
}

// The report of what was just written, after its summary: what the NIC, the
// softirqs and the CPUs were doing before the end.
int PrintReportOf(const std::string& trace) {
  report::ReportOptions ro;
  ro.trace_path = trace;
  auto rep = report::RunReport(ro);
  if (!rep.ok()) {
    log::Error("{}", rep.error().message);
    return 1;
  }
  std::printf("\n%s", rep->output.c_str());
  return 0;
}

int RunCollect(int argc, char** argv) {
  Common common;
  std::string output;
  bool no_report = false;
  po::options_description opts("OPTIONS");
  opts.add_options()
      ("help,h", "show this help")
      ("output,o", po::value(&output), "trace to write (default gpunoise-blackbox-HOST-DATE.pftrace)")
      ("no-report", po::bool_switch(&no_report), "do not print the report of the trace")
      ("pstore", po::value<std::string>()->default_value("/sys/fs/pstore"), "where pstore is mounted");
  AddCommon(opts, &common);
  po::variables_map vm;
  if (!Parse(argc, argv, opts, &vm, "collect")) return 2;
  if (vm.count("help")) {
    std::cout << kUsage << "\n" << opts << kExamples;
    return 0;
  }
  output = BlackboxOutput(output);
  if (output.empty()) return 1;
  blackbox::CollectOptions options;
  options.tracefs = common.tracefs;
  options.instance = common.live_instance.empty() ? common.instance : common.live_instance;
  options.live = !common.live_instance.empty();
  options.output = output;
  options.pstore_dir = vm["pstore"].as<std::string>();
  options.state_dir = common.state_dir;
  options.tool_version = GPUNOISE_VERSION;
  options.command_line = JoinArgs(argc, argv);
  auto result = blackbox::Collect(options);
  if (!result.ok()) {
    log::Error("{}", result.error().message);
    return 1;
  }
  std::fputs(blackbox::FormatCollectSummary(*result).c_str(), stdout);
  return no_report ? 0 : PrintReportOf(output);
}

int RunImportText(int argc, char** argv) {
  std::string input, output;
  bool no_report = false;
  po::options_description opts("OPTIONS");
  opts.add_options()
      ("help,h", "show this help")
      ("input", po::value(&input), "the text: a console/netconsole/pstore capture of ftrace_dump_on_oops, or a tracefs 'trace' file")
      ("output,o", po::value(&output), "trace to write (default gpunoise-blackbox-HOST-DATE.pftrace)")
      ("no-report", po::bool_switch(&no_report), "do not print the report of the trace");
  po::positional_options_description pos;
  pos.add("input", 1);
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(argc, argv).options(opts).positional(pos).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    std::fprintf(stderr, "usage: gpunoise blackbox import-text: %s (see gpunoise blackbox --help)\n", e.what());
    return 2;
  }
  if (vm.count("help")) {
    std::cout << kUsage << "\n" << opts << kExamples;
    return 0;
  }
  if (input.empty()) {
    std::fprintf(stderr, "usage: gpunoise blackbox import-text FILE: which text to read\n");
    return 2;
  }
  output = BlackboxOutput(output);
  if (output.empty()) return 1;
  blackbox::TextImportOptions options;
  options.input = input;
  options.output = output;
  options.tool_version = GPUNOISE_VERSION;
  options.command_line = JoinArgs(argc, argv);
  auto result = blackbox::ImportTextDump(options);
  if (!result.ok()) {
    log::Error("{}", result.error().message);
    return 1;
  }
  std::fputs(blackbox::FormatTextImportSummary(*result).c_str(), stdout);
  return no_report ? 0 : PrintReportOf(output);
}

int RunStatus(int argc, char** argv) {
  Common common;
  po::options_description opts("OPTIONS");
  opts.add_options()("help,h", "show this help");
  AddCommon(opts, &common);
  po::variables_map vm;
  if (!Parse(argc, argv, opts, &vm, "status")) return 2;
  if (vm.count("help")) {
    std::cout << kUsage << "\n" << opts << kExamples;
    return 0;
  }
  std::string instance = common.live_instance.empty() ? common.instance : common.live_instance;
  blackbox::BlackBoxState state = blackbox::ReadState(common.tracefs, instance);
  std::fputs(blackbox::FormatState(state).c_str(), stdout);
  return 0;
}

}  // namespace

int RunBlackbox(int argc, char** argv) {
  if (argc < 2) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  std::string_view verb = argv[1];
  if (verb == "-h" || verb == "--help") {
    std::cout << kUsage << kExamples;
    return 0;
  }
  if (verb == "arm") return RunArm(argc - 1, argv + 1);
  if (verb == "collect") return RunCollect(argc - 1, argv + 1);
  if (verb == "status") return RunStatus(argc - 1, argv + 1);
  if (verb == "import-text") return RunImportText(argc - 1, argv + 1);
  std::fprintf(stderr, "usage: gpunoise blackbox: unknown verb '%s' (arm, collect, status, import-text)\n", argv[1]);
  return 2;
}

}  // namespace gpunoise::cli
