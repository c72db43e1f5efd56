// What `gpunoise monitor` does, from three layers: built-in defaults, the
// config file (--config), and the command line, each overriding the one
// before. The config file uses the command line's long option names:
//
//   # /etc/gpunoise/monitor.conf
//   interval = 1s
//   focus = comm:python          # repeatable: each line adds one
//   focus-cpus = 8-63
//   threshold = softirq.share=40%
//   flight-recorder = 20s
//   dump-dir = /var/lib/gpunoise/dumps
//
// One "key = value" per line; '#' starts a comment; blank lines are
// ignored; a key the command line does not know is an error. SIGHUP reads
// the file again and applies it (the command line still wins), except
// listen, web.config.file, attach and net-packet-counters, which need a
// restart (the web config file itself is re-read when it changes).
//
// Nothing listens beyond loopback without TLS and authentication: a listen
// address that is not loopback needs a web.config.file with
// tls_server_config and basic_auth_users or verified client certificates,
// or insecure-listen = on.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "collect/collector.h"
#include "common/result.h"

namespace gpunoise::monitor {

struct MonitorOptions {
  uint64_t interval_ns = 1'000'000'000;
  std::string listen = "127.0.0.1:9464";
  std::string web_config_file;  // exporter-toolkit format (monitor/web_config.h)
  bool insecure_listen = false;  // plain or unauthenticated HTTP beyond loopback
  // Focus threads: "PID" (a process and its descendants), "comm:NAME"
  // (processes of that name), "cgroup:PATH" (processes in a cgroup-v2
  // directory and below).
  std::vector<std::string> focus;
  std::vector<int> focus_cpus;  // the sampler's CPUs; empty: all online
  int sample_hz = 49;           // 0: no sampler
  uint64_t focus_refresh_ns = 5'000'000'000;
  // Flight recorder: off when 0.
  uint64_t flight_recorder_ns = 0;
  uint64_t flight_recorder_bytes = 64ull << 20;  // memory for the event ring
  std::string dump_dir;
  int dump_gid = -1;  // dump-group: dumps 0640 and of this group (default: 0600)
  uint32_t max_dumps = 10;
  uint64_t max_dump_bytes = 1ull << 30;  // all dumps in dump_dir together
  uint64_t dump_interval_ns = 300'000'000'000;  // at most one dump per this
  // Series of devices, IRQs and sampled comms that stopped changing this
  // long ago are dropped (and their kernel map entries deleted).
  uint64_t stale_after_ns = 600'000'000'000;
  // Per-device packet counters from a program on every packet (per queue,
  // with devices in every network namespace). Off: the kernel's device
  // statistics of this namespace, read once per interval (no per-packet
  // cost).
  bool net_packet_counters = false;
  bool redact = false;  // dumps' command lines keep only the program's name
  // The sampler also on isolcpus/nohz_full CPUs, and the monitor's threads
  // anywhere (monitor/cpu_placement.h).
  bool sample_isolated = false;
  std::vector<std::string> thresholds;  // "softirq.share=40%"
  // Jobs this node belongs to besides those its focus processes name
  // (alerts with a matching slurm_job_id or job_id label reach it).
  std::vector<std::string> jobs;
  // A dump asked by an alert starts this long before the alert's startsAt
  // (0: the flight recorder's window).
  uint64_t alert_lookback_ns = 0;
  collect::AttachMode attach_mode = collect::AttachMode::kPreferBtf;
  std::string config_path;

  bool flight_recorder() const { return flight_recorder_ns > 0; }
};

// Option name -> values, in the order given (repeatable keys keep all).
using OptionLayer = std::map<std::string, std::vector<std::string>, std::less<>>;

// The long option names a layer may hold (command line and config file).
const std::vector<std::string_view>& OptionNames();
bool IsRepeatable(std::string_view name);

// Parses a config file's text. Errors name the line: "line 3: unknown key
// 'foo'".
Result<OptionLayer> ParseConfigText(std::string_view text);
Result<OptionLayer> ReadConfigFile(const std::string& path);

// Defaults, then `file`, then `command_line` (a key given on the command
// line replaces the file's values for that key). Checks every value.
Result<MonitorOptions> ResolveOptions(const OptionLayer& file, const OptionLayer& command_line);

// "127.0.0.1:9464", "[::1]:9464", "0.0.0.0:0", ":9464" (all addresses).
struct ListenAddress {
  std::string host;
  int port = 0;
};
Result<ListenAddress> ParseListenAddress(std::string_view text);
// 127.0.0.0/8, ::1 and localhost.
bool IsLoopbackHost(std::string_view host);

}  // namespace gpunoise::monitor
