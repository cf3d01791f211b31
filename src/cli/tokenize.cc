// `brisk tokenize -m MODEL [--jsonl] [--decode]`: stdin lines (or JSONL {"text": ...}) to
// {"text", "ids"} JSONL, like llama-tokenize; --decode reads ids ("1 2 3", "1,2,3" or
// {"ids": [...]}) and writes {"ids", "text"}.
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

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

int RunTokenize(const TokenizeOptions& o) {
  auto path = ResolveModelPath(o.model);
  if (!path.ok()) return ReportError(path.status());
  // A GGUF file needs only its tokenizer metadata (vocabulary-only files work too); an HF
  // directory is loaded as a model to find its tokenizer.json.
  Result<Tokenizer> tok = Status::Error("unreachable");
  if (std::filesystem::is_directory(*path)) {
    auto model = Model::Load(*path);
    if (!model.ok()) return ReportError(model.status());
    tok = TokenizerForModel(**model);
  } else {
    tok = Tokenizer::FromGgufPath(*path);
  }
  if (!tok.ok()) return ReportError(tok.status());
  std::string line;
  int line_no = 0, errors = 0;
  while (std::getline(std::cin, line)) {
    ++line_no;
    nlohmann::ordered_json out;
    try {
      if (o.decode) {
        std::vector<int32_t> ids;
        if (o.jsonl) {
          const nlohmann::json j = nlohmann::json::parse(line);
          for (const auto& v : j.at("ids")) ids.push_back(v.get<int32_t>());
        } else {
          for (char& c : line)
            if (c == ' ') c = ',';
          auto parsed = ParseTokenList(line);
          if (!parsed.ok()) throw std::runtime_error(parsed.message());
          ids = *parsed;
        }
        out["ids"] = ids;
        out["text"] = tok->Decode(ids, !o.no_special);
      } else {
        std::string text =
            o.jsonl ? nlohmann::json::parse(line).at("text").get<std::string>() : line;
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
  sub->add_flag("--jsonl", o->jsonl,
                "input lines are JSON objects {\"text\": ...} / {\"ids\": ...}");
  sub->add_flag("--decode", o->decode, "ids to text instead");
  sub->add_flag("--no-special", o->no_special,
                "treat special-token text as plain text (encode) / hide special tokens (decode)");
  return [o] { return RunTokenize(*o); };
}

}  // namespace brisk::cli
