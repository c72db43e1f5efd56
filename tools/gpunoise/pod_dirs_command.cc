// gpunoise pod-dirs: the node agent for GPU capture in Kubernetes pods. Keeps
// one fragment directory per pod under ROOT, made root's and 0700 when the
// pod's sandbox appears and handed to the pod's user when its first
// container process runs (collect/pod_fragment_dirs.h), so pods running as
// any uid write fragments without a world-writable directory. Meant as a
// DaemonSet sidecar (docs/deploy/kubernetes/README.md); `record
// --gpu-pod-dirs` does the same while it records.
#include <boost/program_options.hpp>

#include <poll.h>

#include <cstdio>
#include <iostream>
#include <set>

#include "cli_util.h"
#include "collect/kubelet_pods.h"
#include "collect/pod_fragment_dirs.h"
#include "commands.h"
#include "common/capabilities.h"
#include "common/log.h"

namespace po = boost::program_options;

namespace gpunoise::cli {
namespace {

constexpr const char* kUsage =
    "gpunoise pod-dirs: keep a GPU fragment directory for each pod of this Kubernetes node:\n"
    "ROOT/<namespace>_<pod>_<uid>, made 0700 when the pod's sandbox appears in the kubelet's log tree\n"
    "and handed to the uid:gid its first container process runs as. Runs until SIGTERM or Ctrl-C.\n\n"
    "USAGE: gpunoise pod-dirs ROOT [options]\n";

constexpr const char* kExamples =
    "\nEXAMPLES:\n"
    "  gpunoise pod-dirs /var/lib/gpunoise/gpu                 # the DaemonSet's sidecar\n"
    "  gpunoise pod-dirs /host/gpu --kubelet-log-dir /host/var/log --once   # one pass, then exit\n";

}  // namespace

int RunPodDirs(int argc, char** argv) {
  std::string root, kubelet_log_dir;
  uint64_t interval_ms = 1000;
  bool once = false;
  po::options_description opts("OPTIONS");
  opts.add_options()
      ("help,h", "show this help")
      ("kubelet-log-dir", po::value(&kubelet_log_dir)->default_value("/var/log"),
       "where the kubelet's pods/ and containers/ log trees are")
      ("interval-ms", po::value(&interval_ms)->default_value(1000),
       "milliseconds between passes: how soon a new pod gets its directory and a started one its owner")
      ("once", po::bool_switch(&once), "one pass, then exit");
  po::options_description hidden;
  hidden.add_options()("root", po::value(&root));
  po::options_description all;
  all.add(opts).add(hidden);
  po::positional_options_description positional;
  positional.add("root", 1);
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(argc, argv).options(all).positional(positional).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    std::fprintf(stderr, "usage: gpunoise pod-dirs: %s (see gpunoise pod-dirs --help)\n", e.what());
    return 2;
  }
  if (vm.count("help")) {
    std::cout << kUsage << "\n" << opts << kExamples;
    return 0;
  }
  if (root.empty() || interval_ms == 0) {
    std::fprintf(stderr, "usage: gpunoise pod-dirs: ROOT is required and --interval-ms at least 1\n");
    return 2;
  }
  auto dirs = collect::PodFragmentDirs::Open(root);
  if (!dirs.ok()) {
    log::Error("{}", dirs.error().message);
    return 1;
  }
  UniqueFd signal_fd = BlockStopSignals();
  // Making directories in ROOT (ours) and reading /proc needs nothing;
  // handing them over needs CAP_CHOWN, and only that is kept.
  if (auto kept = DropCapabilitiesExcept(CapBit(kCapChown)); !kept.ok()) {
    log::Error("{}", kept.error().message);
    return 1;
  }
  std::set<std::string> said;  // a failure that repeats each pass is said once
  size_t created = 0, handed = 0;
  while (true) {
    collect::PodDirsPass pass = dirs->Update(collect::KubeletPods::Read(kubelet_log_dir));
    for (const auto& p : pass.problems)
      if (said.insert(p).second) log::Warning("{}", p);
    created += pass.created;
    handed += pass.handed;
    if (pass.created || pass.handed || pass.removed)
      log::Info("pod directories in {}: {} made, {} handed to their pod's user, {} removed (pods gone)", root,
                pass.created, pass.handed, pass.removed);
    if (once) break;
    pollfd p{signal_fd.get(), POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(interval_ms)) > 0) {
      log::Info("stopping on {}: {} directories made, {} handed over", ReadSignalName(signal_fd.get()), created,
                handed);
      break;
    }
  }
  return 0;
}

}  // namespace gpunoise::cli
