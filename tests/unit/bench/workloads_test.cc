// The built-in workloads: shape (counts, order, languages), text validity (UTF-8, CJK only in
// Chinese prompts) and the per-class properties the benchmark relies on.
#include "bench/workloads.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace brisk {
namespace {

// Decodes `s` as UTF-8 into code points; nullopt when it is not well-formed (bad lead byte,
// missing/extra continuation bytes, overlong forms, surrogates, values above U+10FFFF).
std::optional<std::vector<uint32_t>> DecodeUtf8(const std::string& s) {
  std::vector<uint32_t> out;
  size_t i = 0;
  while (i < s.size()) {
    const auto b0 = static_cast<uint8_t>(s[i]);
    int len;
    uint32_t cp;
    uint32_t min;
    if (b0 < 0x80) {
      len = 1, cp = b0, min = 0;
    } else if ((b0 & 0xE0) == 0xC0) {
      len = 2, cp = b0 & 0x1F, min = 0x80;
    } else if ((b0 & 0xF0) == 0xE0) {
      len = 3, cp = b0 & 0x0F, min = 0x800;
    } else if ((b0 & 0xF8) == 0xF0) {
      len = 4, cp = b0 & 0x07, min = 0x10000;
    } else {
      return std::nullopt;
    }
    if (i + len > s.size()) return std::nullopt;
    for (int k = 1; k < len; ++k) {
      const auto b = static_cast<uint8_t>(s[i + k]);
      if ((b & 0xC0) != 0x80) return std::nullopt;
      cp = (cp << 6) | (b & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return std::nullopt;
    out.push_back(cp);
    i += len;
  }
  return out;
}

// CJK Unified Ideographs (the basic block and extension A) — what Chinese text is made of.
bool IsCjk(uint32_t cp) { return (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3400 && cp <= 0x4DBF); }

bool HasCjk(const std::string& s) {
  const auto cps = DecodeUtf8(s);
  return cps && std::any_of(cps->begin(), cps->end(), IsCjk);
}

std::vector<WorkloadPrompt> Get(const char* name) {
  auto r = WorkloadPrompts(name);
  EXPECT_TRUE(r.ok()) << name << ": " << (r.ok() ? "" : r.message());
  return r.ok() ? *r : std::vector<WorkloadPrompt>{};
}

TEST(Utf8CheckerTest, AcceptsAndRejectsByHand) {
  // "a" + U+00E9 + U+4E2D + U+1F600, encoded by hand.
  const auto ok = DecodeUtf8("a\xC3\xA9\xE4\xB8\xAD\xF0\x9F\x98\x80");
  ASSERT_TRUE(ok.has_value());
  EXPECT_EQ(*ok, (std::vector<uint32_t>{0x61, 0xE9, 0x4E2D, 0x1F600}));
  EXPECT_FALSE(DecodeUtf8("\xE4\xB8").has_value());      // truncated
  EXPECT_FALSE(DecodeUtf8("\x80").has_value());          // stray continuation
  EXPECT_FALSE(DecodeUtf8("\xC0\xAF").has_value());      // overlong '/'
  EXPECT_FALSE(DecodeUtf8("\xED\xA0\x80").has_value());  // surrogate U+D800
  EXPECT_FALSE(DecodeUtf8("\xFF").has_value());
  EXPECT_TRUE(HasCjk("\xE4\xB8\xAD"));  // 中
  EXPECT_FALSE(HasCjk("plain ascii, caf\xC3\xA9"));
}

TEST(WorkloadsTest, ClassNames) {
  EXPECT_STREQ(WorkloadClassName(WorkloadClass::kQa), "qa");
  EXPECT_STREQ(WorkloadClassName(WorkloadClass::kCopywriting), "copywriting");
  EXPECT_STREQ(WorkloadClassName(WorkloadClass::kCode), "code");
}

struct ClassCase {
  const char* name;
  WorkloadClass cls;
  int output_len;
};

TEST(WorkloadsTest, EveryClassHasSixteenAlternatingValidPrompts) {
  for (const ClassCase& c : {ClassCase{"qa", WorkloadClass::kQa, 64},
                             ClassCase{"copywriting", WorkloadClass::kCopywriting, 256},
                             ClassCase{"code", WorkloadClass::kCode, 192}}) {
    SCOPED_TRACE(c.name);
    const auto prompts = Get(c.name);
    ASSERT_EQ(prompts.size(), 16u);
    int en = 0, zh = 0;
    for (size_t i = 0; i < prompts.size(); ++i) {
      SCOPED_TRACE(i);
      const WorkloadPrompt& p = prompts[i];
      EXPECT_EQ(p.cls, c.cls);
      EXPECT_EQ(p.output_len, c.output_len);
      EXPECT_EQ(p.lang, i % 2 == 0 ? "en" : "zh");
      (p.lang == "en" ? en : zh) += 1;
      EXPECT_FALSE(p.user.empty());
      EXPECT_FALSE(p.system.empty());
      EXPECT_TRUE(DecodeUtf8(p.user).has_value());
      EXPECT_TRUE(DecodeUtf8(p.system).has_value());
      const bool want_cjk = p.lang == "zh";
      EXPECT_EQ(HasCjk(p.user), want_cjk) << p.user;
      EXPECT_EQ(HasCjk(p.system), want_cjk) << p.system;
    }
    EXPECT_EQ(en, 8);
    EXPECT_EQ(zh, 8);
  }
}

TEST(WorkloadsTest, PromptsAreDistinct) {
  std::vector<std::string> all;
  for (const char* n : {"qa", "copywriting", "code"})
    for (const auto& p : Get(n)) all.push_back(p.user);
  std::sort(all.begin(), all.end());
  EXPECT_EQ(std::adjacent_find(all.begin(), all.end()), all.end());
}

TEST(WorkloadsTest, QaSystemMessagesAreTheHelpfulAssistant) {
  const auto qa = Get("qa");
  ASSERT_EQ(qa.size(), 16u);
  EXPECT_EQ(qa[0].system, "You are a helpful assistant.");
  EXPECT_EQ(qa[1].system,
            "\xE4\xBD\xA0\xE6\x98\xAF\xE4\xB8\x80\xE4\xB8\xAA\xE4\xB9\x90\xE4\xBA\x8E"
            "\xE5\x8A\xA9\xE4\xBA\xBA\xE7\x9A\x84\xE5\x8A\xA9\xE6\x89\x8B\xE3\x80\x82");
}

TEST(WorkloadsTest, CodePromptsIncludeSnippets) {
  int with_snippet = 0;
  for (const auto& p : Get("code")) {
    const auto lines = 1 + std::count(p.user.begin(), p.user.end(), '\n');
    if (lines >= 10) ++with_snippet;
  }
  EXPECT_GE(with_snippet, 4);
}

TEST(WorkloadsTest, CopywritingBriefsAreLongerThanQuestions) {
  auto mean_bytes = [](const std::vector<WorkloadPrompt>& ps) {
    double sum = 0;
    for (const auto& p : ps) sum += static_cast<double>(p.user.size());
    return ps.empty() ? 0.0 : sum / static_cast<double>(ps.size());
  };
  const auto qa = Get("qa");
  const auto cw = Get("copywriting");
  ASSERT_FALSE(qa.empty());
  EXPECT_GT(mean_bytes(cw), mean_bytes(qa));
}

TEST(WorkloadsTest, MixInterleavesClassesAndLanguagesAndUsesEveryPromptOnce) {
  const auto mix = Get("mix");
  ASSERT_EQ(mix.size(), 48u);
  const WorkloadClass order[3] = {WorkloadClass::kQa, WorkloadClass::kCopywriting,
                                  WorkloadClass::kCode};
  std::vector<std::string> mixed, classes;
  for (size_t i = 0; i < mix.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(mix[i].cls, order[i % 3]);
    EXPECT_EQ(mix[i].lang, i % 2 == 0 ? "en" : "zh");
    EXPECT_EQ(mix[i].output_len, mix[i].cls == WorkloadClass::kQa            ? 64
                                 : mix[i].cls == WorkloadClass::kCopywriting ? 256
                                                                             : 192);
    mixed.push_back(mix[i].user);
  }
  // Starts qa(en), copywriting(zh), code(en), qa(zh): the first prompts of those lists.
  EXPECT_EQ(mix[0].user, Get("qa")[0].user);
  EXPECT_EQ(mix[1].user, Get("copywriting")[1].user);
  EXPECT_EQ(mix[2].user, Get("code")[0].user);
  EXPECT_EQ(mix[3].user, Get("qa")[1].user);
  for (const char* n : {"qa", "copywriting", "code"})
    for (const auto& p : Get(n)) classes.push_back(p.user);
  std::sort(mixed.begin(), mixed.end());
  std::sort(classes.begin(), classes.end());
  EXPECT_EQ(mixed, classes);
}

TEST(WorkloadsTest, UnknownNameListsTheValidOnes) {
  for (const char* bad : {"", "QA", "chat", "mix "}) {
    const auto r = WorkloadPrompts(bad);
    ASSERT_FALSE(r.ok()) << bad;
    for (const char* valid : {"qa", "copywriting", "code", "mix"})
      EXPECT_NE(r.message().find(valid), std::string::npos) << r.message();
  }
}

}  // namespace
}  // namespace brisk
