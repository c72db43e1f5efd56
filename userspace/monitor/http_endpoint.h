// The monitor's HTTP side: GET /metrics (Prometheus text or OpenMetrics,
// as the client asks) and GET /healthz, served by cpp-httplib; and, with a
// trigger, POST /api/v1/record and /api/v1/alertmanager (record_trigger.h),
// which need authentication unless the listener is loopback. The monitor
// loop publishes a new set of metric families each interval; scrapes
// render the latest one and never touch BPF maps.
//
// With a web config (monitor/web_config.h) the endpoint speaks TLS
// (certificates re-read when they change), checks client certificates in
// the handshake and asks for basic auth on every path but /healthz, which says only "ok",
// "starting" or "stale" and costs no bcrypt, so liveness probes need no
// credentials. Each connection has its own thread up to a cap, with read,
// write and keep-alive timeouts, so clients that connect and send nothing
// delay a scrape by at most the keep-alive timeout, never block it, and a
// request deadline (monitor/request_deadline.h) cuts off clients that
// trickle their request in.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/result.h"
#include "export/openmetrics/metric_family.h"
#include "monitor/monitor_options.h"
#include "monitor/tls_credentials.h"
#include "monitor/web_config.h"

namespace httplib {
class Server;
}

namespace gpunoise::monitor {

class BasicAuth;
class RecordTrigger;
class RequestDeadlines;

struct EndpointOptions {
  ListenAddress address;
  std::string web_config_file;  // empty: plain HTTP, no authentication
  size_t max_connections = 64;
  int read_timeout_s = 3;
  int keep_alive_timeout_s = 2;
  // POST /api/v1/record and /api/v1/alertmanager queue flight-recorder
  // dumps here (record_trigger.h); null: no such paths. `node_names` are
  // the names an Alertmanager alert may give this node by.
  std::shared_ptr<RecordTrigger> trigger;
  std::vector<std::string> node_names;
  // A whole request (TLS handshake included) must arrive within this of
  // the connection or of the previous response (monitor/request_deadline.h).
  int request_deadline_ms = 10'000;
};

class HttpEndpoint {
 public:
  // Binds now (so a bad or busy address, or a bad certificate, fails before
  // any eBPF is loaded) and serves from a thread. Port 0 picks a free port.
  static Result<std::unique_ptr<HttpEndpoint>> Start(const EndpointOptions& options);
  HttpEndpoint() = default;  // for Start() only
  ~HttpEndpoint();
  HttpEndpoint(const HttpEndpoint&) = delete;
  HttpEndpoint& operator=(const HttpEndpoint&) = delete;

  // "127.0.0.1:9464" with the port actually bound.
  std::string address() const;
  bool tls() const { return tls_ != nullptr; }
  // "basic auth", "client certificates", "client certificate and basic auth", "none".
  std::string authentication() const;

  using Families = std::vector<openmetrics::MetricFamily>;
  void Publish(std::shared_ptr<const Families> families, uint64_t now_ns);
  // /healthz says "stale" when no interval completed for this long.
  void set_stale_after(uint64_t ns) { stale_after_ns_ = ns; }
  uint64_t scrapes() const { return scrapes_.load(); }
  // Connections shut down for not sending a whole request in time.
  uint64_t requests_past_deadline() const;

 private:
  void Serve();
  // Reads the web config again when its file changed (exporter-toolkit
  // reads it on every request): new users apply at once.
  std::shared_ptr<BasicAuth> CurrentAuth();
  bool Authorized(const std::string& authorization);
  void AddTriggerRoutes(std::shared_ptr<RecordTrigger> trigger, std::vector<std::string> names);

  std::unique_ptr<TlsCredentials> tls_;
  std::unique_ptr<RequestDeadlines> deadlines_;  // set before the server runs
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  std::string host_;
  int port_ = 0;
  mutable std::mutex mu_;
  std::shared_ptr<const Families> families_;
  std::atomic<uint64_t> published_at_{0};
  std::atomic<uint64_t> stale_after_ns_{5'000'000'000};
  std::atomic<uint64_t> scrapes_{0};

  std::string web_config_file_;
  WebConfig web_config_;
  mutable std::mutex auth_mu_;
  FileStamp web_stamp_, web_failed_stamp_;
  std::shared_ptr<BasicAuth> auth_;  // null: no basic_auth_users
};

}  // namespace gpunoise::monitor
