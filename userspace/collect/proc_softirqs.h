// The kernel's own count of softirq handler runs (/proc/softirqs): one row
// per vector, one column per online CPU. The kernel increments it on the
// line before its softirq_entry tracepoint, so it is the reference the
// recorder checks its tracepoint's runs against (record/softirq_audit.h).
#pragma once

#include <cstdint>
#include <map>
#include <string_view>

#include "common/result.h"
#include "model/events.h"

namespace gpunoise::collect {

// CPU number -> runs per vector (model::SoftirqVec), as the kernel keeps
// them: 32-bit counters that wrap. Rows of vectors the model does not know
// (a newer kernel's) are skipped; CPUs offline when it was read are absent.
using KernelSoftirqCounts = std::map<uint32_t, model::SoftirqCounts>;

Result<KernelSoftirqCounts> ParseProcSoftirqs(std::string_view text);
Result<KernelSoftirqCounts> ReadProcSoftirqs();

}  // namespace gpunoise::collect
