// Every command the documentation shows must exist as written (issue #17):
// each `fedmf …` / `fedmf-<daemon> …` command in README.md and docs/*.md —
// in fenced code blocks and in inline code — names a real (sub)command, and
// every --flag it uses is one that command's --help lists. The binaries are
// the ones just built, so a renamed flag fails here, not in a user's shell.
#include <gtest/gtest.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "tests/testing/files.h"

namespace fedmf {
namespace {

namespace fs = std::filesystem;

struct DocCommand {
  std::string where;  // file:line
  std::string text;   // from the binary's name on
};

using ::fedmf::testing::ReadFile;

// The code a markdown file shows, with the line each piece starts on:
// fenced blocks line by line (backslash continuations joined) and inline
// `code` spans outside them.
std::vector<std::pair<int, std::string>> CodeOf(const std::string& markdown) {
  std::vector<std::pair<int, std::string>> out;
  std::vector<std::string> lines = absl::StrSplit(markdown, '\n');
  bool fenced = false;
  std::string pending;
  int pending_line = 0;
  static const std::regex kInline("`([^`]+)`");
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string& line = lines[i];
    const int number = static_cast<int>(i) + 1;
    if (absl::StartsWith(absl::StripLeadingAsciiWhitespace(line), "```")) {
      fenced = !fenced;
      continue;
    }
    if (fenced) {
      std::string piece(absl::StripTrailingAsciiWhitespace(line));
      if (pending.empty()) pending_line = number;
      if (absl::EndsWith(piece, "\\")) {
        piece.pop_back();
        pending += piece + " ";
        continue;
      }
      out.emplace_back(pending_line, pending + piece);
      pending.clear();
      continue;
    }
    for (std::sregex_iterator it(line.begin(), line.end(), kInline), end; it != end; ++it) {
      out.emplace_back(number, (*it)[1].str());
    }
  }
  return out;
}

// `fedmf …` and `fedmf-<daemon> …` invocations in a piece of code (after a
// path such as build/bin/, and after `&&`, `;`, `|` or `$(`).
std::vector<std::string> CommandsIn(const std::string& code) {
  static const std::regex kCommand(
      R"((?:^|[\s/;|&(])(fedmf(?:-server|-party|-device|-aggregator)?)((?:\s+[^\s;|&)]+)*))");
  std::vector<std::string> out;
  for (std::sregex_iterator it(code.begin(), code.end(), kCommand), end; it != end; ++it) {
    // A value, not a command: `--name fedmf-party`.
    const std::string before = code.substr(0, static_cast<size_t>(it->position(1)));
    std::vector<std::string> previous = absl::StrSplit(before, ' ', absl::SkipWhitespace());
    if (!previous.empty() && absl::StartsWith(previous.back(), "-") &&
        previous.back().find('=') == std::string::npos) {
      continue;
    }
    std::vector<std::string> words = absl::StrSplit((*it)[1].str() + (*it)[2].str(),
                                                    absl::ByAnyChar(" \t"), absl::SkipWhitespace());
    out.push_back(absl::StrJoin(words, " "));
  }
  return out;
}

std::vector<DocCommand> DocumentedCommands() {
  std::vector<fs::path> files = {fs::path(FEDMF_SOURCE_DIR) / "README.md"};
  for (const auto& e : fs::directory_iterator(fs::path(FEDMF_SOURCE_DIR) / "docs")) {
    if (e.path().extension() == ".md") files.push_back(e.path());
  }
  std::vector<DocCommand> out;
  for (const fs::path& f : files) {
    for (const auto& [line, code] : CodeOf(ReadFile(f.string()))) {
      for (const std::string& cmd : CommandsIn(code)) {
        out.push_back({absl::StrCat(fs::relative(f, FEDMF_SOURCE_DIR).string(), ":", line), cmd});
      }
    }
  }
  return out;
}

// `binary args… --help` (stdout + stderr) and its exit status.
std::pair<int, std::string> Help(const std::vector<std::string>& words) {
  std::string cmd = (fs::path(FEDMF_BIN_DIR) / words[0]).string();
  for (size_t i = 1; i < words.size(); ++i) cmd += " '" + words[i] + "'";
  cmd += " --help 2>&1";
  FILE* p = ::popen(cmd.c_str(), "r");
  if (p == nullptr) return {-1, ""};
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) out.append(buf, n);
  const int status = ::pclose(p);
  return {status, out};
}

