// gpunoise env: the environment that turns GPU capture on for processes
// gpunoise does not start itself (a launcher, a job scheduler).
#include <boost/program_options.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>

#include "cli_util.h"
#include "collect/proc_scanner.h"
#include "model/pid_ns.h"
#include "commands.h"
#include "common/log.h"
#include "common/private_file.h"
#include "record/gpu/injection_env.h"
#include "record/workload.h"

namespace po = boost::program_options;

namespace gpunoise::cli {
namespace {

constexpr const char* kUsage =
    "gpunoise env: print the environment that makes CUDA programs write GPU activity\n"
    "(kernels, copies, NVTX ranges) into DIR, for 'gpunoise record --gpu-dir DIR' to collect.\n"
    "Creates DIR if needed. Output is shell 'export' lines.\n\n"
    "USAGE: gpunoise env DIR [options]\n";

constexpr const char* kExamples =
    "\nEXAMPLES:\n"
    "  eval \"$(gpunoise env /tmp/gpu)\"; torchrun train.py   # jobs write GPU fragments to /tmp/gpu\n"
    "  sudo gpunoise record -d 30 --gpu-dir /tmp/gpu -o run.pftrace\n"
    "                                                      # meanwhile: record kernel + GPU side\n"
    "  gpunoise env /tmp/gpu --keep 0 >> job.env           # keep every fragment (disk grows)\n";

}  // namespace

int RunEnv(int argc, char** argv) {
  std::string dir;
  uint64_t flush_ms = 0, keep_seconds = 600;
  bool no_nvtx = false;
  po::options_description opts("OPTIONS");
  opts.add_options()
      ("help,h", "show this help")
      ("flush-ms", po::value(&flush_ms), "milliseconds between a process's fragment flushes, the most a crash loses (default: 1000)")
      ("keep", po::value(&keep_seconds)->default_value(600), "seconds of fragments each process keeps in DIR; 0 keeps all")
      ("no-nvtx", po::bool_switch(&no_nvtx), "leave NVTX alone (no NVTX ranges)");
  po::options_description hidden;
  hidden.add_options()("dir", po::value(&dir));
  po::options_description all;
  all.add(opts).add(hidden);
  po::positional_options_description positional;
  positional.add("dir", 1);
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(argc, argv).options(all).positional(positional).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    std::fprintf(stderr, "usage: gpunoise env: %s (see gpunoise env --help)\n", e.what());
    return 2;
  }
  if (vm.count("help")) {
    std::cout << kUsage << "\n" << opts << kExamples;
    return 0;
  }
  if (dir.empty()) {
    std::fprintf(stderr, "usage: gpunoise env: DIR is required (see gpunoise env --help)\n");
    return 2;
  }
  if (vm.count("flush-ms") && flush_ms == 0) {
    std::fprintf(stderr, "usage: gpunoise env: --flush-ms must be at least 1\n");
    return 2;
  }
  // The fragments a root `record --gpu-dir` reads come from this directory:
  // it is the invoking user's alone (common/private_file.h says why).
  uid_t uid = ::getuid();
  gid_t gid = ::getgid();
  if (auto invoker = record::SudoInvoker()) {
    uid = static_cast<uid_t>(invoker->uid);
    gid = static_cast<gid_t>(invoker->gid);
  }
  std::string error;
  if (!MakeOrCheckPrivateDir(dir, uid, gid, &error)) {
    log::Error("{}", error);
    return 1;
  }
  char* real = ::realpath(dir.c_str(), nullptr);
  if (!real) {
    log::Error("failed to resolve {}: {}", dir, std::strerror(errno));
    return 1;
  }
  std::string absolute = real;
  std::free(real);
  auto library = gpu::FindInjectionLibrary(SelfExecutable());
  if (!library.ok()) {
    log::Error("{}", library.error().message);
    return 1;
  }
  gpu::InjectionEnvOptions env;
  env.library = *library;
  env.dir = absolute;
  env.flush_ms = flush_ms;
  env.keep_seconds = keep_seconds;
  env.nvtx = !no_nvtx;
  // Inside a container every path above is the container's own (the
  // mounted library and fragment volume), which is what its processes need;
  // the host's recorder collects the same directory by its host path and
  // translates the namespace's pids. A shell comment, so eval ignores it.
  uint64_t pid_ns = collect::ReadPidNsInode("/proc/self");
  if (pid_ns && pid_ns != model::kInitPidNsInode)
    std::printf("# gpunoise env: in pid namespace %llu (a container): these paths are the container's; "
                "on the node run 'gpunoise record --gpu-dir' on this volume's host path\n",
                static_cast<unsigned long long>(pid_ns));
  std::fputs(gpu::FormatShellExports(gpu::InjectionEnvironment(env)).c_str(), stdout);
  return 0;
}

}  // namespace gpunoise::cli
