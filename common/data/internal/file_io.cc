#include "common/data/internal/file_io.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>

#include "absl/strings/str_cat.h"

namespace fedmf::data::internal {

absl::StatusOr<std::string> ReadWholeFile(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": is a directory; give the path of the ratings file itself"));
  }
  struct Closer {
    void operator()(std::FILE* f) const { std::fclose(f); }
  };
  std::unique_ptr<std::FILE, Closer> file(std::fopen(path.c_str(), "rb"));
  if (file == nullptr) {
    const int err = errno;
    std::string message = absl::StrCat("cannot open ", path, ": ", std::strerror(err));
    if (err == ENOENT) return absl::NotFoundError(message);
    return absl::UnavailableError(message);
  }
  // One read of the whole file straight into the result: MovieLens 10M is
  // ~250 MB, so no intermediate copies. The tail loop covers files whose size
  // is unknown (pipes) or that grew since the size was taken.
  std::string contents;
  const auto size = std::filesystem::file_size(path, ec);
  if (!ec && size > 0) {
    contents.resize(static_cast<size_t>(size));
    contents.resize(std::fread(contents.data(), 1, contents.size(), file.get()));
  }
  char buffer[1 << 16];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof(buffer), file.get())) > 0) contents.append(buffer, n);
  if (std::ferror(file.get())) {
    return absl::UnavailableError(absl::StrCat("error reading ", path, ": ", std::strerror(errno)));
  }
  return contents;
}

}  // namespace fedmf::data::internal
