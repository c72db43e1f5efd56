// gpunoise-netload: workload W2 of bench/run.py. A bounded network load
// across a veth pair between two network namespaces it creates (and always
// removes): a small-datagram UDP flood or a TCP stream, sender pinned to one
// CPU and receiver to another (MEASURED.md: client on CPU0, server on CPU1).
//
//   sudo build/bench/gpunoise-netload --udp --seconds 5
//   sudo build/bench/gpunoise-netload --tcp --seconds 5
//
// It prints one machine-readable line on stdout, for example
//   gpunoise-netload: mode=udp throughput=253012.3 unit=packets/s work=1265061
//   work_unit=packets seconds=5.000 sent=1300224 busy_cpu_s=9.950
// (one line). `throughput` is what the receiver got: datagrams it read per
// second (udp) or Gbit/s it read (tcp). `work` is the amount behind it
// (datagrams, bytes), so that a caller can compare CPU per unit of work
// between runs of equal duration. `busy_cpu_s` is the system-wide non-idle
// CPU time (user+nice+system+irq+softirq from /proc/stat, no steal) over the
// load itself, excluding namespace setup and teardown.
#include <boost/program_options.hpp>
#include <dirent.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "integration/support/net_load.h"
#include "integration/support/veth_pair.h"

namespace po = boost::program_options;
using gpunoise::testing::VethPair;

