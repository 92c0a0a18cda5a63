// ParseExposition (metrics.h): a strict reader of the Prometheus text format,
// so tests can check what a daemon serves the way a Prometheus server would.
#include <cmath>
#include <cstdlib>
#include <map>
#include <set>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/base/status_macros.h"
#include "common/metrics/metrics.h"

namespace fedmf::metrics {
namespace {

bool IsNameChar(char c, bool first, bool allow_colon) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_') return true;
  if (allow_colon && c == ':') return true;
  return !first && c >= '0' && c <= '9';
}

// Reads a name at s[*pos]; empty if none.
std::string ReadName(const std::string& s, size_t* pos, bool allow_colon) {
  const size_t start = *pos;
  while (*pos < s.size() && IsNameChar(s[*pos], *pos == start, allow_colon)) ++*pos;
  return s.substr(start, *pos - start);
}

bool ParseValue(const std::string& text, double* out) {
  if (text == "+Inf" || text == "Inf") {
    *out = INFINITY;
    return true;
  }
  if (text == "-Inf") {
    *out = -INFINITY;
    return true;
  }
  if (text == "NaN") {
    *out = NAN;
    return true;
  }
  return absl::SimpleAtod(text, out) && std::isfinite(*out);
}

absl::Status LineError(int line, const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat("exposition line ", line, ": ", what));
}

absl::Status ParseLabels(const std::string& s, size_t* pos, int line, Labels* labels) {
  ++*pos;  // '{'
  std::set<std::string> seen;
  while (true) {
    if (*pos < s.size() && s[*pos] == '}') {
      ++*pos;
      return absl::OkStatus();
    }
    std::string key = ReadName(s, pos, false);
    if (key.empty()) return LineError(line, "bad label name");
    if (!seen.insert(key).second) return LineError(line, absl::StrCat("label '", key, "' twice"));
    if (*pos + 1 >= s.size() || s[*pos] != '=' || s[*pos + 1] != '"') {
      return LineError(line, absl::StrCat("label '", key, "': expected =\""));
    }
    *pos += 2;
    std::string value;
    bool closed = false;
    while (*pos < s.size()) {
      char c = s[(*pos)++];
      if (c == '"') {
        closed = true;
        break;
      }
      if (c == '\\') {
        if (*pos >= s.size()) break;
        char e = s[(*pos)++];
        if (e == 'n')
          value += '\n';
        else if (e == '\\' || e == '"')
          value += e;
        else
          return LineError(line,
                           absl::StrCat("label '", key, "': bad escape \\", std::string(1, e)));
      } else {
        value += c;
      }
    }
    if (!closed) return LineError(line, absl::StrCat("label '", key, "': unterminated value"));
    labels->emplace_back(key, value);
    if (*pos < s.size() && s[*pos] == ',')
      ++*pos;
    else if (*pos >= s.size() || s[*pos] != '}')
      return LineError(line, "expected , or } in labels");
  }
}

struct HistogramSeries {
  std::vector<std::pair<double, double>> buckets;  // (le, cumulative count) in file order
  double count = -1;
  int line = 0;
};

// One sample line: name, labels, value and an optional timestamp.
absl::StatusOr<Sample> ParseSampleLine(const std::string& line, int line_no) {
  Sample s;
  size_t pos = 0;
  s.name = ReadName(line, &pos, true);
  if (s.name.empty()) return LineError(line_no, "expected a metric name");
  if (pos < line.size() && line[pos] == '{') {
    RETURN_IF_ERROR(ParseLabels(line, &pos, line_no, &s.labels));
  }
  if (pos >= line.size() || line[pos] != ' ') return LineError(line_no, "expected ' value'");
  std::vector<std::string> rest = absl::StrSplit(line.substr(pos + 1), ' ', absl::SkipEmpty());
  if (rest.empty() || rest.size() > 2) return LineError(line_no, "expected 'value [timestamp]'");
  if (!ParseValue(rest[0], &s.value)) {
    return LineError(line_no, absl::StrCat("bad value '", rest[0], "'"));
  }
  int64_t ts;
  if (rest.size() == 2 && !absl::SimpleAtoi(rest[1], &ts)) {
    return LineError(line_no, absl::StrCat("bad timestamp '", rest[1], "'"));
  }
  return s;
}

// The exposition read so far: the declared types, and the histograms whose
// buckets must be checked once every line is in.
class ExpositionReader {
 public:
  explicit ExpositionReader(std::vector<Sample>* samples) : samples_(samples) {}

