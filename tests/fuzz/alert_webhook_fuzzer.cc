// What the monitor's recording endpoints read from the network: an
// Alertmanager webhook body matched to a node (labels, annotations,
// startsAt, fingerprint) and a POST /api/v1/record body (reason, since, id).
// The first input byte picks the node's jobs and names, so the fan-out's
// every branch (named, baseline, job) is reached.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "monitor/record_trigger.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gpunoise::monitor;
  if (size == 0) return 0;
  std::string_view body(reinterpret_cast<const char*>(data) + 1, size - 1);
  NodeIdentity node;
  if (data[0] & 1) node.names = {"h1", "gpu-node-7"};
  if (data[0] & 2) node.jobs = {"4242", "job_77"};
  auto match = MatchAlertmanagerWebhook(body, node);
  if (match.ok() && *match) {
    (void)AlertDumpTag((*match)->fingerprint, "h1");
    (void)AlertWindowStart((*match)->starts_at_realtime_ns, 20'000'000'000, 1'700'000'000'000'000'000,
                           1'000'000'000'000);
  }
  auto record = ParseRecordRequest(body);
  if (record.ok()) (void)RequestDumpTag(record->id, "h1");
  return 0;
}
