#include "monitor/monitor_options.h"

#include <algorithm>

#include "analyze/thresholds.h"
#include "common/cpu_list.h"
#include "common/files.h"
#include "common/strings.h"
#include "monitor/web_config.h"
#include "common/privilege_drop.h"

namespace gpunoise::monitor {
namespace {

Result<uint64_t> Duration(std::string_view key, std::string_view text, uint64_t min_ns) {
  auto d = ParseDuration(text);
  if (!d.ok()) return MakeError("{}: {}", key, d.error().message);
  if (*d < min_ns) return MakeError("{}: '{}' is too short", key, text);
  return *d;
}

Result<uint64_t> Number(std::string_view key, std::string_view text, uint64_t max) {
  auto v = ParseUint64(Trim(text));
  if (!v || *v > max) return MakeError("{}: '{}' is not a whole number up to {}", key, text, max);
  return *v;
}

Result<int> ResolveGroup(std::string_view text) {
  GN_ASSIGN_OR_RETURN(gid_t gid, LookUpGroup(text));
  return static_cast<int>(gid);
}

Result<uint64_t> Bytes(std::string_view key, std::string_view text) {
  auto b = ParseByteSize(text);
  if (!b.ok() || *b == 0) return MakeError("{}: '{}' is not a size (e.g. 64M)", key, text);
  return *b;
}

Status CheckFocusSpec(std::string_view spec) {
  if (StartsWith(spec, "comm:")) {
    std::string_view name = spec.substr(5);
    if (name.empty() || name.size() > 15)
      return MakeError("focus: '{}' needs a process name of 1 to 15 characters", spec);
    return OkStatus();
  }
  if (StartsWith(spec, "cgroup:")) {
    if (spec.size() == 7) return MakeError("focus: '{}' needs a cgroup path", spec);
    return OkStatus();
  }
  auto pid = ParseInt64(spec);
  if (!pid || *pid <= 0)
    return MakeError("focus: '{}' is not a PID, comm:NAME or cgroup:PATH", spec);
  return OkStatus();
}

Status Apply(MonitorOptions& o, std::string_view key, const std::vector<std::string>& values) {
  const std::string& v = values.back();  // single-valued keys: the last one wins
  if (key == "interval") {
    GN_ASSIGN_OR_RETURN(o.interval_ns, Duration(key, v, 100'000'000));
  } else if (key == "listen") {
    GN_RETURN_IF_ERROR(ParseListenAddress(v));
    o.listen = v;
  } else if (key == "web.config.file") {
    GN_RETURN_IF_ERROR(ReadWebConfigFile(v));
    o.web_config_file = v;
  } else if (key == "dump-group") {
    GN_ASSIGN_OR_RETURN(o.dump_gid, ResolveGroup(v));
  } else if (key == "insecure-listen") {
    if (v == "on" || v == "true" || v == "1") o.insecure_listen = true;
    else if (v == "off" || v == "false" || v == "0") o.insecure_listen = false;
    else return MakeError("insecure-listen: '{}' is not on or off", v);
  } else if (key == "focus") {
    o.focus.clear();
    for (const std::string& value : values)
      for (std::string_view item : Split(value, ','))
        if (!Trim(item).empty()) {
          GN_RETURN_IF_ERROR(CheckFocusSpec(Trim(item)));
          o.focus.emplace_back(Trim(item));
        }
  } else if (key == "focus-cpus") {
    auto cpus = ParseCpuList(v);
    if (!cpus.ok()) return MakeError("focus-cpus: {}", cpus.error().message);
    o.focus_cpus = *cpus;
  } else if (key == "sample-hz") {
    GN_ASSIGN_OR_RETURN(uint64_t hz, Number(key, v, 1000));
    o.sample_hz = static_cast<int>(hz);
  } else if (key == "focus-refresh") {
    GN_ASSIGN_OR_RETURN(o.focus_refresh_ns, Duration(key, v, 100'000'000));
  } else if (key == "flight-recorder") {
    if (v == "off" || v == "0") {
      o.flight_recorder_ns = 0;
    } else {
      GN_ASSIGN_OR_RETURN(o.flight_recorder_ns, Duration(key, v, 1'000'000'000));
    }
  } else if (key == "flight-recorder-bytes") {
    GN_ASSIGN_OR_RETURN(o.flight_recorder_bytes, Bytes(key, v));
    if (o.flight_recorder_bytes < (1u << 20)) return MakeError("flight-recorder-bytes: at least 1M");
  } else if (key == "dump-dir") {
    o.dump_dir = v;
  } else if (key == "max-dumps") {
    GN_ASSIGN_OR_RETURN(uint64_t n, Number(key, v, 100000));
    if (n == 0) return MakeError("max-dumps: at least 1");
    o.max_dumps = static_cast<uint32_t>(n);
  } else if (key == "max-dump-bytes") {
    GN_ASSIGN_OR_RETURN(o.max_dump_bytes, Bytes(key, v));
  } else if (key == "dump-interval") {
    GN_ASSIGN_OR_RETURN(o.dump_interval_ns, Duration(key, v, 0));
  } else if (key == "stale-after") {
    GN_ASSIGN_OR_RETURN(o.stale_after_ns, Duration(key, v, 1'000'000'000));
  } else if (key == "sample-isolated") {
    if (v == "on" || v == "true" || v == "1") o.sample_isolated = true;
    else if (v == "off" || v == "false" || v == "0") o.sample_isolated = false;
    else return MakeError("sample-isolated: '{}' is not on or off", v);
  } else if (key == "redact") {
    if (v == "on" || v == "true" || v == "1") o.redact = true;
    else if (v == "off" || v == "false" || v == "0") o.redact = false;
    else return MakeError("redact: '{}' is not on or off", v);
  } else if (key == "net-packet-counters") {
    if (v == "on" || v == "true" || v == "1") o.net_packet_counters = true;
    else if (v == "off" || v == "false" || v == "0") o.net_packet_counters = false;
    else return MakeError("net-packet-counters: '{}' is not on or off", v);
  } else if (key == "threshold") {
    analyze::Thresholds check;
    for (const std::string& t : values)
      if (Status st = check.Set(t); !st.ok()) return MakeError("threshold: {}", st.error().message);
    o.thresholds = values;
  } else if (key == "job") {
    o.jobs.clear();
    for (const std::string& value : values)
      for (std::string_view item : Split(value, ','))
        if (!Trim(item).empty()) o.jobs.emplace_back(Trim(item));
  } else if (key == "alert-lookback") {
    GN_ASSIGN_OR_RETURN(o.alert_lookback_ns, Duration(key, v, 0));
  } else if (key == "attach") {
    if (v == "auto") o.attach_mode = collect::AttachMode::kPreferBtf;
    else if (v == "tracepoint") o.attach_mode = collect::AttachMode::kClassicOnly;
    else return MakeError("attach: '{}' is not auto or tracepoint", v);
  } else {
    return MakeError("unknown option '{}'", key);
  }
  return OkStatus();
}

}  // namespace

const std::vector<std::string_view>& OptionNames() {
  static const std::vector<std::string_view> kNames = {
      "interval",  "listen", "web.config.file", "insecure-listen", "focus",          "focus-cpus",    "sample-hz",
      "focus-refresh", "flight-recorder", "flight-recorder-bytes", "dump-dir", "max-dumps",
      "max-dump-bytes", "dump-group", "dump-interval", "stale-after", "net-packet-counters", "redact", "sample-isolated", "threshold", "attach",
      "job", "alert-lookback"};
  return kNames;
}

bool IsRepeatable(std::string_view name) { return name == "focus" || name == "threshold" || name == "job"; }

Result<OptionLayer> ParseConfigText(std::string_view text) {
  OptionLayer layer;
  int line_no = 0;
  for (std::string_view line : Split(text, '\n')) {
    ++line_no;
    if (size_t hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
    line = Trim(line);
    if (line.empty()) continue;
    size_t eq = line.find('=');
    if (eq == std::string_view::npos) return MakeError("line {}: expected 'key = value', got '{}'", line_no, line);
    std::string_view key = Trim(line.substr(0, eq));
    std::string_view value = Trim(line.substr(eq + 1));
    const auto& names = OptionNames();
    if (std::find(names.begin(), names.end(), key) == names.end())
      return MakeError("line {}: unknown key '{}'", line_no, key);
    if (value.empty()) return MakeError("line {}: '{}' has no value", line_no, key);
    layer[std::string(key)].emplace_back(value);
  }
  return layer;
}

Result<OptionLayer> ReadConfigFile(const std::string& path) {
  auto text = ReadFileToString(path);
  if (!text.ok()) return MakeError("failed to read config file {}: {}", path, text.error().message);
  auto layer = ParseConfigText(*text);
  if (!layer.ok()) return MakeError("config file {}: {}", path, layer.error().message);
  return layer;
}

Result<MonitorOptions> ResolveOptions(const OptionLayer& file, const OptionLayer& command_line) {
  OptionLayer merged = file;
  for (const auto& [key, values] : command_line) merged[key] = values;
  MonitorOptions o;
  for (const auto& [key, values] : merged) {
    if (values.empty()) continue;
    GN_RETURN_IF_ERROR(Apply(o, key, values));
  }
  if (o.flight_recorder() && o.dump_dir.empty())
    return MakeError("flight-recorder needs dump-dir (where the traces go)");
  GN_ASSIGN_OR_RETURN(ListenAddress address, ParseListenAddress(o.listen));
  if (!IsLoopbackHost(address.host) && !o.insecure_listen) {
    WebConfig web;
    if (!o.web_config_file.empty()) { GN_ASSIGN_OR_RETURN(web, ReadWebConfigFile(o.web_config_file)); }
    if (!web.tls.enabled() || !web.authenticates())
      return MakeError("listen {} is beyond loopback: give a web.config.file with tls_server_config and "
                       "basic_auth_users or client_auth_type RequireAndVerifyClientCert (docs/monitor.md), "
                       "or insecure-listen on", o.listen);
  }
  return o;
}

Result<ListenAddress> ParseListenAddress(std::string_view text) {
  ListenAddress a;
  std::string_view port_text;
  if (StartsWith(text, "[")) {
    size_t close = text.find(']');
    if (close == std::string_view::npos || close + 1 >= text.size() || text[close + 1] != ':')
      return MakeError("listen: '{}' is not [IPv6]:PORT", text);
    a.host = std::string(text.substr(1, close - 1));
    port_text = text.substr(close + 2);
  } else {
    size_t colon = text.rfind(':');
    if (colon == std::string_view::npos) return MakeError("listen: '{}' is not HOST:PORT", text);
    a.host = std::string(text.substr(0, colon));
    port_text = text.substr(colon + 1);
    if (a.host.find(':') != std::string::npos)
      return MakeError("listen: write IPv6 addresses in brackets ([::1]:9464), got '{}'", text);
  }
  if (a.host.empty()) a.host = "0.0.0.0";
  auto port = ParseUint64(port_text);
  if (!port || *port > 65535) return MakeError("listen: '{}' is not a port (0-65535)", port_text);
  a.port = static_cast<int>(*port);
  return a;
}

bool IsLoopbackHost(std::string_view host) {
  return host == "localhost" || host == "::1" || StartsWith(host, "127.");
}

}  // namespace gpunoise::monitor
