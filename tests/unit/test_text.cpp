// The escaping of text from the other process (protocol/mri_text.h), which
// libmri's messages and the mri tool's tables share.
#include <gtest/gtest.h>

#include <string>

#include "mri_text.h"

using mri::text::copy_printable;
using mri::text::printable;

TEST(Text, ControlCharactersAreWrittenOut) {
  EXPECT_EQ(printable("plain name, été"), "plain name, été");
  EXPECT_EQ(printable("a\nb\tc"), "a\\nb\\tc");
  EXPECT_EQ(printable(std::string("\x1b[31mred\x07\r\x7f\0z", 13)), "\\x1b[31mred\\x07\\x0d\\x7f\\x00z");
  // C1 controls in UTF-8 (CSI is U+009B): both bytes; other 0xc2 pairs stay.
  EXPECT_EQ(printable("\xc2\x9b" "2J \xc2\xa9"), "\\xc2\\x9b2J \xc2\xa9");
  EXPECT_EQ(printable("\xc2"), "\xc2");  // a lone lead byte at the end stays
  // Its own result is printable already.
  const std::string once = printable("x\x1b\ny\\z");
  EXPECT_EQ(printable(once), once);
}

TEST(Text, CutBeforeAnEscapeThatDoesNotFit) {
  EXPECT_EQ(printable("ab\ncd", 3), "ab");
  EXPECT_EQ(printable("ab\ncd", 4), "ab\\n");
  EXPECT_EQ(printable("a\x01", 4), "a");
  char out[6];
  EXPECT_FALSE(copy_printable("ab\x1b", out, sizeof out));
  EXPECT_STREQ(out, "ab");
  EXPECT_TRUE(copy_printable("ab\n", out, sizeof out));
  EXPECT_STREQ(out, "ab\\n");
  EXPECT_TRUE(copy_printable("", out, 1));
  EXPECT_STREQ(out, "");
}
