// The response side of the OpenAI protocol (DESIGN §6 "Streaming"): the JSON objects of
// chat.completion, chat.completion.chunk, text_completion (and its chunks), usage, logprobs,
// llama-server's `timings` and the models list, shaped as the official SDKs and llama-server /
// vLLM users expect. Pure builders: the caller collects token events and text, and dumps the
// results (SseData for streams).
//
// A chat stream is: ChatRoleChunk, then ChatContentChunk / ChatToolCallChunk as output arrives,
// then ChatStreamEnd (the finish_reason chunk, and a usage-only chunk with `choices: []` when
// stream_options.include_usage; the last one carries `timings`), then kSseDone.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/request.h"
#include "server/tool_calls.h"

namespace brisk {
class Tokenizer;
}

namespace brisk::server {

// The raw bytes one token id stands for (Tokenizer::PieceBytes, or a fake in tests).
using TokenBytesFn = std::function<std::string(int32_t token)>;
// PieceBytes of `tokenizer` (special tokens as their text); a null tokenizer gives "".
TokenBytesFn TokenizerPieces(const Tokenizer* tokenizer);

struct ResponseMeta {
  std::string id;       // "chatcmpl-..." / "cmpl-...", the same for every chunk of a stream
  int64_t created = 0;  // unix seconds
  std::string model;
  int index = 0;  // the choice: n > 1 and batched prompts give each its own index
};

// prefix ("chatcmpl-", "cmpl-") + 24 random alphanumerics.
std::string NewResponseId(std::string_view prefix, std::mt19937_64& rng);

// "stop" ("tool_calls" when calls were emitted) or "length"; nullptr when the request did not end
// normally (kCancelled, kDeadline, kError): the server reports those as errors itself.
const char* OpenAiFinishReason(const FinishInfo& f, bool tool_calls_emitted);

// {prompt_tokens, completion_tokens, total_tokens, prompt_tokens_details: {cached_tokens}}.
nlohmann::ordered_json UsageJson(const Usage& u);
// llama-server's {prompt_n (computed, cache hits excluded), prompt_ms, prompt_per_second,
// predicted_n, predicted_ms, predicted_per_second, cache_n, ttft_ms}.
nlohmann::ordered_json TimingsJson(const FinishInfo& f);

// Chat logprobs of these tokens: {"content": [{token, logprob, bytes, top_logprobs: [{token,
// logprob, bytes}]}]}. `token` is the token's bytes made valid UTF-8 (a partial character becomes
// U+FFFD); `bytes` the raw bytes. -inf becomes -9999.0 (JSON has no infinity; OpenAI's value).
nlohmann::ordered_json ChatLogprobs(std::span<const TokenEvent> events, const TokenBytesFn& bytes);
// Completions logprobs: {tokens, token_logprobs, top_logprobs: [{token: logprob}], text_offset}.
// *text_offset is the offset of the first token (code points of the text before it, as vLLM
// counts) and is advanced past these tokens, so a stream can carry it from chunk to chunk.
nlohmann::ordered_json CompletionLogprobs(std::span<const TokenEvent> events,
                                          const TokenBytesFn& bytes, size_t* text_offset);
// The same for an echoed prompt: its first token (which nothing precedes, so its logprob and
// top_logprobs are null, as OpenAI reports them), then the scored rest.
nlohmann::ordered_json CompletionPromptLogprobs(int32_t first_token,
                                                std::span<const TokenEvent> rest,
                                                const TokenBytesFn& bytes, size_t* text_offset);
// `more`'s entries appended to `into`'s (two CompletionLogprobs objects; `into` may be null).
void AppendCompletionLogprobs(nlohmann::ordered_json& into, const nlohmann::ordered_json& more);

// Whole responses. `finish_reason` from OpenAiFinishReason (nullptr -> null); `logprobs` null or
// from the builders above. Content is null when empty and tool calls are present (as OpenAI).
nlohmann::ordered_json ChatCompletion(const ResponseMeta& m, std::string_view content,
                                      const std::vector<ToolCall>& calls,
                                      const nlohmann::ordered_json& logprobs,
                                      const char* finish_reason, const FinishInfo& f);
nlohmann::ordered_json TextCompletion(const ResponseMeta& m, std::string_view text,
                                      const nlohmann::ordered_json& logprobs,
                                      const char* finish_reason, const FinishInfo& f);

// Chat stream chunks.
nlohmann::ordered_json ChatRoleChunk(const ResponseMeta& m);  // delta {role, content: ""}
nlohmann::ordered_json ChatContentChunk(const ResponseMeta& m, std::string_view text,
                                        const nlohmann::ordered_json& logprobs = nullptr);
// delta {tool_calls: [{index, id, type: "function", function: {name, arguments}}]}: a whole call
// in one delta (the SDKs accumulate by index either way).
nlohmann::ordered_json ChatToolCallChunk(const ResponseMeta& m, int index, const ToolCall& call);
// Empty delta with the finish_reason; with timings when `timings` is given.
nlohmann::ordered_json ChatFinishChunk(const ResponseMeta& m, const char* finish_reason,
                                       const FinishInfo* timings);

// Completions stream chunk: choices[0] {text, index, logprobs, finish_reason}.
nlohmann::ordered_json CompletionChunk(const ResponseMeta& m, std::string_view text,
                                       const nlohmann::ordered_json& logprobs,
                                       const char* finish_reason);

// The usage-only chunk (choices: [], usage, timings).
nlohmann::ordered_json UsageChunk(const ResponseMeta& m, bool chat, const FinishInfo& f);

// The chunks that end a stream: the finish_reason chunk, then the usage chunk when
// include_usage; the last of them carries `timings`.
std::vector<nlohmann::ordered_json> ChatStreamEnd(const ResponseMeta& m, const char* finish_reason,
                                                  const FinishInfo& f, bool include_usage);
std::vector<nlohmann::ordered_json> CompletionStreamEnd(const ResponseMeta& m,
                                                        const char* finish_reason,
                                                        const FinishInfo& f, bool include_usage);

// One Server-Sent Event: "data: <compact JSON>\n\n" (invalid UTF-8 replaced, never throws).
std::string SseData(const nlohmann::ordered_json& j);
inline constexpr std::string_view kSseDone = "data: [DONE]\n\n";

// GET /v1/models/{id}: {id, object: "model", created, owned_by, max_model_len}; owned_by is
// "brisk" for brisk's own models. GET /v1/models: {object: "list", data: [that object]}.
nlohmann::ordered_json ModelObject(const std::string& model_id, int64_t created,
                                   const std::string& owned_by, int max_model_len);
nlohmann::ordered_json ModelsList(const std::string& model_id, int64_t created,
                                  const std::string& owned_by, int max_model_len);

}  // namespace brisk::server
