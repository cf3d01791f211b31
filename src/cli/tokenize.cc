// `brisk tokenize -m MODEL [--jsonl] [--decode]`: stdin lines (or JSONL {"text": ...}) to
// {"text", "ids"} JSONL, like llama-tokenize; --decode reads ids ("1 2 3", "1,2,3", "[1,2,3]" or
// {"ids": [...]}, so tokenize's own output pipes straight back) and writes {"ids", "text"}.
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "cli/cli_util.h"
#include "cli/commands.h"
#include "cli/generate.h"
#include "model/default_model.h"

namespace brisk::cli {
namespace {

struct TokenizeOptions {
  std::string model;
  bool jsonl = false;
  bool decode = false;
  bool no_special = false;
};

// What --decode reads, named in every error so a bad line says what would have worked.
constexpr const char* kDecodeFormats =
    "--decode reads token ids as '1 2 3', '1,2,3', '[1,2,3]' or a JSON object with \"ids\" "
    "(the lines brisk tokenize prints)";

// One --decode input line. A line that starts with '{' or '[' is JSON whatever --jsonl says, so
// `brisk tokenize | brisk tokenize --decode` round-trips without flags.
std::vector<int32_t> ParseIdsLine(const std::string& line) {
  const size_t first = line.find_first_not_of(" \t");
  if (first != std::string::npos && (line[first] == '{' || line[first] == '[')) {
    const nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    const nlohmann::json* ids = &j;
    if (j.is_object() && j.contains("ids")) ids = &j["ids"];
    std::vector<int32_t> out;
    bool ok = ids->is_array();
    for (const auto& v : ok ? *ids : nlohmann::json::array()) {
      ok = ok && v.is_number_integer() && v.get<int64_t>() >= 0 && v.get<int64_t>() <= INT32_MAX;
      if (ok) out.push_back(v.get<int32_t>());
    }
    if (!ok) throw std::runtime_error("not a JSON id list: " + std::string(kDecodeFormats));
    return out;
  }
  std::string list = line;
  for (char& c : list)
    if (c == ' ' || c == '\t') c = ',';
  // "1 2  3" and "1, 2" leave empty items: they separate, they are not ids.
  std::string squeezed;
  for (char c : list)
    if (c != ',' || (!squeezed.empty() && squeezed.back() != ',')) squeezed += c;
  while (!squeezed.empty() && squeezed.back() == ',') squeezed.pop_back();
  auto parsed = ParseTokenList(squeezed);
  if (!parsed.ok()) throw std::runtime_error(parsed.message() + ": " + kDecodeFormats);
  return *parsed;
}

std::string TextOfJsonLine(const std::string& line) {
  const nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
  if (!j.is_object() || !j.contains("text") || !j["text"].is_string())
    throw std::runtime_error(
        "--jsonl reads JSON objects with a string \"text\" (without --jsonl, each line is the "
        "text itself)");
  return j["text"].get<std::string>();
}

Result<Tokenizer> LoadTokenizer(const std::string& path) {
  // A GGUF file needs only its tokenizer metadata (vocabulary-only files work too); an HF
  // directory is loaded as a model to find its tokenizer.json.
  if (!std::filesystem::is_directory(path)) return Tokenizer::FromGgufPath(path);
  auto model = Model::Load(path);
  if (!model.ok()) return model.status();
  return TokenizerForModel(**model);
}

int RunTokenize(const TokenizeOptions& o) {
  auto path = ResolveModelPath(o.model);
  if (!path.ok()) return ReportError(path.status());
  Result<Tokenizer> tok = LoadTokenizer(*path);
  if (!tok.ok()) return ReportError(tok.status());
  std::string line;
  int line_no = 0, errors = 0;
  while (std::getline(std::cin, line)) {
    ++line_no;
    nlohmann::ordered_json out;
    try {
      if (o.decode) {
        const std::vector<int32_t> ids = ParseIdsLine(line);
        out["ids"] = ids;
        out["text"] = tok->Decode(ids, !o.no_special);
      } else {
        std::string text = o.jsonl ? TextOfJsonLine(line) : line;
        out["text"] = text;
        out["ids"] = tok->Encode(text, !o.no_special);
      }
      std::printf("%s\n",
                  out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
    } catch (const std::exception& e) {
      std::fprintf(stderr, "brisk: line %d: %s\n", line_no, e.what());
      ++errors;
    }
  }
  return errors ? 1 : 0;
}

}  // namespace

CommandFn AddTokenizeCommand(CLI::App& app) {
  auto o = std::make_shared<TokenizeOptions>();
  CLI::App* sub = app.add_subcommand("tokenize", "Text lines on stdin to token ids (JSONL)");
  sub->add_option("-m,--model", o->model,
                  "GGUF file or HF directory (default: the embedded synthetic Qwen2.5-0.5B)");
  sub->add_flag("--jsonl", o->jsonl, "input lines are JSON objects {\"text\": ...}");
  sub->add_flag("--decode", o->decode,
                "ids to text instead: '1 2 3', '1,2,3', '[1,2,3]' or {\"ids\": [...]} lines "
                "(tokenize's own output)");
  sub->add_flag("--no-special", o->no_special,
                "treat special-token text as plain text (encode) / hide special tokens (decode)");
  return [o] { return RunTokenize(*o); };
}

}  // namespace brisk::cli
