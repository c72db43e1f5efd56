// Recording on demand through the monitor's endpoint, with real HTTP
// requests on loopback: authentication, bad bodies, Alertmanager webhooks
// for this node and for others, and the rate limit.
#include "monitor/record_trigger.h"

#include <gtest/gtest.h>
#include <httplib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "common/clock.h"
#include "integration/support/test_pki.h"
#include "monitor/http_endpoint.h"

namespace gpunoise::monitor {
namespace {

constexpr uint64_t kMinute = 60'000'000'000ull;

// An Alertmanager v4 webhook body with one alert.
std::string Webhook(const std::string& status, const std::string& alertname, const std::string& node) {
  return R"({"version":"4","status":")" + status + R"(","receiver":"gpunoise","alerts":[{"status":")" + status +
         R"(","labels":{"alertname":")" + alertname + R"(","node":")" + node +
         R"(","namespace":"ml","job_name":"train-a","severity":"warning"},"annotations":{}}]})";
}

class TriggerEndpointTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("gn-trigger-" + std::to_string(getpid()));
    std::filesystem::create_directories(dir_);
    trigger_->Configure(true, kMinute);
  }
  void TearDown() override {
    endpoint_.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  void Start(const std::string& host, bool with_auth) {
    EndpointOptions o;
    o.address = {host, 0};
    if (with_auth) {
      std::ofstream(dir_ + "/web.yml") << "basic_auth_users:\n  alertmanager: " << testing::BcryptHash("s3cret", 4)
                                       << "\n";
      o.web_config_file = dir_ + "/web.yml";
    }
    o.trigger = trigger_;
    o.node_names = {"gpu-node-7"};
    auto ep = HttpEndpoint::Start(o);
    ASSERT_TRUE(ep.ok()) << ep.error().message;
    endpoint_ = std::move(ep).value();
    std::string a = endpoint_->address();
    port_ = std::stoi(a.substr(a.rfind(':') + 1));
  }
  httplib::Result Post(const std::string& path, const std::string& body, bool auth = true) {
    httplib::Client c("127.0.0.1", port_);
    c.set_read_timeout(5, 0);
    httplib::Headers h;
    if (auth) h.insert(httplib::make_basic_authentication_header("alertmanager", "s3cret"));
    return c.Post(path.c_str(), h, body, "application/json");
  }

  std::string dir_;
  std::shared_ptr<RecordTrigger> trigger_ = std::make_shared<RecordTrigger>();
  std::unique_ptr<HttpEndpoint> endpoint_;
  int port_ = 0;
};

TEST_F(TriggerEndpointTest, RecordRequestNeedsAuthAndIsQueuedOnce) {
  Start("127.0.0.1", true);
  auto unauth = Post("/api/v1/record", "{}", false);
  ASSERT_TRUE(unauth);
  EXPECT_EQ(unauth->status, 401);
  EXPECT_FALSE(trigger_->Take());

  auto ok = Post("/api/v1/record", R"({"reason":"operator: step time doubled"})");
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 202) << ok->body;
  auto t = trigger_->Take();
  ASSERT_TRUE(t);
  EXPECT_EQ(t->source, "api");
  EXPECT_EQ(t->reason, "operator: step time doubled");
  EXPECT_FALSE(trigger_->Take()) << "taken once";

  // A second one within the interval: 429 with Retry-After, nothing queued.
  auto again = Post("/api/v1/record", "");
  ASSERT_TRUE(again);
  EXPECT_EQ(again->status, 429) << again->body;
  int retry = std::stoi(again->get_header_value("Retry-After"));
  EXPECT_GT(retry, 50);
  EXPECT_LE(retry, 60);
  EXPECT_FALSE(trigger_->Take());
  EXPECT_EQ(trigger_->accepted(), 1u);
  EXPECT_EQ(trigger_->refused(), 1u);
}

TEST_F(TriggerEndpointTest, BadJsonIsRefusedWith400) {
  Start("127.0.0.1", true);
  for (const char* body : {"{not json", "[1,2]", R"({"reason": 5})"}) {
    auto r = Post("/api/v1/record", body);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 400) << body << ": " << r->body;
  }
  for (const char* body : {"{", R"({"version":"4"})", R"({"alerts":[{"status":"firing"}]})"}) {
    auto r = Post("/api/v1/alertmanager", body);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 400) << body << ": " << r->body;
  }
  EXPECT_FALSE(trigger_->Take());
  EXPECT_EQ(trigger_->accepted(), 0u) << "bad requests do not use up the rate limit";
}

