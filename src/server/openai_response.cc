#include "server/openai_response.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "tokenizer/tokenizer.h"
#include "tokenizer/unicode.h"

namespace brisk::server {
namespace {

using Json = nlohmann::ordered_json;

// JSON has no infinity or NaN; OpenAI and vLLM report impossible tokens as -9999.0.
double Logprob(float lp) {
  if (std::isnan(lp) || lp < -9999.0f) return -9999.0;
  return lp;
}

Json BytesArray(std::string_view raw) {
  Json a = Json::array();
  for (const char c : raw) a.push_back(static_cast<unsigned char>(c));
  return a;
}

size_t CodePoints(std::string_view valid_utf8) {
  size_t n = 0;
  for (const char c : valid_utf8) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

Json Envelope(const ResponseMeta& m, const char* object) {
  return Json{{"id", m.id}, {"object", object}, {"created", m.created}, {"model", m.model}};
}

Json Reason(const char* finish_reason) {
  return finish_reason ? Json(finish_reason) : Json(nullptr);
}

Json ToolCallJson(const ToolCall& c) {
  return Json{{"id", c.id},
              {"type", "function"},
              {"function", {{"name", c.name}, {"arguments", c.arguments}}}};
}

Json ChatChunk(const ResponseMeta& m, Json delta, const Json& logprobs, const char* reason) {
  Json j = Envelope(m, "chat.completion.chunk");
  j["choices"] = Json::array({Json{{"index", m.index},
                                   {"delta", std::move(delta)},
                                   {"logprobs", logprobs},
                                   {"finish_reason", Reason(reason)}}});
  return j;
}

std::vector<Json> StreamEnd(Json finish_chunk, const ResponseMeta& m, bool chat,
                            const FinishInfo& f, bool include_usage) {
  std::vector<Json> out;
  out.push_back(std::move(finish_chunk));
  if (include_usage) out.push_back(UsageChunk(m, chat, f));
  out.back()["timings"] = TimingsJson(f);
  return out;
}

}  // namespace

TokenBytesFn TokenizerPieces(const Tokenizer* tokenizer) {
  return [tokenizer](int32_t id) {
    return tokenizer ? std::string(tokenizer->PieceBytes(id, /*show_special=*/true))
                     : std::string();
  };
}

std::string NewResponseId(std::string_view prefix, std::mt19937_64& rng) {
  return std::string(prefix) + RandomAlnum(24, rng);
}

const char* OpenAiFinishReason(const FinishInfo& f, bool tool_calls_emitted) {
  switch (f.reason) {
    case FinishReason::kStop:
      return tool_calls_emitted ? "tool_calls" : "stop";
    case FinishReason::kLength:
      return "length";
    default:
      return nullptr;
  }
}

Json UsageJson(const Usage& u) {
  return Json{{"prompt_tokens", u.prompt_tokens},
              {"completion_tokens", u.completion_tokens},
              {"total_tokens", u.prompt_tokens + u.completion_tokens},
              {"prompt_tokens_details", {{"cached_tokens", u.cached_tokens}}}};
}

Json TimingsJson(const FinishInfo& f) {
  const Usage& u = f.usage;
  const RequestTimings& t = f.timings;
  // The prefill computed only the tokens the prefix cache did not hold.
  const int prompt_n = std::max(0, u.prompt_tokens - u.cached_tokens);
  // decode_s runs from the first token to the last: n - 1 intervals for n tokens.
  const int decode_intervals = std::max(0, u.completion_tokens - 1);
  return Json{
      {"prompt_n", prompt_n},
      {"prompt_ms", t.prefill_s * 1e3},
      {"prompt_per_second", t.prefill_s > 0 ? prompt_n / t.prefill_s : 0.0},
      {"predicted_n", u.completion_tokens},
      {"predicted_ms", t.decode_s * 1e3},
      {"predicted_per_second", t.decode_s > 0 ? decode_intervals / t.decode_s : 0.0},
      {"cache_n", u.cached_tokens},
      {"ttft_ms", t.ttft_s * 1e3},
  };
}

Json ChatLogprobs(std::span<const TokenEvent> events, const TokenBytesFn& bytes) {
  Json content = Json::array();
  for (const TokenEvent& e : events) {
    const std::string raw = bytes(e.token);
    Json top = Json::array();
    for (const TokenLogprob& t : e.top) {
      const std::string traw = bytes(t.token);
      top.push_back(Json{{"token", tok::ToValidUtf8(traw)},
                         {"logprob", Logprob(t.logprob)},
                         {"bytes", BytesArray(traw)}});
    }
    content.push_back(Json{{"token", tok::ToValidUtf8(raw)},
                           {"logprob", Logprob(e.logprob)},
                           {"bytes", BytesArray(raw)},
                           {"top_logprobs", std::move(top)}});
  }
  return Json{{"content", std::move(content)}};
}

Json CompletionLogprobs(std::span<const TokenEvent> events, const TokenBytesFn& bytes,
                        size_t* text_offset) {
  Json tokens = Json::array(), token_logprobs = Json::array(), top = Json::array(),
       offsets = Json::array();
  for (const TokenEvent& e : events) {
    const std::string text = tok::ToValidUtf8(bytes(e.token));
    tokens.push_back(text);
    token_logprobs.push_back(Logprob(e.logprob));
    Json alts = Json::object();
    // Two ids can share a display string (partial characters): the likelier one is kept.
    for (const TokenLogprob& t : e.top)
      alts.emplace(tok::ToValidUtf8(bytes(t.token)), Logprob(t.logprob));
    top.push_back(std::move(alts));
    offsets.push_back(*text_offset);
    *text_offset += CodePoints(text);
  }
  return Json{{"tokens", std::move(tokens)},
              {"token_logprobs", std::move(token_logprobs)},
              {"top_logprobs", std::move(top)},
              {"text_offset", std::move(offsets)}};
}

Json CompletionPromptLogprobs(int32_t first_token, std::span<const TokenEvent> rest,
                              const TokenBytesFn& bytes, size_t* text_offset) {
  const std::string text = tok::ToValidUtf8(bytes(first_token));
  Json first = {{"tokens", Json::array({text})},
                {"token_logprobs", Json::array({nullptr})},
                {"top_logprobs", Json::array({nullptr})},
                {"text_offset", Json::array({*text_offset})}};
  *text_offset += CodePoints(text);
  AppendCompletionLogprobs(first, CompletionLogprobs(rest, bytes, text_offset));
  return first;
}

void AppendCompletionLogprobs(Json& into, const Json& more) {
  if (into.is_null()) {
    into = more;
    return;
  }
  for (const char* key : {"tokens", "token_logprobs", "top_logprobs", "text_offset"})
    for (const Json& v : more[key]) into[key].push_back(v);
}

Json ChatCompletion(const ResponseMeta& m, std::string_view content,
                    const std::vector<ToolCall>& calls, const Json& logprobs,
                    const char* finish_reason, const FinishInfo& f) {
  Json message = {{"role", "assistant"}};
  message["content"] = content.empty() && !calls.empty() ? Json(nullptr) : Json(content);
  if (!calls.empty()) {
    Json tc = Json::array();
    for (const ToolCall& c : calls) tc.push_back(ToolCallJson(c));
    message["tool_calls"] = std::move(tc);
  }
  Json j = Envelope(m, "chat.completion");
  j["choices"] = Json::array({Json{{"index", m.index},
                                   {"message", std::move(message)},
                                   {"logprobs", logprobs},
                                   {"finish_reason", Reason(finish_reason)}}});
  j["usage"] = UsageJson(f.usage);
  j["timings"] = TimingsJson(f);
  return j;
}

Json TextCompletion(const ResponseMeta& m, std::string_view text, const Json& logprobs,
                    const char* finish_reason, const FinishInfo& f) {
  Json j = Envelope(m, "text_completion");
  j["choices"] = Json::array({Json{{"text", text},
                                   {"index", m.index},
                                   {"logprobs", logprobs},
                                   {"finish_reason", Reason(finish_reason)}}});
  j["usage"] = UsageJson(f.usage);
  j["timings"] = TimingsJson(f);
  return j;
}

Json ChatRoleChunk(const ResponseMeta& m) {
  return ChatChunk(m, Json{{"role", "assistant"}, {"content", ""}}, nullptr, nullptr);
}

Json ChatContentChunk(const ResponseMeta& m, std::string_view text, const Json& logprobs) {
  return ChatChunk(m, Json{{"content", text}}, logprobs, nullptr);
}

Json ChatToolCallChunk(const ResponseMeta& m, int index, const ToolCall& call) {
  Json c = ToolCallJson(call);
  Json delta_call = {{"index", index}};
  for (auto it = c.begin(); it != c.end(); ++it) delta_call[it.key()] = std::move(it.value());
  return ChatChunk(m, Json{{"tool_calls", Json::array({std::move(delta_call)})}}, nullptr, nullptr);
}

Json ChatFinishChunk(const ResponseMeta& m, const char* finish_reason, const FinishInfo* timings) {
  Json j = ChatChunk(m, Json::object(), nullptr, finish_reason);
  if (timings) j["timings"] = TimingsJson(*timings);
  return j;
}

Json CompletionChunk(const ResponseMeta& m, std::string_view text, const Json& logprobs,
                     const char* finish_reason) {
  Json j = Envelope(m, "text_completion");
  j["choices"] = Json::array({Json{{"text", text},
                                   {"index", m.index},
                                   {"logprobs", logprobs},
                                   {"finish_reason", Reason(finish_reason)}}});
  return j;
}

Json UsageChunk(const ResponseMeta& m, bool chat, const FinishInfo& f) {
  Json j = Envelope(m, chat ? "chat.completion.chunk" : "text_completion");
  j["choices"] = Json::array();
  j["usage"] = UsageJson(f.usage);
  return j;
}

std::vector<Json> ChatStreamEnd(const ResponseMeta& m, const char* finish_reason,
                                const FinishInfo& f, bool include_usage) {
  return StreamEnd(ChatFinishChunk(m, finish_reason, nullptr), m, true, f, include_usage);
}

std::vector<Json> CompletionStreamEnd(const ResponseMeta& m, const char* finish_reason,
                                      const FinishInfo& f, bool include_usage) {
  return StreamEnd(CompletionChunk(m, "", nullptr, finish_reason), m, false, f, include_usage);
}

std::string SseData(const Json& j) {
  std::string s = "data: ";
  s += j.dump(-1, ' ', /*ensure_ascii=*/false, Json::error_handler_t::replace);
  s += "\n\n";
  return s;
}

Json ModelObject(const std::string& model_id, int64_t created, const std::string& owned_by,
                 int max_model_len) {
  return Json{{"id", model_id},
              {"object", "model"},
              {"created", created},
              {"owned_by", owned_by},
              {"max_model_len", max_model_len}};
}

Json ModelsList(const std::string& model_id, int64_t created, const std::string& owned_by,
                int max_model_len) {
  Json model = ModelObject(model_id, created, owned_by, max_model_len);
  return Json{{"object", "list"}, {"data", Json::array({std::move(model)})}};
}

}  // namespace brisk::server
