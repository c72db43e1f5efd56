// The monitor's web config end to end, as root: the real binary with TLS,
// basic auth or client certificates, scraped by a real Prometheus (Debian
// package prometheus) with tls_config/basic_auth exactly as a fleet's
// scrape config has them; a certificate rotated under the running monitor;
// clients that open connections and say nothing while Prometheus scrapes.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include <fmt/format.h>

#include "common/unique_fd.h"
#include "integration/support/metrics_scrape.h"
#include "integration/support/privileges.h"
#include "integration/support/test_pki.h"
#include "integration/support/workloads.h"

namespace gpunoise::testing {
namespace {

using namespace std::chrono_literals;

std::string UrlEncode(const std::string& s) {
  std::string out;
  for (unsigned char c : s) {
    if (isalnum(c) || c == '_' || c == '-' || c == '.') out += static_cast<char>(c);
    else out += fmt::format("%{:02X}", c);
  }
  return out;
}

// Prometheus on loopback with the given scrape_configs; gone after 3
// minutes even if the test dies (it runs under `timeout`).
class Prometheus {
 public:
  Prometheus(const std::string& dir, const std::string& scrape_configs) : dir_(dir) {
    address_ = "127.0.0.1:" + std::to_string(FreeLoopbackPort());
    std::ofstream(dir_ + "/prometheus.yml") << "global:\n  scrape_interval: 1s\n  scrape_timeout: 900ms\n"
                                            << "scrape_configs:\n" << scrape_configs;
    child_ = std::make_unique<ChildProcess>(std::vector<std::string>{
        "timeout", "180", "prometheus", "--config.file=" + dir_ + "/prometheus.yml",
        "--storage.tsdb.path=" + dir_ + "/data", "--web.listen-address=" + address_, "--log.level=warn"});
  }
  ~Prometheus() {
    child_->Signal(SIGTERM);
    child_->Wait(20s);
  }
  bool WaitReady() {
    auto deadline = std::chrono::steady_clock::now() + 30s;
    while (std::chrono::steady_clock::now() < deadline) {
      if (HttpGet(address_, "/-/ready").status == 200) return true;
      std::this_thread::sleep_for(200ms);
    }
    return false;
  }
  std::string Query(const std::string& promql) { return HttpGet(address_, "/api/v1/query?query=" + UrlEncode(promql)).body; }
  // Waits until `promql` gives one sample whose value is `value`.
  bool WaitFor(const std::string& promql, const std::string& value, std::chrono::seconds limit = 30s) {
    auto deadline = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < deadline) {
      if (Query(promql).find(",\"" + value + "\"]") != std::string::npos) return true;
      std::this_thread::sleep_for(500ms);
    }
    return false;
  }
  std::string log() { return child_->stderr_text(); }

