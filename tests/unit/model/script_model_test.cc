// Script models: greedy decoding after the chat template's generation prompt reproduces the text
// exactly, then <|im_end|>, on the fast path (every ISA) and the reference path, whatever the
// conversation before it; repeated tokens, long prompts and the --after-token mode work; bad
// input fails with a clear message.
#include "model/script_model.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "model/embedded_vocab.h"
#include "model/fast_forward.h"
#include "model/forward.h"
#include "model/model_tokenizer.h"
#include "model/synth.h"
#include "runtime/cpu_features.h"
#include "test_paths.h"
#include "tokenizer/jinja/chat_template.h"

namespace brisk {
namespace {

using json = nlohmann::ordered_json;

constexpr const char* kToolCall =
    "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>";
// Repeated words and digits (the same token at several steps), a newline, and a multi-byte
// character.
constexpr const char* kSentence =
    "The weather in Paris is sunny. The weather in Rome is sunny too: 22 \xC2\xB0"
    "C, 22 \xC2\xB0"
    "C.\nThe end.";

const Tokenizer& VocabTokenizer() {
  static const gguf::File f =
      std::move(gguf::File::FromBuffer(EmbeddedVocabData(), EmbeddedVocabSize(), "vocab")).value();
  static const Tokenizer tok = std::move(Tokenizer::FromGguf(f)).value();
  return tok;
}

// The Qwen chat prompt for `messages` (and tools, if any), as the server renders it.
std::vector<int32_t> ChatPrompt(const Model& m, const Tokenizer& tok, const json& messages,
                                const json& tools) {
  auto tmpl = jinja::ChatTemplate::Parse(m.chat_template());
  EXPECT_TRUE(tmpl.ok()) << tmpl.message();
  if (!tmpl.ok()) return {};
  auto text = jinja::RenderChat(*tmpl, messages, tools, true, nullptr);
  EXPECT_TRUE(text.ok()) << text.message();
  if (!text.ok()) return {};
  EXPECT_TRUE(text->ends_with("<|im_start|>assistant\n")) << *text;
  return tok.Encode(*text);
}

// Greedy decoding with the fast path's fused argmax (the engine's temperature-0 path): the
// prompt in chunks of at most 512 tokens, then one token per step until an end-of-generation
// token.
std::vector<int32_t> GreedyFast(const Model& m, const Tokenizer& tok,
                                const std::vector<int32_t>& prompt, int max_new) {
  constexpr int kChunk = 512;
  ThreadPool pool(2);
  FastForward fwd(m, pool, kChunk);
  SeqKvCache kv(m.config(), int(prompt.size()) + max_new);
  std::vector<int32_t> out;
  size_t pos = 0;
  int32_t last = -1, best = -1;
  while (int(out.size()) < max_new) {
    // The next chunk: the rest of the prompt, or the token just generated.
    const std::span<const int32_t> input =
        pos < prompt.size()
            ? std::span(prompt).subspan(pos, std::min<size_t>(kChunk, prompt.size() - pos))
            : std::span(&last, 1);
    const SeqRun run{kv.blocks(), int(pos), int(input.size())};
    const int32_t row = int32_t(input.size()) - 1;
    const Status st = fwd.RunBatchArgmax(input, std::span(&run, 1), std::span(&row, 1), &best);
    EXPECT_TRUE(st.ok()) << st.message();
    if (!st.ok()) break;
    pos += input.size();
    if (pos < prompt.size()) continue;  // mid-prompt: that argmax is not a prediction
    out.push_back(best);
    if (tok.IsEog(best)) break;
    last = best;
  }
  return out;
}

// The same on the reference path with full logits: every logit finite, and the chosen token
// ahead of all others by a margin that survives sampling at ordinary temperatures.
std::vector<int32_t> GreedyReference(const Model& m, const Tokenizer& tok,
                                     const std::vector<int32_t>& prompt, int max_new) {
  ThreadPool pool(2);
  ReferenceForward fwd(m, pool, 256);
  KvCache kv(m.config(), int(prompt.size()) + max_new);
  std::vector<float> logits(static_cast<size_t>(m.config().n_vocab));
  std::vector<int32_t> out, input = prompt;
  int pos = 0;
  while (int(out.size()) < max_new) {
    const int32_t row = int32_t(input.size()) - 1;
    const Status st = fwd.Run(input, pos, kv, std::span(&row, 1), logits.data());
    EXPECT_TRUE(st.ok()) << st.message();
    if (!st.ok()) break;
    EXPECT_TRUE(
        std::all_of(logits.begin(), logits.end(), [](float x) { return std::isfinite(x); }));
    const auto top = std::max_element(logits.begin(), logits.end());
    const float best_logit = *top;
    *top = -INFINITY;
    EXPECT_GT(best_logit - *std::max_element(logits.begin(), logits.end()), 50.0f);
    const int32_t best = int32_t(top - logits.begin());
    out.push_back(best);
    if (tok.IsEog(best)) break;
    pos += int(input.size());
    input = {best};
  }
  return out;
}

// The text of `ids` before a final <|im_end|> (which must be there).
std::string TextBeforeImEnd(const Tokenizer& tok, const std::vector<int32_t>& ids) {
  EXPECT_FALSE(ids.empty());
  if (ids.empty()) return "";
  EXPECT_EQ(ids.back(), tok.TokenToId("<|im_end|>")) << tok.Decode(ids);
  return tok.Decode(std::span(ids.data(), ids.size() - 1), false);
}

class ScriptModelTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = test::TempDir(); }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::unique_ptr<Model> Load(const Status& written, const std::string& path) {
    EXPECT_TRUE(written.ok()) << written.message();
    auto m = Model::Load(path);
    EXPECT_TRUE(m.ok()) << m.message();
    return m.ok() ? std::move(m).value() : nullptr;
  }
  std::unique_ptr<Model> Write(const std::string& text, const std::string& name) {
    ScriptModelOptions o;
    o.text = text;
    return Load(WriteScriptModel(o, dir_ + "/" + name), dir_ + "/" + name);
  }

