// Tokenizer from GGUF metadata (tokenizer.ggml.*).
#include <string>

#include "formats/gguf.h"
#include "tokenizer/tokenizer.h"

namespace brisk {
namespace {

// An optional integer key: `fallback` when absent, an error when present with the wrong type.
Result<int64_t> OptionalInt(const gguf::File& f, std::string_view key, int64_t fallback) {
  if (f.Find(key) == nullptr) return fallback;
  return f.GetInt(key);
}

bool SupportedPre(std::string_view pre) { return pre == "qwen2" || pre == "deepseek-r1-qwen"; }

}  // namespace

Result<Tokenizer> Tokenizer::FromGguf(const gguf::File& f) {
  const std::string where = f.path() + ": ";
  BRISK_ASSIGN_OR_RETURN(const std::string model, f.GetString("tokenizer.ggml.model"));
  if (model != "gpt2") {
    return Status::Error(where + "tokenizer.ggml.model is '" + model +
                         "'; only byte-level BPE ('gpt2') is supported");
  }
  std::string pre = "(missing)";
  if (f.Find("tokenizer.ggml.pre") != nullptr) {
    BRISK_ASSIGN_OR_RETURN(pre, f.GetString("tokenizer.ggml.pre"));
  }
  if (!SupportedPre(pre)) {
    return Status::Error(where + "tokenizer.ggml.pre is '" + pre +
                         "'; supported pre-tokenizers: qwen2, deepseek-r1-qwen");
  }

  tok::VocabSpec spec;
  BRISK_ASSIGN_OR_RETURN(spec.tokens, f.GetStringArray("tokenizer.ggml.tokens"));
  const size_t n = spec.tokens.size();
  spec.types.assign(n, TokenType::kNormal);
  if (f.Find("tokenizer.ggml.token_type") != nullptr) {
    BRISK_ASSIGN_OR_RETURN(const std::vector<int64_t> types,
                           f.GetIntArray("tokenizer.ggml.token_type"));
    if (types.size() != n) {
      return Status::Error(where + "tokenizer.ggml.token_type has " + std::to_string(types.size()) +
                           " entries for " + std::to_string(n) + " tokens");
    }
    for (size_t i = 0; i < n; ++i) {
      // Unknown type numbers are treated as normal tokens.
      spec.types[i] =
          types[i] >= 0 && types[i] <= 6 ? static_cast<TokenType>(types[i]) : TokenType::kNormal;
    }
  }

  BRISK_ASSIGN_OR_RETURN(const std::vector<std::string_view> merges,
                         f.GetStringArray("tokenizer.ggml.merges"));
  spec.merges.reserve(merges.size());
  for (size_t r = 0; r < merges.size(); ++r) {
    const std::string_view m = merges[r];
    // Byte-level tokens never contain a literal space; the separator is the first space after
    // the first character.
    const size_t sp = m.find(' ', 1);
    if (sp == std::string_view::npos) {
      return Status::Error(where + "tokenizer.ggml.merges[" + std::to_string(r) + "] '" +
                           std::string(m.substr(0, 64)) + "' is not 'left right'");
    }
    spec.merges.emplace_back(m.substr(0, sp), m.substr(sp + 1));
  }

  BRISK_ASSIGN_OR_RETURN(const int64_t bos, OptionalInt(f, "tokenizer.ggml.bos_token_id", -1));
  BRISK_ASSIGN_OR_RETURN(const int64_t eos, OptionalInt(f, "tokenizer.ggml.eos_token_id", -1));
  BRISK_ASSIGN_OR_RETURN(const int64_t pad, OptionalInt(f, "tokenizer.ggml.padding_token_id", -1));
  auto as_id = [n](int64_t v) { return v >= 0 && v < static_cast<int64_t>(n) ? int32_t(v) : -1; };
  spec.bos_id = as_id(bos);
  spec.eos_id = as_id(eos);
  spec.pad_id = as_id(pad);
  if (f.Find("tokenizer.ggml.add_bos_token") != nullptr) {
    BRISK_ASSIGN_OR_RETURN(spec.add_bos, f.GetBool("tokenizer.ggml.add_bos_token"));
  }
  spec.nfc = true;  // as the HF definition of these vocabularies does

  Result<Tokenizer> t = FromSpec(spec);
  if (!t.ok()) return t.status().WithContext(f.path());
  return t;
}

Result<Tokenizer> Tokenizer::FromGgufPath(const std::string& path) {
  BRISK_ASSIGN_OR_RETURN(const gguf::File f, gguf::File::Open(path));
  return FromGguf(f);
}

}  // namespace brisk
