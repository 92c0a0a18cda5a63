#include "common/log/log_setup.h"

#include <memory>

#include "absl/strings/str_cat.h"
#include "common/log/log.h"
#include "spdlog/pattern_formatter.h"

namespace fedmf::log {
namespace {

void AppendJsonEscaped(std::string_view s, spdlog::memory_buf_t& dest) {
  static constexpr char kHex[] = "0123456789abcdef";
  for (char c : s) {
    switch (c) {
      case '"': dest.append(std::string_view("\\\"")); break;
      case '\\': dest.append(std::string_view("\\\\")); break;
      case '\n': dest.append(std::string_view("\\n")); break;
      case '\r': dest.append(std::string_view("\\r")); break;
      case '\t': dest.append(std::string_view("\\t")); break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          const char esc[] = {'\\', 'u', '0', '0', kHex[(c >> 4) & 0xf], kHex[c & 0xf]};
          dest.append(esc, esc + 6);
        } else {
          dest.push_back(c);
        }
    }
  }
}

// %* : the message, escaped for a JSON string (messages quote names).
class JsonMessageFlag : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm&,
              spdlog::memory_buf_t& dest) override {
    AppendJsonEscaped(std::string_view(msg.payload.data(), msg.payload.size()), dest);
  }
  std::unique_ptr<custom_flag_formatter> clone() const override {
    return std::make_unique<JsonMessageFlag>();
  }
};

}  // namespace

absl::Status ConfigureLogging(const std::string& format, const std::string& who) {
  if (format == "text") {
    spdlog::set_pattern(absl::StrCat("[%Y-%m-%d %H:%M:%S.%e] [", who, "] [%l] %v"));
    return absl::OkStatus();
  }
  if (format != "json") {
    return absl::InvalidArgumentError(
        absl::StrCat("log format '", format, "': use --log-format text or --log-format json"));
  }
  spdlog::memory_buf_t escaped_who;
  AppendJsonEscaped(who, escaped_who);
  // UTC timestamps (the Z); %* is the escaped message.
  auto formatter = std::make_unique<spdlog::pattern_formatter>(spdlog::pattern_time_type::utc);
  formatter->add_flag<JsonMessageFlag>('*').set_pattern(
      absl::StrCat(R"({"time":"%Y-%m-%dT%H:%M:%S.%eZ","level":"%l","daemon":")",
                   std::string(escaped_who.data(), escaped_who.size()), R"(","msg":"%*"})"));
  spdlog::set_formatter(std::move(formatter));
  return absl::OkStatus();
}

}  // namespace fedmf::log
