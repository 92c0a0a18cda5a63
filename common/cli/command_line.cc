#include "common/cli/command_line.h"

#include <algorithm>
#include <iostream>

#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

#ifndef FEDMF_VERSION
#error "FEDMF_VERSION must be defined by the build (common/cli/CMakeLists.txt)"
#endif

namespace fedmf::cli {
namespace {

size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

// The first word that is neither a flag nor a flag's value could be a
// subcommand: CLI11 reports an unknown one only as "A subcommand is
// required" or as an extra argument, which does not say what was typed.
std::optional<std::string> UnknownSubcommand(const CLI::App& app, int argc, char** argv) {
  const std::vector<const CLI::App*> subs =
      app.get_subcommands([](const CLI::App*) { return true; });
  if (subs.empty() || argc < 2) return std::nullopt;
  const std::string first = argv[1];
  if (first.empty() || first[0] == '-') return std::nullopt;
  for (const CLI::App* s : subs) {
    if (s->check_name(first)) return std::nullopt;
  }
  return first;
}

std::vector<std::string> SubcommandNames(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::App* s : app.get_subcommands([](const CLI::App*) { return true; })) {
    names.push_back(s->get_name());
  }
  return names;
}

}  // namespace

namespace {
constexpr char kDataErrorPayload[] = "type.fedmf.dev/exit-data-error";
constexpr char kRuntimeErrorPayload[] = "type.fedmf.dev/exit-runtime-error";
constexpr char kUsageErrorPayload[] = "type.fedmf.dev/exit-usage-error";
}  // namespace

absl::Status DataError(absl::Status s) {
  if (!s.ok()) s.SetPayload(kDataErrorPayload, absl::Cord("1"));
  return s;
}

bool IsDataError(const absl::Status& s) {
  return !s.ok() && s.GetPayload(kDataErrorPayload).has_value();
}

absl::Status RuntimeError(absl::Status s) {
  if (!s.ok()) s.SetPayload(kRuntimeErrorPayload, absl::Cord("1"));
  return s;
}

absl::Status UsageError(absl::Status s) {
  if (!s.ok()) s.SetPayload(kUsageErrorPayload, absl::Cord("1"));
  return s;
}

absl::Status WithPrefix(const absl::Status& s, const std::string& prefix) {
  absl::Status out(s.code(), absl::StrCat(prefix, s.message()));
  s.ForEachPayload(
      [&](absl::string_view url, const absl::Cord& payload) { out.SetPayload(url, payload); });
  return out;
}

int ExitCodeFor(const absl::Status& s) {
  if (s.ok()) return kExitOk;
  if (IsDataError(s)) return kExitData;
  if (s.GetPayload(kRuntimeErrorPayload).has_value()) return kExitFailure;
  if (s.GetPayload(kUsageErrorPayload).has_value()) return kExitUsage;
  switch (s.code()) {
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kNotFound:
    case absl::StatusCode::kOutOfRange:
    case absl::StatusCode::kFailedPrecondition: return kExitUsage;
    default: return kExitFailure;
  }
}

int Report(std::string_view command, const absl::Status& s) {
  std::cerr << command << ": " << s.message() << "\n";
  return ExitCodeFor(s);
}

std::string Version() { return FEDMF_VERSION; }

void AddVersionFlag(CLI::App& app) {
  app.set_version_flag("--version", std::string(app.get_name()) + " " + Version());
}

std::string ClosestName(std::string_view word, const std::vector<std::string>& known) {
  std::string best;
  size_t best_distance = 3;
  for (const std::string& k : known) {
    const size_t d = EditDistance(word, k);
    if (d < best_distance) {
      best_distance = d;
      best = k;
    }
  }
  return best;
}

std::optional<int> ParseCommandLine(CLI::App& app, int argc, char** argv) {
  const std::string program = app.get_name().empty() ? std::string(argv[0]) : app.get_name();
  if (std::optional<std::string> unknown = UnknownSubcommand(app, argc, argv)) {
    const std::vector<std::string> names = SubcommandNames(app);
    std::cerr << program << ": unknown command '" << *unknown << "'";
    if (std::string near = ClosestName(*unknown, names); !near.empty()) {
      std::cerr << " (did you mean '" << near << "'?)";
    }
    std::cerr << "; commands: " << absl::StrJoin(names, ", ") << "\n";
    return kExitUsage;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);  // help on stdout, 0
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);  // the version on stdout, 0
  } catch (const CLI::ParseError& e) {
    std::cerr << program << ": " << e.what() << "\n"
              << "Run '" << program << " --help' (or '" << program
              << " COMMAND --help') for the flags.\n";
    return kExitUsage;
  }
  return std::nullopt;
}

}  // namespace fedmf::cli
