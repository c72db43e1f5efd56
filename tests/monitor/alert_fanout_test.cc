// The Alertmanager webhook's fan-out, with real HTTP requests on loopback
// to several monitors' endpoints ("nodes" on one host, each with its own
// names and jobs): a job-level alert reaches the nodes of that job and no
// other; a baseline_nodes annotation picks the peers that dump beside the
// straggler; every node that acts gets the alert's fingerprint and
// startsAt, from which each computes the same window; rate limits still
// apply.
#include <gtest/gtest.h>
#include <httplib.h>

#include <memory>

#include <ctime>

#include "common/clock.h"
#include "monitor/http_endpoint.h"
#include "monitor/record_trigger.h"
#include "common/start_at.h"

namespace gpunoise::monitor {
namespace {

constexpr uint64_t kMinute = 60'000'000'000ull;
constexpr uint64_t kSecond = 1'000'000'000ull;

struct Node {
  std::shared_ptr<RecordTrigger> trigger = std::make_shared<RecordTrigger>();
  std::unique_ptr<HttpEndpoint> endpoint;
  int port = 0;
};

// A monitor's endpoint on loopback (no authentication needed there) that
// goes by `name` and runs focus processes of `jobs`.
std::unique_ptr<Node> StartNode(const std::string& name, std::set<std::string> jobs) {
  auto n = std::make_unique<Node>();
  n->trigger->Configure(true, kMinute);
  n->trigger->SetNodeJobs(std::move(jobs));
  EndpointOptions o;
  o.address = {"127.0.0.1", 0};
  o.trigger = n->trigger;
  o.node_names = {name};
  auto ep = HttpEndpoint::Start(o);
  if (!ep.ok()) return nullptr;
  n->endpoint = std::move(ep).value();
  std::string a = n->endpoint->address();
  n->port = std::stoi(a.substr(a.rfind(':') + 1));
  return n;
}

httplib::Result Post(const Node& n, const std::string& body) {
  httplib::Client c("127.0.0.1", n.port);
  c.set_read_timeout(5, 0);
  return c.Post("/api/v1/alertmanager", body, "application/json");
}

// The straggler alert of gpunoise-slurm-job-rules.yml as Alertmanager sends
// it; `annotations` is the annotations object's inside.
std::string SlurmAlert(const std::string& instance, const std::string& job, const std::string& annotations,
                       const std::string& starts_at = "2026-12-01T12:40:00.5Z") {
  return R"({"version":"4","status":"firing","receiver":"gpunoise","groupLabels":{"alertname":"GpunoiseSlurmJobStragglerNode"},)"
         R"("alerts":[{"status":"firing","labels":{"alertname":"GpunoiseSlurmJobStragglerNode","finding":"straggler",)"
         R"("instance":")" + instance + R"(","slurm_job_id":")" + job + R"(","severity":"warning"},)"
         R"("annotations":{)" + annotations + R"(},"startsAt":")" + starts_at +
         R"(","endsAt":"0001-01-01T00:00:00Z","fingerprint":"7c1a9e0b5d3f2468"}]})";
}

