// gpunoise record: an on-demand Perfetto trace of this node.
#include <boost/program_options.hpp>

#include <time.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "cli_util.h"
#include "collect/cgroup.h"
#include "collect/kmsg_reader.h"
#include "collect/pod_selection.h"
#include "collect/proc_scanner.h"
#include "commands.h"
#include "record/kernel_log_recording.h"
#include "common/cpu_list.h"
#include "common/log.h"
#include "common/strings.h"
#include "export/perfetto/trace_compression.h"
#include "record/gpu_recording.h"
#include "record/record_session.h"
#include "record/drain_lanes.h"
#include "record/spare_cpu.h"
#include "common/privilege_drop.h"
#include "common/start_at.h"
#include "record/workload.h"

namespace po = boost::program_options;

namespace gpunoise::cli {
namespace {

// 1 in 65536 still counts every softirq; past it the timed ones are too
// few to estimate a storm's time from.
constexpr int64_t kMaxNetRxSample = 65536;

constexpr const char* kUsage =
    "gpunoise record: record scheduling, interrupt and network activity of this node, and what its\n"
    "GPUs did, into one Perfetto trace (open it at ui.perfetto.dev, or read it with 'gpunoise report').\n\n"
    "USAGE: sudo gpunoise record [-d SECONDS] [-o FILE.pftrace] [options] [-- CMD ARGS...]\n"
    "  -- CMD ARGS...  run CMD (as the sudo user) with GPU capture (CUPTI) on; the recording\n"
    "                  ends when CMD exits or -d elapses, and gpunoise exits with CMD's status\n";

constexpr const char* kExamples =
    "\nEXAMPLES:\n"
    "  sudo gpunoise record -d 10 -o node.pftrace        # 10 s of sched, irq and softirq events\n"
    "  sudo gpunoise record -o node.pftrace              # until Ctrl-C\n"
    "  sudo gpunoise record -d 30 --cpus 0-7 -o a.pftrace  # only CPUs 0 to 7\n"
    "  sudo gpunoise record -d 5 --pid 4242 -o p.pftrace # scheduling of process 4242 (and its children)\n"
    "  sudo gpunoise record -d 5 --cgroup system.slice/train.service -o t.pftrace\n"
    "                                                    # scheduling of one cgroup-v2 subtree\n"
    "  sudo gpunoise record -d 5 --events softirq -o s.pftrace  # softirqs only\n"
    "  sudo gpunoise record -d 5 -e sched,irq,softirq,net-packets --net-dev eth0 -o p.pftrace\n"
    "                                                    # also every packet, poll and drop of eth0\n"
    "  sudo gpunoise record -d 5 -e net --nic-tracepoints mlx5 -o n.pftrace\n"
    "                                                    # network counters; NIC tracepoints of mlx5 only\n"
    "  sudo gpunoise record -d 30 -o run.pftrace -- python train.py  # kernel and GPU side of a job\n"
    "  sudo gpunoise record -d 10 --compress none -o plain.pftrace  # no compressed packets in the file\n"
    "  sudo gpunoise record -d 30 --gpu-dir /tmp/gpu -o run.pftrace\n"
    "                                                    # collect GPU data of jobs started with\n"
    "                                                    # the environment 'gpunoise env /tmp/gpu' prints\n";

}  // namespace

int RunRecord(int argc, char** argv) {
  // Everything after "--" is the command to run, untouched by option parsing.
  std::vector<std::string> command;
  for (int i = 1; i < argc; ++i) {
    if (std::string_view(argv[i]) == "--") {
      for (int j = i + 1; j < argc; ++j) command.emplace_back(argv[j]);
      if (command.empty()) {
        std::fprintf(stderr, "usage: gpunoise record: no command after -- (see gpunoise record --help)\n");
        return 2;
      }
      argc = i;
      break;
    }
  }
  std::string start_at_text;
  std::string trace_group;
  std::string duration_text, output, machine_name, cpus_text, cgroup, events_text, buffer_text, attach, gpu_dir;
  std::string net_interval_text = "100ms";
  std::string nic_interval_text = "1s";
  std::string compress_text = "auto", deflate_thread = "auto", drain_threads = "auto", kubelet_log_dir, gpu_pod_dirs;
  std::vector<std::string> net_devs, nic_categories;
  std::vector<int> pids;
  uint64_t drain_ms = 100, gpu_sample_ms = 100, drain_batch = 1 << 14;
  int64_t netrx_sample = collect::kDefaultNetRxSampleEvery;
  std::string drain_priority = "idle";
  std::string net_packet_counters = "off";
  bool verbose = false, no_follow = false, no_gpu_counters = false, no_nvtx = false,
       run_as_root = false, redact = false, batching = false, no_batching = false;

  po::options_description opts("OPTIONS");
  opts.add_options()
      ("help,h", "show this help")
      ("duration,d", po::value(&duration_text), "how long to record (seconds, or 500ms, 2m); default: until Ctrl-C")
      ("start-at", po::value(&start_at_text),
       "open the gate at this wall-clock (REALTIME) instant: +5s, or an ISO time 2026-12-01T12:40:00Z (no zone: "
       "UTC); collectors attach first, the duration counts from then")
      ("output,o", po::value(&output), "trace file to write (default: gpunoise-HOST-DATE.pftrace)")
      ("machine-name", po::value(&machine_name),
       "the name this machine has when traces of several are merged (default: the hostname)")
      ("cpus", po::value(&cpus_text), "only these CPUs, e.g. 0-3,8 (default: all online)")
      ("pid,p", po::value(&pids)->multitoken(), "only tasks of these processes (and their children); irqs are kept")
      ("cgroup", po::value(&cgroup), "only tasks in this cgroup-v2 directory (absolute, or relative to the cgroup mount), "
       "or of pod:NAME / pod-uid:UID / container:ID / container:NAME (resolved at the start; by their processes "
       "where v2 does not hold them)")
      ("events,e", po::value(&events_text)->default_value(std::string(record::kDefaultEventGroups)),
       "event groups: sched, irq, softirq, net (NAPI polls, drops, TX timeouts per device, queue and CPU kept in the "
       "kernel; per-device packets and bytes), "
       "net-packets (also a record per packet, NAPI poll and drop: costly at high packet rates), "
       "node (steal, CPU-quota throttling, affinity, reclaim and dirty-page stalls, kernel work, idle periods, "
       "frequency changes, NUMA balancing, SMI counts)")
      ("net-packet-counters", po::value(&net_packet_counters)->default_value("off"),
       "on: with net, count packets and bytes per device, queue and CPU with a program on every packet, in every "
       "network namespace (costly at high packet rates); off: take them from the devices' own statistics, in "
       "this network namespace (NAPI polls and packets, drops and TX timeouts are counted in every namespace "
       "either way; net-packets implies on)")
      ("net-dev", po::value(&net_devs)->multitoken(),
       "with net-packets: records only for these devices (up to 4; counters cover all devices)")
      ("nic-tracepoints", po::value(&nic_categories)->multitoken(),
       "tracefs categories of NIC-driver tracepoints to count (default: the event systems of the NIC drivers' "
       "modules, else mlx5, ice, i40e, bnxt, ena, gve, ixgbe, ...)")
      ("net-interval", po::value(&net_interval_text)->default_value("100ms"),
       "how often the network counters (the kernel's per device, queue and CPU, and the devices' own statistics) "
       "are sampled into counter tracks")
      ("nic-interval", po::value(&nic_interval_text)->default_value("1s"),
       "how often the NICs' own counters (ethtool -S, standard groups, queue stats, link settings) are read: "
       "each read takes the rtnl lock and some drivers ask their firmware (link changes are seen as they "
       "happen regardless)")
      ("buffer-size", po::value(&buffer_text), "ring buffer per CPU, e.g. 4M (default: 4M, at most 256M in all)")
      ("drain-interval", po::value(&drain_ms)->default_value(100), "milliseconds between drains when rings are not filling up")
      ("drain-priority", po::value(&drain_priority)->default_value("idle"),
       "idle: the drain runs under SCHED_IDLE while its rings and logs have room, back to normal under pressure; "
       "normal: never")
      ("drain-batch", po::value(&drain_batch)->default_value(1 << 14),
       "at most this many records per CPU between two writes (0: no limit)")
      ("batching", po::bool_switch(&batching),
       "irq, softirq and system-vector records reach the ring in per-CPU batches too, one ring reservation "
       "per batch, as context switches and wakeups do by default (each drain first flushes, with a call to "
       "that CPU, the batch of every CPU whose batch holds records and did not fill since the last drain)")
      ("no-batching", po::bool_switch(&no_batching), "one ring reservation per record, switches and wakeups too")
      ("netrx-sample", po::value(&netrx_sample)->default_value(int64_t{collect::kDefaultNetRxSampleEvery}),
       "in a NET_RX storm (more than 8 NET_RX softirqs on a CPU within one kernel tick) time only 1 in N of its "
       "softirqs and count the rest exactly: the report estimates their time from the timed ones; 0 or 1: time "
       "every softirq")
      ("no-follow-forks", po::bool_switch(&no_follow), "with --pid: do not add children started during the recording")
      ("attach", po::value(&attach)->default_value("auto"), "auto (tp_btf, else tracepoint) or tracepoint")
      ("compress", po::value(&compress_text)->default_value("auto"),
       "auto (zlib while the node has CPU to spare, else blocks written plain, so that a storm's node "
       "does not pay for it), zlib (packets in compressed blocks, read by ui.perfetto.dev and "
       "trace_processor; 5-6x smaller) or none (for tools that cannot read compressed packets)")
      ("deflate-thread", po::value(&deflate_thread)->default_value("auto"),
       "on: deflate and write compressed blocks on a thread of their own, beside the drain; off: on the drain; "
       "auto: on with 4 or more online CPUs")
      ("drain-threads", po::value(&drain_threads)->default_value("auto"),
       "threads that read the rings and encode, the drain thread among them (1-8); auto: one per 128 online "
       "CPUs")
      ("gpu-dir", po::value(&gpu_dir), "collect GPU fragments written to this directory by processes started with the environment 'gpunoise env DIR' prints")
      ("gpu-pod-dirs", po::value(&gpu_pod_dirs),
       "a Kubernetes node's fragment root: make ROOT/<namespace>_<pod>_<uid> (0700) for each pod of the kubelet's "
       "log tree, hand it to the pod's user when its first process appears, and collect from all of them")
      ("gpu-sample-ms", po::value(&gpu_sample_ms)->default_value(100), "milliseconds between NVML samples (SM clock, utilization, memory, temperature, power, throttling)")
      ("no-gpu-counters", po::bool_switch(&no_gpu_counters), "do not sample NVML")
      ("no-nvtx", po::bool_switch(&no_nvtx), "with -- CMD: leave NVTX alone (no NVTX ranges in the trace)")
      ("run-as-root", po::bool_switch(&run_as_root), "with -- CMD under sudo: run CMD as root instead of the sudo user")
      ("group", po::value(&trace_group),
       "make the trace 0640 and of this group (name or number) instead of 0600, for the people who read traces")
      ("kubelet-log-dir", po::value(&kubelet_log_dir)->default_value("/var/log"),
       "where the kubelet's pods/ and containers/ log directories are: they give pods' and containers' names")
      ("redact", po::bool_switch(&redact),
       "processes' command lines in the trace keep only the program name (arguments often carry tokens)")
      ("verbose,v", po::bool_switch(&verbose), "show libbpf's messages");

  po::variables_map vm;
  try {
    po::store(po::command_line_parser(argc, argv).options(opts).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    std::fprintf(stderr, "usage: gpunoise record: %s (see gpunoise record --help)\n", e.what());
    return 2;
  }
  if (vm.count("help")) {
    std::cout << kUsage << "\n" << opts << kExamples;
    return 0;
  }
  InstallLibbpfLogger(verbose);

  record::RecordOptions options;
  options.command_line = JoinArgs(argc, argv);
  options.output_path = output.empty() ? DefaultTraceName() : output;
  options.machine_name = machine_name;
  options.drain_interval_ms = std::max<uint64_t>(1, drain_ms);
  if (drain_priority != "idle" && drain_priority != "normal") {
    std::fprintf(stderr, "usage: gpunoise record: invalid --drain-priority '%s' (idle or normal)\n",
                 drain_priority.c_str());
    return 2;
  }
  options.drain_yield = drain_priority == "idle";
  if (net_packet_counters != "on" && net_packet_counters != "off") {
    std::fprintf(stderr, "usage: gpunoise record: invalid --net-packet-counters '%s' (on or off)\n",
                 net_packet_counters.c_str());
    return 2;
  }
  options.net.device_counters = net_packet_counters == "on";
  options.records_per_cpu_per_drain = drain_batch;
  if (batching && no_batching) {
    std::fprintf(stderr, "usage: gpunoise record: --batching and --no-batching exclude each other\n");
    return 2;
  }
  options.batching = batching      ? record::BatchMode::kAll
                     : no_batching ? record::BatchMode::kNone
                                   : record::BatchMode::kSched;
  // Read signed: a uint32 option takes "-1" as 4294967295.
  if (netrx_sample < 0 || netrx_sample > kMaxNetRxSample) {
    std::fprintf(stderr, "usage: gpunoise record: invalid --netrx-sample %lld (0 or 1: time every softirq; 2-%lld: "
                 "time 1 in N of a storm's)\n",
                 static_cast<long long>(netrx_sample), static_cast<long long>(kMaxNetRxSample));
    return 2;
  }
  options.netrx_sample_every = netrx_sample > 1 ? static_cast<uint32_t>(netrx_sample) : 0;
  options.redact = redact;
  options.kubelet_log_dir = kubelet_log_dir;
  if (!start_at_text.empty()) {
    struct timespec now {};
    ::clock_gettime(CLOCK_REALTIME, &now);
    int64_t now_ns = static_cast<int64_t>(now.tv_sec) * 1'000'000'000 + now.tv_nsec;
    auto at = ParseStartAt(start_at_text, now_ns);
    if (!at.ok()) {
      std::fprintf(stderr, "usage: gpunoise record: %s\n", at.error().message.c_str());
      return 2;
    }
    if (*at < now_ns)
      log::Warning("--start-at {} was {:.3f} s ago: the recording starts as soon as it is ready",
                   FormatRealtime(*at), static_cast<double>(now_ns - *at) / 1e9);
    else
      log::Info("recording starts at {} (REALTIME, in {:.3f} s)", FormatRealtime(*at),
                static_cast<double>(*at - now_ns) / 1e9);
    options.start_at_realtime_ns = *at;
  }
  if (!trace_group.empty()) {
    auto gid = LookUpGroup(trace_group);
    if (!gid.ok()) {
      std::fprintf(stderr, "usage: gpunoise record: %s\n", gid.error().message.c_str());
      return 2;
    }
    options.trace_gid = static_cast<int>(*gid);
  }
  if (!duration_text.empty()) {
    auto d = ParseDuration(duration_text);
    if (!d.ok() || *d == 0) {
      std::fprintf(stderr, "usage: gpunoise record: invalid duration '%s'\n", duration_text.c_str());
      return 2;
    }
    options.duration_ns = *d;
  }
  if (!cpus_text.empty()) {
    auto cpus = ParseCpuList(cpus_text);
    if (!cpus.ok()) {
      std::fprintf(stderr, "usage: gpunoise record: --cpus: %s\n", cpus.error().message.c_str());
      return 2;
    }
    options.filters.cpus = *cpus;
  }
  for (int pid : pids) {
    if (pid <= 0) {
      std::fprintf(stderr, "usage: gpunoise record: invalid PID %d\n", pid);
      return 2;
    }
  }
  options.filters.pids = pids;
  options.filters.follow_forks = !no_follow;
  options.event_groups.clear();
  for (std::string_view g : Split(events_text, ',')) {
    g = Trim(g);
    if (g.empty()) continue;
    bool known = false;
    for (std::string_view k : record::kEventGroups) known |= (k == g);
    if (!known) {
      std::fprintf(stderr, "usage: gpunoise record: unknown event group '%.*s' (known: sched, irq, softirq, net, net-packets, node)\n",
                   static_cast<int>(g.size()), g.data());
      return 2;
    }
    options.event_groups.insert(std::string(g));
  }
  if (options.event_groups.empty()) {
    std::fprintf(stderr, "usage: gpunoise record: --events is empty\n");
    return 2;
  }
  auto split_list = [](const std::vector<std::string>& values) {
    std::vector<std::string> out;
    for (const auto& v : values)
      for (std::string_view item : Split(v, ','))
        if (!Trim(item).empty()) out.emplace_back(Trim(item));
    return out;
  };
  options.net.devices = split_list(net_devs);
  for (const auto& dev : options.net.devices) {
    if (dev.size() >= GN_NET_NAME_LEN || dev.find_first_of(" /:") != std::string::npos) {
      std::fprintf(stderr, "usage: gpunoise record: --net-dev: '%s' is not a network device name\n",
                   dev.c_str());
      return 2;
    }
  }
  if (options.net.devices.size() > GN_NET_DEV_FILTER_MAX) {
    std::fprintf(stderr, "usage: gpunoise record: --net-dev takes at most %d devices\n",
                 GN_NET_DEV_FILTER_MAX);
    return 2;
  }
  if (!options.net.devices.empty() && !options.event_groups.count("net-packets")) {
    std::fprintf(stderr, "usage: gpunoise record: --net-dev filters per-packet records; add net-packets to --events\n");
    return 2;
  }
  options.net.nic_categories = split_list(nic_categories);
  // Milliseconds of a sampling interval flag (at least 1ms); 0 after a usage error.
  auto interval_ms = [](const std::string& text, const char* flag) -> uint64_t {
    auto interval = ParseDuration(text);
    if (interval.ok() && *interval >= 1000000) return *interval / 1000000;
    std::fprintf(stderr, "usage: gpunoise record: invalid --%s '%s' (at least 1ms)\n", flag, text.c_str());
    return 0;
  };
  options.net_interval_ms = interval_ms(net_interval_text, "net-interval");
  if (options.net_interval_ms == 0) return 2;
  options.nic_interval_ms = interval_ms(nic_interval_text, "nic-interval");
  if (options.nic_interval_ms == 0) return 2;
  if (!buffer_text.empty()) {
    auto b = ParseByteSize(buffer_text);
    if (!b.ok() || *b == 0) {
      std::fprintf(stderr, "usage: gpunoise record: invalid --buffer-size '%s'\n", buffer_text.c_str());
      return 2;
    }
    options.ring_bytes_per_cpu = *b;
  }
  options.compress_with_spare_cpu_only = compress_text == "auto";
  if (compress_text == "auto") {
    options.compression = perfetto::TraceCompression::kZlib;
  } else if (auto compression = perfetto::ParseTraceCompression(compress_text); compression.ok()) {
    options.compression = *compression;
  } else {
    std::fprintf(stderr, "usage: gpunoise record: --compress: unknown compression '%s' (known: auto, zlib, none)\n",
                 compress_text.c_str());
    return 2;
  }
  if (auto wanted = record::DeflateThreadWanted(deflate_thread, OnlineCpus().size())) {
    options.deflate_in_background = *wanted && options.compression != perfetto::TraceCompression::kNone;
  } else {
    std::fprintf(stderr, "usage: gpunoise record: --deflate-thread must be auto, on or off\n");
    return 2;
  }
  if (drain_threads == "auto") {
    options.drain_lanes = record::DrainLanesFor(OnlineCpus().size());
  } else if (auto n = ParseInt64(drain_threads); n && *n >= 1 && *n <= 8) {
    options.drain_lanes = static_cast<size_t>(*n);
  } else {
    std::fprintf(stderr, "usage: gpunoise record: --drain-threads must be auto or 1 to 8\n");
    return 2;
  }
  if (attach == "tracepoint") options.attach_mode = collect::AttachMode::kClassicOnly;
  else if (attach != "auto") {
    std::fprintf(stderr, "usage: gpunoise record: --attach must be auto or tracepoint\n");
    return 2;
  }
  if (collect::IsPodSelector(cgroup)) {
    // Resolved now and kept: the trace names the pod's processes
    // (docs/containers.md), so the report needs no live node.
    auto sel = collect::SelectPod(collect::ScanProcesses("/proc", kubelet_log_dir), cgroup);
    if (!sel.ok()) {
      log::Error("{}", sel.error().message);
      return 1;
    }
    if (!sel->v2_path.empty()) {
      cgroup = sel->v2_path.substr(1);  // relative to the v2 mount
      log::Info("--cgroup {}: the cgroup-v2 directory {}", vm["cgroup"].as<std::string>(), sel->v2_path);
    } else {
      // v1 (or hybrid with a v1 kubelet): the kernel's cgroup-id helper
      // sees only v2, so the pod is its processes and their children. A
      // container name several pods share is too: no one v2 directory
      // holds them.
      if (sel->containers > 1)
        log::Info("--cgroup {}: {} containers of that name; recording their {} processes and their children",
                  cgroup, sel->containers, sel->pids.size());
      else
        log::Info("--cgroup {}: cgroup v2 does not hold it here; recording its {} processes and their children",
                  cgroup, sel->pids.size());
      options.filters.pids.insert(options.filters.pids.end(), sel->pids.begin(), sel->pids.end());
      cgroup.clear();
    }
  }
  if (!cgroup.empty()) {
    auto ref = collect::ResolveCgroup(cgroup);
    if (!ref.ok()) {
      log::Error("{}", ref.error().message);
      return 1;
    }
    options.filters.cgroup_id = ref->id;
    options.filters.cgroup_level = ref->level;
    options.filters.cgroup_path = ref->path;
  }

  if (gpu_sample_ms == 0) {
    std::fprintf(stderr, "usage: gpunoise record: --gpu-sample-ms must be at least 1\n");
    return 2;
  }
  // GPU side: injection for `-- CMD`, fragments from --gpu-dir, NVML.
  record::GpuRecordingOptions gpu_options;
  gpu_options.capture_workload = !command.empty();
  gpu_options.collect_dir = gpu_dir;
  gpu_options.pod_dirs_root = gpu_pod_dirs;
  gpu_options.kubelet_log_dir = kubelet_log_dir;
  if (!gpu_dir.empty() && !gpu_pod_dirs.empty()) {
    std::fprintf(stderr, "usage: gpunoise record: give --gpu-dir or --gpu-pod-dirs, not both\n");
    return 2;
  }
  if (!gpu_pod_dirs.empty() && !command.empty()) {
    // The command is no pod: it would write into ROOT itself, which is
    // not collected.
    std::fprintf(stderr, "usage: gpunoise record: --gpu-pod-dirs collects pods' fragments; use -- CMD without it\n");
    return 2;
  }
  gpu_options.counters = !no_gpu_counters;
  gpu_options.counters_requested =
      !command.empty() || !gpu_dir.empty() || !gpu_pod_dirs.empty() || !vm["gpu-sample-ms"].defaulted();
  gpu_options.sample_interval_ns = gpu_sample_ms * 1000000ull;
  gpu_options.nvtx = !no_nvtx;
  record::WorkloadSpec workload_spec;
  if (!command.empty() && !run_as_root) {
    if (auto invoker = record::InvokingUser()) workload_spec = *invoker;
    gpu_options.owner_uid = workload_spec.uid;
    gpu_options.owner_gid = workload_spec.gid;
  }
  workload_spec.argv = command;
  auto gpu = record::GpuRecording::Create(gpu_options, SelfExecutable());
  if (!gpu.ok()) {
    log::Error("{}", gpu.error().message);
    return 1;
  }
  for (const auto& w : (*gpu)->TakeWarnings()) log::Warning("{}", w);
  workload_spec.env = (*gpu)->workload_env();
  std::unique_ptr<record::Workload> workload;
  // The kernel log: /dev/kmsg from the start of the recording on, read with
  // the console half on every turn of the loop and written as it is matched
  // (what the kernel's ring overwrote first shows as a sequence gap and is
  // counted).
  std::optional<collect::KmsgReader> kmsg;
  std::vector<model::KernelLogEntry> kernel_log;  // for the link events' kernel lines
  options.kernel_log = &kernel_log;
  // Its printk:console half (the printk's own time, CPU and task).
  record::ConsoleCapture console;
  options.console = &console;
  options.append_extra = [&](perfetto::TraceFileWriter& out, const model::SessionInfo& session) -> Status {
    GN_RETURN_IF_ERROR((*gpu)->Append(out, session));
    if (!kmsg) return OkStatus();
    return record::AppendKernelLog(*kmsg, console, out, &kernel_log);
  };
  // Containerized GPU processes write their namespace's ids; the fork
  // records and /proc say which host threads those are.
  if (!(*gpu)->fragment_dir().empty()) options.pid_ns_map = (*gpu)->pid_ns_map();
  if (!command.empty()) {
    options.start_workload = [&]() -> Result<int> {
      GN_ASSIGN_OR_RETURN(workload, record::Workload::Start(workload_spec));
      log::Info("started {} (pid {})", command[0], workload->pid());
      return workload->exit_fd();
    };
    options.workload_end_reason = [&] {
      workload->Poll();
      return "command " + workload->DescribeExit();
    };
  }

  // Once attached (and the command started with the invoking user's own
  // rights), only what the rest of the recording needs stays.
  options.after_attach = [&]() -> Status {
    RecordNeeds needs;
    needs.output_path = options.output_path;
    if (!gpu_dir.empty() || !gpu_pod_dirs.empty() || !(*gpu)->workload_env().empty())
      needs.gpu_dir = (*gpu)->fragment_dir();
    needs.pod_dirs = !gpu_pod_dirs.empty();
    std::vector<std::string> reasons;
    CapMask keep = RecordKeeps(needs, &reasons);
    GN_RETURN_IF_ERROR(DropPrivilegesAfterAttach("record", keep, reasons));
    // Capabilities are per thread: the GPU side's threads (the pod
    // directories' watcher, the NVML sampler, which runs the vendor's
    // library) start after the drop, so they inherit only what was kept.
    (*gpu)->Begin();
    for (const auto& w : (*gpu)->TakeWarnings()) log::Warning("{}", w);
    for (const auto& i : (*gpu)->TakeInfos()) log::Info("{}", i);
    return OkStatus();
  };

  UniqueFd signal_fd = BlockStopSignals();
  options.stop_fd = signal_fd.get();
  options.stop_reason = [&] { return "signal " + ReadSignalName(signal_fd.get()); };

  options.on_started = [&](const model::SessionInfo& session) {
    if (auto reader = collect::KmsgReader::Open(); reader.ok()) {
      kmsg = std::move(*reader);
      console.set_kmsg(&*kmsg);  // read on every turn of the loop from now on
    } else {
      log::Warning("kernel log not recorded: {}", reader.error().message);
    }
    if (!(*gpu)->workload_env().empty())
      log::Info("GPU fragments go to {}", (*gpu)->fragment_dir());
    std::string states;
    for (const auto& c : session.collectors)
      states += fmt::format("{}{} {}", states.empty() ? "" : ", ", c.name, model::CollectorStateName(c.state));
    if (options.duration_ns)
      log::Info("recording {:.1f} s to {} ({}); Ctrl-C stops early", options.duration_ns / 1e9,
                options.output_path, states);
    else
      log::Info("recording to {} ({}) until Ctrl-C", options.output_path, states);
    // If the recorder is killed (SIGKILL, the OOM killer), this file is what
    // is left: a valid trace of every event written so far.
    log::Info("until it ends, the trace is written to {}", session.in_progress_path);
  };

  auto result = record::RunRecord(options);
  bool workload_running = workload && !workload->Poll();
  (*gpu)->Finish(workload_running);
  for (const auto& w : (*gpu)->TakeWarnings()) log::Warning("{}", w);
  if (!result.ok()) {
    log::Error("{}", result.error().message);
    return 1;
  }
  std::printf("%s\n", record::FormatSummary(*result).c_str());
  std::string gpu_summary = (*gpu)->Summary();
  if (!gpu_summary.empty()) std::printf("gpunoise: %s\n", gpu_summary.c_str());
  if (workload)
    std::printf("gpunoise: %s (pid %d) %s\n", command[0].c_str(), workload->pid(),
                workload_running ? "is still running" : workload->DescribeExit().c_str());
  std::fflush(stdout);
  int status = 0;
  if (result->late_error) {
    log::Error("{}", result->late_error->message);
    status = 1;
  } else {
    // Like `time` and `perf record`: a failing command fails the whole line.
    status = workload && !workload_running ? workload->ShellStatus() : 0;
  }
  // A second Ctrl-C during the detach: the trace is complete; leave at once
  // (no destructors: a thread is still detaching the programs).
  if (result->detach_abandoned) {
    std::fflush(nullptr);
    std::_Exit(status);
  }
  return status;
}

}  // namespace gpunoise::cli
