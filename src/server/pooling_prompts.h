// The token sequences the pooling routes run (docs/embeddings.md). Embeddings: the text's tokens
// and then <|endoftext|>, which Qwen3-Embedding's tokenizer appends to every input (the model
// card: "an EOS token is automatically added"; its last-token pooling reads that token). Rerank:
// Qwen3-Reranker's model-card prompt, tokenised in the card's three pieces.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "tokenizer/tokenizer.h"

namespace brisk::server {

// The model card's default instruction (also llama.cpp's rerank template).
inline constexpr std::string_view kDefaultRerankInstruction =
    "Given a web search query, retrieve relevant passages that answer the query";

// The token appended to embedding inputs: <|endoftext|>, else the tokenizer's EOS, else -1.
int32_t EmbeddingEndToken(const Tokenizer& tokenizer);

// `text` tokenised (special tokens parsed, as the HF tokenizer does), then the end token unless
// the text already ends with it.
std::vector<int32_t> EmbeddingPrompt(const Tokenizer& tokenizer, std::string_view text);

// system: Judge whether the Document meets the requirements ... "yes" or "no".
// user: "<Instruct>: {instruction}\n<Query>: {query}\n<Document>: {document}"
// assistant (open): "<think>\n\n</think>\n\n"
// An empty instruction is the default one.
std::vector<int32_t> RerankPrompt(const Tokenizer& tokenizer, std::string_view instruction,
                                  std::string_view query, std::string_view document);

}  // namespace brisk::server