TEST(AlertFanout, AJobLevelAlertMakesANodeOfThatJobDumpAndANodeOfAnotherJobNot) {
  // h3 is the straggler of SLURM job 4242; h1 runs 4242 too (its cgroup
  // said job_4242), h5 runs job 4343. No baseline_nodes: every node of
  // the job dumps.
  auto straggler = StartNode("h3", {"4242"});
  auto peer = StartNode("h1", {"4242"});
  auto other = StartNode("h5", {"4343"});
  ASSERT_TRUE(straggler && peer && other);
  std::string body = SlurmAlert("h3:9464", "4242", R"("summary":"h3:9464 holds back SLURM job 4242")");
  for (Node* n : {straggler.get(), peer.get()}) {
    auto r = Post(*n, body);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 202) << r->body;
  }
  auto r = Post(*other, body);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200) << r->body;
  EXPECT_FALSE(other->trigger->Take()) << "a node of another job does not dump";

  auto named = straggler->trigger->Take();
  auto job = peer->trigger->Take();
  ASSERT_TRUE(named && job);
  EXPECT_EQ(named->role, "named");
  EXPECT_EQ(named->reason, "alert GpunoiseSlurmJobStragglerNode for h3 (job 4242)");
  EXPECT_EQ(job->role, "job");
  EXPECT_EQ(job->reason, "alert GpunoiseSlurmJobStragglerNode for h3: h1 runs job 4242 and dumps the same window");
  // Both know the same alert and the same instant it started.
  auto starts = ParseStartAt("2026-12-01T12:40:00.5Z", 0);
  ASSERT_TRUE(starts.ok());
  for (const auto* t : {&*named, &*job}) {
    EXPECT_EQ(t->source, "alertmanager");
    EXPECT_EQ(t->fingerprint, "7c1a9e0b5d3f2468");
    EXPECT_EQ(t->starts_at_realtime_ns, *starts);
  }
  // A job id written as the cgroup's directory name is the same job.
  auto prefixed = StartNode("h2", {"job_4242"});
  ASSERT_TRUE(prefixed);
  r = Post(*prefixed, body);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 202) << r->body;
}

TEST(AlertFanout, BaselineNodesPickThePeersThatDumpBesideTheStraggler) {
  auto straggler = StartNode("h3", {"4242"});
  auto listed = StartNode("h2", {"4242"});
  auto unlisted = StartNode("h1", {"4242"});  // of the job, but not a chosen peer
  auto stranger = StartNode("h9", {});        // listed, of no job here: the annotation decides
  ASSERT_TRUE(straggler && listed && unlisted && stranger);
  std::string body = SlurmAlert("h3:9464", "4242", R"("baseline_nodes":"h2:9464,h4:9464, h9")");
  auto r3 = Post(*straggler, body), r2 = Post(*listed, body), r1 = Post(*unlisted, body), r9 = Post(*stranger, body);
  ASSERT_TRUE(r3 && r2 && r1 && r9);
  EXPECT_EQ(r3->status, 202) << r3->body;
  EXPECT_EQ(r2->status, 202) << r2->body;
  EXPECT_EQ(r1->status, 200) << r1->body;
  EXPECT_EQ(r9->status, 202) << r9->body;
  EXPECT_FALSE(unlisted->trigger->Take()) << "baseline_nodes narrows the job's fan-out to the peers it lists";
  auto t = listed->trigger->Take();
  ASSERT_TRUE(t);
  EXPECT_EQ(t->role, "baseline");
  EXPECT_EQ(t->reason, "alert GpunoiseSlurmJobStragglerNode for h3: h2 dumps the same window as a baseline");
  EXPECT_EQ(t->fingerprint, "7c1a9e0b5d3f2468");
  EXPECT_EQ(straggler->trigger->Take()->role, "named");
}

TEST(AlertFanout, TheRateLimitStillAppliesToFannedOutRequests) {
  auto peer = StartNode("h1", {"4242"});
  ASSERT_TRUE(peer);
  std::string body = SlurmAlert("h3:9464", "4242", "");
  auto first = Post(*peer, body);
  ASSERT_TRUE(first);
  EXPECT_EQ(first->status, 202) << first->body;
  // Alertmanager repeats the group (repeat_interval, a new alert in it):
  // refused within the dump interval, whatever the role.
  auto again = Post(*peer, body);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->status, 429) << again->body;
  EXPECT_FALSE(again->get_header_value("Retry-After").empty());
  EXPECT_EQ(peer->trigger->accepted(), 1u);
  EXPECT_EQ(peer->trigger->refused(), 1u);
}