 private:
  std::string dir_, address_;
  std::unique_ptr<ChildProcess> child_;
};

class MonitorWebConfig : public ::testing::Test {
 protected:
  void SetUp() override {
    // A handshake the server refuses closes the socket under the client's
    // write: that must fail the request, not kill the test.
    ::signal(SIGPIPE, SIG_IGN);
    std::string missing = MissingForRealEbpf();
    if (!missing.empty()) {
      if (RootTestsRequired()) FAIL() << missing;
      GTEST_SKIP() << missing;
    }
    if (std::system("command -v prometheus >/dev/null 2>&1") != 0)
      GN_SKIP_MISSING_TOOL("prometheus is not installed (Debian package prometheus)");
    if (std::system("command -v openssl >/dev/null 2>&1") != 0)
      GN_SKIP_MISSING_TOOL("openssl is not installed (Debian package openssl)");
    dir_ = MakeTempDir();
    pki_ = MakeTestPki(dir_);
    ASSERT_FALSE(pki_.dir.empty());
  }
  void TearDown() override {
    if (monitor_) {
      monitor_->Signal(SIGTERM);
      monitor_->Wait(30s);
    }
    std::error_code ec;
    if (!dir_.empty()) std::filesystem::remove_all(dir_, ec);
  }
  void StartMonitor(const std::string& web_yml) {
    std::ofstream(dir_ + "/web.yml") << web_yml;
    monitor_ = std::make_unique<ChildProcess>(std::vector<std::string>{
        GpunoiseBinary(), "monitor", "--listen", "127.0.0.1:0", "--interval", "500ms", "--web.config.file",
        dir_ + "/web.yml"});
    ASSERT_TRUE(monitor_->WaitForStderr("listening", 60s)) << monitor_->stderr_text();
    auto address = ListeningAddress(monitor_->stderr_text());
    ASSERT_TRUE(address) << monitor_->stderr_text();
    address_ = *address;
    port_ = std::stoi(address_.substr(address_.rfind(':') + 1));
  }
  std::string Job(const std::string& name, const std::string& extra) {
    return "  - job_name: " + name + "\n    scheme: https\n    static_configs:\n      - targets: ['" + address_ +
           "']\n    tls_config:\n      ca_file: " + pki_.ca_cert + "\n" + extra;
  }
  int DirectStatus(const httplib::Headers& headers, const std::string& cert = "", const std::string& key = "") {
    auto c = cert.empty() ? std::make_unique<httplib::SSLClient>("127.0.0.1", port_)
                          : std::make_unique<httplib::SSLClient>("127.0.0.1", port_, cert, key);
    c->set_ca_cert_path(pki_.ca_cert.c_str());
    c->enable_server_certificate_verification(true);
    c->set_read_timeout(5, 0);
    auto r = c->Get("/metrics", headers);
    return r ? r->status : 0;
  }

  std::string dir_;
  TestPki pki_;
  std::unique_ptr<ChildProcess> monitor_;
  std::string address_;
  int port_ = 0;
};

UniqueFd SilentConnection(int port) {
  UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) fd.Reset();
  return fd;
}

