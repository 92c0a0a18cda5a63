// Internal: reading data files. Small files (catalogues, u.item) are read
// whole; ratings files, the large ones, line by line through a fixed buffer
// (FileLineReader), so loading MovieLens 10M does not hold its 250 MB of text
// next to the parsed ratings.
#ifndef FEDMF_COMMON_DATA_INTERNAL_FILE_IO_H_
#define FEDMF_COMMON_DATA_INTERNAL_FILE_IO_H_

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace fedmf::data::internal {

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};

// NotFound if the path does not exist, InvalidArgument if it is a directory,
// Unavailable/Internal for other I/O errors; messages name the path.
absl::StatusOr<std::string> ReadWholeFile(const std::string& path);

// The lines of a file, read through a buffer of `chunk_bytes` (grown only for
// a longer line): exactly the lines LineReader (text_scan.h) gives for the
// whole contents — byte-order mark stripped, "\r\n" endings, trailing blank
// lines ending the iteration, a blank line before more data returned as-is.
class FileLineReader {
 public:
  // Errors as ReadWholeFile.
  static absl::StatusOr<FileLineReader> Open(const std::string& path,
                                             size_t chunk_bytes = size_t{1} << 16);

  // The next line (valid until the next call), or nullopt at the end of the
  // data or on a read error (then status() says which).
  std::optional<absl::string_view> Next();
  // 1-based number of the line last returned by Next().
  int64_t line_number() const { return line_number_; }
  // OK, or the read error that ended the lines early.
  const absl::Status& status() const { return status_; }
  // Lines remaining, estimated from the bytes left and the mean length of
  // the lines buffered so far: for reserving memory, not a bound.
  size_t EstimateRemainingLines() const;

 private:
  FileLineReader(std::string path, std::unique_ptr<std::FILE, FileCloser> file, size_t chunk_bytes,
                 int64_t size);
  // Appends up to a chunk to buffer_ (compacting consumed bytes first);
  // false at the end of the file or on a read error.
  bool Fill();
  // True if only blank characters remain after buffer_[from] in the file.
  bool OnlyBlankFrom(size_t from);

  std::string path_;
  std::unique_ptr<std::FILE, FileCloser> file_;
  size_t chunk_bytes_;
  int64_t file_size_;           // -1 if unknown
  int64_t consumed_bytes_ = 0;  // file bytes dropped before buffer_[0]
  std::string buffer_;
  size_t pos_ = 0;  // start of the unread part of buffer_
  bool eof_ = false;
  bool started_ = false;  // the byte-order mark check is done
  int64_t line_number_ = 0;
  absl::Status status_;
};

}  // namespace fedmf::data::internal

#endif  // FEDMF_COMMON_DATA_INTERNAL_FILE_IO_H_
