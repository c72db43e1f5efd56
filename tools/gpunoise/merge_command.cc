// gpunoise merge: several Perfetto traces into one timeline.
#include <boost/program_options.hpp>

#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <optional>
#include <iostream>

#include "commands.h"
#include "common/log.h"
#include "common/strings.h"
#include "merge/machine_alignment.h"
#include "export/perfetto/trace_file_writer.h"
#include "merge/trace_merger.h"
#include "report/fleet_session.h"

namespace po = boost::program_options;

namespace gpunoise::cli {
namespace {

constexpr const char* kUsage =
    "gpunoise merge: merge Perfetto traces (several processes, several nodes, a recording and\n"
    "GPU fragments) into one file. Packets are copied unchanged, clock snapshots included;\n"
    "each input's packet sequences get new ids so no two inputs share one. Inputs of another\n"
    "machine (another boot_id) get their own TracePacket.machine_id, and that machine's\n"
    "BOOTTIME is put on the first machine's axis through both machines' REALTIME snapshots.\n"
    "Compressed inputs are inflated; the output is compressed again unless --compress none.\n\n"
    "USAGE: gpunoise merge A.pftrace B.pftrace ... -o ALL.pftrace [--align realtime|collectives]\n";

constexpr const char* kExamples =
    "\nEXAMPLES:\n"
    "  gpunoise merge node1.pftrace node2.pftrace -o both.pftrace   # two nodes, one timeline\n"
    "  gpunoise merge run.pftrace /tmp/gpu/gpunoise-gpu-*.pftrace -o all.pftrace\n"
    "                                       # a recording plus GPU fragments collected by hand\n"
    "  gpunoise merge --compress none node1.pftrace -o plain.pftrace\n"
    "                                       # an uncompressed copy, for tools that need one\n"
    "  gpunoise merge node*.pftrace --align collectives -o all.pftrace\n"
    "                                       # REALTIME refined by the ends of matched all-reduces\n";

bool SameFile(const std::string& a, const std::string& b) {
  struct stat sa, sb;
  return ::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0 && sa.st_dev == sb.st_dev &&
         sa.st_ino == sb.st_ino;
}

}  // namespace

int RunMerge(int argc, char** argv) {
  std::string output, compress_text = "zlib", align = "realtime";
  std::vector<std::string> inputs;
  po::options_description opts("OPTIONS");
  opts.add_options()
      ("help,h", "show this help")
      ("output,o", po::value(&output), "merged trace to write (required)")
      ("compress", po::value(&compress_text)->default_value("zlib"),
       "zlib (packets in compressed blocks) or none")
      ("align", po::value(&align)->default_value("realtime"),
       "realtime (the machines' REALTIME snapshots) or collectives (REALTIME refined by the ends of "
       "all-reduce, all-gather and reduce-scatter instances matched across machines in their GPU data)");
  po::options_description hidden;
  hidden.add_options()("input", po::value(&inputs)->multitoken());
  po::options_description all;
  all.add(opts).add(hidden);
  po::positional_options_description positional;
  positional.add("input", -1);
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(argc, argv).options(all).positional(positional).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    std::fprintf(stderr, "usage: gpunoise merge: %s (see gpunoise merge --help)\n", e.what());
    return 2;
  }
  if (vm.count("help")) {
    std::cout << kUsage << "\n" << opts << kExamples;
    return 0;
  }
  if (output.empty()) {
    std::fprintf(stderr, "usage: gpunoise merge: -o OUTPUT is required\n");
    return 2;
  }
  if (inputs.empty()) {
    std::fprintf(stderr, "usage: gpunoise merge: no input traces given\n");
    return 2;
  }
  if (align != "realtime" && align != "collectives") {
    std::fprintf(stderr, "usage: gpunoise merge: --align takes realtime or collectives, not '%s'\n", align.c_str());
    return 2;
  }
  auto compression = perfetto::ParseTraceCompression(compress_text);
  if (!compression.ok()) {
    std::fprintf(stderr, "usage: gpunoise merge: --compress: %s\n", compression.error().message.c_str());
    return 2;
  }
  for (const auto& in : inputs) {
    if (in == output || SameFile(in, output)) {
      std::fprintf(stderr, "usage: gpunoise merge: output %s is also an input\n", output.c_str());
      return 2;
    }
  }

