#include "model/nic_health.h"

#include <array>
#include <utility>

namespace gpunoise::model {
namespace {

constexpr std::array<std::pair<LinkEventKind, std::string_view>, 8> kLinkKindNames{{
    {LinkEventKind::kCarrierDown, "carrier_down"},
    {LinkEventKind::kCarrierUp, "carrier_up"},
    {LinkEventKind::kSpeedChange, "speed_change"},
    {LinkEventKind::kAppeared, "appeared"},
    {LinkEventKind::kRemoved, "removed"},
    {LinkEventKind::kCounterReset, "counter_reset"},
    {LinkEventKind::kDuplexChange, "duplex_change"},
    {LinkEventKind::kAutonegChange, "autoneg_change"},
}};

// A 32-bit counter that wrapped was within this distance of 2^32 before.
constexpr uint64_t kWrapWindow = uint64_t{1} << 30;

}  // namespace

CounterStep StepCounter(uint64_t previous, uint64_t current) {
  if (current >= previous) return {current - previous, false, false};
  constexpr uint64_t k32 = uint64_t{1} << 32;
  if (previous < k32 && previous >= k32 - kWrapWindow && current < kWrapWindow)
    return {k32 - previous + current, false, true};
  return {current, true, false};
}

std::string_view LinkEventKindName(LinkEventKind kind) {
  for (const auto& [k, n] : kLinkKindNames)
    if (k == kind) return n;
  return "unknown";
}

std::optional<LinkEventKind> LinkEventKindFromName(std::string_view name) {
  for (const auto& [k, n] : kLinkKindNames)
    if (n == name) return k;
  return std::nullopt;
}

std::map<NicCounterKind, uint64_t> SumByKind(const std::vector<NicCounterTotal>& totals) {
  std::map<NicCounterKind, uint64_t> device_level, queue_level;
  for (const NicCounterTotal& t : totals) {
    if (t.kind == NicCounterKind::kOther) continue;
    (t.queue < 0 ? device_level : queue_level)[t.kind] += t.delta;
  }
  std::map<NicCounterKind, uint64_t> out = queue_level;
  for (const auto& [kind, n] : device_level) out[kind] = n;  // the device's own sum wins
  return out;
}

}  // namespace gpunoise::model
