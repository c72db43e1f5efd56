// Findings from the kernel log of a recording: messages of a known class
// (model/kernel_log.h) grouped by class and the device they name, each
// quoting its lines, with the CPU and task the kernel named for lockups and
// hung tasks. Link-up and other informational lines are evidence only.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "analyze/analysis_context.h"
#include "analyze/finding.h"
#include "model/kernel_log.h"

namespace gpunoise::analyze {

// `found`: the findings made so far; the lines that nic_trouble's
// tx_timeout findings among them quote (analyze/tx_timeout_log.h) make no
// kernel_log finding of their own.
std::vector<Finding> DetectKernelLogTrouble(const AnalysisContext& ctx, std::span<const Finding> found = {});

// One evidence line for a kernel log record: its time from `origin`, its
// text, and where it was printed when printk:console said so.
std::string KernelLogEvidence(const model::KernelLogEntry& e, uint64_t origin);

}  // namespace gpunoise::analyze