  // No reserve file: a merge writes what it reads, and a failed merge
  // leaves nothing behind (the temporary file is removed).
  auto writer = perfetto::TraceFileWriter::Create(output, 0, *compression);
  if (!writer.ok()) {
    log::Error("failed to create {}: {}", output, writer.error().message);
    return 1;
  }
  std::vector<perfetto::InputMachine> scanned;
  for (const auto& in : inputs) {
    auto m = perfetto::ScanInputMachine(in);
    if (!m.ok()) {
      log::Error("{}", m.error().message);
      return 1;
    }
    scanned.push_back(std::move(*m));
  }
  std::vector<uint32_t> machine_of = perfetto::AssignMachines(scanned);
  uint32_t machines = 0;
  for (uint32_t m : machine_of) machines = std::max(machines, m + 1);
  // Each machine's clocks: those of its first input that has a REALTIME
  // snapshot (a GPU fragment may have none, its recording does).
  std::vector<std::optional<perfetto::ClockPair>> clocks(machines);
  std::vector<std::string> label(machines);
  std::vector<perfetto::MachineIdentity> identity(machines);
  for (size_t i = 0; i < scanned.size(); ++i) {
    uint32_t m = machine_of[i];
    if (!clocks[m]) clocks[m] = scanned[i].clocks;
    if (identity[m].name.empty()) identity[m].name = scanned[i].machine_name;
    if (identity[m].boot_id.empty()) identity[m].boot_id = scanned[i].boot_id;
  }
  for (uint32_t m = 0; m < machines; ++m)
    if (clocks[m]) identity[m].booted_at = clocks[m]->realtime - clocks[m]->boottime;
  // Two boots of one host are two machines: "node1 (boot 1)", "node1 (boot 2)".
  label = perfetto::MachineLabels(identity);
  std::vector<std::string> unaligned;
  for (uint32_t m = 1; m < machines; ++m)
    if (!clocks[m] || !clocks[0]) {
      for (size_t i = 0; i < scanned.size(); ++i)
        if (machine_of[i] == m || (!clocks[0] && machine_of[i] == 0)) unaligned.push_back(inputs[i]);
    }
  if (!unaligned.empty()) {
    std::sort(unaligned.begin(), unaligned.end());
    unaligned.erase(std::unique(unaligned.begin(), unaligned.end()), unaligned.end());
    std::string names;
    for (const auto& u : unaligned) names += (names.empty() ? "" : ", ") + u;
    log::Warning("no REALTIME clock snapshot relates these traces' clocks to the others', so their "
                 "machines keep their own BOOTTIME axis: {}",
                 names);
  }

  // --align collectives: each machine's REALTIME corrected by its GPU
  // collectives' ends; a machine without matchable ones keeps REALTIME.
  std::vector<int64_t> correction(machines, 0);
  if (align == "collectives" && machines > 1) {
    std::vector<std::optional<int64_t>> offsets(machines);
    for (uint32_t m = 0; m < machines; ++m)
      if (clocks[m]) offsets[m] = clocks[m]->realtime - clocks[m]->boottime;
    auto aligned = report::AlignMachinesByCollectives(inputs, machine_of, offsets);
    if (!aligned.ok()) {
      log::Error("{}", aligned.error().message);
      return 1;
    }
    for (uint32_t m = 0; m < machines; ++m) {
      const auto& a = (*aligned)[m];
      std::string name = label[m].empty() ? "machine " + std::to_string(m) : label[m];
      if (a.method == "collectives") {
        correction[m] = a.realtime_correction_ns;
        std::printf("gpunoise: machine %u (%s): collectives correct its REALTIME by %+.1f us (spread %.1f us, "
                    "%llu instances)\n",
                    m, name.c_str(), static_cast<double>(a.realtime_correction_ns) / 1e3,
                    static_cast<double>(a.spread_ns) / 1e3, static_cast<unsigned long long>(a.instances));
      } else {
        log::Warning("machine {} ({}) could not be aligned by collectives ({}): it keeps {}", m, name,
                     a.note.empty() ? "no collective instance it shares with another machine" : a.note,
                     clocks[m] ? "REALTIME" : "its own BOOTTIME");
      }
    }
  }
  for (uint32_t m = 0; m < machines; ++m)
    if (clocks[m]) clocks[m]->realtime += correction[m];

