// The monitor's endpoint on loopback, without eBPF: TLS, basic auth,
// client certificates, certificate rotation and clients that connect and
// say nothing. Certificates come from the openssl command.
#include "monitor/http_endpoint.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "common/clock.h"
#include "common/unique_fd.h"
#include "integration/support/privileges.h"
#include "integration/support/test_pki.h"

namespace gpunoise::monitor {
namespace {

using namespace std::chrono_literals;

class EndpointTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // A handshake the server refuses closes the socket under the client's
    // write: that must fail the request, not kill the test.
    ::signal(SIGPIPE, SIG_IGN);
    if (std::system("command -v openssl >/dev/null 2>&1") != 0)
      GN_SKIP_MISSING_TOOL("openssl is needed to make test certificates (Debian package openssl)");
    dir_ = std::filesystem::temp_directory_path() / ("gn-endpoint-" + std::to_string(getpid()));
    std::filesystem::create_directories(dir_);
    pki_ = testing::MakeTestPki(dir_);
    ASSERT_FALSE(pki_.dir.empty());
  }
  void TearDown() override {
    endpoint_.reset();
    std::error_code ec;
    if (!dir_.empty()) std::filesystem::remove_all(dir_, ec);
  }
  void WriteWebConfig(const std::string& text) {
    std::ofstream(dir_ + "/web.yml.tmp") << text;
    std::filesystem::rename(dir_ + "/web.yml.tmp", dir_ + "/web.yml");
  }
  void Start(EndpointOptions options = {}) {
    options.address = {"127.0.0.1", 0};
    options.web_config_file = dir_ + "/web.yml";
    auto ep = HttpEndpoint::Start(options);
    ASSERT_TRUE(ep.ok()) << ep.error().message;
    endpoint_ = std::move(ep).value();
    openmetrics::MetricFamily f;
    f.name = "gpunoise_test_value";
    f.samples.push_back({{}, 42});
    endpoint_->Publish(std::make_shared<const HttpEndpoint::Families>(HttpEndpoint::Families{f}), BoottimeNs());
    port_ = std::stoi(endpoint_->address().substr(endpoint_->address().rfind(':') + 1));
  }
  std::unique_ptr<httplib::SSLClient> Client(const std::string& cert = "", const std::string& key = "") {
    auto c = cert.empty() ? std::make_unique<httplib::SSLClient>("127.0.0.1", port_)
                          : std::make_unique<httplib::SSLClient>("127.0.0.1", port_, cert, key);
    c->set_ca_cert_path(pki_.ca_cert.c_str());
    c->enable_server_certificate_verification(true);
    c->set_connection_timeout(5, 0);
    c->set_read_timeout(5, 0);
    return c;
  }
  int Status(httplib::SSLClient& c, const std::string& path, const httplib::Headers& headers = {}) {
    auto r = c.Get(path.c_str(), headers);
    return r ? r->status : 0;
  }
  std::string UsersYaml(const std::string& password) {
    return "basic_auth_users:\n  prometheus: " + testing::BcryptHash(password, 4) + "\n";
  }
  std::string TlsYaml(const std::string& extra = "") {
    return "tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n" + extra;
  }

  std::string dir_;
  testing::TestPki pki_;
  std::unique_ptr<HttpEndpoint> endpoint_;
  int port_ = 0;
};

httplib::Headers Basic(const std::string& user, const std::string& password) {
  return {httplib::make_basic_authentication_header(user, password)};
}

TEST_F(EndpointTest, TlsWithBasicAuthRefusesMissingAndWrongPasswordsWith401) {
  WriteWebConfig(TlsYaml() + UsersYaml("s3cret"));
  Start();
  EXPECT_TRUE(endpoint_->tls());
  EXPECT_EQ(endpoint_->authentication(), "basic auth");
  auto c = Client();
  EXPECT_EQ(Status(*c, "/metrics"), 401);
  EXPECT_EQ(Status(*c, "/metrics", Basic("prometheus", "wrong")), 401);
  EXPECT_EQ(Status(*c, "/metrics", Basic("nobody", "s3cret")), 401);
  EXPECT_EQ(Status(*c, "/", {}), 401) << "every path but /healthz asks";
  auto ok = c->Get("/metrics", Basic("prometheus", "s3cret"));
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 200);
  EXPECT_NE(ok->body.find("gpunoise_test_value 42"), std::string::npos) << ok->body;
  EXPECT_EQ(Status(*c, "/healthz"), 200) << "liveness probes need no password";
}

TEST_F(EndpointTest, PlainHttpIsRefusedOnATlsPort) {
  WriteWebConfig(TlsYaml());
  Start();
  httplib::Client plain("127.0.0.1", port_);
  plain.set_read_timeout(3, 0);
  auto r = plain.Get("/metrics");
  EXPECT_TRUE(!r || r->status != 200);
}

