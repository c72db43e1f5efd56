#include "export/openmetrics/exposition.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <string>

#include "integration/support/privileges.h"

namespace gpunoise::openmetrics {
namespace {

MetricFamily Counter() {
  MetricFamily f;
  f.name = "gpunoise_softirq_seconds";
  f.type = MetricType::kCounter;
  f.unit = "seconds";
  f.help = "Time in softirqs.";
  f.samples.push_back({{{"cpu", "0"}, {"vector", "net_rx"}}, 1.5});
  f.samples.push_back({{{"cpu", "1"}, {"vector", "timer"}}, 0.25});
  return f;
}

MetricFamily Histogram() {
  MetricFamily f;
  f.name = "gpunoise_runqueue_latency_seconds";
  f.type = MetricType::kHistogram;
  f.unit = "seconds";
  f.help = "Run-queue latency.";
  HistogramSample h;
  h.labels = {{"threads", "all"}};
  h.buckets = {{2e-6, 5}, {4e-6, 7}, {8e-6, 7}};
  h.count = 9;
  h.sum = 0.0003;
  f.histograms.push_back(h);
  return f;
}

// Each line of the classic text format: a comment (HELP/TYPE) or a sample
// "name{labels} value" (the grammar of Prometheus' text parser).
void ExpectWellFormed(const std::string& text, bool openmetrics) {
  static const std::regex kComment(R"(# (HELP|TYPE|UNIT) [a-zA-Z_:][a-zA-Z0-9_:]* .*)");
  static const std::regex kSample(
      R"([a-zA-Z_:][a-zA-Z0-9_:]*(\{([a-zA-Z_][a-zA-Z0-9_]*="([^"\\\n]|\\\\|\\"|\\n)*")(,[a-zA-Z_][a-zA-Z0-9_]*="([^"\\\n]|\\\\|\\"|\\n)*")*\})? (NaN|[+-]Inf|[-+]?[0-9.]+(e[-+]?[0-9]+)?))");
  size_t pos = 0;
  std::string last;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    ASSERT_NE(end, std::string::npos) << "the exposition must end with a newline";
    std::string line = text.substr(pos, end - pos);
    pos = end + 1;
    last = line;
    if (line == "# EOF") {
      EXPECT_TRUE(openmetrics);
      EXPECT_EQ(pos, text.size()) << "# EOF must be the last line";
      continue;
    }
    if (line[0] == '#') {
      EXPECT_TRUE(std::regex_match(line, kComment)) << line;
    } else {
      EXPECT_TRUE(std::regex_match(line, kSample)) << line;
    }
  }
  if (openmetrics) {
    EXPECT_EQ(last, "# EOF");
  }
}

TEST(Exposition, CounterInPrometheusTextHasTotalFamilyName) {
  std::string out;
  MetricFamily f = Counter();
  Render(std::span<const MetricFamily>(&f, 1), Format::kPrometheusText, &out);
  EXPECT_EQ(out,
            "# HELP gpunoise_softirq_seconds_total Time in softirqs.\n"
            "# TYPE gpunoise_softirq_seconds_total counter\n"
            "gpunoise_softirq_seconds_total{cpu=\"0\",vector=\"net_rx\"} 1.5\n"
            "gpunoise_softirq_seconds_total{cpu=\"1\",vector=\"timer\"} 0.25\n");
  ExpectWellFormed(out, false);
}

TEST(Exposition, CounterInOpenMetricsHasUnitAndEof) {
  std::string out;
  MetricFamily f = Counter();
  Render(std::span<const MetricFamily>(&f, 1), Format::kOpenMetrics, &out);
  EXPECT_EQ(out,
            "# HELP gpunoise_softirq_seconds Time in softirqs.\n"
            "# TYPE gpunoise_softirq_seconds counter\n"
            "# UNIT gpunoise_softirq_seconds seconds\n"
            "gpunoise_softirq_seconds_total{cpu=\"0\",vector=\"net_rx\"} 1.5\n"
            "gpunoise_softirq_seconds_total{cpu=\"1\",vector=\"timer\"} 0.25\n"
            "# EOF\n");
  ExpectWellFormed(out, true);
}

TEST(Exposition, HistogramHasCumulativeBucketsInfCountAndSum) {
  std::string out;
  MetricFamily f = Histogram();
  Render(std::span<const MetricFamily>(&f, 1), Format::kPrometheusText, &out);
  EXPECT_NE(out.find("gpunoise_runqueue_latency_seconds_bucket{threads=\"all\",le=\"2e-06\"} 5\n"), std::string::npos) << out;
  EXPECT_NE(out.find("gpunoise_runqueue_latency_seconds_bucket{threads=\"all\",le=\"8e-06\"} 7\n"), std::string::npos);
  EXPECT_NE(out.find("gpunoise_runqueue_latency_seconds_bucket{threads=\"all\",le=\"+Inf\"} 9\n"), std::string::npos);
  EXPECT_NE(out.find("gpunoise_runqueue_latency_seconds_count{threads=\"all\"} 9\n"), std::string::npos);
  EXPECT_NE(out.find("gpunoise_runqueue_latency_seconds_sum{threads=\"all\"} 0.0003\n"), std::string::npos);
  ExpectWellFormed(out, false);
}

TEST(Exposition, InfoMetricIsGaugeInTextAndInfoInOpenMetrics) {
  MetricFamily f;
  f.name = "gpunoise_build";
  f.type = MetricType::kInfo;
  f.help = "version";
  f.samples.push_back({{{"version", "0.1.0"}}, 1});
  std::string text, om;
  Render(std::span<const MetricFamily>(&f, 1), Format::kPrometheusText, &text);
  Render(std::span<const MetricFamily>(&f, 1), Format::kOpenMetrics, &om);
  EXPECT_NE(text.find("# TYPE gpunoise_build_info gauge\n"), std::string::npos);
  EXPECT_NE(om.find("# TYPE gpunoise_build info\n"), std::string::npos);
  EXPECT_NE(om.find("gpunoise_build_info{version=\"0.1.0\"} 1\n"), std::string::npos);
}

TEST(Exposition, LabelValuesAreEscaped) {
  EXPECT_EQ(EscapeLabelValue("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
  MetricFamily f;
  f.name = "x";
  f.type = MetricType::kGauge;
  f.help = "line one\nline \\ two";
  f.samples.push_back({{{"who", "we\"ird\ncomm"}}, 1});
  std::string out;
  Render(std::span<const MetricFamily>(&f, 1), Format::kPrometheusText, &out);
  EXPECT_NE(out.find("# HELP x line one\\nline \\\\ two\n"), std::string::npos) << out;
  EXPECT_NE(out.find("x{who=\"we\\\"ird\\ncomm\"} 1\n"), std::string::npos) << out;
  ExpectWellFormed(out, false);
}

TEST(Exposition, ValuesFormatAsShortestNumbers) {
  EXPECT_EQ(FormatValue(12345), "12345");
  EXPECT_EQ(FormatValue(0.25), "0.25");
  EXPECT_EQ(FormatValue(2e-06), "2e-06");
  EXPECT_EQ(FormatValue(INFINITY), "+Inf");
  EXPECT_EQ(FormatValue(-INFINITY), "-Inf");
  EXPECT_EQ(FormatValue(NAN), "NaN");
  EXPECT_EQ(std::stod(FormatValue(1.0 / 3)), 1.0 / 3);
}

TEST(Exposition, NegotiatesOpenMetricsOnlyWhenAsked) {
  EXPECT_EQ(NegotiateFormat(""), Format::kPrometheusText);
  EXPECT_EQ(NegotiateFormat("*/*"), Format::kPrometheusText);
  EXPECT_EQ(NegotiateFormat("application/openmetrics-text;version=1.0.0,application/openmetrics-text;"
                            "version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1"),
            Format::kOpenMetrics);
  EXPECT_NE(ContentType(Format::kOpenMetrics).find("application/openmetrics-text; version=1.0.0"), std::string::npos);
  EXPECT_NE(ContentType(Format::kPrometheusText).find("text/plain; version=0.0.4"), std::string::npos);
}

TEST(Exposition, ValidateRejectsWhatTheFormatsCannotSay) {
  EXPECT_TRUE(Validate(Counter()).ok());
  EXPECT_TRUE(Validate(Histogram()).ok());
  MetricFamily bad = Counter();
  bad.name = "gpunoise_softirq_seconds_total";
  bad.unit = "";
  EXPECT_FALSE(Validate(bad).ok()) << "a counter family named _total";
  bad = Counter();
  bad.unit = "bytes";
  EXPECT_FALSE(Validate(bad).ok()) << "unit not the name's suffix";
  bad = Counter();
  bad.samples.push_back(bad.samples.front());
  EXPECT_FALSE(Validate(bad).ok()) << "duplicate label set";
  bad = Counter();
  bad.samples[0].labels.push_back({"__reserved", "x"});
  EXPECT_FALSE(Validate(bad).ok());
  bad = Counter();
  bad.name = "1abc";
  EXPECT_FALSE(Validate(bad).ok());
  MetricFamily h = Histogram();
  h.histograms[0].labels.push_back({"le", "1"});
  EXPECT_FALSE(Validate(h).ok()) << "le is reserved";
  h = Histogram();
  h.histograms[0].buckets = {{4e-6, 7}, {2e-6, 8}};
  EXPECT_FALSE(Validate(h).ok()) << "bounds must ascend";
  h = Histogram();
  h.histograms[0].buckets = {{2e-6, 7}, {4e-6, 3}};
  EXPECT_FALSE(Validate(h).ok()) << "counts must be cumulative";
  bad = Counter();
  bad.samples[0].value = -1;
  EXPECT_FALSE(Validate(bad).ok());
}

// promtool (Debian package "prometheus") is Prometheus' own checker of the
// text format: it must accept what we write.
TEST(Exposition, PromtoolAcceptsTheTextFormat) {
  if (std::system("command -v promtool >/dev/null 2>&1") != 0)
    GN_SKIP_MISSING_TOOL("promtool is not installed (Debian package prometheus)");
  std::vector<MetricFamily> families = {Counter(), Histogram()};
  MetricFamily g;
  g.name = "gpunoise_finding_active";
  g.type = MetricType::kGauge;
  g.help = "1 while active";
  g.samples.push_back({{{"detector", "softirq_storm"}}, 1});
  families.push_back(g);
  std::string out;
  Render(families, Format::kPrometheusText, &out);
  char path[] = "/tmp/gn_exposition_XXXXXX";
  int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(write(fd, out.data(), out.size()), static_cast<ssize_t>(out.size()));
  close(fd);
  std::string cmd = std::string("promtool check metrics < ") + path + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  std::string text;
  char buf[512];
  while (p && fgets(buf, sizeof(buf), p)) text += buf;
  int rc = p ? pclose(p) : -1;
  unlink(path);
  EXPECT_EQ(rc, 0) << text;
  EXPECT_EQ(text.find("error"), std::string::npos) << text;
}

}  // namespace
}  // namespace gpunoise::openmetrics
