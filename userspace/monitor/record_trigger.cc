#include "monitor/record_trigger.h"

#include <algorithm>

#include "common/json_value.h"

namespace gpunoise::monitor {
namespace {

// "10.1.0.3:9464" -> "10.1.0.3"; "[fe80::1]:9464" -> "fe80::1"; a bare name stays.
std::string_view HostOf(std::string_view instance) {
  if (instance.starts_with('[')) {
    size_t close = instance.find(']');
    return close == std::string_view::npos ? instance : instance.substr(1, close - 1);
  }
  size_t colon = instance.rfind(':');
  if (colon != std::string_view::npos && instance.find(':') == colon) return instance.substr(0, colon);
  return instance;
}

// Alert text goes into logs and file metadata: one line, bounded.
std::string OneLine(std::string s) {
  std::replace_if(s.begin(), s.end(), [](char c) { return c == '\n' || c == '\r' || c == '\t'; }, ' ');
  if (s.size() > 200) s.resize(200);
  return s;
}

}  // namespace

Result<std::optional<std::string>> MatchAlertmanagerWebhook(std::string_view body,
                                                             const std::vector<std::string>& names) {
  GN_ASSIGN_OR_RETURN(JsonValue doc, ParseJson(body));
  if (!doc.is_object() || !doc["alerts"].is_array())
    return MakeError("not an Alertmanager webhook: no \"alerts\" array");
  for (const JsonValue& alert : doc["alerts"].items()) {
    const JsonValue& labels = alert["labels"];
    if (!alert.is_object() || !labels.is_object())
      return MakeError("not an Alertmanager webhook: an alert without \"labels\"");
    if (alert["status"].String() != "firing") continue;
    std::string name = labels["alertname"].String();
    if (!name.starts_with("Gpunoise") && !labels.Has("finding")) continue;
    std::string node = labels["node"].String(), hostname = labels["hostname"].String();
    std::string instance(HostOf(labels["instance"].String()));
    for (const std::string& n : names) {
      if (n.empty() || (n != node && n != hostname && n != instance)) continue;
      std::string reason = "alert " + name + " for " + n;
      if (labels.Has("namespace") && labels.Has("job_name"))
        reason += " (job " + labels["namespace"].String() + "/" + labels["job_name"].String() + ")";
      return std::optional<std::string>(OneLine(std::move(reason)));
    }
  }
  return std::optional<std::string>();
}

Result<std::string> ParseRecordRequest(std::string_view body) {
  if (body.find_first_not_of(" \t\r\n") == std::string_view::npos) return std::string("requested");
  GN_ASSIGN_OR_RETURN(JsonValue doc, ParseJson(body));
  if (!doc.is_object()) return MakeError("the body must be a JSON object");
  if (doc.Has("reason") && doc["reason"].type() != JsonValue::Type::kString)
    return MakeError("\"reason\" must be a string");
  std::string reason = doc["reason"].String("requested");
  return OneLine(reason.empty() ? "requested" : reason);
}

void RecordTrigger::Configure(bool enabled, uint64_t min_interval_ns) {
  std::lock_guard<std::mutex> lock(mu_);
  enabled_ = enabled;
  min_interval_ns_ = min_interval_ns;
  if (!enabled) pending_.reset();
}

RecordTrigger::Verdict RecordTrigger::Submit(TriggerRequest request, uint64_t* retry_after_s) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!enabled_) return Verdict::kDisabled;
  uint64_t now = request.at;
  if (any_accepted_ && now - last_accepted_ < min_interval_ns_) {
    ++refused_;
    if (retry_after_s) *retry_after_s = (min_interval_ns_ - (now - last_accepted_) + 999'999'999) / 1'000'000'000;
    return Verdict::kRateLimited;
  }
  any_accepted_ = true;
  last_accepted_ = now;
  ++accepted_;
  pending_ = std::move(request);
  return Verdict::kQueued;
}

std::optional<TriggerRequest> RecordTrigger::Take() {
  std::lock_guard<std::mutex> lock(mu_);
  std::optional<TriggerRequest> out = std::move(pending_);
  pending_.reset();
  return out;
}

uint64_t RecordTrigger::accepted() const {
  std::lock_guard<std::mutex> lock(mu_);
  return accepted_;
}

uint64_t RecordTrigger::refused() const {
  std::lock_guard<std::mutex> lock(mu_);
  return refused_;
}

}  // namespace gpunoise::monitor
