// `gpunoise report ... --annotate OUT` for the cross-node report: a copy of
// each input trace with a findings track per machine, on that machine's own
// timeline (its own findings, and the straggler finding on the
// straggler's). One merged trace: OUT is the copy. Several per-node
// traces: OUT is a directory and each node's copy is OUT/<its file name>,
// so the per-node files stay apart (nobody has to merge 500 traces to look
// at one node's findings).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "analyze/fleet.h"
#include "common/result.h"

namespace gpunoise::report {

// One trace file given to the fleet report, as read.
struct AnnotateSource {
  std::string path;
  uint64_t bytes = 0;         // whole packets read
  uint32_t max_sequence = 0;  // the highest packet sequence it uses
  bool merged = false;        // several machines: packets get their machine_id
  std::vector<std::pair<size_t, uint32_t>> machines;  // (index into the fleet's nodes, machine id)
};

// Where each source's copy goes (see above). Errors: two inputs of one file
// name, a copy that would overwrite its input, OUT not a directory.
Result<std::vector<std::string>> AnnotateTargets(const std::vector<AnnotateSource>& sources, const std::string& out);

Status WriteFleetAnnotations(const analyze::FleetAnalysis& fleet, const std::vector<AnnotateSource>& sources,
                             const std::string& out);

}  // namespace gpunoise::report
