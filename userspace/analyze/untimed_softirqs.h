// NET_RX softirqs the recorder counted but did not time (record
// --netrx-sample: a storm's softirqs are timed 1 in N, bpf/irq.bpf.c), put
// back into the timeline as estimates, so that every reader of softirq
// slices (storm shares, the time taken from threads) sees the storm at its
// size instead of a sixteenth of it.
//
// The trace says how many went untimed on each CPU before each sample of
// its untimed counter (model::NodeMetric::kNetRxUntimed), and the timed
// entries after which the count rose. Each timed NET_RX slice in a
// sample's span stands for an equal part of the span's increase; its part
// is placed in the softirq-free gap before it, evenly, each as long as the
// timed slices of that span on average (shortened to fit). What the
// counter adds after the last timed slice goes in the gap before the
// sample. Placement and length are estimates; the count is exact.
#pragma once

#include <cstdint>

#include "analyze/timeline.h"

namespace gpunoise::analyze {

// Adds the estimated slices to each CPU's softirqs (sorted, non-
// overlapping) and records them in CpuTimeline::untimed (count and where).
void EstimateUntimedSoftirqs(Timeline& t);

}  // namespace gpunoise::analyze
