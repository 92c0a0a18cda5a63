#include "party/state_id.h"

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "common/random/csprng.h"

namespace fedmf::party {

absl::StatusOr<std::string> LoadOrCreateStateId(const std::string& state_dir) {
  const std::string path = (std::filesystem::path(state_dir) / "party.id").string();
  std::ifstream in(path);
  if (in) {
    std::stringstream text;
    text << in.rdbuf();
    const std::string id(absl::StripAsciiWhitespace(text.str()));
    const bool hex = id.size() == 32 && std::all_of(id.begin(), id.end(), [](char c) {
                       return absl::ascii_isxdigit(static_cast<unsigned char>(c));
                     });
    if (!hex) {
      return absl::DataLossError(absl::StrCat(
          path,
          ": not a party state id (32 hex digits); it names this state directory to the "
          "server: restore it, or delete it if this directory's party never registered"));
    }
    return id;
  }
  uint8_t bytes[16];
  random::Csprng rng = random::Csprng::FromOsEntropy();
  rng.FillBytes(bytes, sizeof(bytes));
  const std::string id = absl::BytesToHexString(
      absl::string_view(reinterpret_cast<const char*>(bytes), sizeof(bytes)));
  // Written beside and renamed: a crash leaves no half-written id.
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << id << "\n";
    if (!out.flush()) {
      return absl::PermissionDeniedError(absl::StrCat("cannot write ", tmp));
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec)
    return absl::PermissionDeniedError(absl::StrCat("cannot write ", path, ": ", ec.message()));
  return id;
}

}  // namespace fedmf::party