// The subcommand names a --help text lists ("Subcommands:" section).
std::set<std::string> SubcommandsOf(const std::string& help) {
  std::set<std::string> out;
  const size_t at = help.find("Subcommands:");
  if (at == std::string::npos) return out;
  std::istringstream in(help.substr(at));
  std::string line;
  std::getline(in, line);
  static const std::regex kName(R"(^\s+([a-z][a-z0-9-]*)\b)");
  while (std::getline(in, line)) {
    std::smatch m;
    if (std::regex_search(line, m, kName)) out.insert(m[1].str());
  }
  return out;
}

TEST(DocsCommandsTest, EveryDocumentedCommandAndFlagExists) {
  const std::vector<DocCommand> commands = DocumentedCommands();
  ASSERT_GT(commands.size(), 50u) << "the extraction found too few commands to be working";
  std::map<std::string, std::pair<std::set<std::string>, std::string>>
      cache;  // path -> (subs, help)
  auto help_of = [&](const std::vector<std::string>& path) -> const auto& {
    const std::string key = absl::StrJoin(path, " ");
    auto it = cache.find(key);
    if (it == cache.end()) {
      auto [status, text] = Help(path);
      it = cache.emplace(key, std::make_pair(SubcommandsOf(text), status == 0 ? text : "")).first;
    }
    return it->second;
  };
  std::vector<std::string> problems;
  int checked = 0;
  for (const DocCommand& c : commands) {
    std::vector<std::string> words = absl::StrSplit(c.text, ' ', absl::SkipWhitespace());
    // The (sub)command path: the binary, then words while they name subcommands.
    std::vector<std::string> path = {words[0]};
    size_t k = 1;
    while (k < words.size()) {
      const auto& [subs, help] = help_of(path);
      if (subs.empty()) break;
      const std::string& w = words[k];
      if (subs.count(w) == 0) {
        // A lower-case word that is not a subcommand is a typo; placeholders
        // ("fedmf …", "fedmf COMMAND", "fedmf train/demo") cannot be resolved
        // and are skipped.
        if (std::regex_match(w, std::regex("[a-z][a-z0-9-]*"))) {
          problems.push_back(absl::StrCat(c.where, ": `", c.text, "`: '", w,
                                          "' is not a subcommand of ", absl::StrJoin(path, " "),
                                          " (", absl::StrJoin(subs, ", "), ")"));
        }
        k = words.size();
        break;
      }
      path.push_back(w);
      ++k;
    }
    const auto& [subs, help] = help_of(path);
    if (help.empty()) {
      problems.push_back(absl::StrCat(c.where, ": `", absl::StrJoin(path, " "), " --help` failed"));
      continue;
    }
    for (; k < words.size(); ++k) {
      std::string w = words[k];
      if (!absl::StartsWith(w, "--")) continue;
      w = w.substr(0, w.find('='));
      w = std::string(absl::StripSuffix(w, ","));
      if (w == "--" || w == "--help" || !std::regex_match(w, std::regex("--[a-z0-9][a-z0-9-]*"))) {
        continue;
      }
      // CLI11 lists a flag as "--flag" followed by a space, comma, '=' or
      // the end of the line.
      if (!std::regex_search(help, std::regex(w + R"((?=[\s,=]|$))"))) {
        problems.push_back(absl::StrCat(c.where, ": `", c.text, "`: ", absl::StrJoin(path, " "),
                                        " has no flag ", w));
      }
      ++checked;
    }
  }
  EXPECT_GT(checked, 100) << "too few flags checked for the extraction to be working";
  std::cout << commands.size() << " documented commands, " << checked << " flags checked\n";
  EXPECT_TRUE(problems.empty()) << problems.size() << " documented commands do not match the "
                                << "binaries:\n"
                                << absl::StrJoin(problems, "\n");
}

TEST(DocsCommandsTest, ExtractionFindsCommandsInBlocksAndInlineCode) {
  const auto code = CodeOf(
      "Run `fedmf train --setting hfl` first.\n```sh\nbuild/bin/fedmf demo --T 1 \\\n"
      "  --parties 10\nfedmf-server --config x.yaml && fedmf job status --job j\n```\n");
  std::vector<std::string> found;
  for (const auto& [line, text] : code) {
    for (const std::string& c : CommandsIn(text)) found.push_back(absl::StrCat(line, ":", c));
  }
  EXPECT_EQ(found, (std::vector<std::string>{
                       "1:fedmf train --setting hfl", "3:fedmf demo --T 1 --parties 10",
                       "5:fedmf-server --config x.yaml", "5:fedmf job status --job j"}));
}

