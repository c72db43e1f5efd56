// gpunoise-floor: bench/run.py's floor tracer. Loads floor.bpf.c, attaches
// its raw_tp or classic program to every tracepoint named on the command
// line, and counts until SIGINT or SIGTERM; then prints what it counted.
//
//   gpunoise-floor --attach raw sched:sched_switch irq:softirq_entry ...
//   gpunoise-floor --attach classic --store sched:sched_switch ...
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <fmt/core.h>
#include <unistd.h>

#include <boost/program_options.hpp>
#include <csignal>
#include <iostream>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "floor.skel.h"

namespace {

volatile std::sig_atomic_t g_stop = 0;
void OnSignal(int) { g_stop = 1; }

struct SkelDeleter {
  void operator()(floor_bpf* skel) const { floor_bpf__destroy(skel); }
};
struct LinkDeleter {
  void operator()(bpf_link* link) const { bpf_link__destroy(link); }
};
using LinkPtr = std::unique_ptr<bpf_link, LinkDeleter>;

int Fail(const std::string& line) {
  fmt::print(stderr, "gpunoise-floor: {}\n", line);
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  namespace po = boost::program_options;
  std::string attach = "raw";
  bool store = false;
  std::vector<std::string> events;
  po::options_description opts("gpunoise-floor [--attach raw|classic] [--store] CATEGORY:EVENT...");
  opts.add_options()("help,h", "this help")(
      "attach", po::value(&attach)->default_value("raw"), "raw (the tp_btf entry path) or classic")(
      "store", po::bool_switch(&store), "also read the clock and store a record-sized value")(
      "event", po::value(&events)->multitoken(), "tracepoints (positional)");
  po::positional_options_description pos;
  pos.add("event", -1);
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(argc, argv).options(opts).positional(pos).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    return Fail(e.what());
  }
  if (vm.count("help")) {
    std::cout << opts;
    return 0;
  }
  if (attach != "raw" && attach != "classic") return Fail("--attach is raw or classic, not " + attach);
  if (events.empty()) return Fail("name at least one tracepoint (CATEGORY:EVENT)");

  std::unique_ptr<floor_bpf, SkelDeleter> skel(floor_bpf__open());
  if (!skel) return Fail(fmt::format("failed to open the floor program: {}", std::strerror(errno)));
  skel->rodata->floor_store = store;
  bool raw = attach == "raw";
  bpf_program__set_autoload(raw ? skel->progs.floor_classic : skel->progs.floor_raw, false);
  if (int err = floor_bpf__load(skel.get()); err != 0)
    return Fail(fmt::format("failed to load the floor program: {}", std::strerror(-err)));

  std::vector<LinkPtr> links;
  for (const std::string& event : events) {
    auto colon = event.find(':');
    if (colon == std::string::npos) return Fail("not CATEGORY:EVENT: " + event);
    std::string category = event.substr(0, colon), name = event.substr(colon + 1);
    bpf_link* link = raw ? bpf_program__attach_raw_tracepoint(skel->progs.floor_raw, name.c_str())
                         : bpf_program__attach_tracepoint(skel->progs.floor_classic, category.c_str(),
                                                          name.c_str());
    if (!link) return Fail(fmt::format("failed to attach to {}: {}", event, std::strerror(errno)));
    links.emplace_back(link);
  }

  std::signal(SIGINT, OnSignal);
  std::signal(SIGTERM, OnSignal);
  // bench/harness/tracers.py waits for this line before it starts the workload.
  fmt::print("floor: attached {} {} programs ({})\n", links.size(), attach, store ? "store" : "count");
  std::fflush(stdout);
  while (!g_stop) pause();
  links.clear();

  int ncpu = libbpf_num_possible_cpus();
  if (ncpu <= 0) return Fail("cannot count the possible CPUs");
  std::vector<__u64> per_cpu(static_cast<size_t>(ncpu));
  __u32 zero = 0;
  if (bpf_map_lookup_elem(bpf_map__fd(skel->maps.floor_count), &zero, per_cpu.data()) != 0)
    return Fail(fmt::format("failed to read the counts: {}", std::strerror(errno)));
  __u64 total = 0;
  for (__u64 n : per_cpu) total += n;
  fmt::print("floor: events={}\n", total);
  return 0;
}