// Without Alertmanager: a script (pdsh, a SLURM epilog) sends one
// POST /api/v1/record to every node, with one "since" and one "id".
TEST(AlertFanout, ARecordRequestWithSinceAndIdGivesEveryNodeTheSameWindowAndName) {
  auto a = StartNode("h1", {}), b = StartNode("h2", {});
  ASSERT_TRUE(a && b);
  int64_t since = static_cast<int64_t>(RealtimeNs()) - 4'000'000'000;
  std::string body = R"({"reason":"step 1200 took 2x","id":"step-1200","since":")" +
                     [&] {
                       time_t s = static_cast<time_t>(since / 1'000'000'000);
                       struct tm tm {};
                       gmtime_r(&s, &tm);
                       char buf[32];
                       std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
                       return std::string(buf);
                     }() + R"("})";
  for (Node* n : {a.get(), b.get()}) {
    httplib::Client c("127.0.0.1", n->port);
    auto r = c.Post("/api/v1/record", body, "application/json");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 202) << r->body;
    auto t = n->trigger->Take();
    ASSERT_TRUE(t);
    EXPECT_EQ(t->source, "api");
    EXPECT_EQ(t->reason, "step 1200 took 2x");
    EXPECT_EQ(t->id, "step-1200");
    EXPECT_EQ(t->starts_at_realtime_ns, since / 1'000'000'000 * 1'000'000'000);
  }
  EXPECT_EQ(RequestDumpTag("step-1200", "h2"), "request-step-1200-h2");
  // A bad since, an id that could not name a file, a since in the future: 400, nothing used up.
  auto c = StartNode("h3", {});
  ASSERT_TRUE(c);
  httplib::Client client("127.0.0.1", c->port);
  for (const char* bad : {R"({"since":"yesterday"})", R"({"since":"+5s"})", R"({"id":"../x"})", R"({"id":7})",
                          R"({"since":"2100-01-01T00:00:00Z"})"}) {
    auto r = client.Post("/api/v1/record", bad, "application/json");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 400) << bad << ": " << r->body;
  }
  EXPECT_EQ(c->trigger->accepted(), 0u);
}

TEST(AlertFanout, OfSeveralAlertsTheOneNamingThisNodeWins) {
  NodeIdentity node{{"h2"}, {"4242"}};
  std::string body =
      R"({"alerts":[)"
      R"({"status":"firing","labels":{"alertname":"GpunoiseSlurmJobStragglerNode","instance":"h3:9464","slurm_job_id":"4242"},"fingerprint":"aaaa"},)"
      R"({"status":"firing","labels":{"alertname":"GpunoiseSlurmJobStragglerNode","instance":"h4:9464","slurm_job_id":"4242"},"annotations":{"baseline_nodes":"h2"},"fingerprint":"bbbb"},)"
      R"({"status":"firing","labels":{"alertname":"GpunoiseSlurmJobStragglerNode","instance":"h2:9464","slurm_job_id":"4242"},"fingerprint":"cccc"}]})";
  auto m = MatchAlertmanagerWebhook(body, node);
  ASSERT_TRUE(m.ok()) << m.error().message;
  ASSERT_TRUE(*m);
  EXPECT_EQ((*m)->role, AlertRole::kNamed);
  EXPECT_EQ((*m)->fingerprint, "cccc");
  // Without the third: the baseline listing beats the job match.
  std::string two = body.substr(0, body.rfind(R"(,{"status")")) + "]}";
  m = MatchAlertmanagerWebhook(two, node);
  ASSERT_TRUE(m.ok()) << m.error().message;
  ASSERT_TRUE(*m);
  EXPECT_EQ((*m)->role, AlertRole::kBaseline);
  EXPECT_EQ((*m)->fingerprint, "bbbb");
  // A resolved job alert and an alert that is not gpunoise's do nothing.
  m = MatchAlertmanagerWebhook(
      R"({"alerts":[{"status":"resolved","labels":{"alertname":"GpunoiseSlurmJobStragglerNode","slurm_job_id":"4242"}},)"
      R"({"status":"firing","labels":{"alertname":"SlurmJobSlow","slurm_job_id":"4242"}}]})",
      node);
  ASSERT_TRUE(m.ok());
  EXPECT_FALSE(*m);
}