  absl::Status Line(const std::string& line, int line_no) {
    if (line.empty()) return absl::OkStatus();
    if (line[0] == '#') return Comment(line, line_no);
    ASSIGN_OR_RETURN(Sample s, ParseSampleLine(line, line_no));
    const auto [family, suffix] = FamilyOf(s.name);
    families_with_samples_.insert(family);
    auto t = types_.find(family);
    if (t != types_.end() && t->second == "histogram") {
      if (suffix.empty()) return LineError(line_no, "histogram sample without _bucket/_sum/_count");
      RETURN_IF_ERROR(AddHistogramSample(family, suffix, s, line_no));
    } else if (t != types_.end() && t->second == "counter" && !(s.value >= 0)) {
      return LineError(line_no, absl::StrCat("counter '", s.name, "' is negative or NaN"));
    }
    samples_->push_back(std::move(s));
    return absl::OkStatus();
  }

  // Every histogram ends in a +Inf bucket that equals its _count.
  absl::Status Finish() const {
    for (const auto& [key, h] : histograms_) {
      if (h.buckets.empty() || !std::isinf(h.buckets.back().first)) {
        return LineError(h.line, "histogram without a le=\"+Inf\" bucket");
      }
      if (h.count != h.buckets.back().second) {
        return LineError(h.line, "histogram _count differs from its +Inf bucket");
      }
    }
    return absl::OkStatus();
  }

 private:
  // HELP and TYPE lines are checked; other comments are allowed.
  absl::Status Comment(const std::string& line, int line_no) {
    std::vector<std::string> parts = absl::StrSplit(line, absl::MaxSplits(' ', 3));
    if (parts.size() < 3 || (parts[1] != "HELP" && parts[1] != "TYPE")) return absl::OkStatus();
    size_t p = 0;
    if (ReadName(parts[2], &p, true) != parts[2]) {
      return LineError(line_no, absl::StrCat("bad metric name '", parts[2], "'"));
    }
    if (parts[1] != "TYPE") return absl::OkStatus();
    const std::string type = parts.size() > 3 ? parts[3] : "";
    if (type != "counter" && type != "gauge" && type != "histogram" && type != "summary" &&
        type != "untyped") {
      return LineError(line_no, absl::StrCat("unknown type '", type, "'"));
    }
    if (types_.count(parts[2]) || families_with_samples_.count(parts[2])) {
      return LineError(line_no,
                       absl::StrCat("TYPE of '", parts[2], "' repeated or after its samples"));
    }
    types_[parts[2]] = type;
    return absl::OkStatus();
  }

  // (family, suffix): histogram and summary series carry _bucket/_sum/_count.
  std::pair<std::string, std::string> FamilyOf(const std::string& name) const {
    for (const char* suf : {"_bucket", "_sum", "_count"}) {
      const std::string sfx(suf);
      if (name.size() > sfx.size() && name.ends_with(sfx)) {
        const std::string base = name.substr(0, name.size() - sfx.size());
        auto t = types_.find(base);
        if (t != types_.end() && (t->second == "histogram" || t->second == "summary")) {
          return {base, sfx};
        }
      }
    }
    return {name, ""};
  }

  // A series is the family with its labels other than le.
  absl::Status AddHistogramSample(const std::string& family, const std::string& suffix,
                                  const Sample& s, int line_no) {
    std::string key = family;
    double le = NAN;
    bool has_le = false;
    for (const auto& [k, v] : s.labels) {
      if (k == "le") {
        has_le = true;
        if (!ParseValue(v, &le) || std::isnan(le)) {
          return LineError(line_no, absl::StrCat("bad le '", v, "'"));
        }
      } else {
        absl::StrAppend(&key, "\x1f", k, "=", v);
      }
    }
    HistogramSeries& h = histograms_[key];
    h.line = line_no;
    if (suffix == "_bucket") {
      if (!has_le) return LineError(line_no, "_bucket without le");
      if (!h.buckets.empty() &&
          (le <= h.buckets.back().first || s.value < h.buckets.back().second)) {
        return LineError(line_no, "buckets must increase in le and be cumulative");
      }
      h.buckets.emplace_back(le, s.value);
    } else if (suffix == "_count") {
      h.count = s.value;
    }
    return absl::OkStatus();
  }

  std::vector<Sample>* samples_;
  std::map<std::string, std::string> types_;  // family -> type
  std::set<std::string> families_with_samples_;
  std::map<std::string, HistogramSeries> histograms_;  // family + labels-without-le
};

}  // namespace

absl::Status ParseExposition(const std::string& text, std::vector<Sample>* samples) {
  samples->clear();
  ExpositionReader reader(samples);
  int line_no = 0;
  for (absl::string_view raw : absl::StrSplit(text, '\n')) {
    RETURN_IF_ERROR(reader.Line(std::string(raw), ++line_no));
  }
  return reader.Finish();
}

}  // namespace fedmf::metrics