  std::string dir_;
};

TEST_F(ScriptModelTest, PlanKeepsTheTokenizersSplit) {
  const Tokenizer& tok = VocabTokenizer();
  ASSERT_EQ(tok.TokenText(kScriptDefaultMarker), "<|im_start|>");
  auto plan = PlanScriptTokens(tok, kToolCall, kScriptDefaultMarker);
  ASSERT_TRUE(plan.ok()) << plan.message();
  EXPECT_EQ(*plan, tok.Encode(kToolCall));
  EXPECT_EQ(plan->front(), 151657);  // <tool_call>, as the real model emits it
  EXPECT_EQ(plan->back(), 151658);   // </tool_call>
  EXPECT_EQ(plan->at(1), 198);       // "\n" may repeat in the script: only the marker may not

  // With "\n" as the marker the newlines must come from other tokens (".\n", "\n\n").
  const std::string text = "One.\nTwo\n\nthree";
  auto around = PlanScriptTokens(tok, text, 198);
  ASSERT_TRUE(around.ok()) << around.message();
  EXPECT_EQ(tok.Decode(*around), text);
  EXPECT_EQ(std::count(around->begin(), around->end(), 198), 0);
}

TEST_F(ScriptModelTest, ToolCallAnswersEveryChatTurn) {
  auto model = Write(kToolCall, "tool.gguf");
  ASSERT_TRUE(model);
  EXPECT_TRUE(IsSynthetic(*model));
  const ModelConfig& c = model->config();
  EXPECT_EQ(c.arch, Arch::kQwen2);
  EXPECT_EQ(c.n_vocab, 151936);
  EXPECT_EQ(c.n_layer, 1);
  EXPECT_FALSE(c.tied_embeddings);
  EXPECT_EQ(*model->gguf()->GetString("brisk.script.text"), kToolCall);
  auto tok = TokenizerForModel(*model);
  ASSERT_TRUE(tok.ok()) << tok.message();

  const json tools = json::parse(R"([{"type": "function", "function": {"name": "get_weather",
      "description": "Current weather", "parameters": {"type": "object",
      "properties": {"city": {"type": "string"}}, "required": ["city"]}}}])");
  const json one_turn = json::array({{{"role", "user"}, {"content", "Weather in Paris?"}}});
  const std::vector<int32_t> prompt = ChatPrompt(*model, *tok, one_turn, tools);
  ASSERT_FALSE(prompt.empty());
  EXPECT_EQ(TextBeforeImEnd(*tok, GreedyFast(*model, *tok, prompt, 100)), kToolCall);
  EXPECT_EQ(TextBeforeImEnd(*tok, GreedyReference(*model, *tok, prompt, 100)), kToolCall);

  // A later turn, after an earlier answer full of newlines: the same answer.
  const json turns =
      json::array({{{"role", "user"}, {"content", "Hi"}},
                   {{"role", "assistant"}, {"content", "Hello!\n\nHow\ncan I help?"}},
                   {{"role", "user"}, {"content", "Weather in Paris?"}}});
  const std::vector<int32_t> later = ChatPrompt(*model, *tok, turns, tools);
  ASSERT_FALSE(later.empty());
  EXPECT_EQ(TextBeforeImEnd(*tok, GreedyFast(*model, *tok, later, 100)), kToolCall);
}

