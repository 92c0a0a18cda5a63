// One way every fedmf binary parses its command line and exits (docs/cli.md,
// "Exit codes"): --help and --version print to stdout and exit 0; a usage
// error (unknown command or flag, a flag value CLI11 rejects, a missing
// required flag) prints "<program>: <what>" and how to get help to stderr
// and exits kExitUsage. An unknown subcommand is named, with the closest
// known one.
#ifndef FEDMF_COMMON_CLI_COMMAND_LINE_H_
#define FEDMF_COMMON_CLI_COMMAND_LINE_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"

namespace fedmf::cli {

// The exit codes of every fedmf binary.
// (README.md, after the commands.)
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;      // the work failed at run time (job FAILED, NOT_SERVING)
inline constexpr int kExitUsage = 2;        // the command line is wrong (flag, value, combination)
inline constexpr int kExitUnreachable = 3;  // fedmf health: no answer from the server
inline constexpr int kExitData = 4;  // a data, model or spec file it names is wrong (file:line)

// Marks `s` (not OK) as a data error: a file the command line names is
// missing, unreadable or malformed. Prefixing the message keeps the mark
// when done with WithPrefix.
absl::Status DataError(absl::Status s);
bool IsDataError(const absl::Status& s);
// Marks `s` (not OK) as a failure of the work itself (exit kExitFailure)
// whatever its code: the command line was accepted and the run, or a check
// the command exists to make, failed (e.g. a simulation refusing its data
// half-way, or `fedmf ca check` finding a key that does not match).
absl::Status RuntimeError(absl::Status s);
// Marks `s` (not OK) as a usage error (exit kExitUsage) whatever its code:
// what the command line asked for cannot be done as asked.
absl::Status UsageError(absl::Status s);
// `prefix` + s.message(), same code, payloads (the data mark) kept.
absl::Status WithPrefix(const absl::Status& s, const std::string& prefix);
// The exit code for a command that failed with `s`: kExitData or
// kExitFailure or kExitUsage when marked (DataError, RuntimeError,
// UsageError), kExitUsage for INVALID_ARGUMENT / NOT_FOUND / OUT_OF_RANGE /
// FAILED_PRECONDITION (what the user asked cannot be done as asked),
// kExitFailure otherwise (the work failed).
int ExitCodeFor(const absl::Status& s);

// The one failure path of every fedmf command: prints "<command>: <message>"
// to stderr and returns ExitCodeFor(s), the code the process exits with.
// `command` is what the user typed, e.g. "fedmf ca init" (a flag may follow:
// "fedmf train: --tune"). `s` is not OK.
int Report(std::string_view command, const absl::Status& s);

// The project version (CMake's PROJECT_VERSION).
std::string Version();

// Adds --version to `app`.
void AddVersionFlag(CLI::App& app);

// Parses (running the callbacks of the chosen subcommand). nullopt: parsed,
// go on; otherwise the process should exit with the returned code (help,
// version or a usage error, already printed).
std::optional<int> ParseCommandLine(CLI::App& app, int argc, char** argv);

// The known name closest to `word` (edit distance <= 2), or "".
std::string ClosestName(std::string_view word, const std::vector<std::string>& known);

}  // namespace fedmf::cli

#endif  // FEDMF_COMMON_CLI_COMMAND_LINE_H_
