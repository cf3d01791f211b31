// Script models: tiny GGUF models (arch qwen2, the real Qwen2.5 vocabulary and chat template,
// marked synthetic) whose greedy output after a trigger token is a fixed text. Synthetic models
// from synth.h have random weights, so their text is noise; a script model lets end-to-end tests
// of `brisk serve` check output-dependent behaviour (tool calls, stop handling) with real clients.
//
// Where the script starts: `lead` tokens after the most recent `marker` token. The default,
// <|im_start|> and 2, is the chat template's generation prompt "<|im_start|>assistant\n", so the
// model answers every chat turn with the text. (Counting from the prompt's last "\n" instead
// would break on texts that contain "\n" themselves, as Qwen tool calls do.)
//
// How it works: one layer computes "how many tokens ago was the most recent marker" and the
// output layer maps that count to the script's next token (after the last one: <|im_end|>).
//  - Embeddings: every token has 1 in dimension 0 (a constant the MLP uses as a bias); the
//    marker also has 1 in dimension T0.
//  - Attention head j (j = 1..lead+n) looks at exactly the token j positions back and copies its
//    marker flag into dimension Tj. Q and K come from biases only, so after RoPE their dot
//    product is a sum of cos((distance - j) * theta_i): sharply peaked at distance j. The RoPE
//    base is chosen so the peak beats every other distance up to the context length by a wide
//    softmax margin (checked numerically when the file is written).
//  - MLP neuron k fires when Tk is set and no T below k is (the most recent marker is k back)
//    and writes a large value into Tk, which dominates the final RMSNorm.
//  - The output row of the token the script emits at count k reads Tk (logit about 100, every
//    other logit about 0), so sampling at ordinary temperatures and with penalties follows the
//    script too. Before count `lead` and far from any marker all logits are about 0.
// Because the state is a counter, the text may repeat tokens freely and keeps the tokenizer's
// own split; only the marker itself cannot appear in it (it would restart the count).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/tokenizer.h"
#include "util/status.h"

namespace brisk {

// <|im_start|> in the Qwen2.5 vocabulary, and the tokens of "assistant\n" that follow it in the
// generation prompt.
inline constexpr int32_t kScriptDefaultMarker = 151644;
inline constexpr int kScriptDefaultLead = 2;
// Longest script in tokens (lead included): one attention head and one hidden dimension per
// token, and the two vocabulary-sized matrices grow with the hidden size (512: about 0.35 GB).
inline constexpr int kScriptMaxTokens = 512;

struct ScriptModelOptions {
  std::string text;  // valid UTF-8; added tokens such as <tool_call> may appear literally
  int32_t marker = kScriptDefaultMarker;
  int lead = kScriptDefaultLead;
};

// The tokens a script model generates for `text` (before its final <|im_end|>); their Decode is
// exactly `text`. The tokenizer's own split when that decodes back to the text and avoids the
// marker, end-of-generation and control tokens (servers hide control tokens); otherwise the
// fewest tokens that do. Fails with a message when no split exists or it is longer than
// max_tokens.
Result<std::vector<int32_t>> PlanScriptTokens(const Tokenizer& tokenizer, std::string_view text,
                                              int32_t marker, int max_tokens = kScriptMaxTokens);

// Writes the script model to `path`: F16 matrices, F32 norms and biases, context 32768.
Status WriteScriptModel(const ScriptModelOptions& options, const std::string& path);
// The script right after the prompt's last `trigger` token (marker = trigger, lead 0).
Status WriteScriptModel(const std::string& text, int32_t trigger, const std::string& path);

}  // namespace brisk
