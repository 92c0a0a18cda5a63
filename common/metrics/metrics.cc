#include "common/metrics/metrics.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <set>

#include "absl/strings/str_cat.h"

namespace fedmf::metrics {
namespace {

bool ValidName(const std::string& s, bool allow_colon) {
  if (s.empty()) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    const bool alpha =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (allow_colon && c == ':');
    if (!alpha && !(i > 0 && c >= '0' && c <= '9')) return false;
  }
  return true;
}

bool ValidLabels(const Labels& labels) {
  std::set<std::string> seen;
  for (const auto& [k, v] : labels) {
    if (!ValidName(k, false) || k.rfind("__", 0) == 0 || k == "le" || !seen.insert(k).second) {
      return false;
    }
  }
  return true;
}

// Shortest round-trip form; Prometheus spells the specials +Inf, -Inf, NaN.
std::string FormatValue(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  return std::string(buf, end);
}

std::string EscapeLabelValue(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '"')
      out += "\\\"";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

std::string EscapeHelp(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

std::string RenderLabels(const Labels& labels, const std::string& le = "") {
  if (labels.empty() && le.empty()) return "";
  std::string out = "{";
  bool first = true;
  for (const auto& [k, v] : labels) {
    absl::StrAppend(&out, first ? "" : ",", k, "=\"", EscapeLabelValue(v), "\"");
    first = false;
  }
  if (!le.empty()) absl::StrAppend(&out, first ? "" : ",", "le=\"", le, "\"");
  return out + "}";
}

}  // namespace

// ------------------------------------------------------------------ metrics

void Counter::Increment(double delta) {
  if (!(delta >= 0) || std::isinf(delta)) return;
  absl::MutexLock lock(&mu_);
  value_ += delta;
}

void Counter::SetTotal(double total) {
  if (!std::isfinite(total)) return;
  absl::MutexLock lock(&mu_);
  value_ = std::max(value_, total);
}

double Counter::value() const {
  absl::MutexLock lock(&mu_);
  return value_;
}

void Gauge::Set(double v) {
  absl::MutexLock lock(&mu_);
  value_ = v;
}

void Gauge::Add(double delta) {
  absl::MutexLock lock(&mu_);
  value_ += delta;
}

double Gauge::value() const {
  absl::MutexLock lock(&mu_);
  return value_;
}

Histogram::Histogram(std::vector<double> bounds)
    : bounds_(std::move(bounds)), counts_(bounds_.size() + 1, 0) {}

void Histogram::Observe(double v) {
  if (std::isnan(v)) return;
  const size_t bucket =
      std::lower_bound(bounds_.begin(), bounds_.end(), v) - bounds_.begin();  // v <= bound
  absl::MutexLock lock(&mu_);
  ++counts_[bucket];
  sum_ += v;
  ++count_;
}

Histogram::Snapshot Histogram::snapshot() const {
  absl::MutexLock lock(&mu_);
  Snapshot s;
  s.bounds = bounds_;
  uint64_t running = 0;
  for (uint64_t c : counts_) {
    running += c;
    s.cumulative.push_back(running);
  }
  s.sum = sum_;
  s.count = count_;
  return s;
}

std::vector<double> ExponentialBuckets(double start, double factor, int n) {
  std::vector<double> out;
  double b = start;
  for (int i = 0; i < n; ++i, b *= factor) out.push_back(b);
  return out;
}

// ------------------------------------------------------------------ registry

Registry::Family* Registry::FamilyFor(const std::string& name, const std::string& help, Type type,
                                      const Labels& labels) {
  if (!ValidName(name, true) || !ValidLabels(labels)) return nullptr;
  auto [it, inserted] = families_.try_emplace(name);
  if (inserted) {
    it->second.type = type;
    it->second.help = help;
  }
  return it->second.type == type ? &it->second : nullptr;
}

Counter* Registry::AddCounter(const std::string& name, const std::string& help,
                              const Labels& labels) {
  absl::MutexLock lock(&mu_);
  Family* f = FamilyFor(name, help, Type::kCounter, labels);
  if (f == nullptr) return nullptr;
  auto& slot = f->counters[labels];
  if (!slot) slot = std::make_unique<Counter>();
  return slot.get();
}

Gauge* Registry::AddGauge(const std::string& name, const std::string& help, const Labels& labels) {
  absl::MutexLock lock(&mu_);
  Family* f = FamilyFor(name, help, Type::kGauge, labels);
  if (f == nullptr) return nullptr;
  auto& slot = f->gauges[labels];
  if (!slot) slot = std::make_unique<Gauge>();
  return slot.get();
}

Histogram* Registry::AddHistogram(const std::string& name, const std::string& help,
                                  std::vector<double> bounds, const Labels& labels) {
  for (size_t i = 0; i < bounds.size(); ++i) {
    if (!std::isfinite(bounds[i]) || (i > 0 && !(bounds[i] > bounds[i - 1]))) return nullptr;
  }
  absl::MutexLock lock(&mu_);
  Family* f = FamilyFor(name, help, Type::kHistogram, labels);
  if (f == nullptr) return nullptr;
  auto& slot = f->histograms[labels];
  if (!slot) slot = std::make_unique<Histogram>(std::move(bounds));
  return slot.get();
}

std::string Registry::Render() const {
  absl::MutexLock lock(&mu_);
  std::string out;
  for (const auto& [name, f] : families_) {
    const char* type = f.type == Type::kCounter ? "counter"
                       : f.type == Type::kGauge ? "gauge"
                                                : "histogram";
    absl::StrAppend(&out, "# HELP ", name, " ", EscapeHelp(f.help), "\n# TYPE ", name, " ", type,
                    "\n");
    for (const auto& [labels, c] : f.counters) {
      absl::StrAppend(&out, name, RenderLabels(labels), " ", FormatValue(c->value()), "\n");
    }
    for (const auto& [labels, g] : f.gauges) {
      absl::StrAppend(&out, name, RenderLabels(labels), " ", FormatValue(g->value()), "\n");
    }
    for (const auto& [labels, h] : f.histograms) {
      const Histogram::Snapshot s = h->snapshot();
      for (size_t i = 0; i < s.cumulative.size(); ++i) {
        const std::string le = i < s.bounds.size() ? FormatValue(s.bounds[i]) : "+Inf";
        absl::StrAppend(&out, name, "_bucket", RenderLabels(labels, le), " ", s.cumulative[i],
                        "\n");
      }
      absl::StrAppend(&out, name, "_sum", RenderLabels(labels), " ", FormatValue(s.sum), "\n", name,
                      "_count", RenderLabels(labels), " ", s.count, "\n");
    }
  }
  return out;
}

}  // namespace fedmf::metrics
