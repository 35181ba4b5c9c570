// The terminal sanitiser's classification (issue 18): C1 controls and every bidirectional or
// invisible format character are escaped, in one-line messages and in multi-line previews alike, and
// validators find the same characters.
#include <gtest/gtest.h>

#include "core/terminal_text.h"

namespace scaleprof {
namespace {

TEST(TerminalText, BidiMarksAndInvisibleFormatCharactersAreEscaped) {
  EXPECT_EQ(terminal_safe("a\xE2\x80\x8E"
                          "b"),
            "a\\u200eb");  // LEFT-TO-RIGHT MARK
  EXPECT_EQ(terminal_safe("a\xE2\x80\x8F"
                          "b"),
            "a\\u200fb");  // RIGHT-TO-LEFT MARK
  EXPECT_EQ(terminal_safe("a\xD8\x9C"
                          "b"),
            "a\\u061cb");  // ARABIC LETTER MARK
  EXPECT_EQ(terminal_safe("a\xE2\x81\xA6"
                          "b\xE2\x81\xA9"),
            "a\\u2066b\\u2069");  // isolates
  EXPECT_EQ(terminal_safe("a\xE2\x80\x8B"
                          "b\xEF\xBB\xBF"),
            "a\\u200bb\\ufeff");  // zero-width space, BOM
  EXPECT_EQ(terminal_safe("a\xE2\x80\xA8"
                          "b"),
            "a\\u2028b");                                                                    // LINE SEPARATOR
  EXPECT_EQ(terminal_safe("\xF3\xA0\x80\x81"), "\\ue0001");                                  // LANGUAGE TAG
  EXPECT_EQ(terminal_safe("\xC2\x85"), "\\u0085");                                           // NEL, a C1 line break
  EXPECT_EQ(terminal_safe("\xC2\xA0\xC3\xA9\xE2\x80\x94"), "\xC2\xA0\xC3\xA9\xE2\x80\x94");  // NBSP, é, em dash stay
}

TEST(TerminalText, MultiLineTextKeepsLineBreaksOnly) {
  EXPECT_EQ(terminal_safe_lines("#!/bin/bash\nexec python 't\xE2\x80\xAEyp.x'\r\n\x1b[2J\n"),
            "#!/bin/bash\nexec python 't\\u202eyp.x'\\r\n\\u001b[2J\n");
}

TEST(TerminalText, FirstUnsafeCharacterFindsWhatWouldBeEscaped) {
  EXPECT_FALSE(first_unsafe_character("caf\xC3\xA9 ok"));
  auto nul = first_unsafe_character(std::string_view("ab\0", 3));
  ASSERT_TRUE(nul);
  EXPECT_EQ(nul->byte_offset, 2u);
  EXPECT_EQ(describe_character(*nul), "a NUL byte");
  auto bidi = first_unsafe_character("\xC3\xA9\xE2\x80\xAE");
  ASSERT_TRUE(bidi);
  EXPECT_EQ(bidi->character_number, 2u);
  EXPECT_EQ(bidi->byte_offset, 2u);
  EXPECT_EQ(describe_character(*bidi), "the bidirectional control U+202E");
  auto bad = first_unsafe_character("a\xC3");
  ASSERT_TRUE(bad);
  EXPECT_EQ(describe_character(*bad), "the byte 0xc3 (not valid UTF-8)");
  EXPECT_EQ(describe_character(*first_unsafe_character("\xC2\x9B")), "the control character U+009B");
  EXPECT_EQ(describe_character(*first_unsafe_character("\xE2\x81\xA0")), "the invisible format character U+2060");
}

}  // namespace
}  // namespace scaleprof
