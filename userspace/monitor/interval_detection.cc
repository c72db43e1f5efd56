#include "monitor/interval_detection.h"

#include "analyze/interval_detectors.h"
#include "analyze/thresholds.h"

namespace gpunoise::monitor {

struct IntervalDetection::Impl {
  analyze::Thresholds thresholds;
};

IntervalDetection::IntervalDetection() : impl_(std::make_unique<Impl>()) {}
IntervalDetection::~IntervalDetection() = default;

Result<std::unique_ptr<IntervalDetection>> IntervalDetection::Create(const std::vector<std::string>& thresholds) {
  auto d = std::make_unique<IntervalDetection>();
  for (const std::string& t : thresholds) {
    Status st = d->impl_->thresholds.Set(t);
    if (!st.ok()) return MakeError("threshold: {}", st.error().message);
  }
  return d;
}

std::string IntervalDetection::WindowNote(uint64_t interval_ns) const {
  return analyze::IntervalWindowNote(impl_->thresholds, interval_ns);
}

std::vector<Observation> IntervalDetection::Run(const IntervalInput& in) const {
  analyze::IntervalContext ctx;
  ctx.delta = in.delta;
  ctx.start = in.start;
  ctx.end = in.end;
  ctx.irqs = in.irqs;
  ctx.names = in.names;
  ctx.thresholds = &impl_->thresholds;
  std::vector<Observation> out;
  for (analyze::Finding& f : analyze::DetectIntervalFindings(ctx)) {
    Observation o;
    o.what.detector = f.detector;
    o.what.kind = f.kind;
    o.what.cpu = f.cpus.size() == 1 ? static_cast<int32_t>(f.cpus[0]) : -1;
    o.what.device = f.device;
    o.what.queue = f.queue;
    o.what.culprit = f.culprit;
    o.what.culprit_kind = f.culprit_kind;
    o.what.culprit_tid = f.culprit_tid;
    o.what.title = f.title;
    o.evidence = std::move(f.evidence);
    out.push_back(std::move(o));
  }
  return out;
}

}  // namespace gpunoise::monitor