TEST_F(ScriptModelTest, RepeatedTokensOnEveryIsa) {
  auto model = Write(kSentence, "sentence.gguf");
  ASSERT_TRUE(model);
  auto tok = TokenizerForModel(*model);
  ASSERT_TRUE(tok.ok()) << tok.message();
  const json msgs = json::array({{{"role", "user"}, {"content", "Weather?"}}});
  const std::vector<int32_t> prompt = ChatPrompt(*model, *tok, msgs, nullptr);
  ASSERT_FALSE(prompt.empty());
  for (Isa isa : AllIsas()) {  // every tier, x86 and ARM
    if (!IsaSupported(isa)) continue;
    SetIsaForTesting(isa);
    EXPECT_EQ(TextBeforeImEnd(*tok, GreedyFast(*model, *tok, prompt, 100)), kSentence)
        << IsaName(isa);
  }
  SetIsaForTesting(BestIsa());
  EXPECT_EQ(TextBeforeImEnd(*tok, GreedyReference(*model, *tok, prompt, 100)), kSentence);
}

TEST_F(ScriptModelTest, LongPromptFullOfMarkersAndNewlines) {
  auto model = Write(kSentence, "long.gguf");
  ASSERT_TRUE(model);
  const Tokenizer& tok = VocabTokenizer();
  // 1000 tokens: text, "\n" and <|im_start|> at irregular gaps, so stale markers sit at every
  // distance from the real one; the counter must follow the most recent marker only.
  std::vector<int32_t> prompt;
  for (int i = 0; i < 1000; ++i) {
    if (i % 7 == 3 || i % 11 == 5) {
      prompt.push_back(198);
    } else if (i % 13 == 0 || i % 29 == 1) {
      prompt.push_back(kScriptDefaultMarker);
    } else {
      prompt.push_back(int32_t(1000 + (i * 7919) % 100000));
    }
  }
  for (int32_t t : tok.Encode("<|im_start|>assistant\n")) prompt.push_back(t);
  EXPECT_EQ(TextBeforeImEnd(tok, GreedyFast(*model, tok, prompt, 100)), kSentence);

  // Far from any marker (and not at a script count) every logit is about 0: no stray token
  // wins by a margin, and nothing is NaN.
  std::vector<int32_t> quiet(600, 1234);
  quiet.push_back(5678);
  ThreadPool pool(2);
  ReferenceForward ref(*model, pool, 256);
  KvCache kv(model->config(), int(quiet.size()));
  std::vector<float> logits(static_cast<size_t>(model->config().n_vocab));
  const int32_t row = int32_t(quiet.size()) - 1;
  ASSERT_TRUE(ref.Run(quiet, 0, kv, std::span(&row, 1), logits.data()).ok());
  EXPECT_TRUE(std::all_of(logits.begin(), logits.end(), [](float x) { return std::fabs(x) < 1; }));
}

