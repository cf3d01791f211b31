#include "util/html_escape.h"

#include <gtest/gtest.h>

namespace brisk {
namespace {

TEST(HtmlEscape, TheFiveCharactersAndNothingElse) {
  EXPECT_EQ(HtmlEscape(R"(<a href="x">Tom & 'Jerry'</a>)"),
            "&lt;a href=&quot;x&quot;&gt;Tom &amp; &#39;Jerry&#39;&lt;/a&gt;");
  EXPECT_EQ(HtmlEscape("plain text, 中文 ✓"), "plain text, 中文 ✓");
  EXPECT_EQ(HtmlEscape(""), "");
  EXPECT_EQ(HtmlEscape("&amp;"), "&amp;amp;");  // escaping twice is visible, not undone
  EXPECT_EQ(HtmlEscape(std::string_view("a\0b", 3)), std::string("a\0b", 3));
}

}  // namespace
}  // namespace brisk
