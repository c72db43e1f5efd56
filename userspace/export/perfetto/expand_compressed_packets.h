// For readers that parse a whole trace with libprotobuf (tests, checking
// tools): replaces each compressed_packets packet of a parsed Trace with the
// packets it holds, in its place, the way Perfetto's trace processor reads
// them. The streaming reader (import/trace_reader.h) inflates blocks itself.
#pragma once

#include "common/result.h"

namespace gpunoise::perfetto {

class Trace;

// Returns how many compressed blocks were expanded. An error (a block that
// does not inflate, or does not hold a Trace) names the block's index.
Result<size_t> ExpandCompressedPackets(Trace* trace);

}  // namespace gpunoise::perfetto
