// Robustness: random soups of template fragments must parse/render to a result or a Status,
// never crash, hang or throw (run under ASan/UBSan in CI).
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "jinja_test_util.h"

namespace brisk::jinja {
namespace {

TEST(JinjaFuzz, RandomFragmentSoupsNeverCrash) {
  static const char* kFragments[] = {"{{",
                                     "}}",
                                     "{%",
                                     "%}",
                                     "{#",
                                     "#}",
                                     "{%-",
                                     "-%}",
                                     "{{-",
                                     "-}}",
                                     "{%+",
                                     "+%}",
                                     " ",
                                     "\n",
                                     "\t",
                                     "x",
                                     "msgs",
                                     "m",
                                     "loop",
                                     "ns",
                                     "'s'",
                                     "\"q\"",
                                     "1",
                                     "2.5",
                                     "-",
                                     "+",
                                     "*",
                                     "/",
                                     "//",
                                     "%",
                                     "**",
                                     "~",
                                     "==",
                                     "!=",
                                     "<",
                                     ">=",
                                     "(",
                                     ")",
                                     "[",
                                     "]",
                                     "{",
                                     "}",
                                     ",",
                                     ".",
                                     ":",
                                     "|",
                                     "=",
                                     "if",
                                     "elif",
                                     "else",
                                     "endif",
                                     "for",
                                     "in",
                                     "endfor",
                                     "set",
                                     "endset",
                                     "macro",
                                     "endmacro",
                                     "call",
                                     "endcall",
                                     "caller()",
                                     "filter",
                                     "endfilter",
                                     "with",
                                     "endwith",
                                     "break",
                                     "continue",
                                     "raw",
                                     "endraw",
                                     "not",
                                     "and",
                                     "or",
                                     "is",
                                     "defined",
                                     "none",
                                     "true",
                                     "namespace(a=1)",
                                     "ns.a",
                                     "range(3)",
                                     "tojson",
                                     "trim",
                                     "length",
                                     "join",
                                     "items()",
                                     "upper",
                                     "map(attribute='role')",
                                     "selectattr('role')",
                                     "default(1)",
                                     "[1, 2]",
                                     "{'k': 1}",
                                     "x[1:]",
                                     "x[::-1]",
                                     "m.role",
                                     "loop.index",
                                     "raise_exception('e')",
                                     "é",
                                     "\\",
                                     "'unterminated",
                                     "\xff"};
  std::mt19937 rng(12345);
  const testing::Json ctx = testing::SampleContext();
  RenderLimits limits;
  limits.max_loop_iterations = 10000;
  limits.max_output_bytes = 1 << 16;
  int parsed = 0;
  for (int iter = 0; iter < 3000; ++iter) {
    std::string src;
    const int n = 1 + static_cast<int>(rng() % 40);
    for (int k = 0; k < n; ++k) src += kFragments[rng() % std::size(kFragments)];
    EXPECT_NO_THROW({
      auto t = ChatTemplate::Parse(src);
      if (t.ok()) {
        ++parsed;
        (void)t->Render(ctx, limits);
      }
    });
  }
  EXPECT_GT(parsed, 100);  // the soup exercises the renderer, not just the parser
}

TEST(JinjaFuzz, MutatedQwenStyleTemplatesNeverCrash) {
  const std::string base =
      "{%- for message in msgs %}\n"
      "  {%- if message.role == 'user' %}{{ '<|u|>' + message.content + '\\n' }}\n"
      "  {%- elif message.x is defined %}{{ message.x|tojson }}{% set ns = namespace(a=1) %}\n"
      "  {%- else %}{{ message.content.split('o')[-1].strip() }}{% endif %}\n"
      "{%- endfor %}{% if add_generation_prompt %}gen{% endif %}";
  ASSERT_TRUE(ChatTemplate::Parse(base).ok());
  std::mt19937 rng(777);
  const testing::Json ctx = testing::SampleContext();
  for (int iter = 0; iter < 1500; ++iter) {
    std::string src = base;
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e) {
      const size_t pos = rng() % src.size();
      switch (rng() % 3) {
        case 0:
          src.erase(pos, 1 + rng() % 3);
          break;
        case 1:
          src.insert(pos, 1, "{}%#-+|.()[]'\"\\ x"[rng() % 17]);
          break;
        default:
          src[pos] = static_cast<char>(rng() % 128);
      }
      if (src.empty()) src = "x";
    }
    EXPECT_NO_THROW({
      auto t = ChatTemplate::Parse(src);
      if (t.ok()) (void)t->Render(ctx);
    });
  }
}

}  // namespace
}  // namespace brisk::jinja
