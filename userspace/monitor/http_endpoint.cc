#include "monitor/http_endpoint.h"

#include <httplib.h>

#include "common/capabilities.h"
#include "common/clock.h"
#include "common/log.h"
#include "export/openmetrics/exposition.h"
#include "monitor/basic_auth.h"
#include "monitor/connection_queue.h"
#include "monitor/record_trigger.h"
#include "monitor/request_deadline.h"

namespace gpunoise::monitor {

namespace {

bool SameTls(const TlsServerConfig& a, const TlsServerConfig& b) {
  return a.cert_file == b.cert_file && a.key_file == b.key_file && a.client_ca_file == b.client_ca_file &&
         a.client_auth == b.client_auth && a.min_version == b.min_version && a.max_version == b.max_version;
}

}  // namespace

Result<std::unique_ptr<HttpEndpoint>> HttpEndpoint::Start(const EndpointOptions& options) {
  auto ep = std::make_unique<HttpEndpoint>();
  if (!options.web_config_file.empty()) {
    ep->web_config_file_ = options.web_config_file;
    ep->web_stamp_ = FileStampOf(options.web_config_file);
    GN_ASSIGN_OR_RETURN(ep->web_config_, ReadWebConfigFile(options.web_config_file));
    if (!ep->web_config_.users.empty()) ep->auth_ = std::make_shared<BasicAuth>(ep->web_config_.users);
    if (ep->web_config_.tls.enabled()) {
      GN_ASSIGN_OR_RETURN(ep->tls_, TlsCredentials::Load(ep->web_config_.tls));
    } else if (ep->auth_) {
      log::Warning("monitor: {} has basic_auth_users but no tls_server_config: passwords cross the network in "
                   "the clear", options.web_config_file);
    }
  }
  if (ep->tls_) {
    TlsCredentials* creds = ep->tls_.get();
    auto ssl = std::make_unique<httplib::SSLServer>([creds](SSL_CTX& ctx) { return creds->Configure(&ctx); });
    if (!ssl->is_valid()) return MakeError("failed to set up TLS: OpenSSL refused the server context");
    ep->server_ = std::move(ssl);
  } else {
    ep->server_ = std::make_unique<httplib::Server>();
  }
  httplib::Server& s = *ep->server_;
  size_t max_connections = options.max_connections;
  s.new_task_queue = [max_connections] { return new ConnectionQueue(max_connections); };
  s.set_keep_alive_timeout(options.keep_alive_timeout_s);
  s.set_keep_alive_max_count(20);
  s.set_read_timeout(options.read_timeout_s, 0);
  s.set_write_timeout(5, 0);
  s.set_payload_max_length(64 * 1024);

  HttpEndpoint* self = ep.get();
  // Client certificates are checked in the handshake (client_auth_type);
  // basic auth, when configured, on every request as well (both apply, as
  // in exporter-toolkit).
  // A request without a body is complete when it is routed; one with a
  // body must also have sent it (and been answered) within the deadline.
  s.set_logger([self](const httplib::Request& req, const httplib::Response&) {
    self->deadlines_->ResponseWritten(req.remote_addr, req.remote_port);
  });
  s.set_pre_routing_handler([self](const httplib::Request& req, httplib::Response& res) {
    if (req.method == "GET" || req.method == "HEAD") self->deadlines_->RequestRead(req.remote_addr, req.remote_port);
    if (req.path == "/healthz") return httplib::Server::HandlerResponse::Unhandled;
    if (self->Authorized(req.get_header_value("Authorization"))) return httplib::Server::HandlerResponse::Unhandled;
    res.status = 401;
    res.set_header("WWW-Authenticate", "Basic realm=\"gpunoise\"");
    res.set_content("unauthorized\n", "text/plain");
    return httplib::Server::HandlerResponse::Handled;
  });
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

  const ListenAddress& address = options.address;
  ep->host_ = address.host;
  if (options.trigger) ep->AddTriggerRoutes(options.trigger, options.node_names);
  if (address.port == 0) {
    ep->port_ = s.bind_to_any_port(address.host);
    if (ep->port_ < 0) return MakeError("failed to listen on {}:0: cannot bind", address.host);
  } else {
    if (!s.bind_to_port(address.host, address.port))
      return MakeError("failed to listen on {}:{}: address in use or not available", address.host, address.port);
    ep->port_ = address.port;
  }
  ep->deadlines_ = std::make_unique<RequestDeadlines>(ep->port_, std::chrono::milliseconds(options.request_deadline_ms));
  ep->thread_ = std::thread([self] { self->Serve(); });
  // stop() only takes effect once the server runs: wait for that, so a
  // quick shutdown cannot leave the thread listening forever.
  for (int i = 0; i < 5000 && !s.is_running(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return ep;
}

// Starting a recording is an action, not a read: on a listener other hosts
// reach it needs an authenticated client (basic auth passed the
// pre-routing check; client certificates the handshake).
void HttpEndpoint::AddTriggerRoutes(std::shared_ptr<RecordTrigger> trigger, std::vector<std::string> names) {
  auto handle = [this, trigger, names](bool alertmanager, const httplib::Request& req, httplib::Response& res) {
    auto reply = [&res](int status, const std::string& text) {
      res.status = status;
      res.set_content(text + "\n", "text/plain");
    };
    if (authentication() == "none" && !IsLoopbackHost(host_))
      return reply(403, "refused: recording on demand needs basic auth or client certificates (web config) on a "
                        "listener that is not loopback");
    TriggerRequest t;
    t.at = BoottimeNs();
    t.source = alertmanager ? "alertmanager" : "api";
    if (alertmanager) {
      NodeIdentity node{names, trigger->node_jobs()};
      auto match = MatchAlertmanagerWebhook(req.body, node);
      if (!match.ok()) return reply(400, "bad request: " + match.error().message);
      // 200, not an error: Alertmanager retries anything else.
      if (!*match) return reply(200, "no firing gpunoise alert names this node, lists it as a baseline or names its job");
      t.reason = (*match)->reason;
      t.role = std::string(AlertRoleName((*match)->role));
      t.fingerprint = (*match)->fingerprint;
      t.starts_at_realtime_ns = (*match)->starts_at_realtime_ns;
    } else {
      auto parsed = ParseRecordRequest(req.body);
      if (!parsed.ok()) return reply(400, "bad request: " + parsed.error().message);
      // A window that starts in the future would be empty; a few seconds
      // of skew between the sender's clock and this node's are forgiven.
      if (parsed->since_realtime_ns > static_cast<int64_t>(RealtimeNs()) + 5'000'000'000)
        return reply(400, "bad request: \"since\" is in the future (this node's clock)");
      t.reason = parsed->reason;
      t.starts_at_realtime_ns = parsed->since_realtime_ns;
      t.id = parsed->id;
    }
    std::string reason = t.reason;
    uint64_t retry_after_s = 0;
    switch (trigger->Submit(std::move(t), &retry_after_s)) {
      case RecordTrigger::Verdict::kQueued:
        return reply(202, "queued: the flight recorder dumps its window at the next interval (" + reason + ")");
      case RecordTrigger::Verdict::kRateLimited:
        res.set_header("Retry-After", std::to_string(retry_after_s));
        return reply(429, fmt::format("refused: one recording per dump interval; retry in {} s", retry_after_s));
      case RecordTrigger::Verdict::kDisabled:
        return reply(503, "no flight recorder: start the monitor with --flight-recorder");
    }
  };
  server_->Post("/api/v1/record", [handle](const httplib::Request& req, httplib::Response& res) {
    handle(false, req, res);
  });
  server_->Post("/api/v1/alertmanager", [handle](const httplib::Request& req, httplib::Response& res) {
    handle(true, req, res);
  });
}

std::shared_ptr<BasicAuth> HttpEndpoint::CurrentAuth() {
  std::lock_guard<std::mutex> lock(auth_mu_);
  if (web_config_file_.empty()) return auth_;
  FileStamp now = FileStampOf(web_config_file_);
  if (now == web_stamp_ || now == web_failed_stamp_) return auth_;
  auto fresh = ReadWebConfigFile(web_config_file_);
  if (!fresh.ok()) {
    web_failed_stamp_ = now;
    log::Warning("monitor: keeping the previous web config: {}", fresh.error().message);
    return auth_;
  }
  web_stamp_ = now;
  if (!SameTls(fresh->tls, web_config_.tls))
    log::Warning("monitor: {}: a change of tls_server_config needs a restart (the certificate files themselves are "
                 "re-read as they change)", web_config_file_);
  // No users in the new file while the old one had some would open the
  // endpoint; that takes a restart, as turning TLS off does.
  if (fresh->users.empty() && auth_) {
    log::Warning("monitor: {}: removing every basic_auth_users entry needs a restart; still asking for them",
                 web_config_file_);
  } else if (fresh->users != web_config_.users) {
    auth_ = fresh->users.empty() ? nullptr : std::make_shared<BasicAuth>(fresh->users);
    web_config_.users = fresh->users;
    log::Info("monitor: {} reloaded: {} basic-auth user(s)", web_config_file_, web_config_.users.size());
  }
  return auth_;
}

bool HttpEndpoint::Authorized(const std::string& authorization) {
  std::shared_ptr<BasicAuth> auth = CurrentAuth();
  return !auth || auth->Check(authorization) == BasicAuth::Verdict::kOk;
}

std::string HttpEndpoint::authentication() const {
  std::lock_guard<std::mutex> lock(auth_mu_);
  bool certs = tls_ && web_config_.tls.client_auth == ClientAuth::kRequireAndVerifyClientCert;
  bool users = auth_ != nullptr;
  if (certs && users) return "client certificate and basic auth";
  if (users) return "basic auth";
  if (certs) return "client certificates";
  return "none";
}

void HttpEndpoint::Serve() {
  // The HTTP threads parse what the network sends and need no privilege:
  // this thread (and so every connection thread it starts) gives up every
  // capability before the first accept.
  if (Status st = DropAllCapabilitiesOfThisThread(); !st.ok())
    log::Warning("monitor: the HTTP thread keeps its capabilities: {}", st.error().message);
  if (!server_->listen_after_bind()) log::Warning("monitor: the HTTP server stopped unexpectedly");
}

HttpEndpoint::~HttpEndpoint() {
  if (server_) server_->stop();
  if (thread_.joinable()) thread_.join();
}

uint64_t HttpEndpoint::requests_past_deadline() const { return deadlines_ ? deadlines_->expired() : 0; }

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
