#include "monitor/record_trigger.h"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "common/json_value.h"
#include "common/strings.h"
#include "common/start_at.h"

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

std::string_view AlertRoleName(AlertRole role) {
  switch (role) {
    case AlertRole::kNamed: return "named";
    case AlertRole::kBaseline: return "baseline";
    case AlertRole::kJob: return "job";
  }
  return "named";
}

std::string AlertFingerprint(const std::vector<std::pair<std::string, std::string>>& labels) {
  std::vector<std::pair<std::string, std::string>> sorted = labels;
  std::sort(sorted.begin(), sorted.end());
  uint64_t h = 14695981039346656037ull;  // FNV-1a 64 offset basis
  auto add = [&h](std::string_view s) {
    for (char c : s) {
      h ^= static_cast<uint8_t>(c);
      h *= 1099511628211ull;
    }
  };
  for (const auto& [name, value] : sorted) {
    add(name);
    add("\xff");
    add(value);
    add("\xff");
  }
  return fmt::format("{:016x}", h);
}

uint64_t AlertWindowStart(int64_t starts_at_realtime_ns, uint64_t lookback_ns, int64_t realtime_now,
                          uint64_t boottime_now) {
  if (starts_at_realtime_ns <= 0) return 0;
  // How long ago the window starts, as a duration: never absolute sums.
  int64_t ago = realtime_now - starts_at_realtime_ns;
  if (ago < 0) ago = 0;  // an alert from this node's future: a skewed clock
  uint64_t back = static_cast<uint64_t>(ago) + lookback_ns;
  if (back < static_cast<uint64_t>(ago) || back >= boottime_now) return 0;  // before this boot
  return boottime_now - back;
}

namespace {

// "job_4242" and "4242" are one SLURM job.
std::string_view JobKey(std::string_view id) {
  id = Trim(id);
  return StartsWith(id, "job_") ? id.substr(4) : id;
}

bool ListsNode(std::string_view list, const std::vector<std::string>& names, std::string* which) {
  for (std::string_view part : Split(list, ',')) {
    for (std::string_view item : Split(part, ' ')) {
      item = HostOf(Trim(item));
      if (item.empty()) continue;
      for (const std::string& n : names)
        if (!n.empty() && n == item) {
          *which = n;
          return true;
        }
    }
  }
  return false;
}

}  // namespace

