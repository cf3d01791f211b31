// Tokenizer from a HuggingFace tokenizer.json (+ tokenizer_config.json for bos/eos/pad).
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>

#include "tokenizer/tokenizer.h"
#include "util/mapped_file.h"

namespace brisk {
namespace {

using json = nlohmann::json;

// The Qwen2 split pattern as tokenizer.json spells it.
constexpr std::string_view kQwen2Pattern =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

// Ids beyond this are rejected rather than allocated for (real vocabularies have < 10^6).
constexpr int64_t kMaxId = (int64_t{1} << 24) - 1;

// Through MappedFile: it refuses FIFOs and devices instead of blocking on them.
Result<std::string> ReadFile(const std::string& path) {
  BRISK_ASSIGN_OR_RETURN(MappedFile m, MappedFile::Open(path));
  return std::string(reinterpret_cast<const char*>(m.data()), m.size());
}

std::string TypeOf(const json& j) {
  if (j.is_object() && j.contains("type") && j["type"].is_string()) {
    return j["type"].get<std::string>();
  }
  return j.is_null() ? "null" : "?";
}

// normalizer: null, NFC, or a Sequence holding exactly one NFC.
Result<bool> ParseNormalizer(const json& n) {
  if (n.is_null()) return false;
  const std::string type = TypeOf(n);
  if (type == "NFC") return true;
  if (type == "Sequence" && n.contains("normalizers") && n["normalizers"].is_array()) {
    const json& list = n["normalizers"];
    if (list.empty()) return false;
    if (list.size() == 1 && TypeOf(list[0]) == "NFC") return true;
  }
  return Status::Error("normalizer '" + type + "' is not supported (only NFC or none)");
}

bool IsQwen2Split(const json& p) {
  if (TypeOf(p) != "Split" || !p.contains("pattern") || !p["pattern"].is_object()) return false;
  const json& pat = p["pattern"];
  if (!pat.contains("Regex") || !pat["Regex"].is_string()) return false;
  if (pat["Regex"].get_ref<const std::string&>() != kQwen2Pattern) return false;
  if (p.value("behavior", std::string()) != "Isolated") return false;
  return !p.value("invert", false);
}

bool IsPlainByteLevel(const json& p) {
  return TypeOf(p) == "ByteLevel" && !p.value("add_prefix_space", false) &&
         !p.value("use_regex", true);
}

// pre_tokenizer: Sequence[Split(Qwen2 regex, Isolated), ByteLevel(no prefix space, no regex)].
Status CheckPreTokenizer(const json& p) {
  if (TypeOf(p) == "Sequence" && p.contains("pretokenizers") && p["pretokenizers"].is_array()) {
    const json& list = p["pretokenizers"];
    if (list.size() == 2 && IsQwen2Split(list[0]) && IsPlainByteLevel(list[1])) return Status::Ok();
  }
  return Status::Error(
      "pre_tokenizer is not the Qwen2 one (Split with the Qwen2 regex, then ByteLevel without "
      "prefix space or regex); other pre-tokenizers are not supported");
}

// "bos_token": "<s>" or {"content": "<s>", ...}.
std::string TokenContent(const json& j) {
  if (j.is_string()) return j.get<std::string>();
  if (j.is_object() && j.contains("content") && j["content"].is_string()) {
    return j["content"].get<std::string>();
  }
  return {};
}

// model: BPE without byte fallback, subword prefix or word suffix.
Status CheckBpeModel(const json& root) {
  if (!root.contains("model") || !root["model"].is_object()) {
    return Status::Error("no \"model\" object");
  }
  const json& model = root["model"];
  if (model.value("type", std::string("BPE")) != "BPE" || !model.contains("vocab")) {
    return Status::Error("model type '" + TypeOf(model) + "' is not supported (only BPE)");
  }
  if (model.value("byte_fallback", false)) {
    return Status::Error("BPE byte_fallback is not supported");
  }
  if (!model.value("continuing_subword_prefix", json()).is_null() &&
      model["continuing_subword_prefix"] != "") {
    return Status::Error("BPE continuing_subword_prefix is not supported");
  }
  if (!model.value("end_of_word_suffix", json()).is_null() && model["end_of_word_suffix"] != "") {
    return Status::Error("BPE end_of_word_suffix is not supported");
  }
  return Status::Ok();
}

// The largest id model.vocab and added_tokens use, after checking every entry.
Result<int64_t> MaxTokenId(const json& vocab, const json& added) {
  int64_t max_id = -1;
  for (auto it = vocab.begin(); it != vocab.end(); ++it) {
    if (!it.value().is_number_integer() || it.value().get<int64_t>() < 0 ||
        it.value().get<int64_t>() > kMaxId) {
      return Status::Error("model.vocab[\"" + it.key() + "\"] is not a valid id");
    }
    max_id = std::max(max_id, it.value().get<int64_t>());
  }
  for (const json& a : added) {
    if (!a.is_object() || !a.contains("id") || !a["id"].is_number_integer() ||
        !a.contains("content") || !a["content"].is_string() || a["id"].get<int64_t>() < 0 ||
        a["id"].get<int64_t>() > kMaxId) {
      return Status::Error("added_tokens: an entry without a valid id and content");
    }
    max_id = std::max(max_id, a["id"].get<int64_t>());
  }
  return max_id;
}

// Vocabulary: "token": id, then the added tokens. Ids may be sparse; gaps become unused rows.
Status ParseVocab(const json& root, tok::VocabSpec* spec) {
  const json& vocab = root["model"]["vocab"];
  if (!vocab.is_object()) return Status::Error("model.vocab is not an object");
  const json empty_array = json::array();
  const json& added = root.contains("added_tokens") && root["added_tokens"].is_array()
                          ? root["added_tokens"]
                          : empty_array;
  BRISK_ASSIGN_OR_RETURN(const int64_t max_id, MaxTokenId(vocab, added));
  const auto n = static_cast<size_t>(max_id + 1);
  spec->tokens.assign(n, std::string_view());
  spec->types.assign(n, TokenType::kUnused);
  for (auto it = vocab.begin(); it != vocab.end(); ++it) {
    const auto id = static_cast<size_t>(it.value().get<int64_t>());
    spec->tokens[id] = it.key();
    spec->types[id] = TokenType::kNormal;
  }
  spec->added_normalized.assign(n, 0);
  for (const json& a : added) {
    const auto id = static_cast<size_t>(a["id"].get<int64_t>());
    spec->tokens[id] = a["content"].get_ref<const std::string&>();
    spec->types[id] = a.value("special", false) ? TokenType::kControl : TokenType::kUserDefined;
    // HF's default for "normalized" is !special.
    spec->added_normalized[id] = a.value("normalized", !a.value("special", false)) ? 1 : 0;
  }
  return Status::Ok();
}

// Merges: "left right" strings or ["left", "right"] pairs.
Status ParseMerges(const json& model, tok::VocabSpec* spec) {
  if (!model.contains("merges")) return Status::Ok();
  const json& merges = model["merges"];
  if (!merges.is_array()) return Status::Error("model.merges is not an array");
  spec->merges.reserve(merges.size());
  for (size_t r = 0; r < merges.size(); ++r) {
    const json& m = merges[r];
    if (m.is_string()) {
      const std::string_view s = m.get_ref<const std::string&>();
      const size_t sp = s.find(' ', 1);
      if (sp == std::string_view::npos) {
        return Status::Error("model.merges[" + std::to_string(r) + "] is not \"left right\"");
      }
      spec->merges.emplace_back(s.substr(0, sp), s.substr(sp + 1));
    } else if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string()) {
      spec->merges.emplace_back(m[0].get_ref<const std::string&>(),
                                m[1].get_ref<const std::string&>());
    } else {
      return Status::Error("model.merges[" + std::to_string(r) + "] is neither \"a b\" nor [a, b]");
    }
  }
  return Status::Ok();
}

// Everything FromSpec needs from tokenizer.json; views point into `root`.
Status ParseSpec(const json& root, tok::VocabSpec* spec) {
  BRISK_RETURN_IF_ERROR(CheckBpeModel(root));
  const json& model = root["model"];
  BRISK_ASSIGN_OR_RETURN(spec->nfc, ParseNormalizer(root.value("normalizer", json())));
  BRISK_RETURN_IF_ERROR(CheckPreTokenizer(root.value("pre_tokenizer", json())));
  spec->ignore_merges = model.value("ignore_merges", false);
  BRISK_RETURN_IF_ERROR(ParseVocab(root, spec));
  return ParseMerges(model, spec);
}

// Special tokens named by tokenizer_config.json (-1: none).
struct ConfigIds {
  int32_t eos = -1;
  int32_t bos = -1;
  int32_t pad = -1;
  std::optional<bool> add_bos;  // unset: keep the vocabulary's default
};

// `eos` starts as `default_eos` and stays so unless the config names an eos_token.
Result<ConfigIds> ParseTokenizerConfig(std::string_view config_text, const Tokenizer& t,
                                       int32_t default_eos) {
  ConfigIds ids;
  ids.eos = default_eos;
  if (config_text.empty()) return ids;
  const json cfg =
      json::parse(config_text.begin(), config_text.end(), nullptr, /*allow_exceptions=*/false);
  if (cfg.is_discarded() || !cfg.is_object()) {
    return Status::Error("tokenizer_config.json is not valid JSON (or not an object)");
  }
  auto id_of = [&](const char* key) -> int32_t {
    if (!cfg.contains(key)) return -1;
    const std::string content = TokenContent(cfg[key]);
    return content.empty() ? -1 : t.TokenToId(content);
  };
  if (cfg.contains("eos_token")) ids.eos = id_of("eos_token");
  ids.bos = id_of("bos_token");
  ids.pad = id_of("pad_token");
  if (cfg.contains("add_bos_token") && cfg["add_bos_token"].is_boolean()) {
    ids.add_bos = cfg["add_bos_token"].get<bool>();
  }
  return ids;
}

}  // namespace

