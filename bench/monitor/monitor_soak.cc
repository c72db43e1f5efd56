// Soak test of `gpunoise monitor` (not run in CI): the monitor runs for a
// long time (10 minutes by default) under a UDP flood between two network
// namespaces, and every interval this reports its resident memory and CPU
// time as the kernel counts them, so that growth shows. A summary at the
// end compares the first and the last minute and fits a line through the
// resident memory. Rows are --report-every seconds apart (CPU time comes in
// 10 ms ticks, so shorter rows are coarse).
//
//   sudo build/bench/monitor/monitor_soak                    # 10 min under the flood
//   sudo build/bench/monitor/monitor_soak --duration 120 --flight-recorder
//   sudo build/bench/monitor/monitor_soak --no-flood          # an idle node
//   sudo build/bench/monitor/monitor_soak --bpf-stats         # also the kernel side (kernel.bpf_stats_enabled)
#include <boost/program_options.hpp>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <thread>

#include "integration/support/metrics_scrape.h"
#include "integration/support/net_load.h"
#include "integration/support/veth_pair.h"
#include "integration/support/workloads.h"
#include "monitor/proc_stats.h"

namespace po = boost::program_options;
using namespace std::chrono_literals;
using namespace gpunoise::testing;

namespace {

struct Row {
  double t = 0;          // seconds since start
  double rss_mib = 0;
  double cpu_pct = 0;    // monitor process, % of one CPU over the interval
  double bpf_pct = 0;    // kernel time in its programs, % of one CPU
  double rx_pps = 0;
  double net_rx_share = 0;  // busiest CPU's NET_RX softirq share
};

double Slope(const std::vector<Row>& rows, size_t from) {
  // Least squares of rss over t, MiB per minute.
  double n = 0, st = 0, sr = 0, stt = 0, str = 0;
  for (size_t i = from; i < rows.size(); ++i) {
    n += 1;
    st += rows[i].t;
    sr += rows[i].rss_mib;
    stt += rows[i].t * rows[i].t;
    str += rows[i].t * rows[i].rss_mib;
  }
  double den = n * stt - st * st;
  return den > 0 ? (n * str - st * sr) / den * 60 : 0;
}

std::string SetBpfStats(const std::string& value) {
  std::string old;
  std::ifstream("/proc/sys/kernel/bpf_stats_enabled") >> old;
  std::ofstream("/proc/sys/kernel/bpf_stats_enabled") << value;
  return old;
}

}  // namespace

