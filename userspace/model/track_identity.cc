#include "model/track_identity.h"

#include <array>
#include <utility>

namespace gpunoise::model {
namespace {

// The keys are written into traces: never change one, only add.
constexpr std::array<std::pair<TrackKind, std::string_view>, 8> kKinds{{
    {TrackKind::kNetMetadata, kTrackKindNetMetadata},
    {TrackKind::kNodeMetadata, kTrackKindNodeMetadata},
    {TrackKind::kNetCounter, kTrackKindNetCounter},
    {TrackKind::kGpuDevice, kTrackKindGpuDevice},
    {TrackKind::kGpuProcess, kTrackKindGpuProcess},
    {TrackKind::kGpuStream, kTrackKindGpuStream},
    {TrackKind::kNodeCounter, kTrackKindNodeCounter},
    {TrackKind::kKernelHealthCounter, kTrackKindKernelHealth},
}};

constexpr std::array<std::pair<NodeMetric, std::string_view>, 7> kNodeMetrics{{
    {NodeMetric::kCpuSteal, "cpu_steal_share"},
    {NodeMetric::kCgroupNrThrottled, "cgroup_nr_throttled"},
    {NodeMetric::kCgroupThrottledNs, "cgroup_throttled_ns"},
    {NodeMetric::kCgroupNrPeriods, "cgroup_nr_periods"},
    {NodeMetric::kCpuIdleState, "cpu_idle_state"},
    {NodeMetric::kCpuFrequency, "cpu_frequency_khz"},
    {NodeMetric::kNetRxUntimed, "net_rx_untimed"},
}};

constexpr std::array<std::pair<NetMetric, std::string_view>, 15> kMetrics{{
    {NetMetric::kRxPackets, "rx_packets_per_s"},
    {NetMetric::kRxGbit, "rx_gbit_per_s"},
    {NetMetric::kTxPackets, "tx_packets_per_s"},
    {NetMetric::kTxGbit, "tx_gbit_per_s"},
    {NetMetric::kTxErrors, "tx_errors_per_s"},
    {NetMetric::kQueuedPackets, "queued_packets_per_s"},
    {NetMetric::kNapiPolls, "napi_polls_per_s"},
    {NetMetric::kNapiFullBudget, "napi_full_budget_polls_per_s"},
    {NetMetric::kNapiPackets, "napi_packets_per_s"},
    {NetMetric::kTxTimeouts, "tx_timeouts"},
    {NetMetric::kDrops, "drops_per_s"},
    {NetMetric::kNicEvents, "nic_events_per_s"},
    {NetMetric::kNicCounter, "nic_counter_per_s"},
    {NetMetric::kCpuNapiPackets, "cpu_napi_packets_per_s"},
    {NetMetric::kCpuRxPackets, "cpu_rx_packets_per_s"},
}};

template <typename E, size_t N>
std::string_view KeyOf(const std::array<std::pair<E, std::string_view>, N>& table, E value) {
  for (const auto& [v, key] : table)
    if (v == value) return key;
  return "unknown";
}

template <typename E, size_t N>
std::optional<E> FromKey(const std::array<std::pair<E, std::string_view>, N>& table, std::string_view key) {
  for (const auto& [v, k] : table)
    if (k == key) return v;
  return std::nullopt;
}

}  // namespace

std::string_view TrackKindKey(TrackKind kind) { return KeyOf(kKinds, kind); }
std::optional<TrackKind> TrackKindFromKey(std::string_view key) { return FromKey(kKinds, key); }
std::string_view NetMetricKey(NetMetric metric) { return KeyOf(kMetrics, metric); }
std::optional<NetMetric> NetMetricFromKey(std::string_view key) { return FromKey(kMetrics, key); }
std::string_view NodeMetricKey(NodeMetric metric) { return KeyOf(kNodeMetrics, metric); }
std::optional<NodeMetric> NodeMetricFromKey(std::string_view key) { return FromKey(kNodeMetrics, key); }

}  // namespace gpunoise::model