TEST_F(MonitorWebConfig, PrometheusScrapesOverTlsWithBasicAuthAndWrongOrMissingPasswordsGet401) {
  StartMonitor("tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n"
               "basic_auth_users:\n  prometheus: " + BcryptHash("scrape-s3cret") + "\n");
  EXPECT_NE(monitor_->stderr_text().find("listening on https://"), std::string::npos) << monitor_->stderr_text();
  EXPECT_EQ(DirectStatus({}), 401);
  EXPECT_EQ(DirectStatus({httplib::make_basic_authentication_header("prometheus", "guess")}), 401);
  std::ofstream(dir_ + "/password") << "scrape-s3cret";
  Prometheus prom(dir_, Job("right", "    basic_auth:\n      username: prometheus\n      password_file: " + dir_ +
                                         "/password\n") +
                            Job("wrong", "    basic_auth:\n      username: prometheus\n      password: guess\n") +
                            Job("none", ""));
  ASSERT_TRUE(prom.WaitReady()) << prom.log();
  EXPECT_TRUE(prom.WaitFor("up{job=\"right\"}", "1")) << prom.Query("up") << prom.log();
  EXPECT_TRUE(prom.WaitFor("count(gpunoise_softirqs_total{job=\"right\"}) > 0", "1", 20s) ||
              prom.Query("count(gpunoise_softirqs_total{job=\"right\"})").find("\"result\":[{") != std::string::npos)
      << prom.Query("count(gpunoise_softirqs_total)");
  EXPECT_TRUE(prom.WaitFor("up{job=\"wrong\"}", "0")) << prom.Query("up");
  EXPECT_TRUE(prom.WaitFor("up{job=\"none\"}", "0")) << prom.Query("up");

  // A certificate rotated under the running monitor is what new handshakes
  // get, and Prometheus keeps scraping through the change.
  std::string old_serial = CertificateSerial(pki_.server_cert);
  std::string new_serial = RotateServerCertificate(pki_);
  ASSERT_FALSE(new_serial.empty());
  ASSERT_NE(new_serial, old_serial);
  std::string seen;
  for (int i = 0; i < 20 && seen != new_serial; ++i) {
    std::unique_ptr<FILE, int (*)(FILE*)> p(
        popen(("echo | openssl s_client -connect " + address_ + " -CAfile " + pki_.ca_cert +
               " 2>/dev/null | openssl x509 -noout -serial 2>/dev/null").c_str(), "r"), pclose);
    char buf[256] = {};
    if (p && fgets(buf, sizeof(buf), p.get())) {
      seen = buf;
      if (seen.rfind("serial=", 0) == 0) seen = seen.substr(7);
      while (!seen.empty() && (seen.back() == '\n')) seen.pop_back();
    }
    if (seen != new_serial) std::this_thread::sleep_for(100ms);
  }
  EXPECT_EQ(seen, new_serial) << "the rotated certificate is served without a restart";
  std::this_thread::sleep_for(4s);  // past the keep-alive timeout: Prometheus reconnects
  EXPECT_TRUE(prom.WaitFor("min_over_time(up{job=\"right\"}[3s])", "1")) << prom.Query("up{job=\"right\"}[10s]");
  EXPECT_NE(monitor_->stderr_text().find("TLS certificate"), std::string::npos) << monitor_->stderr_text();

  // 48 clients that connect and send nothing, opened again as the monitor
  // closes them (after its read timeout), for 8 s: every scrape in that
  // time still succeeds. (Past the connection cap, 64, new connections wait
  // in the kernel's backlog until silent ones time out: http_endpoint_test.)
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> opened{0};
  std::thread hostile([&] {
    std::vector<UniqueFd> held;
    auto until = std::chrono::steady_clock::now() + 8s;
    while (std::chrono::steady_clock::now() < until && !stop) {
      if (held.size() >= 48) held.erase(held.begin(), held.begin() + 8);
      UniqueFd fd = SilentConnection(port_);
      if (fd.valid()) {
        held.push_back(std::move(fd));
        ++opened;
      }
      std::this_thread::sleep_for(20ms);
    }
  });
  std::this_thread::sleep_for(8s);
  stop = true;
  hostile.join();
  EXPECT_GT(opened.load(), 100u);
  std::string window = prom.Query("count_over_time(up{job=\"right\"}[7s]) - sum_over_time(up{job=\"right\"}[7s])");
  EXPECT_NE(window.find(",\"0\"]"), std::string::npos) << "a scrape failed while silent clients were connected: "
                                                         << window << "\n" << prom.Query("up{job=\"right\"}[8s]");
  std::string slowest = prom.Query("max_over_time(scrape_duration_seconds{job=\"right\"}[7s])");
  std::cerr << "slowest scrape while silent clients were connected: " << slowest << "\n";
}

TEST_F(MonitorWebConfig, PrometheusScrapesWithAClientCertificateAndOthersAreTurnedAway) {
  StartMonitor("tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n"
               "  client_ca_file: test-ca.crt\n  client_auth_type: RequireAndVerifyClientCert\n");
  EXPECT_EQ(DirectStatus({}, pki_.client_cert, pki_.client_key), 200);
  EXPECT_EQ(DirectStatus({}), 0) << "no certificate: no handshake";
  EXPECT_EQ(DirectStatus({}, pki_.stranger_cert, pki_.stranger_key), 0) << "another CA's certificate: no handshake";
  Prometheus prom(dir_, Job("cert", "      cert_file: " + pki_.client_cert + "\n      key_file: " + pki_.client_key + "\n") +
                            Job("nocert", ""));
  ASSERT_TRUE(prom.WaitReady()) << prom.log();
  EXPECT_TRUE(prom.WaitFor("up{job=\"cert\"}", "1")) << prom.Query("up") << prom.log();
  EXPECT_TRUE(prom.WaitFor("up{job=\"nocert\"}", "0")) << prom.Query("up");
  HttpReply health;  // plain HTTP on a TLS port gets nothing
  health = HttpGet(address_, "/healthz");
  EXPECT_NE(health.status, 200);
}

}  // namespace
}  // namespace gpunoise::testing
