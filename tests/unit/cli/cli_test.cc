// The `brisk` binary as a user runs it: exit codes, output, and the logits file it writes.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "formats/logits_file.h"
#include "test_paths.h"

namespace brisk {
namespace {

struct Output {
  int code;
  std::string out;
};

// `env`: assignments put before the command ("BRISK_HOME=/tmp/x").
Output Brisk(const std::string& args, const std::string& env = "") {
  const std::string cmd = "bash -c \"" + env + " " + test::BriskBinary() + " " + args + "\" 2>&1";
  Output o{-1, ""};
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return o;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) o.out.append(buf.data(), n);
  int status = pclose(p);
  o.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return o;
}

std::string Tiny() {
  return test::FindGoldenOrData("models/tiny-qwen3-q4_k_m.gguf", "golden/tiny-qwen3-q4_k_m.gguf");
}

TEST(Cli, InfoShowsArchitectureAndTypes) {
  Output o = Brisk("info " + Tiny());
  ASSERT_EQ(o.code, 0) << o.out;
  EXPECT_NE(o.out.find("architecture:    qwen3"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("head dim 128"), std::string::npos) << o.out;  // explicit key_length
  EXPECT_NE(o.out.find("file type:       Q4_K_M"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("eos token:       2050 '<|im_end|>'"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("chat template:   present"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("vocab size:      2051"), std::string::npos) << o.out;
}

TEST(Cli, InfoOnMissingFileFailsClearly) {
  Output o = Brisk("info /nonexistent/model.gguf");
  EXPECT_EQ(o.code, 1);
  EXPECT_NE(o.out.find("cannot open"), std::string::npos) << o.out;
}

TEST(Cli, RunPrintsRequestedNumberOfIds) {
  Output o = Brisk("run -m " + Tiny() + " --tokens 2049,456,102 -n 5 -t 2");
  ASSERT_EQ(o.code, 0) << o.out;
  std::string first_line = o.out.substr(0, o.out.find('\n'));
  int commas = 0;
  for (char c : first_line) commas += c == ',';
  EXPECT_EQ(commas, 4) << o.out;
}

TEST(Cli, RunRejectsBadTokenList) {
  EXPECT_EQ(Brisk("run -m " + Tiny() + " --tokens 1,,2").code, 1);
  EXPECT_EQ(Brisk("run -m " + Tiny() + " --tokens 1,abc").code, 1);
  Output o = Brisk("run -m " + Tiny() + " --tokens 999999");
  EXPECT_EQ(o.code, 1);
  EXPECT_NE(o.out.find("token id 999999 is out of range"), std::string::npos) << o.out;
}

TEST(Cli, LogitsFileMatchesGoldenReference) {
  const std::string ref = test::FindGoldenOrData("logits/tiny-qwen3-q4_k_m.seq1.ref64.bin",
                                                 "golden/tiny-qwen3-q4_k_m.seq1.ref64.bin");
  const std::string seqs = test::FindGoldenOrData("logits/sequences.txt", "golden/sequences.txt");
  ASSERT_FALSE(ref.empty());
  std::ifstream in(seqs);
  std::string line;
  std::getline(in, line);
  std::getline(in, line);  // seq1
  std::string list;
  for (char c : line) list += c == ' ' ? ',' : c;
  const std::string out = test::TempDir() + "/logits.bin";
  Output o = Brisk("logits -m " + Tiny() + " --tokens " + list + " -o " + out);
  ASSERT_EQ(o.code, 0) << o.out;
  auto got = ReadLogitsFile(out);
  auto want = ReadLogitsFile(ref);
  ASSERT_TRUE(got.ok()) << got.message();
  ASSERT_TRUE(want.ok());
  ASSERT_EQ(got->n_tokens, want->n_tokens);
  ASSERT_EQ(got->n_vocab, want->n_vocab);
  double num = 0, den = 0;
  for (size_t i = 0; i < got->data.size(); ++i) {
    num += (double(got->data[i]) - want->data[i]) * (double(got->data[i]) - want->data[i]);
    den += double(want->data[i]) * want->data[i];
  }
  EXPECT_LE(std::sqrt(num / den), 1e-4);
}

}  // namespace
}  // namespace brisk

namespace brisk {
namespace {

std::string Vocab() {
  return test::FindGoldenOrData("tokenizer/qwen2.5-vocab.gguf", "golden/tiny-qwen3-q4_k_m.gguf");
}

TEST(Cli, TokenizeMatchesHuggingFaceIds) {
  // Golden ids from HF tokenizers for the real vocabulary (first lines of the case file).
  const std::string cases = test::GoldenPath("tokenizer/qwen2.5-hf-cases.jsonl");
  if (cases.empty()) GTEST_SKIP() << "golden tokenizer cases not present";
  const std::string dir = test::TempDir();
  std::ifstream in(cases);
  std::ofstream inputs(dir + "/in.jsonl");
  std::vector<std::string> want;
  std::string line;
  for (int i = 0; i < 50 && std::getline(in, line); ++i) {
    auto pos = line.find("\"ids\"");
    want.push_back(line.substr(pos));
    inputs << line << "\n";
  }
  inputs.close();
  Output o = Brisk("tokenize --jsonl -m " + Vocab() + " < " + dir + "/in.jsonl");
  ASSERT_EQ(o.code, 0) << o.out;
  std::istringstream got(o.out);
  int n = 0;
  while (std::getline(got, line)) {
    ASSERT_LT(n, int(want.size()));
    // Both are compact JSON; compare the id arrays.
    auto ids_got = line.substr(line.find("\"ids\":") + 6);
    auto ids_want = want[n].substr(want[n].find('['));
    ids_want = ids_want.substr(0, ids_want.find(']') + 1);
    ids_got = ids_got.substr(0, ids_got.find(']') + 1);
    std::string compact;
    for (char c : ids_want)
      if (c != ' ') compact += c;
    EXPECT_EQ(ids_got, compact) << "case " << n;
    ++n;
  }
  EXPECT_EQ(n, int(want.size()));
}

TEST(Cli, RunPromptEqualsTokenPathDecoded) {
  // `run -p TEXT --raw` must generate what `run --tokens <ids of TEXT>` generates, decoded.
  Output ids = Brisk("run -m " + Tiny() + " --raw -p 'The quick brown fox' -n 6 2>/dev/null");
  ASSERT_EQ(ids.code, 0) << ids.out;
  Output tok = Brisk("tokenize -m " + Tiny() + " <<< 'The quick brown fox'");
  ASSERT_EQ(tok.code, 0) << tok.out;
  std::string list = tok.out.substr(tok.out.find('[') + 1);
  list = list.substr(0, list.find(']'));
  Output gen = Brisk("run -m " + Tiny() + " --tokens " + list + " -n 6 2>/dev/null");
  ASSERT_EQ(gen.code, 0) << gen.out;
  std::string gen_ids = gen.out.substr(0, gen.out.find('\n'));
  Output text = Brisk("tokenize --decode --no-special -m " + Tiny() + " <<< '" + gen_ids + "'");
  ASSERT_EQ(text.code, 0) << text.out;
  auto decoded =
      nlohmann::json::parse(text.out.substr(0, text.out.find('\n')))["text"].get<std::string>();
  // run -p stops at an end-of-generation token; compare the common part.
  std::string streamed = ids.out.substr(0, ids.out.rfind('\n'));
  EXPECT_EQ(decoded.substr(0, streamed.size()), streamed);
}

TEST(Cli, TokenizePipesIntoDecode) {
  // What tokenize prints is what --decode reads: the pipe gives the text back, no flags needed.
  Output o = Brisk("tokenize -m " + Tiny() + " <<< $'hello\\nThe quick brown fox' | " +
                   test::BriskBinary() + " tokenize --decode -m " + Tiny());
  ASSERT_EQ(o.code, 0) << o.out;
  std::istringstream lines(o.out);
  std::string line;
  std::vector<std::string> texts;
  while (std::getline(lines, line)) texts.push_back(nlohmann::json::parse(line).at("text"));
  EXPECT_EQ(texts, (std::vector<std::string>{"hello", "The quick brown fox"})) << o.out;
}

TEST(Cli, TokenizeDecodeReadsEveryIdFormat) {
  Output o = Brisk("tokenize --decode -m " + Tiny() + " <<< $'101\\n101 102\\n101,102\\n" +
                   "[101, 102]\\n{\\\"ids\\\": [101]}'");
  ASSERT_EQ(o.code, 0) << o.out;
  EXPECT_EQ(std::count(o.out.begin(), o.out.end(), '\n'), 5) << o.out;
}

TEST(Cli, TokenizeDecodeErrorNamesTheFormats) {
  Output o = Brisk("tokenize --decode -m " + Tiny() + " <<< 'hello'");
  EXPECT_EQ(o.code, 1) << o.out;
  EXPECT_NE(o.out.find("line 1"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("'1 2 3', '1,2,3', '[1,2,3]'"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("\"ids\""), std::string::npos) << o.out;
}

TEST(Cli, InfoWithoutModelUsesTheDefaultModel) {
  // The default model is $BRISK_HOME/synth-qwen2.5-0.5b-q4_k_m.gguf: a copy of the tiny model
  // stands in for it, so nothing is generated.
  const std::string home = test::TempDir() + "/home";
  std::filesystem::create_directories(home);
  std::filesystem::copy_file(Tiny(), home + "/synth-qwen2.5-0.5b-q4_k_m.gguf",
                             std::filesystem::copy_options::overwrite_existing);
  Output o = Brisk("info", "BRISK_HOME=" + home);
  ASSERT_EQ(o.code, 0) << o.out;
  EXPECT_NE(o.out.find(home + "/synth-qwen2.5-0.5b-q4_k_m.gguf"), std::string::npos) << o.out;
  Output m = Brisk("info -m " + Tiny());
  ASSERT_EQ(m.code, 0) << m.out;
  EXPECT_NE(m.out.find("architecture:"), std::string::npos) << m.out;
}

TEST(Cli, ChatReusesTheConversationPrefix) {
  // A system prompt long enough to fill whole KV blocks: the prefix cache reuses full blocks.
  Output o =
      Brisk("chat -m " + Tiny() +
            " -s 'You are a helpful assistant. Answer briefly.' -n 4 <<< $'hello\\nand again'");
  ASSERT_EQ(o.code, 0) << o.out;
  // The second turn's prompt starts with the first turn's: its line reports reused tokens
  // (whole 16-token blocks of the first turn, found in the engine's prefix cache).
  auto first = o.out.find("reused");
  ASSERT_NE(first, std::string::npos) << o.out;
  auto second = o.out.find("reused", first + 1);
  ASSERT_NE(second, std::string::npos) << o.out;
  auto open = o.out.rfind('(', second);
  const int reused = std::stoi(o.out.substr(open + 1));
  EXPECT_GT(reused, 10) << o.out;
}

}  // namespace
}  // namespace brisk
