// wakeup_chain: a focus thread's wakeup came late because its waker was
// itself late. A wakes B, B waits in a run queue (behind a hog), runs, and
// only then wakes the focus thread: the focus thread sat blocked through
// B's wait. The waker is taken in its context: a wakeup that fired in a
// softirq or hard IRQ (the event's common_flags) was made by that interrupt,
// not by the task it interrupted, and ends the chain. One finding per late
// link (waker B) whose waits cost the focus threads at least
// wakeup_chain.min_delay and wakeup_chain.min_share of their time; a link
// counts when B's wait was at least wakeup_chain.min_link.
#pragma once

#include <vector>

#include "analyze/analysis_context.h"
#include "analyze/finding.h"

namespace gpunoise::analyze {

std::vector<Finding> DetectWakeupChains(const AnalysisContext& ctx);

}  // namespace gpunoise::analyze
