#include "common/data/catalogue.h"

#include <openssl/evp.h>

#include <memory>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/base/status_macros.h"
#include "common/data/internal/file_io.h"
#include "common/data/internal/text_scan.h"

namespace fedmf::data {
namespace {

absl::StatusOr<std::string> Sha256Hex(const std::vector<std::string>& ids) {
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  if (!ctx || EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) != 1) {
    return absl::InternalError("SHA-256 unavailable");
  }
  for (const std::string& id : ids) {
    EVP_DigestUpdate(ctx.get(), id.data(), id.size());
    EVP_DigestUpdate(ctx.get(), "\n", 1);
  }
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (EVP_DigestFinal_ex(ctx.get(), md, &len) != 1) return absl::InternalError("SHA-256 failed");
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "sha256:";
  for (unsigned int i = 0; i < len; ++i) {
    out.push_back(kHex[md[i] >> 4]);
    out.push_back(kHex[md[i] & 15]);
  }
  return out;
}

}  // namespace

absl::StatusOr<Catalogue> Catalogue::Load(const std::string& path) {
  ASSIGN_OR_RETURN(auto contents, internal::ReadWholeFile(path));
  return Parse(contents, path);
}

absl::StatusOr<Catalogue> Catalogue::Parse(std::string_view contents, const std::string& name) {
  Catalogue c;
  c.source_ = name;
  absl::flat_hash_map<std::string, int> line_of;
  int line_no = 0;
  for (absl::string_view line :
       absl::StrSplit(absl::string_view(contents.data(), contents.size()), '\n')) {
    ++line_no;
    absl::string_view id = absl::StripAsciiWhitespace(line);
    if (id.empty() || id.front() == '#') continue;
    auto [it, fresh] = line_of.emplace(std::string(id), line_no);
    if (!fresh) {
      return absl::InvalidArgumentError(absl::StrCat(name, ":", line_no, ": item id '",
                                                     internal::Excerpt(id), "' is already on line ",
                                                     it->second, "; list each item once"));
    }
    c.index_.emplace(std::string(id), static_cast<int32_t>(c.ids_.size()));
    c.ids_.emplace_back(id);
  }
  if (c.ids_.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ": the catalogue lists no item ids (one per line)"));
  }
  ASSIGN_OR_RETURN(auto digest, Sha256Hex(c.ids_));
  c.digest_ = std::move(digest);
  return c;
}

absl::StatusOr<Catalogue> Catalogue::FromIds(std::vector<std::string> ids, std::string source) {
  Catalogue c;
  c.source_ = std::move(source);
  for (std::string& id : ids) {
    if (id.empty()) return absl::InvalidArgumentError("a catalogue id is empty");
    if (!c.index_.emplace(id, static_cast<int32_t>(c.ids_.size())).second) {
      return absl::InvalidArgumentError(absl::StrCat("catalogue id '", id, "' appears twice"));
    }
    c.ids_.push_back(std::move(id));
  }
  if (c.ids_.empty()) return absl::InvalidArgumentError("the catalogue is empty");
  ASSIGN_OR_RETURN(auto digest, Sha256Hex(c.ids_));
  c.digest_ = std::move(digest);
  return c;
}

std::optional<int32_t> Catalogue::Find(std::string_view id) const {
  auto it = index_.find(absl::string_view(id.data(), id.size()));
  if (it == index_.end()) return std::nullopt;
  return it->second;
}

}  // namespace fedmf::data
