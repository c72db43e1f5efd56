// gpunoise: one binary, one subcommand per job.
#include <cstdio>
#include <cstring>
#include <string_view>

#include "commands.h"

#ifndef GPUNOISE_VERSION
#define GPUNOISE_VERSION "0.1.0"
#endif

namespace {

struct Command {
  std::string_view name;
  int (*run)(int argc, char** argv);
  std::string_view summary;
};

constexpr Command kCommands[] = {
    {"record", gpunoise::cli::RunRecord, "record a Perfetto trace of this node (eBPF, and CUPTI with -- CMD)"},
    {"report", gpunoise::cli::RunReport, "name what slowed the focus threads in a trace (text, JSON, annotated trace)"},
    {"monitor", gpunoise::cli::RunMonitor, "watch this node continuously: OpenMetrics on /metrics, detectors, flight recorder"},
    {"doctor", gpunoise::cli::RunDoctor, "check that this node is configured to be quiet (exit 0 ok, 1 warn, 2 fail)"},
    {"merge", gpunoise::cli::RunMerge, "merge Perfetto traces (processes, nodes) into one file"},
    {"blackbox", gpunoise::cli::RunBlackbox, "keep the last seconds before a crash across a warm reboot (arm, collect, status)"},
    {"env", gpunoise::cli::RunEnv, "print the environment that turns GPU capture on for jobs started elsewhere"},
    {"pod-dirs", gpunoise::cli::RunPodDirs, "keep a GPU fragment directory per Kubernetes pod, owned by the pod's user"},
};

void PrintUsage(FILE* out) {
  std::fprintf(out,
               "gpunoise %s: find out why a GPU training node is slow\n\n"
               "USAGE: gpunoise <command> [options]   (gpunoise <command> --help for details)\n\n"
               "COMMANDS:\n",
               GPUNOISE_VERSION);
  for (const auto& c : kCommands)
    std::fprintf(out, "  %-8.*s %.*s\n", static_cast<int>(c.name.size()), c.name.data(),
                 static_cast<int>(c.summary.size()), c.summary.data());
  std::fprintf(out,
               "\nEXAMPLES:\n"
               "  sudo gpunoise record -d 10 -o node.pftrace   # 10 s of scheduling and interrupts\n"
               "  sudo gpunoise record -d 30 -o run.pftrace -- python train.py\n"
               "                                               # kernel and GPU side of a training job\n"
               "  gpunoise merge a.pftrace b.pftrace -o all.pftrace  # one timeline from several traces\n"
               "  gpunoise report run.pftrace                  # what delayed the GPU-launching (or busiest) threads\n"
               "  sudo gpunoise doctor --focus-cpus 8-63       # is this node quiet for training on CPUs 8-63?\n"
               "  sudo gpunoise monitor  # always on: metrics for Prometheus (TLS + auth: --web.config.file), findings\n");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    PrintUsage(stderr);
    return 2;
  }
  std::string_view cmd = argv[1];
  if (cmd == "-h" || cmd == "--help" || cmd == "help") {
    PrintUsage(stdout);
    return 0;
  }
  if (cmd == "--version" || cmd == "version") {
    std::printf("gpunoise %s\n", GPUNOISE_VERSION);
    return 0;
  }
  for (const auto& c : kCommands)
    if (c.name == cmd) return c.run(argc - 1, argv + 1);
  std::fprintf(stderr, "usage: unknown command '%s' (see gpunoise --help)\n", argv[1]);
  return 2;
}
