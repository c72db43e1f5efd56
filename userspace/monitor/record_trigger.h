// Recording on demand: the monitor's endpoint takes an authenticated POST
// (POST /api/v1/record, or an Alertmanager webhook at
// POST /api/v1/alertmanager) and asks the flight recorder for a dump of its
// window, so a straggler alert of the job rules (gpunoise-job-rules.yml)
// makes the node it names write what it saw, at the moment it was slow,
// and its baseline peers (or every node of the job) write the same window
// beside it for comparison (docs/monitor.md, "Fan-out").
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
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace gpunoise::monitor {

// Why an alert concerns this node.
enum class AlertRole {
  kNamed,     // its node, hostname or instance label is this node
  kBaseline,  // its baseline_nodes annotation lists this node
  kJob,       // it names a job (slurm_job_id or job_id label) a focus process of this node belongs to
};
std::string_view AlertRoleName(AlertRole role);  // "named", "baseline", "job"

struct TriggerRequest {
  std::string source;  // "api" or "alertmanager"
  std::string reason;  // one line, for the dump's metadata and the log
  uint64_t at = 0;     // CLOCK_BOOTTIME of the request
  // Alerts only: why this node, the alert's fingerprint (names the dump, the
  // same on every node) and its startsAt (REALTIME ns; 0 unknown), from
  // which every node dumps the same window.
  std::string role;
  std::string fingerprint;
  int64_t starts_at_realtime_ns = 0;
  // POST /api/v1/record only: its "id" (names the dump); its "since" is
  // starts_at_realtime_ns, the window's start with no lookback.
  std::string id;
};

// What an alert may name this node by.
struct NodeIdentity {
  std::vector<std::string> names;  // hostname, NODE_NAME
  // Jobs this node runs a focus process of (SLURM job ids from the cgroup
  // path or SLURM_JOB_ID, TORCHELASTIC_RUN_ID) and the monitor's --job;
  // compared without a "job_" prefix.
  std::set<std::string> jobs;
};

struct AlertMatch {
  std::string reason;
  AlertRole role = AlertRole::kNamed;
  std::string fingerprint;            // 16 hex digits
  int64_t starts_at_realtime_ns = 0;  // 0: the alert gave none
};

// An Alertmanager webhook body (version 4: {"alerts": [{"status", "labels",
// "annotations", "startsAt", "fingerprint"}]}) matched to this node. Only
// firing gpunoise alerts count ("alertname" starting with "Gpunoise", or a
// "finding" label). An alert concerns this node when
//   - its "node", "hostname" or "instance" (host part) label is one of
//     `node.names` (named);
//   - its "baseline_nodes" annotation (names or host:port, separated by
//     commas or spaces) lists one of them (baseline);
//   - it has no baseline_nodes annotation and its "slurm_job_id" or
//     "job_id" label is one of `node.jobs` (job: every node of the job).
// Of several alerts the first named one wins, then the first baseline,
// then the first job match. nullopt when none concerns this node; an error
// when the body is not such a webhook.
Result<std::optional<AlertMatch>> MatchAlertmanagerWebhook(std::string_view body, const NodeIdentity& node);

// Prometheus' label-set fingerprint (FNV-1a 64 over the labels sorted by
// name, each name and value followed by 0xff), as 16 hex digits: what
// Alertmanager sends as "fingerprint", computed when a sender leaves it out.
std::string AlertFingerprint(const std::vector<std::pair<std::string, std::string>>& labels);

// Where a dump asked by an alert starts, in this node's CLOCK_BOOTTIME:
// `lookback_ns` before the alert's startsAt (REALTIME), through the clocks'
// offset now. 0 (the flight recorder's whole window) when the alert gave no
// startsAt or that instant is before this boot; `boottime_now` when it lies
// in the future (a skewed clock).
uint64_t AlertWindowStart(int64_t starts_at_realtime_ns, uint64_t lookback_ns, int64_t realtime_now,
                          uint64_t boottime_now);

// What names an alert's dump, after gpunoise-flight-<UTC time>-: "alert-",
// the fingerprint and this machine's name (characters a file name may not
// hold become '_'), so the dumps of one alert gathered from many nodes
// into one directory do not collide and one glob finds them all.
std::string AlertDumpTag(std::string_view fingerprint, std::string_view machine);

// The same for a request with an "id": "request-<id>-<machine>".
std::string RequestDumpTag(std::string_view id, std::string_view machine);

// A POST /api/v1/record body: empty, or a JSON object with optional
//   "reason": a string ("requested" when none);
//   "since":  an ISO 8601 time (REALTIME): the dump starts there, on every
//             node a script sends the same request to;
//   "id":     up to 64 of [A-Za-z0-9._-], naming the dump instead of the time alone.
struct RecordRequest {
  std::string reason;
  int64_t since_realtime_ns = 0;  // 0: the flight recorder's whole window
  std::string id;
};
Result<RecordRequest> ParseRecordRequest(std::string_view body);

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

  // The jobs this node runs (NodeIdentity::jobs), set by the monitor loop
  // at each focus refresh and read by the HTTP threads.
  void SetNodeJobs(std::set<std::string> jobs);
  std::set<std::string> node_jobs() const;

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
  std::set<std::string> jobs_;
};

}  // namespace gpunoise::monitor
