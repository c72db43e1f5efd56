// Recording on demand: the monitor's endpoint takes an authenticated POST
// (POST /api/v1/record, or an Alertmanager webhook at
// POST /api/v1/alertmanager) and asks the flight recorder for a dump of its
// window, so a straggler alert of the job rules (gpunoise-job-rules.yml)
// makes the node it names write what it saw, at the moment it was slow.
//
// The HTTP threads only parse and queue; the monitor loop takes the request
// at its next interval and hands it to the flight recorder (which writes
// from its own thread). Requests are rate-limited here, before the
// recorder's own per-finding limit, so a flapping alert or a looping
// client gets 429, not a disk full of dumps.
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace gpunoise::monitor {

struct TriggerRequest {
  std::string source;  // "api" or "alertmanager"
  std::string reason;  // one line, for the dump's metadata and the log
  uint64_t at = 0;     // CLOCK_BOOTTIME of the request
};

// An Alertmanager webhook body (version 4: {"alerts": [{"status",
// "labels": {...}}]}) matched to this node. The first firing gpunoise alert
// ("alertname" starting with "Gpunoise", or a "finding" label) whose
// "node", "instance" (host part) or "hostname" label is one of `names`
// gives the reason; nullopt when none concerns this node. An error when the
// body is not such a webhook.
Result<std::optional<std::string>> MatchAlertmanagerWebhook(std::string_view body,
                                                             const std::vector<std::string>& names);
// A POST /api/v1/record body: empty, or a JSON object with an optional
// "reason" string. The reason ("requested" when none), or an error.
Result<std::string> ParseRecordRequest(std::string_view body);

class RecordTrigger {
 public:
  enum class Verdict { kQueued, kRateLimited, kDisabled };

  // Off until configured: the endpoint starts before the flight recorder.
  // Enabled: at most one request per `min_interval_ns`; one waits at a time.
  void Configure(bool enabled, uint64_t min_interval_ns);

  // `retry_after_s` gets how long until one would be taken, when refused.
  Verdict Submit(TriggerRequest request, uint64_t* retry_after_s);
  // The monitor loop's side: the waiting request, if any.
  std::optional<TriggerRequest> Take();

  uint64_t accepted() const;
  uint64_t refused() const;

 private:
  mutable std::mutex mu_;
  bool enabled_ = false;
  uint64_t min_interval_ns_ = 0;
  std::optional<TriggerRequest> pending_;
  uint64_t last_accepted_ = 0;
  bool any_accepted_ = false;
  uint64_t accepted_ = 0, refused_ = 0;
};

}  // namespace gpunoise::monitor
