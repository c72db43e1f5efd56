#include "monitor/interval_detection.h"

namespace gpunoise::monitor {

// Development placeholder until the report branch's detectors land.
struct IntervalDetection::Impl {};

IntervalDetection::IntervalDetection() : impl_(std::make_unique<Impl>()) {}
IntervalDetection::~IntervalDetection() = default;

Result<std::unique_ptr<IntervalDetection>> IntervalDetection::Create(const std::vector<std::string>&) {
  return std::make_unique<IntervalDetection>();
}

std::vector<Observation> IntervalDetection::Run(const IntervalInput&) const { return {}; }

}  // namespace gpunoise::monitor
