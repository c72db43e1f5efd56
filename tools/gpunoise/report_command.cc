// gpunoise report: read a trace and say what slowed the focus threads down.
#include <boost/program_options.hpp>

#include <cstdio>
#include <optional>
#include <iostream>

#include "commands.h"
#include "common/log.h"
#include "report/fleet_session.h"
#include "report/report_session.h"

namespace po = boost::program_options;

namespace gpunoise::cli {
namespace {

constexpr const char* kUsage =
    "gpunoise report: read a Perfetto trace (gpunoise's, or Perfetto's own recorder's) and name\n"
    "what delayed the threads that matter: findings ranked by the time they cost, then tables.\n\n"
    "USAGE: gpunoise report [OPTIONS] FILE.pftrace   (options before or after the file)\n"
    "       [--json] [--focus PID|COMM|CGROUP]... [--window START:END]\n"
    "       [--threshold NAME=VALUE]... [--annotate OUT.pftrace] [--partial]\n"
    "       gpunoise report NODE1 NODE2 ... [--step NAME] [--align collectives|realtime] [--json]\n"
    "                       (traces, one merged trace, or per-node --json reports: the cross-node report)\n";

constexpr const char* kExamples =
    "\nEXAMPLES:\n"
    "  gpunoise report node17.pftrace                     # findings and tables for a person\n"
    "  gpunoise report node17.pftrace --json > r.json     # the same for machines (docs/report.md)\n"
    "  gpunoise report node17.pftrace --focus 4242        # threads of process 4242 (or thread 4242)\n"
    "  gpunoise report node17.pftrace --focus python3     # threads or processes named python3\n"
    "  gpunoise report --json --focus rank:3 run.pftrace  # the processes of rank 3 (options before the file)\n"
    "  gpunoise report run.pftrace --focus pod-uid:0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0  # one pod\n"
    "  gpunoise report run.pftrace --focus container:ml/trainer-0/train  # one pod's container by name\n"
    "  gpunoise report node17.pftrace --window 2:5        # only seconds 2 to 5 of the trace\n"
    "  gpunoise report node17.pftrace --threshold softirq.share=20%   # a more sensitive storm detector\n"
    "  gpunoise report node17.pftrace --annotate n17-findings.pftrace # findings as tracks, for the UI\n"
    "  gpunoise report cut.pftrace --partial              # report what a damaged trace still holds\n"
    "  gpunoise report node*.json --step train_step       # which node holds the job back (docs/fleet.md)\n"
    "  gpunoise report all-nodes.pftrace --annotate a.pftrace  # a merged trace: a finding track per machine\n"
    "  gpunoise report n*.pftrace --annotate annotated/        # per-node traces: annotated/<each file>\n"
    "\nEXIT STATUS: 0 report written, 1 error, 2 usage error, 3 report written from a damaged trace (--partial)\n";

}  // namespace

int RunReport(int argc, char** argv) {
  std::vector<std::string> files;
  std::string window, annotate, step, align = "collectives";
  std::vector<std::string> focus, thresholds;
  bool json = false, partial = false, list_thresholds = false;
  size_t top = 10;

  po::options_description opts("OPTIONS");
  opts.add_options()
      ("help,h", "show this help")
      ("json", po::bool_switch(&json), "write JSON (schema in docs/report.md) instead of text")
      // One value per use (as in every Unix tool), so options may come
      // before the file: with multitoken, "--focus trainer run.pftrace"
      // took the file for a second focus value.
      ("focus,f", po::value(&focus)->composing(),
       "threads the report is about, one value per use: PID (a process's threads, or one thread), COMM "
       "(thread or process name), CGROUP (a cgroup path: from the trace, else resolved live), pod:NAME, "
       "pod-uid:UID, container:ID (12+ hex digits), container:[[NS/]POD/]NAME (container-name: for a name "
       "of hex digits), rank:N or job:ID (from the trace); default: threads that launch GPU "
       "work, else the busiest non-kernel threads")
      ("window,w", po::value(&window), "only START:END, seconds from the first event (2.5:7, 500ms:, :10)")
      ("threshold,t", po::value(&thresholds)->composing(),
       "change a detector threshold, NAME=VALUE (see --list-thresholds)")
      ("list-thresholds", po::bool_switch(&list_thresholds), "list every threshold with its default and meaning")
      ("annotate", po::value(&annotate), "also write a copy of the trace with the findings as tracks")
      ("partial", po::bool_switch(&partial), "on a corrupt or truncated trace, report what could be read")
      ("top", po::value(&top)->default_value(10), "rows in the run-queue delay table")
      ("step", po::value(&step), "cross-node: NVTX ranges of this name are training steps (default: the period "
       "of the least frequent collective)")
      ("align", po::value(&align), "cross-node: collectives (default; REALTIME refined by the ends of matched "
       "all-reduce/all-gather/reduce-scatter instances) or realtime (the clock snapshots only)");
  po::options_description hidden;
  hidden.add_options()("file", po::value(&files)->multitoken());
  po::options_description all;
  all.add(opts).add(hidden);
  po::positional_options_description positional;
  positional.add("file", -1);

  po::variables_map vm;
  try {
    po::store(po::command_line_parser(argc, argv).options(all).positional(positional).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    std::fprintf(stderr, "usage: gpunoise report: %s (see gpunoise report --help)\n", e.what());
    return 2;
  }
  if (vm.count("help")) {
    std::cout << kUsage << "\n" << opts << kExamples;
    return 0;
  }
  if (list_thresholds) {
    analyze::Thresholds defaults;
    for (const auto& s : analyze::AllThresholds())
      std::printf("%-26s %-10s %.*s\n", std::string(s.name).c_str(), defaults.Format(s.name).c_str(),
                  static_cast<int>(s.meaning.size()), s.meaning.data());
    return 0;
  }
  if (files.empty()) {
    std::fprintf(stderr, "usage: gpunoise report: name a trace file (see gpunoise report --help)\n");
    return 2;
  }
  if (align != "collectives" && align != "realtime") {
    std::fprintf(stderr, "usage: gpunoise report: --align takes collectives or realtime, not '%s'\n", align.c_str());
    return 2;
  }
  const std::string& file = files.front();

  report::ReportOptions options;
  options.trace_path = file;
  options.json = json;
  options.partial = partial;
  options.annotate_path = annotate;
  options.analysis.top_delays = top;
  for (const auto& f : focus) {
    if (f.empty()) {
      std::fprintf(stderr, "usage: gpunoise report: --focus needs a PID, a name or a cgroup\n");
      return 2;
    }
    options.analysis.focus.push_back(f);
  }
  for (const auto& t : thresholds) {
    if (Status st = options.analysis.thresholds.Set(t); !st.ok()) {
      std::fprintf(stderr, "usage: gpunoise report: %s\n", st.error().message.c_str());
      return 2;
    }
  }
  if (!window.empty()) {
    if (Status st = report::ParseWindow(window, &options.analysis); !st.ok()) {
      std::fprintf(stderr, "usage: gpunoise report: %s\n", st.error().message.c_str());
      return 2;
    }
  }
  if (!annotate.empty() && file == "-") {
    std::fprintf(stderr, "usage: gpunoise report: --annotate needs a trace file, not standard input\n");
    return 2;
  }

  options.node.step_name = step;

  // Several inputs or a node's JSON summary: the cross-node report; so is a
  // merged trace of several machines, which the one-node report finds out
  // as it reads (then it analyzes nothing and writes nothing).
  bool fleet = files.size() > 1 || (file != "-" && report::IsJsonFile(file));
  std::optional<Result<report::ReportResult>> single;
  if (!fleet) {
    single = report::RunReport(options);
    fleet = single->ok() && (*single)->several_machines;
  }
  if (fleet) {
    report::FleetReportOptions fo;
    fo.inputs = files;
    fo.json = json;
    fo.partial = partial;
    fo.annotate_path = annotate;
    fo.analysis = options.analysis;
    fo.node = options.node;
    fo.fleet.align_collectives = align == "collectives";
    for (const auto& f : files)
      if (f == "-") {
        std::fprintf(stderr, "usage: gpunoise report: several inputs cannot include standard input\n");
        return 2;
      }
    auto fr = report::RunFleetReport(fo);
    if (!fr.ok()) {
      log::Error("{}", fr.error().message);
      return 1;
    }
    std::fwrite(fr->output.data(), 1, fr->output.size(), stdout);
    std::fflush(stdout);
    for (const auto& w : fr->warnings) log::Warning("{}", w);
    if (!annotate.empty()) log::Info("wrote {} with a finding track per machine", annotate);
    return 0;
  }

  auto& result = *single;
  if (!result.ok()) {
    log::Error("{}", result.error().message);
    return 1;
  }
  std::fwrite(result->output.data(), 1, result->output.size(), stdout);
  std::fflush(stdout);
  for (const auto& p : result->read.problems) log::Warning("{}", p);
  if (!annotate.empty()) log::Info("wrote {} with {} findings as tracks", annotate, result->analysis.findings.size());
  return result->damaged ? 3 : 0;
}

}  // namespace gpunoise::cli
