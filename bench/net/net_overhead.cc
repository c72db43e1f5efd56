// What `gpunoise record` costs a network flood: the flood's packet rate
// with the recorder running divided by its rate without, measured in pairs
// in the same run (the order alternates from pair to pair so that drift
// cancels), for each set of event groups. A "control" row runs no recorder
// in either half and shows the noise.
//
//   sudo build/bench/net/net_overhead                      # UDP 18-byte flood, 3 pairs x 3 s
//   sudo build/bench/net/net_overhead --mode tcp           # TCP stream
//   sudo build/bench/net/net_overhead --events net --events net-packets
#include <boost/program_options.hpp>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <regex>
#include <string>
#include <vector>

#include "integration/support/net_load.h"
#include "integration/support/veth_pair.h"
#include "integration/support/workloads.h"

namespace po = boost::program_options;
using namespace std::chrono_literals;
using gpunoise::testing::ChildProcess;
using gpunoise::testing::VethPair;

namespace {

struct Half {
  double rate = 0;          // packets/s through the receiving device (tcp: Gbit/s)
  double tracer_cpu = 0;    // recorder CPU time / wall time
  uint64_t lost = 0;        // lost events the recorder reported
  bool ok = true;
};

struct Options {
  std::string mode = "udp";
  int seconds = 3;
  int sender_cpu = 0, receiver_cpu = 1, napi_cpu = -1;
};

double FloodRate(const VethPair& pair, const Options& o) {
  if (o.mode == "tcp") {
    gpunoise::testing::TcpStreamOptions t;
    t.duration = std::chrono::seconds(o.seconds);
    t.sender_cpu = o.sender_cpu;
    t.receiver_cpu = o.receiver_cpu;
    return gpunoise::testing::RunTcpStream(pair, t).gbit_per_second();
  }
  auto before = pair.LinkStatistics(VethPair::Side::kReceiver);
  gpunoise::testing::UdpFloodOptions u;
  u.duration = std::chrono::seconds(o.seconds);
  u.sender_cpu = o.sender_cpu;
  u.receiver_cpu = o.receiver_cpu;
  auto r = gpunoise::testing::RunUdpFlood(pair, u);
  auto after = pair.LinkStatistics(VethPair::Side::kReceiver);
  return r.seconds > 0 ? static_cast<double>(after["rx_packets"] - before["rx_packets"]) / r.seconds : 0;
}

// CPU seconds (user + system) a process has used, from /proc/PID/stat.
double CpuSeconds(pid_t pid) {
  FILE* f = std::fopen(("/proc/" + std::to_string(pid) + "/stat").c_str(), "r");
  if (!f) return 0;
  char buf[2048] = {};
  size_t n = std::fread(buf, 1, sizeof(buf) - 1, f);
  std::fclose(f);
  std::string s(buf, n);
  auto close = s.rfind(')');
  if (close == std::string::npos) return 0;
  // Fields after "(comm) ": state is field 3; utime, stime are 14 and 15.
  std::vector<std::string> fields;
  size_t pos = close + 2;
  while (pos < s.size()) {
    size_t sp = s.find(' ', pos);
    fields.push_back(s.substr(pos, sp - pos));
    if (sp == std::string::npos) break;
    pos = sp + 1;
  }
  if (fields.size() < 13) return 0;
  double ticks = std::stod(fields[11]) + std::stod(fields[12]);
  return ticks / static_cast<double>(sysconf(_SC_CLK_TCK));
}

Half Measure(const VethPair& pair, const Options& o, const std::string& events) {
  Half h;
  if (events.empty()) {
    h.rate = FloodRate(pair, o);
    return h;
  }
  std::string out = "/tmp/gn-bench-net-" + std::to_string(getpid()) + ".pftrace";
  ChildProcess rec({gpunoise::testing::GpunoiseBinary(), "record", "-d", "600", "-e", events, "-o", out});
  if (!rec.WaitForStderr("recording", 30s)) {
    std::fprintf(stderr, "recorder did not start: %s\n", rec.stderr_text().c_str());
    h.ok = false;
    return h;
  }
  double cpu0 = CpuSeconds(rec.pid());
  auto t0 = std::chrono::steady_clock::now();
  h.rate = FloodRate(pair, o);
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  h.tracer_cpu = (CpuSeconds(rec.pid()) - cpu0) / wall;
  rec.Signal(SIGINT);
  h.ok = rec.Wait(120s) == 0;
  std::smatch m;
  std::string summary = rec.stdout_text();
  static const std::regex kLost("; (\\d+) lost events");
  if (std::regex_search(summary, m, kLost)) h.lost = std::stoull(m[1]);
  ::unlink(out.c_str());
  return h;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  int pairs = 3;
  std::vector<std::string> configs;
  po::options_description desc("net_overhead options");
  desc.add_options()("help,h", "show this help")
      ("mode", po::value(&o.mode)->default_value("udp"), "udp (18-byte datagrams) or tcp")
      ("pairs", po::value(&pairs)->default_value(3), "traced/untraced pairs per configuration")
      ("seconds", po::value(&o.seconds)->default_value(3), "seconds per half")
      ("events", po::value(&configs)->multitoken(),
       "event groups for one configuration (repeatable; default: the record default, net, net-packets)")
      ("sender-cpu", po::value(&o.sender_cpu)->default_value(0), "CPU of the sending thread")
      ("receiver-cpu", po::value(&o.receiver_cpu)->default_value(1), "CPU of the receiving thread")
      ("napi-cpu", po::value(&o.napi_cpu)->default_value(-1),
       "threaded NAPI pinned here (-1: NAPI in softirq on the sending CPU)");
  po::variables_map vm;
  try {
    po::store(po::parse_command_line(argc, argv, desc), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    std::fprintf(stderr, "usage: net_overhead: %s\n", e.what());
    return 2;
  }
  if (vm.count("help")) {
    std::cout << desc;
    return 0;
  }
  if (o.mode != "udp" && o.mode != "tcp") {
    std::fprintf(stderr, "usage: net_overhead: --mode must be udp or tcp\n");
    return 2;
  }
  if (geteuid() != 0) {
    std::fprintf(stderr, "net_overhead: needs root (network namespaces, eBPF)\n");
    return 1;
  }
  if (configs.empty()) configs = {"sched,irq,softirq,net", "net", "net-packets"};
  configs.insert(configs.begin(), "");  // control

  gpunoise::testing::VethPairOptions vo;
  vo.napi_cpu = o.napi_cpu;
  std::string error;
  auto pair = VethPair::Create(vo, &error);
  if (!pair) {
    std::fprintf(stderr, "net_overhead: %s\n", error.c_str());
    return 1;
  }
  const char* unit = o.mode == "tcp" ? "Gbit/s" : "packets/s";
  std::printf("%s flood, %d pairs x %d s, sender CPU %d, receiver CPU %d, NAPI %s\n",
              o.mode.c_str(), pairs, o.seconds, o.sender_cpu, o.receiver_cpu,
              o.napi_cpu < 0 ? "in softirq on the sending CPU" : ("thread on CPU " + std::to_string(o.napi_cpu)).c_str());
  std::printf("| events | traced/untraced median [min-max] | untraced %s | traced %s | recorder CPU | lost |\n",
              unit, unit);
  std::printf("|---|---|---|---|---|---|\n");
  for (const std::string& events : configs) {
    std::vector<double> ratios, base, traced, cpu;
    uint64_t lost = 0;
    for (int i = 0; i < pairs; ++i) {
      // ABBA: alternate which half goes first.
      Half a, b;
      if (i % 2 == 0) {
        a = Measure(*pair, o, "");
        b = Measure(*pair, o, events);
      } else {
        b = Measure(*pair, o, events);
        a = Measure(*pair, o, "");
      }
      if (!a.ok || !b.ok || a.rate <= 0) {
        std::fprintf(stderr, "net_overhead: a run failed\n");
        return 1;
      }
      ratios.push_back(b.rate / a.rate);
      base.push_back(a.rate);
      traced.push_back(b.rate);
      cpu.push_back(b.tracer_cpu);
      lost += b.lost;
    }
    auto median = [](std::vector<double> v) {
      std::sort(v.begin(), v.end());
      return v[v.size() / 2];
    };
    std::printf("| %s | %.3f [%.3f-%.3f] | %.4g | %.4g | %s | %s |\n",
                events.empty() ? "control (none)" : events.c_str(), median(ratios),
                *std::min_element(ratios.begin(), ratios.end()),
                *std::max_element(ratios.begin(), ratios.end()), median(base), median(traced),
                events.empty() ? "-" : (std::to_string(static_cast<int>(median(cpu) * 100 + 0.5)) + "%").c_str(),
                events.empty() ? "-" : std::to_string(lost).c_str());
    std::fflush(stdout);
  }
  return 0;
}