TEST_F(ScriptModelTest, AfterTokenMode) {
  const Tokenizer& tok = VocabTokenizer();
  const int32_t question = tok.Encode("?").at(0);
  const std::string text = "Sunny, 22 degrees.\nDry.";
  const std::string path = dir_ + "/after.gguf";
  auto model = Load(WriteScriptModel(text, question, path), path);
  ASSERT_TRUE(model);
  const std::vector<int32_t> prompt = tok.Encode("What is the weather in Paris?");
  ASSERT_EQ(prompt.back(), question);
  EXPECT_EQ(TextBeforeImEnd(tok, GreedyFast(*model, tok, prompt, 40)), text);
  // A chat prompt is no trigger for this model.
  const std::vector<int32_t> chat =
      tok.Encode("<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");
  const std::vector<int32_t> first = GreedyFast(*model, tok, chat, 1);
  ASSERT_EQ(first.size(), 1u);
  EXPECT_NE(first[0], tok.Encode(text).at(0));
}

TEST_F(ScriptModelTest, EmptyTextEndsTheTurnAtOnce) {
  auto model = Write("", "empty.gguf");
  ASSERT_TRUE(model);
  const Tokenizer& tok = VocabTokenizer();
  const std::vector<int32_t> got = GreedyFast(
      *model, tok, tok.Encode("<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"), 5);
  EXPECT_EQ(got, std::vector<int32_t>{tok.TokenToId("<|im_end|>")});
}

TEST_F(ScriptModelTest, ClearErrors) {
  const Tokenizer& tok = VocabTokenizer();
  auto bad_utf8 = PlanScriptTokens(tok, "caf\xC3", kScriptDefaultMarker);
  ASSERT_FALSE(bad_utf8.ok());
  EXPECT_NE(bad_utf8.message().find("UTF-8"), std::string::npos) << bad_utf8.message();

  auto bad_marker = PlanScriptTokens(tok, "hi", 151936);
  ASSERT_FALSE(bad_marker.ok());
  EXPECT_NE(bad_marker.message().find("outside the vocabulary"), std::string::npos);

  // A lone "\n" is only token 198: not available when 198 marks the start.
  auto no_split = PlanScriptTokens(tok, "a\nb", 198);
  ASSERT_FALSE(no_split.ok());
  EXPECT_NE(no_split.message().find("cannot be spelled without token 198"), std::string::npos)
      << no_split.message();
  const Status lone = WriteScriptModel("a\nb", 198, dir_ + "/lone.gguf");
  EXPECT_FALSE(lone.ok());
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/lone.gguf"));

  std::string long_text;
  for (int i = 0; i < 600; ++i) long_text += " a";
  ScriptModelOptions o;
  o.text = long_text;
  const Status too_long = WriteScriptModel(o, dir_ + "/long.gguf");
  ASSERT_FALSE(too_long.ok());
  EXPECT_NE(too_long.message().find("600 tokens"), std::string::npos) << too_long.message();
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/long.gguf"));

  o.text = "hi";
  o.lead = -1;
  EXPECT_FALSE(WriteScriptModel(o, dir_ + "/lead.gguf").ok());

  auto empty = PlanScriptTokens(tok, "", kScriptDefaultMarker);
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->empty());
}

}  // namespace
}  // namespace brisk
