// Prometheus-style metrics: counters, gauges and histograms in a registry
// that renders the text exposition format (version 0.0.4). Pure library:
// no sockets (the HTTP endpoint is http_exporter.h), thread-safe, no globals.
//
//   metrics::Registry r;
//   metrics::Counter* rounds = r.AddCounter("fedmf_rounds_completed_total", "Rounds closed");
//   rounds->Increment();
//   std::string text = r.Render();
#ifndef FEDMF_COMMON_METRICS_METRICS_H_
#define FEDMF_COMMON_METRICS_METRICS_H_

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"

namespace fedmf::metrics {

// Label name -> value, rendered in this order.
using Labels = std::vector<std::pair<std::string, std::string>>;

class Counter {
 public:
  // Counters only go up; a negative or non-finite delta is ignored.
  void Increment(double delta = 1);
  // For counters mirrored from another monotone source (e.g. a daemon's own
  // tallies read at scrape time): takes `total` if it is larger.
  void SetTotal(double total);
  double value() const;

 private:
  mutable absl::Mutex mu_;
  double value_ ABSL_GUARDED_BY(mu_) = 0;
};

class Gauge {
 public:
  void Set(double v);
  void Add(double delta);
  double value() const;

 private:
  mutable absl::Mutex mu_;
  double value_ ABSL_GUARDED_BY(mu_) = 0;
};

class Histogram {
 public:
  // `bounds`: strictly increasing finite upper bounds; +Inf is implicit.
  explicit Histogram(std::vector<double> bounds);
  void Observe(double v);
  struct Snapshot {
    std::vector<double> bounds;
    std::vector<uint64_t> cumulative;  // one per bound, then +Inf
    double sum = 0;
    uint64_t count = 0;
  };
  Snapshot snapshot() const;

 private:
  const std::vector<double> bounds_;
  mutable absl::Mutex mu_;
  std::vector<uint64_t> counts_ ABSL_GUARDED_BY(mu_);  // per bucket (not cumulative), last = +Inf
  double sum_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t count_ ABSL_GUARDED_BY(mu_) = 0;
};

// Exponential bucket bounds: start, start*factor, ... (n bounds).
std::vector<double> ExponentialBuckets(double start, double factor, int n);

class Registry {
 public:
  // Returns the metric for (name, labels), creating its family on first use.
  // Names and label names must match Prometheus' grammar, and a name keeps
  // its type and help; a violation is a programming error and returns null
  // (checked in unit tests, never on untrusted input).
  Counter* AddCounter(const std::string& name, const std::string& help, const Labels& labels = {});
  Gauge* AddGauge(const std::string& name, const std::string& help, const Labels& labels = {});
  Histogram* AddHistogram(const std::string& name, const std::string& help,
                          std::vector<double> bounds, const Labels& labels = {});

  // The text exposition: families sorted by name, each with HELP and TYPE.
  std::string Render() const;

 private:
  enum class Type { kCounter, kGauge, kHistogram };
  struct Family {
    Type type;
    std::string help;
    std::map<Labels, std::unique_ptr<Counter>> counters;
    std::map<Labels, std::unique_ptr<Gauge>> gauges;
    std::map<Labels, std::unique_ptr<Histogram>> histograms;
  };
  Family* FamilyFor(const std::string& name, const std::string& help, Type type,
                    const Labels& labels) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  mutable absl::Mutex mu_;
  std::map<std::string, Family> families_ ABSL_GUARDED_BY(mu_);
};

// A parsed sample of the exposition format.
struct Sample {
  std::string name;
  Labels labels;
  double value = 0;
};

// Parses and validates Prometheus text exposition (0.0.4): comment/HELP/TYPE
// lines, metric and label name grammar, label value escapes, float values,
// one TYPE per family before its samples, and for histograms cumulative
// non-decreasing buckets ending in le="+Inf" equal to _count. Errors name the
// line. Used by the tests that scrape the daemons.
absl::Status ParseExposition(const std::string& text, std::vector<Sample>* samples);

}  // namespace fedmf::metrics

#endif  // FEDMF_COMMON_METRICS_METRICS_H_
