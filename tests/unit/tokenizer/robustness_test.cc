// Invalid UTF-8 never crashes or reads out of bounds; huge inputs encode in linear time.
#include <gtest/gtest.h>

#include <chrono>
#include <ctime>
#include <random>

#include "tokenizer/unicode.h"
#include "tokenizer_test_util.h"

namespace brisk {
namespace {

const Tokenizer* AnyQwenTokenizer() {
  if (const Tokenizer* t = test::Qwen25Gguf()) return t;
  return test::SubsetHf();
}

TEST(TokenizerRobustness, InvalidUtf8IsReplacedNotFatal) {
  const Tokenizer* t = AnyQwenTokenizer();
  if (t == nullptr) GTEST_SKIP() << "no Qwen vocabulary";
  std::mt19937 rng(9);
  const char* fragments[] = {
      "\x80",         "\xc3",  "\xe4\xb8", "\xf0\x9f\x98", "\xff", "\xed\xa0\x80",
      "<|im_start|>", "<|im_", " ",        "\n",           "a",    "'s",
      "中",           "1",     "\xc0\xaf"};
  for (int iter = 0; iter < 4000; ++iter) {
    std::string s;
    if (iter % 2 == 0) {
      s.resize(rng() % 64);
      for (char& c : s) c = static_cast<char>(rng() % 256);
    } else {
      for (int k = static_cast<int>(rng() % 12); k > 0; --k) s += fragments[rng() % 15];
    }
    const std::string valid = tok::ToValidUtf8(s);
    const std::vector<int32_t> ids = t->Encode(s);
    ASSERT_EQ(ids, t->Encode(valid));
    for (int32_t id : ids) ASSERT_TRUE(id >= 0 && id < t->n_vocab());
    ASSERT_EQ(t->Decode(ids), tok::NfcReference(valid)) << nlohmann::json(valid).dump();
    (void)t->Encode(s, /*parse_special=*/false);
  }
}

TEST(TokenizerRobustness, EmptyAndTinyInputs) {
  const Tokenizer* t = AnyQwenTokenizer();
  if (t == nullptr) GTEST_SKIP() << "no Qwen vocabulary";
  EXPECT_TRUE(t->Encode("").empty());
  EXPECT_EQ(t->Decode({}), "");
  EXPECT_EQ(t->Decode(t->Encode(std::string_view("\0", 1))), std::string("\0", 1));
  EXPECT_EQ(t->Encode("<|im_start|>"), (std::vector<int32_t>{151644}));
  EXPECT_EQ(t->Encode("<|im_start|><|im_end|>"), (std::vector<int32_t>{151644, 151645}));
  EXPECT_NE(t->Encode("<|im_start|>", false), (std::vector<int32_t>{151644}));
  EXPECT_EQ(t->Decode(t->Encode("<|im_start|>", false)), "<|im_start|>");
  EXPECT_EQ(t->Encode("<tool_call>", false), (std::vector<int32_t>{151657}));
}

// 1 MB inputs that are single pieces (or a million of them) must stay linear.
TEST(TokenizerRobustness, MegabyteInputsAreLinear) {
  const Tokenizer* t = test::Qwen25Gguf();
  if (t == nullptr) t = test::SubsetHf();
  if (t == nullptr) GTEST_SKIP() << "no Qwen vocabulary";
  const size_t mb = 1 << 20;
  std::string cjk;
  const char* han[] = {"中", "文", "字", "的", "是", "一", "了", "人", "我", "在", "有", "他"};
  for (size_t i = 0; cjk.size() < mb; ++i) cjk += han[(i * 7 + i / 13) % 12];
  std::string digits(mb, '0');
  for (size_t i = 0; i < mb; ++i) digits[i] = static_cast<char>('0' + (i * 7) % 10);
  std::string mixed_ws;
  while (mixed_ws.size() < mb) mixed_ws += " \t \n  \r\n\u3000";
  const std::pair<const char*, std::string> inputs[] = {
      {"1 MB 'a'", std::string(mb, 'a')},
      {"1 MB spaces", std::string(mb, ' ')},
      {"1 MB newlines", std::string(mb, '\n')},
      {"1 MB mixed white space", mixed_ws},
      {"1 MB digits", digits},
      {"1 MB one CJK run", cjk},
      {"1 MB of U+4E2D",
       [&] {
         std::string s;
         while (s.size() < mb) s += "中";
         return s;
       }()},
      {"1 MB '!'", std::string(mb, '!')},
      {"1 MB invalid bytes", std::string(mb, '\xff')},
  };
  for (const auto& [name, text] : inputs) {
    const auto t0 = std::chrono::steady_clock::now();
    timespec c0, c1;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
    const std::vector<int32_t> ids = t->Encode(text);
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double cpu = (c1.tv_sec - c0.tv_sec) + (c1.tv_nsec - c0.tv_nsec) / 1e9;
    std::printf("[ bench ] %-24s %8.1f ms wall %8.1f ms CPU, %7zu tokens\n", name, s * 1e3,
                cpu * 1e3, ids.size());
    EXPECT_LT(s, 5.0) << name;  // generous (sanitizers); release builds take well under 1 s
    EXPECT_FALSE(ids.empty());
    const std::string back = t->Decode(ids);
    EXPECT_EQ(back, tok::NfcReference(tok::ToValidUtf8(text))) << name;
  }
}

}  // namespace
}  // namespace brisk