Result<std::optional<AlertMatch>> MatchAlertmanagerWebhook(std::string_view body, const NodeIdentity& node) {
  GN_ASSIGN_OR_RETURN(JsonValue doc, ParseJson(body));
  if (!doc.is_object() || !doc["alerts"].is_array())
    return MakeError("not an Alertmanager webhook: no \"alerts\" array");
  std::optional<AlertMatch> best;
  for (const JsonValue& alert : doc["alerts"].items()) {
    const JsonValue& labels = alert["labels"];
    if (!alert.is_object() || !labels.is_object())
      return MakeError("not an Alertmanager webhook: an alert without \"labels\"");
    if (alert["status"].String() != "firing") continue;
    std::string name = labels["alertname"].String();
    if (!name.starts_with("Gpunoise") && !labels.Has("finding")) continue;
    std::string target = labels["node"].String(), hostname = labels["hostname"].String();
    std::string instance(HostOf(labels["instance"].String()));
    std::string about = !target.empty() ? target : !hostname.empty() ? hostname : instance;
    std::string job_text;
    if (labels.Has("namespace") && labels.Has("job_name"))
      job_text = "job " + labels["namespace"].String() + "/" + labels["job_name"].String();
    std::string job_label;
    for (const char* key : {"slurm_job_id", "job_id"})
      if (std::string v = labels[key].String(); !v.empty() && job_label.empty()) {
        job_label = std::string(JobKey(v));
        if (job_text.empty()) job_text = fmt::format("job {}", job_label);
      }
    const JsonValue& annotations = alert["annotations"];
    bool has_baseline = annotations.is_object() && annotations.Has("baseline_nodes");

    std::optional<AlertMatch> m;
    for (const std::string& n : node.names) {
      if (n.empty() || (n != target && n != hostname && n != instance)) continue;
      m = AlertMatch{"alert " + name + " for " + n + (job_text.empty() ? "" : " (" + job_text + ")"),
                     AlertRole::kNamed};
      break;
    }
    std::string which;
    if (!m && has_baseline && ListsNode(annotations["baseline_nodes"].String(), node.names, &which))
      m = AlertMatch{"alert " + name + " for " + (about.empty() ? job_text : about) + ": " + which +
                         " dumps the same window as a baseline",
                     AlertRole::kBaseline};
    if (!m && !has_baseline && !job_label.empty()) {
      for (const std::string& j : node.jobs)
        if (JobKey(j) == job_label) {
          m = AlertMatch{"alert " + name + (about.empty() ? "" : " for " + about) + ": " +
                             (node.names.empty() ? std::string("this node") : node.names.front()) + " runs " +
                             job_text + " and dumps the same window",
                         AlertRole::kJob};
          break;
        }
    }
    if (!m || (best && best->role <= m->role)) continue;
    m->reason = OneLine(std::move(m->reason));
    std::string fp = alert["fingerprint"].String();
    if (fp.empty()) {
      std::vector<std::pair<std::string, std::string>> all;
      for (const auto& [k, v] : labels.members()) all.emplace_back(k, v.String());
      fp = AlertFingerprint(all);
    }
    // It names the dump file: keep it to what a file name may hold.
    std::erase_if(fp, [](char c) { return !std::isalnum(static_cast<unsigned char>(c)); });
    if (fp.size() > 32) fp.resize(32);
    m->fingerprint = fp;
    if (std::string starts = alert["startsAt"].String(); !starts.empty())
      if (auto t = ParseStartAt(starts, 0); t.ok() && *t > 0) m->starts_at_realtime_ns = *t;
    best = std::move(m);
  }
  return best;
}

namespace {

bool FileNameChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_'; }

std::string DumpTag(std::string_view kind, std::string_view id, std::string_view machine) {
  std::string tag = std::string(kind) + "-" + std::string(id.empty() ? "unknown" : id) + "-";
  std::string_view m = machine.empty() ? std::string_view("node") : machine.substr(0, 64);
  for (char c : m) tag += FileNameChar(c) ? c : '_';
  return tag;
}

}  // namespace

std::string AlertDumpTag(std::string_view fingerprint, std::string_view machine) {
  return DumpTag("alert", fingerprint, machine);
}

std::string RequestDumpTag(std::string_view id, std::string_view machine) { return DumpTag("request", id, machine); }

Result<RecordRequest> ParseRecordRequest(std::string_view body) {
  RecordRequest r;
  r.reason = "requested";
  if (body.find_first_not_of(" \t\r\n") == std::string_view::npos) return r;
  GN_ASSIGN_OR_RETURN(JsonValue doc, ParseJson(body));
  if (!doc.is_object()) return MakeError("the body must be a JSON object");
  for (const char* key : {"reason", "since", "id"})
    if (doc.Has(key) && doc[key].type() != JsonValue::Type::kString) return MakeError("\"{}\" must be a string", key);
  std::string reason = doc["reason"].String("requested");
  r.reason = OneLine(reason.empty() ? "requested" : reason);
  if (doc.Has("since")) {
    auto since = ParseStartAt(doc["since"].String(), 0);
    if (!since.ok() || doc["since"].String().starts_with('+') || *since <= 0)
      return MakeError("\"since\" must be an ISO 8601 time such as 2026-12-01T12:40:00Z");
    r.since_realtime_ns = *since;
  }
  r.id = doc["id"].String();
  if (r.id.size() > 64 || !std::all_of(r.id.begin(), r.id.end(), FileNameChar))
    return MakeError("\"id\" must be at most 64 letters, digits, '.', '-' or '_' (it names the dump)");
  return r;
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

void RecordTrigger::SetNodeJobs(std::set<std::string> jobs) {
  std::lock_guard<std::mutex> lock(mu_);
  jobs_ = std::move(jobs);
}

std::set<std::string> RecordTrigger::node_jobs() const {
  std::lock_guard<std::mutex> lock(mu_);
  return jobs_;
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