  // A clock that was not synchronised relates to the others only as far as
  // its error allows: say so, with the kernel's bound.
  // Once per machine (its first input that says), and only when there are
  // machines to relate.
  for (uint32_t m = 0; m < machines && machines > 1; ++m)
    for (size_t i = 0; i < scanned.size(); ++i)
      if (machine_of[i] == m && scanned[i].clock_synced) {
        if (std::string w = perfetto::UnsyncedClockWarning(scanned[i]); !w.empty()) log::Warning("{}", w);
        break;
      }

  perfetto::TraceMerger merger(&*writer);
  std::vector<bool> synced(machines, false);
  // Each machine's BOOTTIME onto the host's; 0 where it keeps its own axis.
  std::vector<int64_t> boottime_offset(machines, 0);
  for (size_t i = 0; i < inputs.size(); ++i) {
    uint32_t m = machine_of[i];
    // The clock sync goes before the machine's first packet: the trace
    // processor converts each packet's timestamp as it reads it.
    if (m != 0 && !synced[m] && clocks[m] && clocks[0]) {
      auto sync = perfetto::AlignByRealtime(m, *clocks[m], *clocks[0]);
      // The host's BOOTTIME is the axis and starts at its boot: a machine
      // recorded before that (a previous boot of the host) would land at
      // negative times, which the trace processor drops.
      if (sync.host_boottime <= 0) {
        log::Warning("{} was recorded before {} booted, so it keeps its own BOOTTIME axis; give the "
                     "earliest recording first to put every machine on its axis",
                     inputs[i], inputs[0]);
        synced[m] = true;
      }
    }
    if (m != 0 && !synced[m] && clocks[m] && clocks[0]) {
      auto sync = perfetto::AlignByRealtime(m, *clocks[m], *clocks[0]);
      boottime_offset[m] = sync.host_boottime - sync.client_boottime;
      Status written = merger.AppendSerialized(perfetto::RemoteClockSyncPacket(sync));
      if (!written.ok()) {
        log::Error("{}", written.error().message);
        return 1;
      }
      std::printf("gpunoise: machine %u (%s): BOOTTIME %+.6f s from machine 0 (%s) by %s\n", m,
                  label[m].empty() ? inputs[i].c_str() : label[m].c_str(),
                  static_cast<double>(sync.client_boottime - sync.host_boottime) / 1e9,
                  label[0].empty() ? inputs[0].c_str() : label[0].c_str(),
                  correction[m] || correction[0] ? "REALTIME and collectives" : "REALTIME");
    }
    synced[m] = true;
    merger.set_remote_boottime_offset(boottime_offset[m]);
    auto appended = merger.Append(inputs[i], m);
    if (!appended.ok()) {
      log::Error("{}", appended.error().message);
      return 1;
    }
  }
  Status committed = writer->Commit();
  if (!committed.ok()) {
    log::Error("{}", committed.error().message);
    return 1;
  }
  std::printf("gpunoise: merged %zu traces of %u machine%s (%llu packets, %u packet sequences) into "
              "%s (%s)\n",
              inputs.size(), machines, machines == 1 ? "" : "s",
              static_cast<unsigned long long>(merger.packets()), merger.sequences(), output.c_str(),
              HumanBytes(writer->bytes_written()).c_str());
  return 0;
}

}  // namespace gpunoise::cli
