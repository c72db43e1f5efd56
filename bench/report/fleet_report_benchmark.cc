// The cross-node report over many per-node summaries, end to end as a user
// runs it: writes N synthetic `gpunoise report --json` node files (8 GPUs
// each, one rank per GPU, S steps of an all-reduce among all ranks and an
// all-gather among the node's 8, +-30 us jitter, one straggler 5 ms late),
// then runs `gpunoise report node*.json` and measures its wall time and
// peak memory (wait4's ru_maxrss). docs/fleet.md states the budget.
//
// Run: build/bench/report/fleet_report_benchmark [NODES=512] [STEPS=100]
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "analyze/node_summary.h"
#include "report/json_writer.h"
#include "report/node_json.h"

namespace gpunoise {
namespace {

constexpr int kGpus = 8;

analyze::NodeSummary Node(int node, int nodes, int steps, std::mt19937& rng) {
  std::uniform_int_distribution<int64_t> jitter(-30'000, 30'000);
  analyze::NodeSummary n;
  n.machine = "node" + std::to_string(node);
  n.hostname = n.machine;
  n.has_realtime = true;
  const uint64_t boot = 1'000'000'000ull + static_cast<uint64_t>(node) * 1'000'000'000ull;
  n.realtime_minus_boottime = 1'700'000'000'000'000'000ll - static_cast<int64_t>(boot) + jitter(rng) * 10;
  n.start_ns = boot;
  n.end_ns = boot + static_cast<uint64_t>(steps) * 20'000'000ull;
  const uint64_t late = node == nodes / 3 ? 5'000'000 : 0;
  for (int g = 0; g < kGpus; ++g) {
    analyze::GpuSummary s;
    s.gpu = "GPU " + std::to_string(g) + " (H200)";
    s.pid = 1000 + g;
    s.process = "python3";
    s.rank = node * kGpus + g;
    s.steps = static_cast<uint64_t>(steps);
    s.step_ns = 20'000'000;
    s.active_ns = s.steps * s.step_ns;
    s.busy_ns = s.active_ns * 3 / 4;
    s.collective_ns = s.active_ns / 4;
    s.compute_ns = s.busy_ns - s.collective_ns;
    s.idle_ns = s.active_ns - s.busy_ns;
    s.host_wait_ns = s.idle_ns / 2 + (g == 0 ? late * s.steps : 0);
    s.other_idle_ns = s.idle_ns / 2;
    s.step_source = "collective period";
    n.gpus.push_back(std::move(s));
  }
  for (int k = 0; k < steps; ++k) {
    uint64_t t = boot + static_cast<uint64_t>(k) * 20'000'000ull;
    for (int g = 0; g < kGpus; ++g) {
      uint64_t arrive = t + 10'000'000 + (g == 0 ? late : 0);
      // Designated: positional initializers put each value one field off
      // when CollectiveCall gained `bytes`.
      n.collectives.push_back({.comm = 0xa11,
                               .seq = static_cast<uint32_t>(k),
                               .op = "AllReduce",
                               .rank = node * kGpus + g,
                               .gpu = static_cast<uint32_t>(g),
                               .start = static_cast<uint64_t>(static_cast<int64_t>(arrive) + jitter(rng)),
                               .end = static_cast<uint64_t>(static_cast<int64_t>(t + 16'000'000) + jitter(rng))});
      n.collectives.push_back({.comm = 0xb00 + static_cast<uint64_t>(node),
                               .seq = static_cast<uint32_t>(k),
                               .op = "AllGather",
                               .rank = node * kGpus + g,
                               .gpu = static_cast<uint32_t>(g),
                               .start = static_cast<uint64_t>(static_cast<int64_t>(t + 16'200'000) + jitter(rng)),
                               .end = static_cast<uint64_t>(static_cast<int64_t>(t + 17'000'000) + jitter(rng))});
    }
  }
  return n;
}

int Main(int argc, char** argv) {
  const int nodes = argc > 1 ? std::atoi(argv[1]) : 512;
  const int steps = argc > 2 ? std::atoi(argv[2]) : 100;
  const char* bin = std::getenv("GPUNOISE_BIN");
  std::string gpunoise = bin ? bin : GPUNOISE_BIN_DEFAULT;
  std::string dir = std::filesystem::temp_directory_path() / ("gpunoise-fleet-bench-" + std::to_string(::getpid()));
  std::filesystem::create_directory(dir);
  std::mt19937 rng(7);
  uint64_t bytes = 0;
  std::vector<std::string> args = {gpunoise, "report"};
  for (int i = 0; i < nodes; ++i) {
    analyze::NodeSummary n = Node(i, nodes, steps, rng);
    std::string out;
    report_export::JsonWriter w(&out, /*pretty=*/false);
    w.BeginObject();
    w.Field("schema", "gpunoise.report/1");
    w.Key("findings");
    w.BeginArray();
    w.EndArray();
    report_export::WriteNodeSummary(w, n);
    w.EndObject();
    std::string path = dir + "/" + n.machine + ".json";
    std::ofstream(path) << out;
    bytes += out.size();
    args.push_back(path);
  }
  std::printf("%d node summaries (%d GPUs, %d steps, %d collective calls each): %.1f MB of JSON\n", nodes, kGpus,
              steps, kGpus * steps * 2, static_cast<double>(bytes) / 1e6);

  auto start = std::chrono::steady_clock::now();
  pid_t child = ::fork();
  if (child == 0) {
    int out = ::open((dir + "/report.txt").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ::dup2(out, 1);
    std::vector<char*> cargv;
    for (auto& a : args) cargv.push_back(a.data());
    cargv.push_back(nullptr);
    ::execv(cargv[0], cargv.data());
    ::_exit(127);
  }
  int status = 0;
  struct rusage usage {};
  ::wait4(child, &status, 0, &usage);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::string report;
  {
    std::ifstream in(dir + "/report.txt");
    report.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  std::filesystem::remove_all(dir);
  std::string expected = "[straggler] node" + std::to_string(nodes / 3) + " ";
  bool named = report.find(expected) != std::string::npos;
  std::printf("straggler named: %s (%s)\n", named ? "yes" : "NO", expected.c_str());
  int rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  std::printf("gpunoise report over %d nodes: exit %d, %.2f s wall, %.2f s user+sys, peak RSS %.0f MiB\n", nodes, rc,
              seconds,
              static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
                  static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6,
              static_cast<double>(usage.ru_maxrss) / 1024.0);
  return rc ? rc : named ? 0 : 1;
}

}  // namespace
}  // namespace gpunoise

int main(int argc, char** argv) { return gpunoise::Main(argc, argv); }