TEST(AlertFanout, AlertWindowStartsTheLookbackBeforeStartsAtOnThisBootsClock) {
  // This node booted 1000 s ago; REALTIME is 1.7e18 now.
  const int64_t rt_now = 1'700'000'000'000'000'000;
  const uint64_t boot_now = 1000 * kSecond;
  // An alert that started 3 s ago, 20 s of lookback: 23 s ago on BOOTTIME.
  EXPECT_EQ(AlertWindowStart(rt_now - 3 * static_cast<int64_t>(kSecond), 20 * kSecond, rt_now, boot_now),
            boot_now - 23 * kSecond);
  // Another node with another boot: the same REALTIME instant.
  EXPECT_EQ(AlertWindowStart(rt_now - 3 * static_cast<int64_t>(kSecond), 20 * kSecond, rt_now, 50 * kSecond),
            27 * kSecond);
  // Before this boot, or no startsAt: the flight recorder's whole window.
  EXPECT_EQ(AlertWindowStart(rt_now - 2000 * static_cast<int64_t>(kSecond), 0, rt_now, boot_now), 0u);
  EXPECT_EQ(AlertWindowStart(0, 20 * kSecond, rt_now, boot_now), 0u);
  // startsAt ahead of this node's clock (skew): the lookback from now.
  EXPECT_EQ(AlertWindowStart(rt_now + 5 * static_cast<int64_t>(kSecond), 20 * kSecond, rt_now, boot_now),
            boot_now - 20 * kSecond);
}

TEST(AlertFanout, AStartsAtOutOfRangeOrMalformedMeansTheWholeWindow) {
  NodeIdentity node{{"h1"}, {}};
  for (const char* starts : {"0001-01-01T00:00:00Z", "9999-12-31T23:59:59Z", "yesterday", "1960-01-01T00:00:00Z"}) {
    std::string body = std::string(R"({"alerts":[{"status":"firing","labels":{"alertname":"GpunoiseX","node":"h1"},"startsAt":")") +
                       starts + R"("}]})";
    auto m = MatchAlertmanagerWebhook(body, node);
    ASSERT_TRUE(m.ok()) << starts;
    ASSERT_TRUE(*m) << starts;
    EXPECT_EQ((*m)->starts_at_realtime_ns, 0) << starts;
  }
}

TEST(AlertFanout, AFingerprintIsPrometheusLabelSetHashWhenTheSenderGivesNone) {
  // FNV-1a 64's offset basis: the empty label set's fingerprint.
  EXPECT_EQ(AlertFingerprint({}), "cbf29ce484222325");
  // Order does not matter (sorted by name); the value was computed
  // independently from the algorithm's definition.
  EXPECT_EQ(AlertFingerprint({{"slurm_job_id", "4242"}, {"instance", "h3:9464"},
                              {"alertname", "GpunoiseSlurmJobStragglerNode"}}),
            "282072bd67f6c863");
}

TEST(AlertFanout, DumpsOfOneAlertAreNamedByItsFingerprintAndTheMachine) {
  EXPECT_EQ(AlertDumpTag("7c1a9e0b5d3f2468", "gpu-node-7.cluster"), "alert-7c1a9e0b5d3f2468-gpu-node-7.cluster");
  EXPECT_EQ(AlertDumpTag("7c1a", "a/b c"), "alert-7c1a-a_b_c");
  // A fingerprint with characters a file name must not hold is cleaned up when parsed.
  auto m = MatchAlertmanagerWebhook(
      R"({"alerts":[{"status":"firing","labels":{"alertname":"GpunoiseX","node":"h1"},"fingerprint":"../../etc"}]})",
      NodeIdentity{{"h1"}, {}});
  ASSERT_TRUE(m.ok());
  ASSERT_TRUE(*m);
  EXPECT_EQ((*m)->fingerprint, "etc");
}

}  // namespace
}  // namespace gpunoise::monitor
