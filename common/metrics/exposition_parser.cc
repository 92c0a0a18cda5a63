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

}  // namespace

absl::Status ParseExposition(const std::string& text, std::vector<Sample>* samples) {
  samples->clear();
  std::map<std::string, std::string> types;  // family -> type
  std::set<std::string> families_with_samples;
  std::map<std::string, HistogramSeries> histograms;  // family + labels-without-le
  int line_no = 0;
  for (absl::string_view raw : absl::StrSplit(text, '\n')) {
    ++line_no;
    const std::string line(raw);
    if (line.empty()) continue;
    if (line[0] == '#') {
      std::vector<std::string> parts = absl::StrSplit(line, absl::MaxSplits(' ', 3));
      if (parts.size() >= 3 && (parts[1] == "HELP" || parts[1] == "TYPE")) {
        size_t p = 0;
        if (ReadName(parts[2], &p, true) != parts[2]) {
          return LineError(line_no, absl::StrCat("bad metric name '", parts[2], "'"));
        }
        if (parts[1] == "TYPE") {
          const std::string type = parts.size() > 3 ? parts[3] : "";
          if (type != "counter" && type != "gauge" && type != "histogram" && type != "summary" &&
              type != "untyped") {
            return LineError(line_no, absl::StrCat("unknown type '", type, "'"));
          }
          if (types.count(parts[2]) || families_with_samples.count(parts[2])) {
            return LineError(
                line_no, absl::StrCat("TYPE of '", parts[2], "' repeated or after its samples"));
          }
          types[parts[2]] = type;
        }
      }
      continue;  // other comments are allowed
    }
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
    // The family: histogram series carry _bucket/_sum/_count suffixes.
    std::string family = s.name;
    std::string suffix;
    for (const char* suf : {"_bucket", "_sum", "_count"}) {
      const std::string sfx(suf);
      if (s.name.size() > sfx.size() && s.name.ends_with(sfx)) {
        const std::string base = s.name.substr(0, s.name.size() - sfx.size());
        auto t = types.find(base);
        if (t != types.end() && (t->second == "histogram" || t->second == "summary")) {
          family = base;
          suffix = sfx;
        }
      }
    }
    families_with_samples.insert(family);
    auto t = types.find(family);
    if (t != types.end() && t->second == "histogram") {
      if (suffix.empty()) return LineError(line_no, "histogram sample without _bucket/_sum/_count");
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
      HistogramSeries& h = histograms[key];
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
    } else if (t != types.end() && t->second == "counter" && !(s.value >= 0)) {
      return LineError(line_no, absl::StrCat("counter '", s.name, "' is negative or NaN"));
    }
    samples->push_back(std::move(s));
  }
  for (const auto& [key, h] : histograms) {
    if (h.buckets.empty() || !std::isinf(h.buckets.back().first)) {
      return LineError(h.line, "histogram without a le=\"+Inf\" bucket");
    }
    if (h.count != h.buckets.back().second) {
      return LineError(h.line, "histogram _count differs from its +Inf bucket");
    }
  }
  return absl::OkStatus();
}

}  // namespace fedmf::metrics
