#include "monitor/monitor_options.h"

#include <gtest/gtest.h>

namespace gpunoise::monitor {
namespace {

TEST(MonitorOptions, DefaultsWithoutFileOrFlags) {
  auto o = ResolveOptions({}, {});
  ASSERT_TRUE(o.ok()) << o.error().message;
  EXPECT_EQ(o->interval_ns, 1'000'000'000u);
  EXPECT_EQ(o->listen, "127.0.0.1:9464");
  EXPECT_EQ(o->sample_hz, 49);
  EXPECT_FALSE(o->flight_recorder());
}

TEST(MonitorOptions, ConfigFileParsesKeysCommentsAndRepeats) {
  auto layer = ParseConfigText(
      "# monitor config\n"
      "interval = 2s\n"
      "\n"
      "focus = comm:python   # the trainer\n"
      "focus = 4242\n"
      "threshold = softirq.share=40%\n"
      "flight-recorder = 20s\n"
      "dump-dir = /var/lib/gpunoise\n");
  ASSERT_TRUE(layer.ok()) << layer.error().message;
  auto o = ResolveOptions(*layer, {});
  ASSERT_TRUE(o.ok()) << o.error().message;
  EXPECT_EQ(o->interval_ns, 2'000'000'000u);
  EXPECT_EQ(o->focus, (std::vector<std::string>{"comm:python", "4242"}));
  EXPECT_EQ(o->thresholds, (std::vector<std::string>{"softirq.share=40%"}));
  EXPECT_EQ(o->flight_recorder_ns, 20'000'000'000u);
  EXPECT_EQ(o->dump_dir, "/var/lib/gpunoise");
}

TEST(MonitorOptions, ConfigFileErrorsNameTheLine) {
  auto unknown = ParseConfigText("interval = 1s\nfrobnicate = 3\n");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().message, "line 2: unknown key 'frobnicate'");
  auto no_eq = ParseConfigText("interval 1s\n");
  ASSERT_FALSE(no_eq.ok());
  EXPECT_NE(no_eq.error().message.find("line 1"), std::string::npos);
  auto empty = ParseConfigText("listen =\n");
  ASSERT_FALSE(empty.ok());
}

TEST(MonitorOptions, CommandLineWinsOverTheFile) {
  OptionLayer file = {{"interval", {"5s"}}, {"focus", {"comm:a", "comm:b"}}, {"sample-hz", {"99"}}};
  OptionLayer cli = {{"interval", {"1s"}}, {"focus", {"7"}}};
  auto o = ResolveOptions(file, cli);
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(o->interval_ns, 1'000'000'000u);
  EXPECT_EQ(o->focus, (std::vector<std::string>{"7"}));
  EXPECT_EQ(o->sample_hz, 99);
}

TEST(MonitorOptions, BadValuesAreRejected) {
  EXPECT_FALSE(ResolveOptions({}, {{"interval", {"10ms"}}}).ok());
  EXPECT_FALSE(ResolveOptions({}, {{"interval", {"soon"}}}).ok());
  EXPECT_FALSE(ResolveOptions({}, {{"focus", {"comm:"}}}).ok());
  EXPECT_FALSE(ResolveOptions({}, {{"focus", {"-3"}}}).ok());
  EXPECT_FALSE(ResolveOptions({}, {{"focus", {"python"}}}).ok());
  EXPECT_FALSE(ResolveOptions({}, {{"sample-hz", {"5000"}}}).ok());
  EXPECT_FALSE(ResolveOptions({}, {{"max-dumps", {"0"}}}).ok());
  EXPECT_FALSE(ResolveOptions({}, {{"listen", {"localhost"}}}).ok());
  EXPECT_FALSE(ResolveOptions({}, {{"focus-cpus", {"3-1"}}}).ok());
  EXPECT_FALSE(ResolveOptions({}, {{"threshold", {"softirq.share=140%"}}}).ok());
  EXPECT_FALSE(ResolveOptions({}, {{"threshold", {"no.such=1"}}}).ok());
  EXPECT_FALSE(ResolveOptions({}, {{"net-packet-counters", {"maybe"}}}).ok());
  EXPECT_FALSE(ResolveOptions({}, {{"redact", {"maybe"}}}).ok());
  auto no_dir = ResolveOptions({}, {{"flight-recorder", {"20s"}}});
  ASSERT_FALSE(no_dir.ok());
  EXPECT_NE(no_dir.error().message.find("dump-dir"), std::string::npos);
}

TEST(MonitorOptions, JobsAndAlertLookback) {
  auto o = ResolveOptions({{"job", {"4242"}}}, {{"job", {"4343,run-7", "88"}}, {"alert-lookback", {"30s"}}});
  ASSERT_TRUE(o.ok()) << o.error().message;
  EXPECT_EQ(o->jobs, (std::vector<std::string>{"4343", "run-7", "88"})) << "the command line replaces the file's";
  EXPECT_EQ(o->alert_lookback_ns, 30'000'000'000u);
  EXPECT_EQ(ResolveOptions({}, {})->alert_lookback_ns, 0u) << "0: the flight recorder's window";
  EXPECT_FALSE(ResolveOptions({}, {{"alert-lookback", {"soon"}}}).ok());
  auto file = ParseConfigText("job = 4242\njob = 4343\n");
  ASSERT_TRUE(file.ok());
  EXPECT_EQ(ResolveOptions(*file, {})->jobs, (std::vector<std::string>{"4242", "4343"}));
}

TEST(MonitorOptions, FocusListsSplitOnCommas) {
  auto o = ResolveOptions({}, {{"focus", {"comm:a,12", "cgroup:/train"}}});
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(o->focus, (std::vector<std::string>{"comm:a", "12", "cgroup:/train"}));
}

TEST(MonitorOptions, ListenAddresses) {
  auto v4 = ParseListenAddress("127.0.0.1:9464");
  ASSERT_TRUE(v4.ok());
  EXPECT_EQ(v4->host, "127.0.0.1");
  EXPECT_EQ(v4->port, 9464);
  auto any = ParseListenAddress(":0");
  ASSERT_TRUE(any.ok());
  EXPECT_EQ(any->host, "0.0.0.0");
  EXPECT_EQ(any->port, 0);
  auto v6 = ParseListenAddress("[::1]:9000");
  ASSERT_TRUE(v6.ok());
  EXPECT_EQ(v6->host, "::1");
  EXPECT_EQ(v6->port, 9000);
  EXPECT_FALSE(ParseListenAddress("::1:9000").ok());
  EXPECT_FALSE(ParseListenAddress("127.0.0.1:70000").ok());
  EXPECT_FALSE(ParseListenAddress("127.0.0.1").ok());
}

}  // namespace
}  // namespace gpunoise::monitor

namespace gpunoise::monitor {
namespace {

TEST(MonitorOptions, RedactIsOffUnlessAskedFromTheCommandLineOrTheFile) {
  auto plain = ResolveOptions({}, {});
  ASSERT_TRUE(plain.ok());
  EXPECT_FALSE(plain->redact);
  auto cli = ResolveOptions({}, {{"redact", {"on"}}});
  ASSERT_TRUE(cli.ok()) << cli.error().message;
  EXPECT_TRUE(cli->redact);
  auto file = ResolveOptions({{"redact", {"true"}}}, {});
  ASSERT_TRUE(file.ok()) << file.error().message;
  EXPECT_TRUE(file->redact);
}

}  // namespace
}  // namespace gpunoise::monitor
