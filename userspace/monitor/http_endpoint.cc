#include "monitor/http_endpoint.h"

#include <httplib.h>

#include "common/clock.h"
#include "common/log.h"
#include "export/openmetrics/exposition.h"

namespace gpunoise::monitor {

Result<std::unique_ptr<HttpEndpoint>> HttpEndpoint::Start(const ListenAddress& address) {
  auto ep = std::make_unique<HttpEndpoint>();
  ep->server_ = std::make_unique<httplib::Server>();
  httplib::Server& s = *ep->server_;
  // A few threads are plenty for a handful of scrapers; httplib's default
  // pool is sized by the CPU count, which on a big node is memory and
  // threads for nothing. httplib takes ownership of the queue it is given.
  s.new_task_queue = [] { return new httplib::ThreadPool(2); };
  s.set_keep_alive_timeout(2);
  s.set_read_timeout(5, 0);
  s.set_write_timeout(5, 0);
  s.set_payload_max_length(64 * 1024);

  HttpEndpoint* self = ep.get();
  s.Get("/metrics", [self](const httplib::Request& req, httplib::Response& res) {
    std::shared_ptr<const Families> families;
    {
      std::lock_guard<std::mutex> lock(self->mu_);
      families = self->families_;
    }
    self->scrapes_.fetch_add(1);
    if (!families) {
      res.status = 503;
      res.set_content("gpunoise monitor: first interval not complete yet\n", "text/plain");
      return;
    }
    auto format = openmetrics::NegotiateFormat(req.get_header_value("Accept"));
    std::string body;
    body.reserve(64 * 1024);
    openmetrics::Render(*families, format, &body);
    res.set_content(body, std::string(openmetrics::ContentType(format)).c_str());
  });
  s.Get("/healthz", [self](const httplib::Request&, httplib::Response& res) {
    uint64_t at = self->published_at_.load();
    uint64_t now = BoottimeNs();
    if (!at) {
      res.status = 503;
      res.set_content("starting\n", "text/plain");
    } else if (now - at > self->stale_after_ns_.load()) {
      res.status = 503;
      res.set_content(fmt::format("stale: last interval {:.1f} s ago\n", static_cast<double>(now - at) / 1e9),
                      "text/plain");
    } else {
      res.set_content("ok\n", "text/plain");
    }
  });
  s.Get("/", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("gpunoise monitor: see /metrics and /healthz\n", "text/plain");
  });

  ep->host_ = address.host;
  if (address.port == 0) {
    ep->port_ = s.bind_to_any_port(address.host);
    if (ep->port_ < 0) return MakeError("failed to listen on {}:0: cannot bind", address.host);
  } else {
    if (!s.bind_to_port(address.host, address.port))
      return MakeError("failed to listen on {}:{}: address in use or not available", address.host, address.port);
    ep->port_ = address.port;
  }
  ep->thread_ = std::thread([self] { self->Serve(); });
  // stop() only takes effect once the server runs: wait for that, so a
  // quick shutdown cannot leave the thread listening forever.
  for (int i = 0; i < 5000 && !s.is_running(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return ep;
}

void HttpEndpoint::Serve() {
  if (!server_->listen_after_bind()) log::Warning("monitor: the HTTP server stopped unexpectedly");
}

HttpEndpoint::~HttpEndpoint() {
  if (server_) server_->stop();
  if (thread_.joinable()) thread_.join();
}

std::string HttpEndpoint::address() const {
  if (host_.find(':') != std::string::npos) return fmt::format("[{}]:{}", host_, port_);
  return fmt::format("{}:{}", host_, port_);
}

void HttpEndpoint::Publish(std::shared_ptr<const Families> families, uint64_t now_ns) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    families_ = std::move(families);
  }
  published_at_.store(now_ns);
}

}  // namespace gpunoise::monitor