TEST_F(TriggerEndpointTest, AlertmanagerWebhookForThisNodeTriggersAndOthersDoNot) {
  Start("127.0.0.1", true);
  // Another node's straggler, a resolved alert, an alert that is not
  // gpunoise's: 200 (Alertmanager would retry anything else), nothing queued.
  for (const std::string& body : {Webhook("firing", "GpunoiseJobStragglerNode", "gpu-node-3"),
                                  Webhook("resolved", "GpunoiseJobStragglerNode", "gpu-node-7"),
                                  Webhook("firing", "KubePodCrashLooping", "gpu-node-7")}) {
    auto r = Post("/api/v1/alertmanager", body);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200) << r->body;
    EXPECT_FALSE(trigger_->Take()) << body;
  }
  auto r = Post("/api/v1/alertmanager", Webhook("firing", "GpunoiseJobStragglerNode", "gpu-node-7"));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 202) << r->body;
  auto t = trigger_->Take();
  ASSERT_TRUE(t);
  EXPECT_EQ(t->source, "alertmanager");
  EXPECT_EQ(t->reason, "alert GpunoiseJobStragglerNode for gpu-node-7 (job ml/train-a)");
  // Alertmanager repeats a firing alert (repeat_interval, group updates):
  // within the interval it is refused.
  auto repeat = Post("/api/v1/alertmanager", Webhook("firing", "GpunoiseJobStragglerNode", "gpu-node-7"));
  ASSERT_TRUE(repeat);
  EXPECT_EQ(repeat->status, 429);
}

TEST_F(TriggerEndpointTest, WithoutAuthOnlyALoopbackListenerTakesRequests) {
  Start("0.0.0.0", false);  // reachable from other hosts, no web config
  auto r = Post("/api/v1/record", "{}", false);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 403) << r->body;
  EXPECT_FALSE(trigger_->Take());
  endpoint_.reset();
  Start("127.0.0.1", false);
  auto local = Post("/api/v1/record", "{}", false);
  ASSERT_TRUE(local);
  EXPECT_EQ(local->status, 202) << local->body;
}

TEST_F(TriggerEndpointTest, WithoutAFlightRecorderTheTriggerSays503) {
  trigger_->Configure(false, kMinute);
  Start("127.0.0.1", true);
  auto r = Post("/api/v1/record", "{}");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 503) << r->body;
}

TEST(RecordTrigger, LoopbackHosts) {
  EXPECT_TRUE(IsLoopbackHost("127.0.0.1"));
  EXPECT_TRUE(IsLoopbackHost("127.3.2.1"));
  EXPECT_TRUE(IsLoopbackHost("::1"));
  EXPECT_TRUE(IsLoopbackHost("localhost"));
  EXPECT_FALSE(IsLoopbackHost("0.0.0.0"));
  EXPECT_FALSE(IsLoopbackHost("::"));
  EXPECT_FALSE(IsLoopbackHost("10.0.0.1"));
}

TEST(RecordTrigger, AlertsNameTheNodeByNodeInstanceOrHostname) {
  NodeIdentity names{{"gpu-node-7", "10.1.0.7"}, {}};
  auto by_instance = MatchAlertmanagerWebhook(
      R"({"alerts":[{"status":"firing","labels":{"alertname":"GpunoiseStragglerNode","instance":"10.1.0.7:9464"}}]})",
      names);
  ASSERT_TRUE(by_instance.ok());
  ASSERT_TRUE(*by_instance);
  EXPECT_EQ((*by_instance)->reason, "alert GpunoiseStragglerNode for 10.1.0.7");
  EXPECT_EQ((*by_instance)->role, AlertRole::kNamed);
  // No fingerprint in the body: Prometheus' own hash of the labels.
  EXPECT_EQ((*by_instance)->fingerprint,
            AlertFingerprint({{"alertname", "GpunoiseStragglerNode"}, {"instance", "10.1.0.7:9464"}}));
  auto by_finding = MatchAlertmanagerWebhook(
      R"({"alerts":[{"status":"firing","labels":{"alertname":"SiteStraggler","finding":"straggler","hostname":"gpu-node-7"}}]})",
      names);
  ASSERT_TRUE(by_finding.ok());
  EXPECT_TRUE(*by_finding);
}

TEST(RecordTrigger, RateLimitCountsFromTheLastAcceptedRequest) {
  RecordTrigger t;
  t.Configure(true, kMinute);
  uint64_t retry = 0;
  EXPECT_EQ(t.Submit({"api", "a", 1'000}, &retry), RecordTrigger::Verdict::kQueued);
  EXPECT_EQ(t.Submit({"api", "b", 1'000 + kMinute - 1}, &retry), RecordTrigger::Verdict::kRateLimited);
  EXPECT_EQ(retry, 1u);
  EXPECT_EQ(t.Submit({"api", "c", 1'000 + kMinute}, &retry), RecordTrigger::Verdict::kQueued);
  auto taken = t.Take();
  ASSERT_TRUE(taken);
  EXPECT_EQ(taken->reason, "c") << "the newest waiting request wins";
}

}  // namespace
}  // namespace gpunoise::monitor
