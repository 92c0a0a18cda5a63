#include "common/metrics/metrics.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "common/metrics/host_port.h"
#include "tests/testing/status_matchers.h"

using ::fedmf::testing::IsOk;
using ::fedmf::testing::StatusIs;

namespace fedmf::metrics {
namespace {

const Sample* Find(const std::vector<Sample>& samples, const std::string& name,
                   const Labels& labels = {}) {
  for (const Sample& s : samples) {
    if (s.name == name && s.labels == labels) return &s;
  }
  return nullptr;
}

TEST(MetricsTest, RendersEveryTypeAsParsableExposition) {
  Registry r;
  r.AddCounter("jobs_total", "Jobs")->Increment(3);
  r.AddGauge("eps", "Epsilon \"spent\"\nper party", {{"party", "a\"b\\c\nd"}})->Set(1.25);
  Histogram* h = r.AddHistogram("latency_seconds", "Round latency", {0.1, 1, 10});
  for (double v : {0.05, 0.1, 0.5, 2.0, 50.0}) h->Observe(v);

  const std::string text = r.Render();
  std::vector<Sample> samples;
  ASSERT_THAT(ParseExposition(text, &samples), IsOk()) << text;
  EXPECT_TRUE(absl::StrContains(text, "# TYPE jobs_total counter\njobs_total 3\n")) << text;
  EXPECT_TRUE(absl::StrContains(text, "# HELP eps Epsilon \"spent\"\\nper party\n")) << text;
  // Label values round-trip through escaping.
  const Sample* eps = Find(samples, "eps", {{"party", "a\"b\\c\nd"}});
  ASSERT_NE(eps, nullptr) << text;
  EXPECT_EQ(eps->value, 1.25);
  // Buckets are cumulative and upper-inclusive: 0.1 falls in le=0.1.
  const std::vector<std::pair<std::string, double>> expected{
      {"0.1", 2}, {"1", 3}, {"10", 4}, {"+Inf", 5}};
  for (const auto& [le, count] : expected) {
    const Sample* b = Find(samples, "latency_seconds_bucket", {{"le", le}});
    ASSERT_NE(b, nullptr) << le << "\n" << text;
    EXPECT_EQ(b->value, count) << le;
  }
  EXPECT_EQ(Find(samples, "latency_seconds_count")->value, 5);
  EXPECT_DOUBLE_EQ(Find(samples, "latency_seconds_sum")->value, 52.65);
}

TEST(MetricsTest, SameNameAndLabelsIsTheSameMetricAndTypesCannotChange) {
  Registry r;
  Counter* a = r.AddCounter("x_total", "x", {{"k", "1"}});
  EXPECT_EQ(r.AddCounter("x_total", "x", {{"k", "1"}}), a);
  EXPECT_NE(r.AddCounter("x_total", "x", {{"k", "2"}}), a);
  EXPECT_EQ(r.AddGauge("x_total", "x"), nullptr);
  EXPECT_EQ(r.AddCounter("1bad", "x"), nullptr);
  EXPECT_EQ(r.AddCounter("ok", "x", {{"le", "1"}}), nullptr);
  EXPECT_EQ(r.AddCounter("ok", "x", {{"__reserved", "1"}}), nullptr);
  EXPECT_EQ(r.AddHistogram("h", "x", {1, 1}), nullptr);
  EXPECT_EQ(r.AddHistogram("h", "x", {1, INFINITY}), nullptr);
}

TEST(MetricsTest, CountersOnlyGoUpAndMirrorTotals) {
  Counter c;
  c.Increment(2);
  c.Increment(-1);
  c.Increment(NAN);
  EXPECT_EQ(c.value(), 2);
  c.SetTotal(10);
  c.SetTotal(7);  // a smaller total never lowers a counter
  EXPECT_EQ(c.value(), 10);
}

TEST(MetricsTest, ConcurrentIncrementsAreNotLost) {
  Registry r;
  Counter* c = r.AddCounter("n_total", "n");
  Histogram* h = r.AddHistogram("h", "h", {1});
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 10000; ++i) {
        c->Increment();
        h->Observe(0.5);
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(c->value(), 40000);
  EXPECT_EQ(h->snapshot().count, 40000u);
}

TEST(MetricsTest, SpecialValuesUseThePrometheusSpelling) {
  Registry r;
  r.AddGauge("g", "g", {{"p", "inf"}})->Set(INFINITY);
  r.AddGauge("g", "g", {{"p", "big"}})->Set(123456789012.0);
  const std::string text = r.Render();
  EXPECT_TRUE(absl::StrContains(text, "g{p=\"inf\"} +Inf\n")) << text;
  EXPECT_TRUE(absl::StrContains(text, "g{p=\"big\"} 123456789012\n")) << text;
  std::vector<Sample> samples;
  ASSERT_THAT(ParseExposition(text, &samples), IsOk());
  EXPECT_TRUE(std::isinf(Find(samples, "g", {{"p", "inf"}})->value));
}

// Issue 56, item 9: a listener configured on port 0 is logged with the port
// it bound, not as "http://127.0.0.1:0 (port 38701)".
TEST(HostPortTest, BoundUrlNamesThePortBound) {
  EXPECT_EQ(BoundUrl("127.0.0.1:0", 38701), "http://127.0.0.1:38701");
  EXPECT_EQ(BoundUrl("0.0.0.0:9464", 9464), "http://0.0.0.0:9464");
  EXPECT_EQ(BoundUrl("[::1]:0", 8080), "http://[::1]:8080");
}

TEST(ExpositionParserTest, RejectsMalformedTextNamingTheLine) {
  const std::vector<std::pair<std::string, std::string>> bad{
      {"metric{a=\"1\" 3\n", "line 1"},
      {"metric 1\n9bad 2\n", "line 2"},
      {"metric abc\n", "bad value"},
      {"metric{a=\"x\\q\"} 1\n", "bad escape"},
      {"metric{a=\"1\",a=\"2\"} 1\n", "twice"},
      {"# TYPE m counter\nm -1\n", "negative"},
      {"# TYPE m widget\n", "unknown type"},
      {"m 1\n# TYPE m gauge\n", "after its samples"},
      {"# TYPE h histogram\nh_bucket{le=\"1\"} 2\nh_bucket{le=\"+Inf\"} 1\nh_count 1\n",
       "cumulative"},
      {"# TYPE h histogram\nh_bucket{le=\"1\"} 2\nh_count 2\n", "+Inf"},
      {"# TYPE h histogram\nh_bucket{le=\"+Inf\"} 2\nh_count 3\n", "_count"},
      {"metric 1 notatime\n", "timestamp"},
  };
  for (const auto& [text, what] : bad) {
    std::vector<Sample> samples;
    absl::Status s = ParseExposition(text, &samples);
    EXPECT_THAT(s, StatusIs(absl::StatusCode::kInvalidArgument)) << text;
    EXPECT_TRUE(absl::StrContains(s.message(), what)) << text << " -> " << s.message();
  }
}

TEST(ExpositionParserTest, AcceptsTimestampsCommentsAndUntypedSamples) {
  std::vector<Sample> samples;
  ASSERT_TRUE(
      ParseExposition("# just a comment\nup 1 1700000000000\n\nother{x=\"\"} 2.5e3\n", &samples)
          .ok());
  ASSERT_EQ(samples.size(), 2u);
  EXPECT_EQ(samples[1].value, 2500);
}

}  // namespace
}  // namespace fedmf::metrics
