// The bodies of the pooling routes (docs/embeddings.md): POST /v1/embeddings (OpenAI's shape) and
// POST /v1/rerank, /rerank (Jina's and Cohere's shape, as vLLM serves it). Parsing only: every
// field is checked here and a bad one is a 400 naming it; tokenising and running are the routes'.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "server/api_error.h"

namespace brisk::server {

// Inputs of one /v1/embeddings request, documents of one rerank request: OpenAI's limit. Each
// is one engine request, so a server whose queue is shorter (--max-waiting) allows fewer.
inline constexpr size_t kMaxPoolingInputs = 2048;

struct PoolingLimits {
  int n_embd = 0;   // dimensions may be 1..n_embd
  int n_vocab = 0;  // token inputs are ids below it
  size_t max_inputs = kMaxPoolingInputs;
  std::string model_id;
};

struct EmbeddingsRequest {
  std::string model;
  // Either texts (input: a string or an array of strings) or token id arrays (input: an array of
  // ids or an array of such arrays); never empty, no element empty.
  std::vector<std::string> texts;
  std::vector<std::vector<int32_t>> token_inputs;
  int dimensions = 0;   // 0: all n_embd
  bool base64 = false;  // encoding_format "base64": little-endian float32 bytes
  size_t size() const { return texts.empty() ? token_inputs.size() : texts.size(); }
};

std::variant<EmbeddingsRequest, ApiError> ParseEmbeddingsRequest(std::string_view body,
                                                                 const PoolingLimits& limits);

struct RerankRequest {
  std::string model;
  std::string query;
  std::vector<std::string> documents;  // strings, or {"text": ...} objects' texts
  std::string instruction;             // "" = the model card's default
  int top_n = 0;                       // results returned; 0 = all
  bool return_documents = false;
};

std::variant<RerankRequest, ApiError> ParseRerankRequest(std::string_view body,
                                                         const PoolingLimits& limits);

}  // namespace brisk::server
