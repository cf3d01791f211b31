#include "server/pooling_prompts.h"

#include <string>

namespace brisk::server {
namespace {

constexpr std::string_view kRerankPrefix =
    "<|im_start|>system\nJudge whether the Document meets the requirements based on the Query "
    "and the Instruct provided. Note that the answer can only be \"yes\" or \"no\".<|im_end|>\n"
    "<|im_start|>user\n";
constexpr std::string_view kRerankSuffix =
    "<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n";

}  // namespace

int32_t EmbeddingEndToken(const Tokenizer& tokenizer) {
  const int32_t id = tokenizer.TokenToId("<|endoftext|>");
  return id >= 0 ? id : tokenizer.eos_id();
}

std::vector<int32_t> EmbeddingPrompt(const Tokenizer& tokenizer, std::string_view text) {
  std::vector<int32_t> ids = tokenizer.Encode(text);
  const int32_t end = EmbeddingEndToken(tokenizer);
  if (end >= 0 && (ids.empty() || ids.back() != end)) ids.push_back(end);
  return ids;
}

std::vector<int32_t> RerankPrompt(const Tokenizer& tokenizer, std::string_view instruction,
                                  std::string_view query, std::string_view document) {
  if (instruction.empty()) instruction = kDefaultRerankInstruction;
  std::string user = "<Instruct>: ";
  user.append(instruction).append("\n<Query>: ").append(query);
  user.append("\n<Document>: ").append(document);
  std::vector<int32_t> ids = tokenizer.Encode(kRerankPrefix);
  tokenizer.Encode(user, /*parse_special=*/true, &ids);
  tokenizer.Encode(kRerankSuffix, /*parse_special=*/true, &ids);
  return ids;
}

}  // namespace brisk::server
