#include "report/fleet_annotate.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <random>
#include <set>

#include "merge/trace_merger.h"
#include "report/annotated_trace.h"

namespace gpunoise::report {
namespace {

std::string FileName(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

bool SameFile(const std::string& a, const std::string& b) {
  struct stat sa {}, sb {};
  return ::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0 && sa.st_dev == sb.st_dev &&
         sa.st_ino == sb.st_ino;
}

}  // namespace

Result<std::vector<std::string>> AnnotateTargets(const std::vector<AnnotateSource>& sources, const std::string& out) {
  std::vector<std::string> targets;
  if (sources.size() == 1) {
    if (SameFile(sources[0].path, out)) return MakeError("--annotate {}: that is the input trace", out);
    targets.push_back(out);
    return targets;
  }
  // Several traces: a directory of copies, made private if it is new
  // (the copies hold the traces' data).
  if (::mkdir(out.c_str(), 0700) != 0 && errno != EEXIST)
    return MakeError("--annotate {}: cannot create the directory: {}", out, std::strerror(errno));
  struct stat st {};
  if (::stat(out.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    return MakeError("--annotate {}: with several traces this must be a directory (one copy per trace in it)", out);
  std::set<std::string> names;
  for (const AnnotateSource& s : sources) {
    std::string name = FileName(s.path);
    if (!names.insert(name).second)
      return MakeError("--annotate: two inputs are named {}; their copies in {} would collide", name, out);
    std::string target = out + "/" + name;
    if (SameFile(s.path, target)) return MakeError("--annotate {}: the copy of {} would overwrite it", out, s.path);
    targets.push_back(std::move(target));
  }
  return targets;
}

Status WriteFleetAnnotations(const analyze::FleetAnalysis& fleet, const std::vector<AnnotateSource>& sources,
                             const std::string& out) {
  GN_ASSIGN_OR_RETURN(std::vector<std::string> targets, AnnotateTargets(sources, out));
  std::random_device rd;
  for (size_t f = 0; f < sources.size(); ++f) {
    const AnnotateSource& src = sources[f];
    std::vector<std::string> packets;
    uint32_t next_sequence = src.max_sequence + 1;  // sequences the file does not use yet
    for (const auto& [node, machine_id] : src.machines) {
      if (node >= fleet.nodes.size()) continue;
      std::vector<analyze::Finding> findings;
      if (node == fleet.straggler) findings = fleet.findings;
      for (const auto& finding : fleet.nodes[node].findings) findings.push_back(finding);
      if (findings.empty()) continue;
      uint64_t salt = (static_cast<uint64_t>(rd()) << 32) ^ rd() ^ node;
      for (const std::string& p : report_export::FindingsPackets(findings, next_sequence++, salt)) {
        if (!src.merged) {
          packets.push_back(p);
          continue;
        }
        GN_ASSIGN_OR_RETURN(std::string tagged,
                            perfetto::RenumberSequence(p, [](uint32_t id) { return id; }, machine_id));
        packets.push_back(std::move(tagged));
      }
    }
    // A node without findings still gets its copy: the directory then holds
    // every node's trace, annotated or not.
    GN_RETURN_IF_ERROR(report_export::WriteAnnotatedCopy(src.path, src.bytes, targets[f], packets));
  }
  return OkStatus();
}

}  // namespace gpunoise::report