TEST_F(EndpointTest, ClientCertificatesAreRequiredAndVerified) {
  WriteWebConfig(TlsYaml("  client_ca_file: test-ca.crt\n  client_auth_type: RequireAndVerifyClientCert\n"));
  Start();
  EXPECT_EQ(endpoint_->authentication(), "client certificates");
  EXPECT_EQ(Status(*Client(pki_.client_cert, pki_.client_key), "/metrics"), 200);
  EXPECT_EQ(Status(*Client(), "/metrics"), 0) << "no certificate: the handshake fails";
  EXPECT_EQ(Status(*Client(pki_.stranger_cert, pki_.stranger_key), "/metrics"), 0)
      << "a certificate from another CA: the handshake fails";
}

// The serial of the certificate the server presents on a fresh handshake.
std::string PresentedSerial(int port, const std::string& ca) {
  SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
  SSL_CTX_load_verify_locations(ctx, ca.c_str(), nullptr);
  UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string serial;
  if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0) {
    SSL* ssl = SSL_new(ctx);
    SSL_set_fd(ssl, fd.get());
    if (SSL_connect(ssl) == 1 && SSL_get_verify_result(ssl) == X509_V_OK) {
      if (X509* peer = SSL_get1_peer_certificate(ssl)) {
        BIGNUM* bn = ASN1_INTEGER_to_BN(X509_get_serialNumber(peer), nullptr);
        char* hex = BN_bn2hex(bn);
        serial = hex;
        OPENSSL_free(hex);
        BN_free(bn);
        X509_free(peer);
      }
      SSL_shutdown(ssl);
    }
    SSL_free(ssl);
  }
  SSL_CTX_free(ctx);
  return serial;
}

TEST_F(EndpointTest, ARotatedCertificateIsServedWithoutRestart) {
  WriteWebConfig(TlsYaml());
  Start();
  std::string before = testing::CertificateSerial(pki_.server_cert);
  ASSERT_FALSE(before.empty());
  EXPECT_EQ(PresentedSerial(port_, pki_.ca_cert), before);
  std::string after = testing::RotateServerCertificate(pki_);
  ASSERT_FALSE(after.empty());
  ASSERT_NE(after, before);
  EXPECT_EQ(PresentedSerial(port_, pki_.ca_cert), after);
  EXPECT_EQ(Status(*Client(), "/metrics"), 200);
  // A broken file in the middle of a rotation leaves the last good one.
  std::ofstream(pki_.server_cert, std::ios::trunc) << "-----BEGIN CERTIFICATE-----\ngarbage\n";
  EXPECT_EQ(PresentedSerial(port_, pki_.ca_cert), after);
}

TEST_F(EndpointTest, NewUsersInTheWebConfigApplyWithoutRestart) {
  WriteWebConfig(TlsYaml() + UsersYaml("first"));
  Start();
  auto c = Client();
  EXPECT_EQ(Status(*c, "/metrics", Basic("prometheus", "first")), 200);
  std::this_thread::sleep_for(20ms);  // a new mtime even on coarse clocks
  WriteWebConfig(TlsYaml() + UsersYaml("second"));
  EXPECT_EQ(Status(*c, "/metrics", Basic("prometheus", "second")), 200);
  EXPECT_EQ(Status(*c, "/metrics", Basic("prometheus", "first")), 401);
  // A file that does not parse keeps the users that did.
  WriteWebConfig("basic_auth_users: [\n");
  EXPECT_EQ(Status(*c, "/metrics", Basic("prometheus", "second")), 200);
}