int main(int argc, char** argv) {
  int duration = 600, interval_ms = 1000, report_every = 10;
  bool no_flood = false, flight = false, bpf_stats = false;
  std::string log_path, keep_dir;
  std::vector<std::string> extra;
  po::options_description opts("monitor_soak");
  opts.add_options()("help,h", "help")("duration", po::value(&duration), "seconds (default 600)")(
      "interval-ms", po::value(&interval_ms), "monitor interval (default 1000)")(
      "report-every", po::value(&report_every), "seconds per reported row (default 10)")(
      "no-flood", po::bool_switch(&no_flood), "an idle node")(
      "flight-recorder", po::bool_switch(&flight), "with --flight-recorder 20s")(
      "bpf-stats", po::bool_switch(&bpf_stats), "turn kernel.bpf_stats_enabled on to count program time")(
      "dump-dir", po::value(&keep_dir), "with --flight-recorder: keep the dumps here (default: a temporary directory)")(
      "monitor-log", po::value(&log_path), "write the monitor's log (stderr) here at the end")(
      "monitor-arg", po::value(&extra)->multitoken(), "extra monitor arguments, e.g. --monitor-arg=--focus=comm:x");
  po::variables_map vm;
  po::store(po::parse_command_line(argc, argv, opts), vm);
  po::notify(vm);
  if (vm.count("help")) {
    std::cout << opts;
    return 0;
  }
  if (geteuid() != 0) {
    std::fprintf(stderr, "monitor_soak: needs root\n");
    return 1;
  }
  std::unique_ptr<VethPair> pair;
  if (!no_flood) {
    std::string error;
    pair = VethPair::Create({}, &error);
    if (!pair) {
      std::fprintf(stderr, "monitor_soak: failed to create the veth pair: %s\n", error.c_str());
      return 1;
    }
  }
  std::string old_stats = bpf_stats ? SetBpfStats("1") : "";
  std::string dump_dir = keep_dir.empty() ? MakeTempDir() : keep_dir;
  std::vector<std::string> args = {GpunoiseBinary(), "monitor", "--listen", "127.0.0.1:0", "--interval",
                                   std::to_string(interval_ms) + "ms"};
  if (flight) {
    for (const char* a : {"--flight-recorder", "20s", "--dump-dir"}) args.push_back(a);
    args.push_back(dump_dir);
  }
  for (const auto& a : extra) args.push_back(a);
  ChildProcess monitor(args);
  if (!monitor.WaitForStderr("listening", 60s)) {
    std::fprintf(stderr, "monitor_soak: the monitor did not start:\n%s\n", monitor.stderr_text().c_str());
    return 1;
  }
  std::string address = ListeningAddress(monitor.stderr_text()).value_or("");
  std::printf("# gpunoise monitor soak: %d s, interval %d ms, %s%s\n", duration, interval_ms,
              no_flood ? "idle node" : "UDP flood across veth (sender CPU 0, receiver CPU 1)",
              flight ? ", flight recorder 20 s" : "");

  std::atomic<bool> stop{false};
  std::thread flood_thread;
  if (pair) {
    flood_thread = std::thread([&] {
      // One long flood bounded by the soak's duration (plus a margin).
      UdpFloodOptions o;
      o.duration = std::chrono::seconds(duration + 5);
      RunUdpFlood(*pair, o);
    });
  }

  std::vector<Row> rows;
  auto start = std::chrono::steady_clock::now();
  double cpu0 = gpunoise::bench::CpuSeconds(monitor.pid());
  Series prev = ParseExposition(HttpGet(address, "/metrics").body);
  auto t_prev = start;
  std::printf("%8s %9s %8s %8s %12s %12s\n", "t_s", "rss_MiB", "cpu_%", "bpf_%", "napi_pkt/s", "max_net_rx_%");
  for (int i = 1; std::chrono::steady_clock::now() - start < std::chrono::seconds(duration); ++i) {
    std::this_thread::sleep_until(start + std::chrono::seconds(static_cast<int64_t>(i) * report_every));
    auto now = std::chrono::steady_clock::now();
    double dt = std::chrono::duration<double>(now - t_prev).count();
    double cpu = gpunoise::bench::CpuSeconds(monitor.pid());
    Series cur = ParseExposition(HttpGet(address, "/metrics").body);
    // Counter rates over the intervals the monitor published in between
    // (a scrape sees the last completed interval).
    double published = (SumOf(cur, "gpunoise_monitor_intervals_total") - SumOf(prev, "gpunoise_monitor_intervals_total")) *
                       interval_ms / 1000.0;
    double rate_dt = published > 0 ? published : dt;
    Row r;
    r.t = std::chrono::duration<double>(now - start).count();
    r.rss_mib = static_cast<double>(gpunoise::bench::ResidentBytes(monitor.pid())) / (1 << 20);
    r.cpu_pct = (cpu - cpu0) / dt * 100;
    r.bpf_pct = (SumOf(cur, "gpunoise_bpf_program_seconds_total") - SumOf(prev, "gpunoise_bpf_program_seconds_total")) / rate_dt * 100;
    // The flood's receiver lives in its own network namespace: its packets
    // show as NAPI work (veth polls once per packet in GRO mode).
    r.rx_pps = (SumOf(cur, "gpunoise_napi_packets_total") - SumOf(prev, "gpunoise_napi_packets_total")) / rate_dt;
    for (const char* c : {"0", "1"}) {
      double share = (SumOf(cur, "gpunoise_softirq_seconds_total", {{"cpu", c}, {"vector", "net_rx"}}) -
                      SumOf(prev, "gpunoise_softirq_seconds_total", {{"cpu", c}, {"vector", "net_rx"}})) / rate_dt * 100;
      r.net_rx_share = std::max(r.net_rx_share, share);
    }
    rows.push_back(r);
    std::printf("%8.1f %9.2f %8.2f %8.2f %12.0f %12.1f\n", r.t, r.rss_mib, r.cpu_pct, r.bpf_pct, r.rx_pps, r.net_rx_share);
    std::fflush(stdout);
    prev = std::move(cur);
    cpu0 = cpu;
    t_prev = now;
  }
  stop = true;
  monitor.Signal(SIGTERM);
  int rc = monitor.Wait(30s);
  if (flood_thread.joinable()) {
    // The flood ends on its own (bounded); deleting the pair would cut it.
    flood_thread.join();
  }
  if (bpf_stats) SetBpfStats(old_stats.empty() ? "0" : old_stats);
  if (!log_path.empty()) std::ofstream(log_path) << monitor.stderr_text();
  std::error_code ec;
  if (flight) {
    size_t dumps = 0;
    for (const auto& e : std::filesystem::directory_iterator(dump_dir, ec)) {
      (void)e;
      ++dumps;
    }
    std::printf("# flight-recorder dumps written: %zu\n", dumps);
  }
  if (keep_dir.empty()) std::filesystem::remove_all(dump_dir, ec);

  // Summary: first and last minute (or fifth of the run), and the slope
  // after the first minute (start-up allocations settle by then).
  size_t n = rows.size();
  size_t window = std::max<size_t>(1, std::min<size_t>(n / 5, 60 / std::max(1, report_every)));
  auto mean = [&](size_t from, size_t to, double Row::*field) {
    double s = 0;
    for (size_t i = from; i < to; ++i) s += rows[i].*field;
    return to > from ? s / static_cast<double>(to - from) : 0;
  };
  if (n >= 2) {
    std::printf("\n# summary over %zu intervals (monitor exit status %d)\n", n, rc);
    std::printf("# rss MiB: first window mean %.2f, last window mean %.2f, max %.2f; slope after the first window %+.3f MiB/min\n",
                mean(0, window, &Row::rss_mib), mean(n - window, n, &Row::rss_mib),
                std::max_element(rows.begin(), rows.end(), [](auto& a, auto& b) { return a.rss_mib < b.rss_mib; })->rss_mib,
                Slope(rows, std::min(window, n - 1)));
    std::printf("# monitor cpu %% of one CPU: first window %.2f, last window %.2f, whole run %.2f\n",
                mean(0, window, &Row::cpu_pct), mean(n - window, n, &Row::cpu_pct), mean(0, n, &Row::cpu_pct));
    if (bpf_stats) std::printf("# eBPF program time %% of one CPU (whole run): %.2f\n", mean(0, n, &Row::bpf_pct));
    if (!no_flood) std::printf("# flood: %.0f packets/s received on average; busiest CPU's NET_RX share %.1f%%\n",
                               mean(0, n, &Row::rx_pps), mean(0, n, &Row::net_rx_share));
  }
  return rc == 0 ? 0 : 1;
}
