#include "common/base/peer_text.h"

#include <string>

#include "gtest/gtest.h"

namespace fedmf::base {
namespace {

TEST(PeerTextTest, KeepsPrintableTextAndWellFormedUtf8) {
  EXPECT_EQ(EscapePeerText("policy: epsilon 8 > max 4"), "policy: epsilon 8 > max 4");
  EXPECT_EQ(EscapePeerText("d\xc3\xa9j\xc3\xa0 vu \xe2\x82\xac"),
            "d\xc3\xa9j\xc3\xa0 vu \xe2\x82\xac");
}

TEST(PeerTextTest, EscapesWhatCouldSteerATerminal) {
  // Erase line, cursor up, a fake line, OSC 52 (clipboard) ended by BEL.
  const std::string hostile = "\x1b[2K\x1b[1Afinished\x1b]52;c;ZXZpbA==\x07\r\n\t";
  const std::string shown = EscapePeerText(hostile);
  EXPECT_EQ(shown, "\\x1b[2K\\x1b[1Afinished\\x1b]52;c;ZXZpbA==\\x07\\x0d\\n\\t");
  for (char c : shown) EXPECT_TRUE(c >= 0x20 && c < 0x7f) << static_cast<int>(c);
  // C1 controls (CSI as U+009B), bidi overrides and invalid UTF-8.
  EXPECT_EQ(EscapePeerText("a\xc2\x9b"
                           "2Jb"),
            "a\\u{009b}2Jb");
  EXPECT_EQ(EscapePeerText("x\xe2\x80\xaey"), "x\\u{202e}y");
  EXPECT_EQ(EscapePeerText("\xff\xc3"), "\\xff\\xc3");
  EXPECT_EQ(EscapePeerText("\xed\xa0\x80"), "\\xed\\xa0\\x80");  // a surrogate
  EXPECT_EQ(EscapePeerText(std::string("a\0b", 3)), "a\\x00b");
}

TEST(PeerTextTest, BoundsTheLengthAndSaysWhatWasCut) {
  const std::string big(8'000'000, 'r');
  const std::string shown = EscapePeerText(big, 512);
  EXPECT_EQ(shown, std::string(512, 'r') + "...[7999488 more bytes]");
  EXPECT_EQ(EscapePeerText("short", 512), "short");
  // Escaping is idempotent on its own output (stored text shown again).
  const std::string once = EscapePeerText("\x1b[31mred\n");
  EXPECT_EQ(EscapePeerText(once), once);
}

}  // namespace
}  // namespace fedmf::base
