// The last stage of `gpunoise record` (record_session.h): after the loss
// accounting, the closing counters (RDMA, network, node, kernel log), the
// footer with the processes seen at the end, the caller's extra packets
// (GPU fragments), and the commit that renames the trace into place.
// FormatSummary (record_session.h), the line printed afterwards, is here too.
#pragma once

#include <vector>

#include "model/rdma_counters.h"
#include "record/prepare_collectors.h"
#include "record/record_session.h"

namespace gpunoise::perfetto {
class TraceSink;
}

namespace gpunoise::record {

// Fills `result` (path, sizes, parse errors, summaries); the first error
// goes to result.late_error, the file is committed whatever came before.
void FinishTrace(const RecordOptions& options, CollectorSet& set, perfetto::TraceSink& sink,
                 const std::vector<model::RdmaPort>& rdma_start, RecordResult& result);

}  // namespace gpunoise::record
