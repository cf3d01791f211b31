#include "tokenizer/gguf_export.h"

#include <algorithm>
#include <string>
#include <vector>

namespace brisk {

void WriteGgufTokenizer(const Tokenizer& t, gguf::Writer& w) {
  w.SetString("tokenizer.ggml.model", "gpt2");
  w.SetString("tokenizer.ggml.pre", "qwen2");
  std::vector<std::string_view> tokens(t.n_vocab());
  std::vector<int32_t> types(t.n_vocab());
  for (int32_t id = 0; id < t.n_vocab(); ++id) {
    tokens[id] = t.TokenText(id);
    types[id] = int32_t(t.type(id));
  }
  w.SetStringArray("tokenizer.ggml.tokens", tokens);
  w.SetI32Array("tokenizer.ggml.token_type", types);
  // Merges in rank order as "left right" (byte-level tokens never contain a plain space).
  struct Merge {
    int32_t rank, left, right;
  };
  std::vector<Merge> merges;
  merges.reserve(t.bpe_model().merges().size());
  t.bpe_model().merges().ForEach([&](int32_t l, int32_t r, int32_t rank, int32_t) {
    merges.push_back({rank, l, r});
  });
  std::sort(merges.begin(), merges.end(),
            [](const Merge& a, const Merge& b) { return a.rank < b.rank; });
  std::vector<std::string> text;
  text.reserve(merges.size());
  for (const Merge& m : merges)
    text.push_back(std::string(t.TokenText(m.left)) + " " + std::string(t.TokenText(m.right)));
  w.SetStringArray("tokenizer.ggml.merges", text);
  if (t.bos_id() >= 0) w.SetU32("tokenizer.ggml.bos_token_id", uint32_t(t.bos_id()));
  if (t.eos_id() >= 0) w.SetU32("tokenizer.ggml.eos_token_id", uint32_t(t.eos_id()));
  if (t.pad_id() >= 0) w.SetU32("tokenizer.ggml.padding_token_id", uint32_t(t.pad_id()));
  w.SetBool("tokenizer.ggml.add_bos_token", t.add_bos());
}

}  // namespace brisk
