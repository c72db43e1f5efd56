// gpunoise monitor: the always-on mode (OpenMetrics, detectors, flight
// recorder). The work is in userspace/monitor; this file is the front end.
#include <boost/program_options.hpp>

#include <cstdio>
#include <iostream>

#include "cli_util.h"
#include "commands.h"
#include "common/log.h"
#include "monitor/monitor_options.h"
#include "monitor/monitor_session.h"

namespace po = boost::program_options;

namespace gpunoise::cli {
namespace {

constexpr const char* kUsage =
    "gpunoise monitor: watch this node continuously at low cost. The kernel keeps aggregates only\n"
    "(softirq and hard-irq time, run-queue latency, focus-thread preemptions, NAPI polls, drops, ...);\n"
    "every interval they are read, the detectors (softirq storm, interference, NIC trouble) run on the\n"
    "deltas, and everything is served as OpenMetrics on /metrics for Prometheus. With --flight-recorder,\n"
    "the last seconds of detailed events are kept in memory and written as a Perfetto trace when a\n"
    "detector fires. SIGHUP reloads --config; SIGTERM or SIGINT stops (every program is detached).\n\n"
    "USAGE: sudo gpunoise monitor [--interval 1s] [--listen 127.0.0.1:9464 [--web.config.file FILE]] [--focus SPEC...]\n"
    "         [--sample-hz 49] [--flight-recorder 20s --dump-dir DIR [--max-dumps N --max-dump-bytes B]]\n"
    "         [--config FILE]\n";

constexpr const char* kExamples =
    "\nEXAMPLES:\n"
    "  sudo gpunoise monitor                                 # metrics on http://127.0.0.1:9464/metrics\n"
    "  sudo gpunoise monitor --listen 0.0.0.0:9464 --web.config.file /etc/gpunoise/web.yml\n"
    "                                                        # the fleet's Prometheus scrapes over TLS with auth\n"
    "  sudo gpunoise monitor --focus comm:python --focus-cpus 8-63\n"
    "                                                        # training processes are the focus; sample CPUs 8-63\n"
    "  sudo gpunoise monitor --flight-recorder 20s --dump-dir /var/lib/gpunoise\n"
    "                                                        # keep 20 s of events; write a trace on a finding\n"
    "  sudo gpunoise monitor --config /etc/gpunoise/monitor.conf  # options from a file (kill -HUP to reload)\n"
    "  curl -s localhost:9464/metrics | grep softirq_seconds  # what the monitor serves\n";

}  // namespace

int RunMonitor(int argc, char** argv) {
  bool verbose = false;
  po::options_description opts("OPTIONS");
  opts.add_options()
      ("help,h", "show this help")
      ("interval", po::value<std::string>(), "how often counters are read and the detectors run (default 1s; at least 100ms)")
      ("listen", po::value<std::string>(), "HOST:PORT to serve /metrics and /healthz on (default 127.0.0.1:9464; port 0: any free port)")
      ("web.config.file", po::value<std::string>(),
       "TLS and authentication for the endpoint, in Prometheus exporter-toolkit format "
       "(tls_server_config, basic_auth_users; docs/monitor.md); required beyond loopback")
      ("insecure-listen", po::value<std::string>(),
       "on: allow a non-loopback listen address without TLS and authentication (default off)")
      ("focus", po::value<std::vector<std::string>>()->multitoken(),
       "focus threads: PID (with its descendants), comm:NAME, cgroup:PATH; repeatable (default: none)")
      ("focus-cpus", po::value<std::string>(), "CPUs the sampler watches, e.g. 8-63 (default: all online)")
      ("sample-hz", po::value<std::string>(), "samples per second per focus CPU (default 49; 0: no sampler)")
      ("focus-refresh", po::value<std::string>(), "how often focus specs are resolved again (default 5s)")
      ("flight-recorder", po::value<std::string>(), "keep this much history of detailed events (e.g. 20s; default off)")
      ("flight-recorder-bytes", po::value<std::string>(), "memory for that history (default 64M)")
      ("dump-dir", po::value<std::string>(), "where flight-recorder traces go (required with --flight-recorder)")
      ("max-dumps", po::value<std::string>(), "keep at most this many traces; the oldest are deleted (default 10)")
      ("max-dump-bytes", po::value<std::string>(), "keep at most this many bytes of traces; the oldest are deleted (default 1G)")
      ("dump-group", po::value<std::string>(),
       "flight-recorder traces are 0640 and of this group (name or number) instead of 0600")
      ("dump-interval", po::value<std::string>(), "at most one trace per this long (default 5m)")
      ("job", po::value<std::vector<std::string>>()->multitoken(),
       "this node belongs to job ID besides those its focus processes' cgroups name (SLURM job_<id>); "
       "alerts with that slurm_job_id or job_id label reach it; repeatable")
      ("alert-lookback", po::value<std::string>(),
       "a dump an alert asks for starts this long before the alert's startsAt (default: the flight-recorder window)")
      ("stale-after", po::value<std::string>(), "forget devices and sampled comms idle this long (default 10m)")
      ("net-packet-counters", po::value<std::string>(),
       "on: count packets per device, queue and CPU with a program on every packet (all namespaces; "
       "costly at high packet rates); off: the kernel's device statistics (default off)")
      ("sample-isolated", po::value<std::string>(),
       "on: the sampler also runs on isolcpus/nohz_full CPUs and the monitor's threads anywhere; "
       "off: the sampler stays off them and the monitor's threads off them and the focus CPUs (default off)")
      ("redact", po::value<std::string>(),
       "on: flight-recorder traces keep only each process's program name, not its arguments (default off)")
      ("threshold", po::value<std::vector<std::string>>()->multitoken(),
       "detector threshold NAME=VALUE (docs/report.md), e.g. softirq.share=40%; repeatable")
      ("attach", po::value<std::string>(), "auto (tp_btf, else tracepoint) or tracepoint")
      ("config", po::value<std::string>(), "read options from FILE (key = value per line; the command line wins)")
      ("verbose,v", po::bool_switch(&verbose), "show libbpf's messages and debug lines");

  po::variables_map vm;
  try {
    po::store(po::command_line_parser(argc, argv).options(opts).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    std::fprintf(stderr, "usage: gpunoise monitor: %s (see gpunoise monitor --help)\n", e.what());
    return 2;
  }
  if (vm.count("help")) {
    std::cout << kUsage << "\n" << opts << kExamples;
    return 0;
  }
  InstallLibbpfLogger(verbose);

  monitor::MonitorRun run;
  for (const auto& [key, value] : vm) {
    if (key == "help" || key == "verbose" || value.defaulted()) continue;
    if (const auto* list = boost::any_cast<std::vector<std::string>>(&value.value()))
      run.command_line[key] = *list;
    else if (const auto* one = boost::any_cast<std::string>(&value.value()))
      run.command_line[key] = {*one};
  }
  // Flag misuse is found before anything is loaded: exit 2 with "usage:".
  {
    monitor::OptionLayer file;
    if (auto it = run.command_line.find("config"); it != run.command_line.end()) {
      auto read = monitor::ReadConfigFile(it->second.back());
      if (!read.ok()) {
        std::fprintf(stderr, "usage: gpunoise monitor: %s\n", read.error().message.c_str());
        return 2;
      }
      file = std::move(read).value();
    }
    monitor::OptionLayer cli = run.command_line;
    cli.erase("config");
    auto resolved = monitor::ResolveOptions(file, cli);
    if (!resolved.ok()) {
      std::fprintf(stderr, "usage: gpunoise monitor: %s\n", resolved.error().message.c_str());
      return 2;
    }
  }
  run.command_text = JoinArgs(argc, argv);
  UniqueFd signals = BlockStopSignals();
  run.signal_fd = signals.get();
  Status st = monitor::RunMonitor(run);
  if (!st.ok()) {
    log::Error("{}", st.error().message);
    return 1;
  }
  return 0;
}

}  // namespace gpunoise::cli
