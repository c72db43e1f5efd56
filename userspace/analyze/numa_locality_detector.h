// numa_locality: focus threads (and the threads launching their GPUs' work)
// running on CPUs of a NUMA node other than their GPU's (or, without GPU
// work, the NIC's their traffic used), and NIC IRQs delivered to CPUs of a
// node other than the NIC's. From the topology the recorder wrote
// (analyze/numa_metadata.h) and the scheduler data. A thread's home node is
// its own GPUs' node (the GPUs of the work it launched, else its process's);
// a thread driving GPUs on several nodes has no single home and is left out.
#pragma once

#include <vector>

#include "analyze/analysis_context.h"
#include "analyze/finding.h"
#include "analyze/numa_metadata.h"

namespace gpunoise::analyze {

std::vector<Finding> DetectNumaLocality(const AnalysisContext& ctx, const NumaMetadata& numa);

}  // namespace gpunoise::analyze
