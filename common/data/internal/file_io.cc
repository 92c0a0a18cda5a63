#include "common/data/internal/file_io.h"

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>

#include "absl/strings/str_cat.h"
#include "common/base/status_macros.h"
#include "common/data/internal/text_scan.h"

namespace fedmf::data::internal {

namespace {

// The file opened for reading; errors name the path (see ReadWholeFile).
absl::StatusOr<std::unique_ptr<std::FILE, FileCloser>> OpenForReading(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": is a directory; give the path of the ratings file itself"));
  }
  std::unique_ptr<std::FILE, FileCloser> file(std::fopen(path.c_str(), "rb"));
  if (file == nullptr) {
    const int err = errno;
    std::string message = absl::StrCat("cannot open ", path, ": ", std::strerror(err));
    if (err == ENOENT) return absl::NotFoundError(message);
    return absl::UnavailableError(message);
  }
  return file;
}

}  // namespace

absl::StatusOr<std::string> ReadWholeFile(const std::string& path) {
  ASSIGN_OR_RETURN(auto file, OpenForReading(path));
  std::error_code ec;
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

absl::StatusOr<FileLineReader> FileLineReader::Open(const std::string& path, size_t chunk_bytes) {
  ASSIGN_OR_RETURN(auto file, OpenForReading(path));
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  return FileLineReader(path, std::move(file), std::max<size_t>(chunk_bytes, 1),
                        ec ? -1 : static_cast<int64_t>(size));
}

FileLineReader::FileLineReader(std::string path, std::unique_ptr<std::FILE, FileCloser> file,
                               size_t chunk_bytes, int64_t size)
    : path_(std::move(path)), file_(std::move(file)), chunk_bytes_(chunk_bytes), file_size_(size) {}

bool FileLineReader::Fill() {
  if (eof_) return false;
  if (pos_ > 0) {
    consumed_bytes_ += static_cast<int64_t>(pos_);
    buffer_.erase(0, pos_);
    pos_ = 0;
  }
  const size_t old = buffer_.size();
  buffer_.resize(old + chunk_bytes_);
  const size_t n = std::fread(buffer_.data() + old, 1, chunk_bytes_, file_.get());
  buffer_.resize(old + n);
  if (n == 0) {
    eof_ = true;
    if (std::ferror(file_.get())) {
      status_ =
          absl::UnavailableError(absl::StrCat("error reading ", path_, ": ", std::strerror(errno)));
    }
    return false;
  }
  return true;
}

bool FileLineReader::OnlyBlankFrom(size_t from) {
  // Keeps what it reads (a blank line before more data is returned, and the
  // lines after it stay readable): only a run of blank lines is buffered.
  for (;;) {
    if (!IsBlank(absl::string_view(buffer_).substr(from))) return false;
    const size_t shift = pos_;  // Fill() drops buffer_[0, pos_)
    const size_t end = buffer_.size();
    if (!Fill()) return true;  // the end of the file (or an error: status_)
    from = end - shift;
  }
}

std::optional<absl::string_view> FileLineReader::Next() {
  if (!started_) {
    started_ = true;
    while (buffer_.size() < 3 && Fill()) {
    }
    constexpr absl::string_view kUtf8Bom = "\xEF\xBB\xBF";
    if (absl::string_view(buffer_).substr(0, kUtf8Bom.size()) == kUtf8Bom) pos_ = kUtf8Bom.size();
  }
  size_t nl = buffer_.find('\n', pos_);
  while (nl == std::string::npos) {
    const size_t scanned = buffer_.size() - pos_;
    if (!Fill()) break;
    nl = buffer_.find('\n', pos_ + scanned);
  }
  if (!status_.ok()) return std::nullopt;
  if (pos_ >= buffer_.size()) return std::nullopt;
  const size_t end = nl == std::string::npos ? buffer_.size() : nl;
  const size_t line_len = end - pos_;
  const size_t skip = (nl == std::string::npos ? buffer_.size() : nl + 1) - pos_;
  // LineReader's rule: a blank line ends the lines when only blank ones
  // follow. OnlyBlankFrom may move the buffer; offsets from pos_ stay valid.
  if (IsBlank(absl::string_view(buffer_).substr(pos_, line_len)) && OnlyBlankFrom(pos_ + skip)) {
    pos_ = buffer_.size();
    return std::nullopt;
  }
  if (!status_.ok()) return std::nullopt;
  absl::string_view line = absl::string_view(buffer_).substr(pos_, line_len);
  pos_ += skip;
  ++line_number_;
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return line;
}

size_t FileLineReader::EstimateRemainingLines() const {
  const auto lines_buffered = static_cast<size_t>(std::count(buffer_.begin(), buffer_.end(), '\n'));
  const auto lines_ahead = static_cast<size_t>(
      std::count(buffer_.begin() + static_cast<std::ptrdiff_t>(pos_), buffer_.end(), '\n'));
  const int64_t unread = file_size_ < 0
                             ? 0
                             : std::max<int64_t>(0, file_size_ - consumed_bytes_ -
                                                        static_cast<int64_t>(buffer_.size()));
  // The mean line length of the buffered text, for the bytes not yet read.
  const size_t per_line =
      lines_buffered == 0 ? 1 : std::max<size_t>(1, buffer_.size() / lines_buffered);
  return lines_ahead + static_cast<size_t>(unread) / per_line + 1;
}

}  // namespace fedmf::data::internal