// Clients that open connections and send nothing (or stop after the TLS
// hello) must not keep Prometheus waiting.
TEST_F(EndpointTest, ClientsThatConnectAndSendNothingDoNotBlockTheScrape) {
  WriteWebConfig(TlsYaml() + UsersYaml("s3cret"));
  Start();
  std::vector<UniqueFd> idle;
  for (int i = 0; i < 40; ++i) {
    UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(port_));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(::connect(fd.get(), reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
    if (i % 2) (void)!::write(fd.get(), "\x16\x03\x01", 3);  // a TLS record header, then nothing
    idle.push_back(std::move(fd));
  }
  auto start = std::chrono::steady_clock::now();
  auto c = Client();
  EXPECT_EQ(Status(*c, "/metrics", Basic("prometheus", "s3cret")), 200);
  auto took = std::chrono::steady_clock::now() - start;
  // Queued behind them it would take the keep-alive timeout (2 s) at least.
  EXPECT_LT(took, 2s) << "with 40 silent connections open";
  // Past the cap, a new connection waits only until silent ones time out.
  EndpointOptions small;
  small.max_connections = 4;
  small.keep_alive_timeout_s = 1;
  small.read_timeout_s = 1;
  endpoint_.reset();
  idle.clear();
  Start(small);
  for (int i = 0; i < 8; ++i) {
    UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(port_));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(::connect(fd.get(), reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
    idle.push_back(std::move(fd));
  }
  start = std::chrono::steady_clock::now();
  auto c2 = Client();
  EXPECT_EQ(Status(*c2, "/metrics", Basic("prometheus", "s3cret")), 200);
  took = std::chrono::steady_clock::now() - start;
  EXPECT_LT(took, 5s) << "silent connections are closed after the read timeout";
}


// A plain-HTTP endpoint on loopback (the deadline is the same for TLS: the
// handshake counts towards it).
std::unique_ptr<HttpEndpoint> StartPlain(EndpointOptions options, int* port) {
  options.address = {"127.0.0.1", 0};
  auto ep = HttpEndpoint::Start(options);
  if (!ep.ok()) return nullptr;
  auto endpoint = std::move(ep).value();
  openmetrics::MetricFamily f;
  f.name = "gpunoise_test_value";
  f.samples.push_back({{}, 42});
  endpoint->Publish(std::make_shared<const HttpEndpoint::Families>(HttpEndpoint::Families{f}), BoottimeNs());
  *port = std::stoi(endpoint->address().substr(endpoint->address().rfind(':') + 1));
  return endpoint;
}

// Sends a request one byte every `every`, for at most `bound`; returns how
// long the server kept the connection open (bound when it never closed).
std::chrono::milliseconds Trickle(int port, std::chrono::milliseconds every, std::chrono::milliseconds bound) {
  UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  auto start = std::chrono::steady_clock::now();
  if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) return {};
  const std::string request = "GET /metrics HTTP/1.1\r\nHost: x\r\nX-Padding: " + std::string(4096, 'a');
  for (size_t i = 0; i < request.size(); ++i) {
    auto elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start);
    if (elapsed >= bound) return bound;
    if (::send(fd.get(), &request[i], 1, MSG_NOSIGNAL) != 1) return elapsed;
    pollfd p{fd.get(), POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(every.count())) > 0) {
      char buf[64];
      if (::recv(fd.get(), buf, sizeof(buf), 0) <= 0)
        return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start);
    }
  }
  return bound;
}

TEST(EndpointDeadline, AClientTricklingItsRequestIsCutOffAtTheRequestDeadline) {
  EndpointOptions options;
  options.read_timeout_s = 3;        // each byte comes well within it
  options.request_deadline_ms = 1500;
  int port = 0;
  auto endpoint = StartPlain(options, &port);
  ASSERT_TRUE(endpoint);
  auto held = Trickle(port, 200ms, 8s);
  EXPECT_GE(held, 1400ms);
  EXPECT_LT(held, 4s) << "without the deadline the connection stays open as long as bytes trickle in";
  EXPECT_EQ(endpoint->requests_past_deadline(), 1u);
}

TEST(EndpointDeadline, AScraperKeepingItsConnectionAliveOutlivesTheRequestDeadline) {
  EndpointOptions options;
  options.request_deadline_ms = 1000;
  options.keep_alive_timeout_s = 2;
  int port = 0;
  auto endpoint = StartPlain(options, &port);
  ASSERT_TRUE(endpoint);
  httplib::Client c("127.0.0.1", port);
  c.set_keep_alive(true);
  c.set_read_timeout(5, 0);
  auto start = std::chrono::steady_clock::now();
  int ok = 0;
  while (std::chrono::steady_clock::now() - start < 3s) {
    auto r = c.Get("/metrics");
    if (r && r->status == 200) ++ok;
    std::this_thread::sleep_for(300ms);
  }
  EXPECT_GE(ok, 8);
  EXPECT_EQ(endpoint->requests_past_deadline(), 0u) << "time between requests and in handlers is not counted";
}

TEST(EndpointDeadline, TricklersFillingTheConnectionCapDelayTheScrapeOnlyUntilTheirDeadline) {
  EndpointOptions options;
  options.max_connections = 4;
  options.read_timeout_s = 3;
  options.request_deadline_ms = 1500;
  int port = 0;
  auto endpoint = StartPlain(options, &port);
  ASSERT_TRUE(endpoint);
  std::vector<std::thread> tricklers;
  for (int i = 0; i < 4; ++i) tricklers.emplace_back([port] { (void)Trickle(port, 200ms, 8s); });
  std::this_thread::sleep_for(300ms);  // the cap is full
  auto start = std::chrono::steady_clock::now();
  httplib::Client c("127.0.0.1", port);
  c.set_connection_timeout(10, 0);
  c.set_read_timeout(10, 0);
  auto r = c.Get("/metrics");
  auto took = std::chrono::steady_clock::now() - start;
  for (auto& t : tricklers) t.join();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_LT(took, 4s) << "the scrape waited for the tricklers to be cut off";
  EXPECT_EQ(endpoint->requests_past_deadline(), 4u);
}

}  // namespace
}  // namespace gpunoise::monitor