Result<Tokenizer> Tokenizer::FromHfJsonText(std::string_view text, std::string_view config_text,
                                            const std::string& origin) {
  // nlohmann::json throws on type mismatches (e.g. value() of a key holding another type);
  // every such case is malformed input and becomes a Status here.
  try {
    return FromHfJsonTextUnchecked(text, config_text, origin);
  } catch (const nlohmann::json::exception& e) {
    return Status::Error(origin + ": unexpected JSON structure: " + e.what());
  }
}

Result<Tokenizer> Tokenizer::FromHfJsonTextUnchecked(std::string_view text,
                                                     std::string_view config_text,
                                                     const std::string& origin) {
  const json root = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded() || !root.is_object()) {
    return Status::Error(origin + ": not valid JSON (or not an object)");
  }
  tok::VocabSpec spec;
  BRISK_RETURN_IF_ERROR(ParseSpec(root, &spec).WithContext(origin));
  Result<Tokenizer> built = FromSpec(spec);
  if (!built.ok()) return built.status().WithContext(origin);
  Tokenizer t = std::move(built).value();

  // Special ids from tokenizer_config.json; without one, eos is <|endoftext|>.
  Result<ConfigIds> ids = ParseTokenizerConfig(config_text, t, t.TokenToId("<|endoftext|>"));
  if (!ids.ok()) return ids.status().WithContext(origin);
  t.eos_id_ = ids->eos;
  if (!config_text.empty()) {
    t.bos_id_ = ids->bos;
    t.pad_id_ = ids->pad;
  }
  if (ids->add_bos) t.add_bos_ = *ids->add_bos;
  if (t.eos_id_ >= 0 && !t.IsEog(t.eos_id_)) t.eog_ids_.insert(t.eog_ids_.begin(), t.eos_id_);
  return t;
}

Result<Tokenizer> Tokenizer::FromHfJson(const std::string& path) {
  BRISK_ASSIGN_OR_RETURN(const std::string text, ReadFile(path));
  std::string config;
  const std::filesystem::path cfg_path =
      std::filesystem::path(path).parent_path() / "tokenizer_config.json";
  std::error_code ec;
  if (std::filesystem::exists(cfg_path, ec)) {
    BRISK_ASSIGN_OR_RETURN(config, ReadFile(cfg_path.string()));
  }
  return FromHfJsonText(text, config, path);
}

}  // namespace brisk
