// Cuts a fuzz input into the pieces a structured target needs: single bytes
// (choices) and length-prefixed records ([u16 little-endian length][bytes]),
// usually serialized protobuf messages. An exhausted input yields zeros and
// empty records, so every byte string is a valid (if short) script.
#ifndef FEDMF_TESTS_FUZZ_FUZZ_INPUT_H_
#define FEDMF_TESTS_FUZZ_FUZZ_INPUT_H_

#include <google/protobuf/stubs/logging.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace fedmf::fuzz {

// Protobuf logs every string field with invalid UTF-8 it parses; at
// thousands of inputs a second that drowns the fuzzer's own output.
inline void QuietProtobuf() { google::protobuf::SetLogHandler(nullptr); }

// A property violation is a finding: crash so libFuzzer saves the input.
inline void Check(bool ok) {
  if (!ok) __builtin_trap();
}

class FuzzInput {
 public:
  FuzzInput(const uint8_t* data, size_t size) : p_(reinterpret_cast<const char*>(data)), n_(size) {}

  bool empty() const { return n_ == 0; }

  uint8_t Byte() {
    if (n_ == 0) return 0;
    const auto b = static_cast<uint8_t>(*p_);
    ++p_;
    --n_;
    return b;
  }

  // A record; a length beyond the input takes what is left.
  std::string_view Record() {
    const size_t len = Byte() | (static_cast<size_t>(Byte()) << 8);
    const size_t take = std::min(len, n_);
    std::string_view out(p_, take);
    p_ += take;
    n_ -= take;
    return out;
  }

  // The next record parsed as `Message`; false if it does not parse.
  template <typename Message>
  bool Parse(Message* m) {
    const std::string_view r = Record();
    return m->ParseFromArray(r.data(), static_cast<int>(r.size()));
  }

  std::string_view Rest() {
    std::string_view out(p_, n_);
    p_ += n_;
    n_ = 0;
    return out;
  }

 private:
  const char* p_;
  size_t n_;
};

}  // namespace fedmf::fuzz

#endif  // FEDMF_TESTS_FUZZ_FUZZ_INPUT_H_
