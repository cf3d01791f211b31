#include "model/script_model.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <unordered_map>

#include "formats/gguf_writer.h"
#include "model/embedded_vocab.h"
#include "model/synth.h"
#include "quant/recipe.h"
#include "tokenizer/unicode.h"
#include "util/fp16.h"

namespace brisk {
namespace {

constexpr int kHeadDim = 64;
// Query heads per KV head: brisk's attention kernel takes groups of at most 16 heads.
constexpr int kGroup = 16;
constexpr int kContext = 32768;
// RoPE base below 1: the 32 rotation frequencies lie in [1, 2) radians per position, all fast,
// so cos sums over them decorrelate after one step. (Usual bases make most frequencies so slow
// that neighbouring distances look alike.)
constexpr double kRopeBase = 0.5;
// Softmax gap (nats) between the wanted distance and any other: with 32768 other positions the
// weight that leaks is below 32768 * e^-30 < 1e-8.
constexpr double kAttentionGap = 30.0;
// Logit of the scripted token; every other logit stays near 0. At temperature 2 a wrong pick
// still has probability below 1e-15 over the whole vocabulary.
constexpr double kScriptLogit = 100.0;

// Tokens a script may use: ones whose bytes every decoder shows (normal BPE tokens and
// non-special added tokens such as <tool_call>), never the marker (it would restart the count)
// nor an end-of-generation token.
bool Usable(const Tokenizer& tok, int32_t id, int32_t marker) {
  const TokenType t = tok.type(id);
  if (t != TokenType::kNormal && t != TokenType::kUserDefined && t != TokenType::kByte)
    return false;
  return id != marker && !tok.IsEog(id) && !tok.TokenBytes(id).empty();
}

// `bytes` for an error message: control characters as escapes.
std::string Escaped(std::string_view bytes) {
  std::string out;
  for (char c : bytes) {
    if (c == '\n') {
      out += "\\n";
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", unsigned(static_cast<unsigned char>(c)));
      out += buf;
    } else {
      out += c;
    }
  }
  return out;
}

// The fewest usable tokens whose bytes concatenate to `text` (shortest path over byte
// positions), or an empty vector with *possible = false.
std::vector<int32_t> FewestTokens(const Tokenizer& tok, std::string_view text, int32_t marker,
                                  bool* possible) {
  std::unordered_map<std::string_view, int32_t> by_bytes;
  size_t max_len = 0;
  for (int32_t id = 0; id < tok.n_vocab(); ++id) {
    if (!Usable(tok, id, marker)) continue;
    by_bytes.emplace(tok.TokenBytes(id), id);
    max_len = std::max(max_len, tok.TokenBytes(id).size());
  }
  const size_t n = text.size();
  constexpr int kNone = std::numeric_limits<int>::max();
  std::vector<int> cost(n + 1, kNone);
  std::vector<std::pair<int32_t, size_t>> step(n + 1, {-1, 0});
  cost[n] = 0;
  for (size_t pos = n; pos-- > 0;) {
    for (size_t len = std::min(max_len, n - pos); len > 0; --len) {
      const auto it = by_bytes.find(text.substr(pos, len));
      if (it == by_bytes.end() || cost[pos + len] == kNone) continue;
      if (cost[pos + len] + 1 < cost[pos]) {
        cost[pos] = cost[pos + len] + 1;
        step[pos] = {it->second, len};
      }
    }
  }
  *possible = cost[0] != kNone;
  std::vector<int32_t> out;
  for (size_t pos = 0; *possible && pos < n; pos += step[pos].second)
    out.push_back(step[pos].first);
  return out;
}

// The RoPE frequency of rotation pair i.
double Theta(int i) { return std::pow(kRopeBase, -2.0 * i / kHeadDim); }

// Peak minus the highest off-peak value of sum_i cos(delta * theta_i) (the offset heads' score
// shape) over every distance error a head can see: from -kScriptMaxTokens (positions after the
// wanted one) to the context length.
double OffsetPeakGap() {
  double theta[kHeadDim / 2];
  for (int i = 0; i < kHeadDim / 2; ++i) theta[i] = Theta(i);
  double worst = -1e300;
  for (int d = -kScriptMaxTokens; d <= kContext; ++d) {
    if (d == 0) continue;
    double s = 0;
    for (double t : theta) s += std::cos(double(d) * t);
    worst = std::max(worst, s);
  }
  return kHeadDim / 2 - worst;
}

// Dense row-major [rows][cols] F16 matrix; GGUF dims are {cols, rows}.
struct F16Matrix {
  int64_t rows, cols;
  std::vector<uint16_t> v;
  F16Matrix(int64_t r, int64_t c) : rows(r), cols(c), v(size_t(r * c), 0) {}
  void Set(int64_t r, int64_t c, double x) { v[size_t(r * cols + c)] = Fp32ToFp16(float(x)); }
};

// Dimension 0: constant 1. Dimension FlagDim(k) = 1 + k, k = 0..last: "the most recent marker
// is k tokens back"; MLP neuron k - lead writes its verdict there too, and output rows read it.
constexpr int64_t FlagDim(int64_t k) { return 1 + k; }

// The model's shape for a script of n tokens after `lead` free ones.
struct ScriptDims {
  int64_t n, lead, last;  // last = lead + n: the largest marker distance a head must see
  int64_t d, n_head, n_kv, q_dim, kv_dim, n_ff, n_vocab;
};

ScriptDims PlanScriptDims(int64_t n, int64_t lead, int64_t n_vocab) {
  ScriptDims s;
  s.n = n;
  s.lead = lead;
  s.last = lead + n;
  s.d = std::max<int64_t>(64, (s.last + 2 + 63) / 64 * 64);
  s.n_head = std::max<int64_t>(kGroup, (s.last + kGroup - 1) / kGroup * kGroup);
  s.n_kv = s.n_head / kGroup;
  s.q_dim = s.n_head * kHeadDim;
  s.kv_dim = s.n_kv * kHeadDim;
  s.n_ff = (n + 1 + 31) / 32 * 32;
  s.n_vocab = n_vocab;
  return s;
}

// The one layer's weights, all zero to start with.
struct ScriptWeights {
  F16Matrix embd, wq, wk, wv, wo, gate, up, down, output;
  std::vector<float> ones, bq, bk, bv;
  explicit ScriptWeights(const ScriptDims& s)
      : embd(s.n_vocab, s.d),
        wq(s.q_dim, s.d),
        wk(s.kv_dim, s.d),
        wv(s.kv_dim, s.d),
        wo(s.d, s.q_dim),
        gate(s.n_ff, s.d),
        up(s.n_ff, s.d),
        down(s.d, s.n_ff),
        output(s.n_vocab, s.d),
        ones(size_t(s.d), 1.0f),
        bq(size_t(s.q_dim), 0.0f),
        bk(size_t(s.kv_dim), 0.0f),
        bv(size_t(s.kv_dim), 0.0f) {}
};

// Embeddings and attention: head j-1 copies "a marker is j tokens back" into FlagDim(j).
// `amp` is the query amplitude.
void SetScriptAttention(const ScriptDims& s, double amp, int32_t marker, ScriptWeights* w) {
  for (int64_t t = 0; t < s.n_vocab; ++t) w->embd.Set(t, 0, 1.0);
  w->embd.Set(marker, FlagDim(0), 1.0);
  // Head j-1 peaks at distance j: q = amp * e^{-i j theta}, k = 1 per rotation pair, so the
  // rotated dot product is amp * sum_i cos((distance - j) * theta_i).
  for (int64_t j = 1; j <= s.last; ++j) {
    float* q = &w->bq[size_t((j - 1) * kHeadDim)];
    for (int i = 0; i < kHeadDim / 2; ++i) {
      const double theta = Theta(i);
      q[i] = float(amp * std::cos(double(j) * theta));
      q[i + kHeadDim / 2] = float(-amp * std::sin(double(j) * theta));
    }
    w->wo.Set(FlagDim(j), (j - 1) * kHeadDim, 1.0);  // head j-1's copied flag -> FlagDim(j)
  }
  // V carries the marker flag: the marker's normed embedding (1, 1) * sqrt(d/2) gives 1.
  for (int64_t g = 0; g < s.n_kv; ++g) {
    for (int i = 0; i < kHeadDim / 2; ++i) w->bk[size_t(g * kHeadDim + i)] = 1.0f;
    w->wv.Set(g * kHeadDim, FlagDim(0), std::sqrt(2.0 / double(s.d)));
  }
}

// MLP and output: the neuron for the most recent marker's distance wins, and its output row
// names the script token due at that distance (eog after the last).
void SetScriptMlp(const ScriptDims& s, const std::vector<int32_t>& script, int32_t eog,
                  ScriptWeights* w) {
  // After the attention the MLP input is s * (1, flags...) with s = sqrt(d / (1 + flags set)),
  // between s_min = sqrt(d / (last + 2)) and sqrt(d). Gate of the neuron for count k is
  // beta * s * (flag_k - sum of lower flags - 1/2): at least +8 for the neuron whose count is the
  // most recent marker's distance, at most -8 (SiLU ~ -0.003) for every other.
  const double s_min = std::sqrt(double(s.d) / double(s.last + 2));
  const double beta = 16.0 / s_min;
  // Winner output ~ 0.5 * beta * s^2 * delta >= 1000: it dominates the final RMSNorm over the
  // other residual entries (at most last + 2 values of about 1).
  const double delta = 125.0 / s_min;
  // The normed winner is about sqrt(d); scale so its logit is kScriptLogit.
  const double big = kScriptLogit / std::sqrt(double(s.d));
  for (int64_t m = 0; m <= s.n; ++m) {
    const int64_t k = s.lead + m;
    w->gate.Set(m, FlagDim(k), beta);
    for (int64_t i = 0; i < k; ++i) w->gate.Set(m, FlagDim(i), -beta);
    w->gate.Set(m, 0, -0.5 * beta);
    w->up.Set(m, 0, 1.0);
    w->down.Set(FlagDim(k), m, delta);
    w->output.Set(m < s.n ? script[size_t(m)] : eog, FlagDim(k), big);
  }
}

void SetScriptMetadata(const ScriptModelOptions& o, const ScriptDims& s, const gguf::File& vocab,
                       gguf::Writer* w) {
  w->SetString("general.architecture", "qwen2");
  w->SetString("general.name", "brisk script model (fixed output)");
  w->SetU32("general.file_type", uint32_t(FileType::kF16));
  // Marked synthetic: every output made from it says its weights are not a trained model's.
  w->SetBool(kSyntheticKey, true);
  w->SetString("brisk.script.text", o.text);
  w->SetU32("brisk.script.marker", uint32_t(o.marker));
  w->SetU32("brisk.script.lead", uint32_t(o.lead));
  w->SetU32("qwen2.context_length", kContext);
  w->SetU32("qwen2.embedding_length", uint32_t(s.d));
  w->SetU32("qwen2.block_count", 1);
  w->SetU32("qwen2.feed_forward_length", uint32_t(s.n_ff));
  w->SetU32("qwen2.attention.head_count", uint32_t(s.n_head));
  w->SetU32("qwen2.attention.head_count_kv", uint32_t(s.n_kv));
  w->SetU32("qwen2.attention.key_length", kHeadDim);
  w->SetU32("qwen2.attention.value_length", kHeadDim);
  w->SetF32("qwen2.rope.freq_base", float(kRopeBase));
  w->SetF32("qwen2.attention.layer_norm_rms_epsilon", 1e-6f);
  for (const auto& [key, value] : vocab.metadata())
    if (key.rfind("tokenizer.", 0) == 0) w->SetRaw(key, value);
}

// The tensors point into `m`, which must outlive the write.
void AddScriptTensors(const ScriptWeights& m, gguf::Writer* w) {
  auto f16 = [&](const char* name, const F16Matrix& x) {
    w->AddTensor(name, GgmlType::kF16, {x.cols, x.rows}, x.v.data(), x.v.size() * 2);
  };
  auto f32 = [&](const char* name, const std::vector<float>& v) {
    w->AddTensor(name, GgmlType::kF32, {int64_t(v.size())}, v.data(), v.size() * 4);
  };
  f16("token_embd.weight", m.embd);
  f32("blk.0.attn_norm.weight", m.ones);
  f16("blk.0.attn_q.weight", m.wq);
  f16("blk.0.attn_k.weight", m.wk);
  f16("blk.0.attn_v.weight", m.wv);
  f32("blk.0.attn_q.bias", m.bq);
  f32("blk.0.attn_k.bias", m.bk);
  f32("blk.0.attn_v.bias", m.bv);
  f16("blk.0.attn_output.weight", m.wo);
  f32("blk.0.ffn_norm.weight", m.ones);
  f16("blk.0.ffn_gate.weight", m.gate);
  f16("blk.0.ffn_up.weight", m.up);
  f16("blk.0.ffn_down.weight", m.down);
  f32("output_norm.weight", m.ones);
  f16("output.weight", m.output);
}

}  // namespace

Result<std::vector<int32_t>> PlanScriptTokens(const Tokenizer& tokenizer, std::string_view text,
                                              int32_t marker, int max_tokens) {
  if (marker < 0 || marker >= tokenizer.n_vocab())
    return Status::Error("marker token id " + std::to_string(marker) +
                         " is outside the vocabulary (0.." +
                         std::to_string(tokenizer.n_vocab() - 1) + ")");
  // Decode replaces invalid UTF-8 with U+FFFD, so such a text could never come out unchanged.
  if (!tok::IsValidUtf8(text)) return Status::Error("script text is not valid UTF-8");
  // The tokenizer's own split is what a real model would emit (e.g. <tool_call> as one token).
  std::vector<int32_t> ids = tokenizer.Encode(text);
  bool ok = tokenizer.Decode(ids, false) == text;
  for (int32_t id : ids) ok = ok && Usable(tokenizer, id, marker);
  if (!ok) {
    bool possible = false;
    ids = FewestTokens(tokenizer, text, marker, &possible);
    if (!possible)
      return Status::Error("the script text cannot be spelled without token " +
                           std::to_string(marker) + " (\"" + Escaped(tokenizer.TokenBytes(marker)) +
                           "\"), which marks where the script starts; choose another one");
  }
  if (int(ids.size()) > max_tokens)
    return Status::Error("the script text is " + std::to_string(ids.size()) +
                         " tokens; this script model holds at most " + std::to_string(max_tokens));
  return ids;
}

Status WriteScriptModel(const ScriptModelOptions& o, const std::string& path) {
  if (o.lead < 0 || o.lead >= kScriptMaxTokens)
    return Status::Error("script lead must be in 0.." + std::to_string(kScriptMaxTokens - 1));
  BRISK_ASSIGN_OR_RETURN(gguf::File vocab,
                         gguf::File::FromBuffer(EmbeddedVocabData(), EmbeddedVocabSize(), "vocab"));
  BRISK_ASSIGN_OR_RETURN(Tokenizer tok, Tokenizer::FromGguf(vocab));
  const int32_t eog = tok.TokenToId("<|im_end|>");
  if (eog < 0) return Status::Error("the embedded vocabulary has no <|im_end|> token");
  BRISK_ASSIGN_OR_RETURN(std::vector<int32_t> script,
                         PlanScriptTokens(tok, o.text, o.marker, kScriptMaxTokens - o.lead));
  const ScriptDims dims = PlanScriptDims(int64_t(script.size()), o.lead, tok.n_vocab());

  const double gap = OffsetPeakGap();
  if (!(gap > 1.0))
    return Status::Error("internal: the RoPE base gives the offset heads no distinct peak");
  // Query amplitude: the kernel scales scores by 1/sqrt(head_dim).
  const double amp = kAttentionGap * std::sqrt(double(kHeadDim)) / gap;

  ScriptWeights weights(dims);
  SetScriptAttention(dims, amp, o.marker, &weights);
  SetScriptMlp(dims, script, eog, &weights);
  gguf::Writer w;
  SetScriptMetadata(o, dims, vocab, &w);
  AddScriptTensors(weights, &w);
  return w.Write(path);
}

Status WriteScriptModel(const std::string& text, int32_t trigger, const std::string& path) {
  ScriptModelOptions o;
  o.text = text;
  o.marker = trigger;
  o.lead = 0;
  return WriteScriptModel(o, path);
}

}  // namespace brisk
