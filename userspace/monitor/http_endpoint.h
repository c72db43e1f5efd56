// The monitor's HTTP side: GET /metrics (Prometheus text or OpenMetrics,
// as the client asks) and GET /healthz, served by cpp-httplib on a small
// thread pool. The monitor loop publishes a new set of metric families
// each interval; scrapes render the latest one and never touch BPF maps.
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

namespace httplib {
class Server;
}

namespace gpunoise::monitor {

class HttpEndpoint {
 public:
  // Binds now (so a bad or busy address fails before any eBPF is loaded)
  // and serves from a thread. Port 0 picks a free port.
  static Result<std::unique_ptr<HttpEndpoint>> Start(const ListenAddress& address);
  HttpEndpoint() = default;  // for Start() only
  ~HttpEndpoint();
  HttpEndpoint(const HttpEndpoint&) = delete;
  HttpEndpoint& operator=(const HttpEndpoint&) = delete;

  // "127.0.0.1:9464" with the port actually bound.
  std::string address() const;

  using Families = std::vector<openmetrics::MetricFamily>;
  void Publish(std::shared_ptr<const Families> families, uint64_t now_ns);
  // /healthz says "stale" when no interval completed for this long.
  void set_stale_after(uint64_t ns) { stale_after_ns_ = ns; }
  uint64_t scrapes() const { return scrapes_.load(); }

 private:
  void Serve();

  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  std::string host_;
  int port_ = 0;
  mutable std::mutex mu_;
  std::shared_ptr<const Families> families_;
  std::atomic<uint64_t> published_at_{0};
  std::atomic<uint64_t> stale_after_ns_{5'000'000'000};
  std::atomic<uint64_t> scrapes_{0};
};

}  // namespace gpunoise::monitor
