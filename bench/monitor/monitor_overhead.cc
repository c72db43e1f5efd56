// What `gpunoise monitor` costs: (1) on an idle node, the monitor's CPU time
// and the kernel time in its eBPF programs; (2) under a UDP flood between two
// network namespaces, the flood's packet rate with the monitor running
// divided by its rate without, in pairs in the same run (the order
// alternates so that drift cancels), with the same CPU figures.
//
// eBPF program time is counted only with --bpf-stats (kernel.bpf_stats_enabled,
// which itself adds ~20-40 ns per program run; the throughput ratio is
// measured with it off unless asked).
//
//   sudo build/bench/monitor/monitor_overhead                       # 3 pairs x 3 s, 20 s idle
//   sudo build/bench/monitor/monitor_overhead --bpf-stats --monitor-arg=--sample-hz=0
#include <boost/program_options.hpp>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
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

struct Options {
  int pairs = 3;
  int seconds = 3;
  int idle_seconds = 20;
  bool bpf_stats = false;
  std::vector<std::string> monitor_args;
};

class RunningMonitor {
 public:
  explicit RunningMonitor(const Options& o) {
    std::vector<std::string> args = {GpunoiseBinary(), "monitor", "--listen", "127.0.0.1:0"};
    for (const auto& a : o.monitor_args) args.push_back(a);
    child_ = std::make_unique<ChildProcess>(args);
    ok_ = child_->WaitForStderr("listening", 60s);
    if (ok_) address_ = ListeningAddress(child_->stderr_text()).value_or("");
    if (!ok_) std::fprintf(stderr, "monitor did not start:\n%s\n", child_->stderr_text().c_str());
  }
  ~RunningMonitor() {
    child_->Signal(SIGTERM);
    child_->Wait(30s);
  }
  bool ok() const { return ok_; }
  double cpu() const { return gpunoise::bench::CpuSeconds(child_->pid()); }
  double bpf() const { return SumOf(ParseExposition(HttpGet(address_, "/metrics").body), "gpunoise_bpf_program_seconds_total"); }

 private:
  std::unique_ptr<ChildProcess> child_;
  std::string address_;
  bool ok_ = false;
};

double FloodRate(const VethPair& pair, int seconds) {
  auto before = pair.LinkStatistics(VethPair::Side::kReceiver);
  UdpFloodOptions u;
  u.duration = std::chrono::seconds(seconds);
  auto r = RunUdpFlood(pair, u);
  auto after = pair.LinkStatistics(VethPair::Side::kReceiver);
  return r.seconds > 0 ? static_cast<double>(after["rx_packets"] - before["rx_packets"]) / r.seconds : 0;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  po::options_description opts("monitor_overhead");
  opts.add_options()("help,h", "help")("pairs", po::value(&o.pairs), "flood pairs (default 3)")(
      "seconds", po::value(&o.seconds), "flood seconds per half (default 3)")(
      "idle-seconds", po::value(&o.idle_seconds), "idle measurement (default 20)")(
      "bpf-stats", po::bool_switch(&o.bpf_stats), "count eBPF program time (kernel.bpf_stats_enabled)")(
      "monitor-arg", po::value(&o.monitor_args)->multitoken(), "extra monitor arguments, e.g. --monitor-arg=--sample-hz=0");
  po::variables_map vm;
  po::store(po::parse_command_line(argc, argv, opts), vm);
  po::notify(vm);
  if (vm.count("help")) {
    std::cout << opts;
    return 0;
  }
  if (geteuid() != 0) {
    std::fprintf(stderr, "monitor_overhead: needs root\n");
    return 1;
  }
  std::string old_stats;
  std::ifstream("/proc/sys/kernel/bpf_stats_enabled") >> old_stats;
  std::ofstream("/proc/sys/kernel/bpf_stats_enabled") << (o.bpf_stats ? "1" : "0");
  std::string extra;
  for (const auto& a : o.monitor_args) extra += " " + a;
  std::printf("# gpunoise monitor overhead%s (bpf stats %s)\n", extra.c_str(), o.bpf_stats ? "on" : "off");

  // (1) idle node
  {
    RunningMonitor m(o);
    if (!m.ok()) return 1;
    std::this_thread::sleep_for(2s);
    double c0 = m.cpu(), b0 = m.bpf();
    auto t0 = std::chrono::steady_clock::now();
    std::this_thread::sleep_for(std::chrono::seconds(o.idle_seconds));
    double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    double cpu = (m.cpu() - c0) / dt * 100, bpf = (m.bpf() - b0) / dt * 100;
    std::printf("idle %d s: monitor process %.3f%% of one CPU", o.idle_seconds, cpu);
    if (o.bpf_stats) std::printf(", eBPF programs %.3f%%, total %.3f%%", bpf, cpu + bpf);
    std::printf("\n");
  }

  // (2) flood pairs
  std::string error;
  auto pair = VethPair::Create({}, &error);
  if (!pair) {
    std::fprintf(stderr, "monitor_overhead: failed to create the veth pair: %s\n", error.c_str());
    return 1;
  }
  std::vector<double> ratios, cpus, bpfs;
  for (int i = 0; i < o.pairs; ++i) {
    double with = 0, without = 0;
    auto traced = [&] {
      RunningMonitor m(o);
      if (!m.ok()) return;
      std::this_thread::sleep_for(1s);
      double c0 = m.cpu(), b0 = m.bpf();
      auto t0 = std::chrono::steady_clock::now();
      with = FloodRate(*pair, o.seconds);
      std::this_thread::sleep_for(1100ms);  // one more interval, so the programs' time is published
      double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      cpus.push_back((m.cpu() - c0) / dt * 100);
      bpfs.push_back((m.bpf() - b0) / dt * 100);
    };
    if (i % 2 == 0) {
      without = FloodRate(*pair, o.seconds);
      traced();
    } else {
      traced();
      without = FloodRate(*pair, o.seconds);
    }
    if (without > 0 && with > 0) ratios.push_back(with / without);
    std::printf("pair %d: %.0f pkt/s with the monitor, %.0f without (%.3f)\n", i + 1, with, without,
                without > 0 ? with / without : 0);
  }
  std::printf("flood: throughput ratio median %.3f [%.3f-%.3f]; monitor process %.2f%% of one CPU",
              Median(ratios), ratios.empty() ? 0 : *std::min_element(ratios.begin(), ratios.end()),
              ratios.empty() ? 0 : *std::max_element(ratios.begin(), ratios.end()), Median(cpus));
  if (o.bpf_stats) std::printf(", eBPF programs %.2f%% (both CPUs together)", Median(bpfs));
  std::printf("\n");
  std::ofstream("/proc/sys/kernel/bpf_stats_enabled") << (old_stats.empty() ? "0" : old_stats);
  return 0;
}