namespace {

constexpr int kMaxSeconds = 600;

// System-wide non-idle CPU seconds so far. Steal is left out: it is time the
// hypervisor gave to someone else, not work this machine did.
double BusyCpuSeconds() {
  std::ifstream stat("/proc/stat");
  std::string label;
  uint64_t user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0;
  stat >> label >> user >> nice >> system >> idle >> iowait >> irq >> softirq;
  return static_cast<double>(user + nice + system + irq + softirq) /
         static_cast<double>(::sysconf(_SC_CLK_TCK));
}

// Removes this process's namespaces ("gnt-<pid>-..."), whatever state the
// setup reached. Deleting a namespace deletes its devices; threads still in
// it keep it alive only until the process exits.
void RemoveOwnNamespaces() {
  const std::string prefix = "gnt-" + std::to_string(::getpid()) + "-";
  DIR* d = ::opendir("/run/netns");
  if (!d) return;
  std::vector<std::string> mine;
  while (dirent* e = ::readdir(d))
    if (std::strncmp(e->d_name, prefix.c_str(), prefix.size()) == 0) mine.emplace_back(e->d_name);
  ::closedir(d);
  std::string ip = "ip";
  for (const char* p : {"/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"})
    if (::access(p, X_OK) == 0) {
      ip = p;
      break;
    }
  for (const auto& name : mine) gpunoise::testing::RunCommand({ip, "netns", "del", name});
}

// SIGINT/SIGTERM/SIGHUP/SIGQUIT are blocked in every thread and taken here,
// so an interrupted load still removes its namespaces. (SIGKILL cannot be
// caught: the next VethPair::Create removes namespaces of dead processes.)
void StartSignalWatcher(const sigset_t& signals) {
  std::thread([signals] {
    int sig = 0;
    if (::sigwait(&signals, &sig) != 0) return;
    RemoveOwnNamespaces();
    std::fprintf(stderr, "gpunoise-netload: stopped by signal %d; namespaces removed\n", sig);
    std::_Exit(128 + sig);
  }).detach();
}

struct Options {
  std::string mode;
  int seconds = 5;
  int sender_cpu = 0;
  int receiver_cpu = 1;
  size_t payload_bytes = 64;
  std::string napi = "gro";
};

struct Measurement {
  double throughput = 0;
  const char* unit = "";
  uint64_t work = 0;
  const char* work_unit = "";
  uint64_t sent = 0;
  double seconds = 0;
  double busy_cpu_s = 0;
};

std::optional<Measurement> Run(const VethPair& pair, const Options& o, std::string* error) {
  Measurement m;
  double busy_start = 0;
  if (o.mode == "udp") {
    gpunoise::testing::UdpFloodOptions u;
    u.duration = std::chrono::seconds(o.seconds);
    u.sender_cpu = o.sender_cpu;
    u.receiver_cpu = o.receiver_cpu;
    u.payload_bytes = o.payload_bytes;
    u.on_ready = [&] { busy_start = BusyCpuSeconds(); };
    auto r = gpunoise::testing::RunUdpFlood(pair, u);
    m.busy_cpu_s = BusyCpuSeconds() - busy_start;
    if (r.seconds <= 0 || r.received == 0) {
      *error = "failed to run the UDP flood: no datagram arrived";
      return std::nullopt;
    }
    m.unit = "packets/s";
    m.work_unit = "packets";
    m.work = r.received;
    m.sent = r.sent;
    m.seconds = r.seconds;
    m.throughput = static_cast<double>(r.received) / r.seconds;
    return m;
  }
  gpunoise::testing::TcpStreamOptions t;
  t.duration = std::chrono::seconds(o.seconds);
  t.sender_cpu = o.sender_cpu;
  t.receiver_cpu = o.receiver_cpu;
  busy_start = BusyCpuSeconds();
  auto r = gpunoise::testing::RunTcpStream(pair, t);
  m.busy_cpu_s = BusyCpuSeconds() - busy_start;
  if (!r.connected || r.bytes_received == 0) {
    *error = "failed to run the TCP stream: the connection carried no data";
    return std::nullopt;
  }
  m.unit = "Gbit/s";
  m.work_unit = "bytes";
  m.work = r.bytes_received;
  m.sent = r.bytes_sent;
  m.seconds = r.seconds;
  m.throughput = r.gbit_per_second();
  return m;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  bool udp = false, tcp = false;
  po::options_description desc(
      "gpunoise-netload: a bounded UDP flood or TCP stream across veth between two network namespaces\n"
      "usage: gpunoise-netload (--udp | --tcp) [--seconds N] [options]\noptions");
  desc.add_options()("help,h", "show this help")
      ("udp", po::bool_switch(&udp), "small-datagram UDP flood; throughput in datagrams received per second")
      ("tcp", po::bool_switch(&tcp), "one TCP stream; throughput in Gbit/s received")
      ("seconds", po::value(&o.seconds)->default_value(5), "how long the load runs (1-600)")
      ("payload-bytes", po::value(&o.payload_bytes)->default_value(64), "UDP payload per datagram (1-1472)")
      ("sender-cpu", po::value(&o.sender_cpu)->default_value(0), "CPU of the sending thread (-1: not pinned)")
      ("receiver-cpu", po::value(&o.receiver_cpu)->default_value(1), "CPU of the receiving thread (-1: not pinned)")
      ("napi", po::value(&o.napi)->default_value("gro"),
       "receiver NAPI: gro (GRO on, NAPI in softirq on the sending CPU), xdp (an XDP_PASS program), "
       "none (backlog softirq)");
  po::variables_map vm;
  try {
    po::store(po::parse_command_line(argc, argv, desc), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    std::fprintf(stderr, "usage: gpunoise-netload: %s\n", e.what());
    return 2;
  }
  if (vm.count("help")) {
    std::cout << desc;
    return 0;
  }
  if (udp == tcp) {
    std::fprintf(stderr, "usage: gpunoise-netload: give exactly one of --udp and --tcp\n");
    return 2;
  }
  o.mode = udp ? "udp" : "tcp";
  if (o.seconds < 1 || o.seconds > kMaxSeconds) {
    std::fprintf(stderr, "usage: gpunoise-netload: --seconds must be 1 to %d\n", kMaxSeconds);
    return 2;
  }
  if (o.payload_bytes < 1 || o.payload_bytes > 1472) {
    std::fprintf(stderr, "usage: gpunoise-netload: --payload-bytes must be 1 to 1472\n");
    return 2;
  }
  long ncpus = ::sysconf(_SC_NPROCESSORS_ONLN);
  for (int cpu : {o.sender_cpu, o.receiver_cpu}) {
    if (cpu < -1 || cpu >= ncpus) {
      std::fprintf(stderr, "usage: gpunoise-netload: CPU %d is not online (0-%ld)\n", cpu, ncpus - 1);
      return 2;
    }
  }
  gpunoise::testing::VethPairOptions vo;
  if (o.napi == "gro") vo.napi = gpunoise::testing::VethNapiMode::kGro;
  else if (o.napi == "xdp") vo.napi = gpunoise::testing::VethNapiMode::kXdp;
  else if (o.napi == "none") vo.napi = gpunoise::testing::VethNapiMode::kNone;
  else {
    std::fprintf(stderr, "usage: gpunoise-netload: --napi must be gro, xdp or none\n");
    return 2;
  }
  if (::geteuid() != 0) {
    std::fprintf(stderr, "gpunoise-netload: needs root (it creates network namespaces)\n");
    return 1;
  }

  // Before any thread exists, so that every thread inherits the mask.
  sigset_t signals;
  sigemptyset(&signals);
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) sigaddset(&signals, sig);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  StartSignalWatcher(signals);

  std::string error;
  std::optional<Measurement> m;
  {
    auto pair = VethPair::Create(vo, &error);
    if (!pair) {
      RemoveOwnNamespaces();
      std::fprintf(stderr, "gpunoise-netload: failed to create the veth pair: %s\n", error.c_str());
      return 1;
    }
    m = Run(*pair, o, &error);
  }  // the pair's destructor removes both namespaces
  RemoveOwnNamespaces();  // and anything a failed step left behind
  if (!m) {
    std::fprintf(stderr, "gpunoise-netload: %s\n", error.c_str());
    return 1;
  }
  std::printf(
      "gpunoise-netload: mode=%s throughput=%.6g unit=%s work=%llu work_unit=%s seconds=%.3f "
      "sent=%llu busy_cpu_s=%.2f sender_cpu=%d receiver_cpu=%d napi=%s\n",
      o.mode.c_str(), m->throughput, m->unit, static_cast<unsigned long long>(m->work), m->work_unit,
      m->seconds, static_cast<unsigned long long>(m->sent), m->busy_cpu_s, o.sender_cpu,
      o.receiver_cpu, o.napi.c_str());
  return 0;
}