// Progress lines go to stderr: a documented `fedmf … | grep -v '^round'`
// filters nothing and misleads (issue 56, item 8); --quiet is the way.
TEST(DocsCommandsTest, NoDocumentedPipeFiltersStdoutForProgressLines) {
  std::vector<std::string> problems;
  for (const DocCommand& c : DocumentedCommands()) {
    if (absl::StrContains(c.text, "grep -v '^round'") ||
        absl::StrContains(c.text, "grep -v \"^round\"")) {
      problems.push_back(absl::StrCat(c.where, ": `", c.text, "`"));
    }
  }
  for (const auto& [line, code] :
       CodeOf(ReadFile(std::string(FEDMF_SOURCE_DIR) + "/docs/joining-a-federation.md"))) {
    if (absl::StrContains(code, "grep -v '^round'")) {
      problems.push_back(absl::StrCat("docs/joining-a-federation.md:", line, ": ", code));
    }
  }
  EXPECT_TRUE(problems.empty()) << absl::StrJoin(problems, "\n");
}

// What the docs say these commands do, they do (issue 56, item 8): the exit
// codes README.md promises, and the warnings instead of silence.
struct Ran {
  int code = -1;
  std::string output;  // stdout and stderr
};

Ran RunShell(const std::string& dir, const std::string& args) {
  const std::string cmd =
      absl::StrCat("cd '", dir, "' && '", FEDMF_BIN_DIR, "/fedmf' ", args, " 2>&1");
  Ran r;
  FILE* p = ::popen(cmd.c_str(), "r");
  if (p == nullptr) return r;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) r.output.append(buf, n);
  const int status = ::pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

TEST(DocsCommandsTest, DocumentedExitCodesAndWarningsHold) {
  const fs::path dir = fs::temp_directory_path() / absl::StrCat("docs_behaviour_", ::getpid());
  fs::create_directories(dir);
  {
    std::ofstream csv(dir / "one.csv");
    csv << "user,item,rating\n";
    for (int u = 0; u < 30; ++u) {
      for (int i = 0; i < 12; ++i) {
        if ((u + i) % 3 != 0) csv << "c" << u << ",sku-" << i << "," << 1 + (u * i) % 5 << "\n";
      }
    }
  }
  // README: "4 data: a file the command names is missing".
  const Ran digest = RunShell(dir, "catalogue digest nothere.txt");
  EXPECT_EQ(digest.code, 4) << digest.output;
  // README: "2 usage: ... flags that contradict each other".
  const Ran vfl = RunShell(dir, "demo --setting vfl --catalogue x.txt");
  EXPECT_EQ(vfl.code, 2) << vfl.output;
  EXPECT_NE(vfl.output.find("--catalogue is for --setting hfl"), std::string::npos) << vfl.output;
  const Ran no_party_data = RunShell(dir, "train --setting hfl --catalogue x.txt --T 1 --quiet");
  EXPECT_EQ(no_party_data.code, 2) << no_party_data.output;
  // A "federation" of one file, and a declared scale the data fills less
  // than half of, are said.
  const Ran one = RunShell(dir,
                           "train --setting hfl --party-data csv:one.csv --rating-range 0,10 "
                           "--T 2 --quiet");
  EXPECT_EQ(one.code, 0) << one.output;
  EXPECT_NE(one.output.find("warning: one --party-data file"), std::string::npos) << one.output;
  EXPECT_NE(one.output.find("less than half of the declared scale [0, 10]"), std::string::npos)
      << one.output;
  // The README synopsis shows --rating-range as optional: it is.
  const Ran no_range =
      RunShell(dir,
               "train --setting hfl --party-data csv:one.csv --party-data csv:one.csv "
               "--T 2 --quiet");
  EXPECT_EQ(no_range.code, 0) << no_range.output;
  // docs/joining-a-federation.md: `fedmf ca sign` refuses (exit 4) a request
  // for another name than the one meant.
  const Ran init = RunShell(dir, "ca init --dir ca");
  ASSERT_EQ(init.code, 0) << init.output;
  const Ran request = RunShell(dir, "ca request --name bank-a --role party --out bank-a-certs");
  ASSERT_EQ(request.code, 0) << request.output;
  const Ran wrong = RunShell(
      dir, "ca sign --dir ca --csr bank-a-certs/bank-a.csr --name shop-b --role party --out out");
  EXPECT_EQ(wrong.code, 4) << wrong.output;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace fedmf
