#include "server/openai_request.h"

#include <charconv>
#include <limits>
#include <utility>

#include "engine/request_validation.h"
#include "server/chat_prompt.h"
#include "server/request_fields.h"
#include "server/structured_request.h"

namespace brisk::server {
namespace {

using Json = nlohmann::ordered_json;

// What the presets of DESIGN §6 set; explicit request fields win.
struct Preset {
  const char* name;
  int max_tokens;
  float temperature;
  float top_p;
};
constexpr Preset kPresets[] = {
    {"qa", 512, 0.7f, 0.9f},
    {"code", 1024, 0.2f, 0.95f},
    {"copywriting", 1024, 0.9f, 0.95f},
};

// Fields the engine does not range-check (n, best_of, priority): any value an int holds.
constexpr ParamRange kAnyInt =
    IntRange(std::numeric_limits<int>::min(), std::numeric_limits<int>::max());

std::optional<ApiError> ParseStop(const Fields& f, const RequestLimits& lim,
                                  GenerationRequest* gen) {
  const Json* v = f.Get("stop");
  if (!v) return std::nullopt;
  std::vector<std::string> stops;
  if (v->is_string()) {
    stops.push_back(v->get<std::string>());
  } else if (v->is_array()) {
    if (v->size() > lim.max_stop) {
      return BadRequest("stop may have at most " + std::to_string(lim.max_stop) +
                            " sequences, got " + std::to_string(v->size()),
                        "stop");
    }
    for (size_t i = 0; i < v->size(); ++i) {
      if (!(*v)[i].is_string()) {
        return Fields::TypeError("stop[" + std::to_string(i) + "]", "a string", (*v)[i]);
      }
      stops.push_back((*v)[i].get<std::string>());
    }
  } else {
    return Fields::TypeError("stop", "a string or an array of strings", *v);
  }
  for (const std::string& s : stops) {
    if (s.empty()) return BadRequest("stop sequences must not be empty", "stop");
  }
  gen->stop = std::move(stops);
  return std::nullopt;
}

// Token ids given by the client: integers in [0, n_vocab).
std::optional<ApiError> TokenIds(const Json& arr, const std::string& param, int n_vocab,
                                 std::vector<int32_t>* out) {
  out->clear();
  for (size_t i = 0; i < arr.size(); ++i) {
    int64_t id = 0;
    if (!Fields::AsInt64(arr[i], &id)) {
      return Fields::TypeError(param + "[" + std::to_string(i) + "]", "a token id (integer)",
                               arr[i]);
    }
    const Status st = CheckTokenId(id, n_vocab, param, param + "[" + std::to_string(i) + "]");
    if (!st.ok()) return ToApiError(st);
    out->push_back(static_cast<int32_t>(id));
  }
  return std::nullopt;
}

std::optional<ApiError> ParseLogitBias(const Fields& f, int n_vocab, SamplingParams* sp) {
  const Json* v = f.Get("logit_bias");
  if (!v) return std::nullopt;
  if (!v->is_object()) return Fields::TypeError("logit_bias", "an object", *v);
  for (auto it = v->begin(); it != v->end(); ++it) {
    const std::string& key = it.key();
    int64_t id = -1;
    const auto [end, ec] = std::from_chars(key.data(), key.data() + key.size(), id);
    if (key.empty() || ec != std::errc() || end != key.data() + key.size()) {
      return BadRequest("logit_bias keys must be token ids (decimal integers), got '" + key + "'",
                        "logit_bias");
    }
    if (Status st = CheckTokenId(id, n_vocab, "logit_bias"); !st.ok()) return ToApiError(st);
    const Json& b = it.value();
    if (!b.is_number()) return Fields::TypeError("logit_bias[" + key + "]", "a number", b);
    const double d = b.get<double>();
    const Status st =
        CheckFloat(kOpenAiRanges.logit_bias, "logit_bias", d, "logit_bias[" + key + "]");
    if (!st.ok()) return ToApiError(st);
    sp->logit_bias.emplace_back(static_cast<int32_t>(id), static_cast<float>(d));
  }
  return std::nullopt;
}

// The fields both routes share: model, mode, sampling, lengths, stops, streaming.
std::optional<ApiError> ParseCommon(const Fields& f, const RequestLimits& lim, OpenAiRequest* r) {
  if (auto e = ParseModelField(f, lim.model_id, &r->model)) return e;

  const Preset* preset = nullptr;
  if (auto e = f.String("mode", &r->mode)) return e;
  if (!r->mode.empty()) {
    for (const Preset& p : kPresets) {
      if (r->mode == p.name) preset = &p;
    }
    if (!preset) {
      return BadRequest("mode must be one of qa, code, copywriting; got '" + r->mode + "'", "mode");
    }
  }

  GenerationRequest& gen = r->gen;
  SamplingParams& sp = gen.sampling;
  // Not given: a cap that CheckPromptLength cuts to the room the prompt leaves.
  gen.max_tokens = preset                       ? preset->max_tokens
                   : lim.default_max_tokens > 0 ? lim.default_max_tokens
                                                : kNoMaxTokensCap;
  sp.temperature = preset ? preset->temperature : 1.0f;  // OpenAI's default
  sp.top_p = preset ? preset->top_p : 1.0f;

  // max_completion_tokens is OpenAI's newer name; it wins when both are sent.
  const char* max_key = f.Has("max_completion_tokens") ? "max_completion_tokens" : "max_tokens";
  const SamplingRanges& ranges = kOpenAiRanges;
  if (f.Has(max_key)) r->max_tokens_field = max_key;
  if (auto e = f.Int32(max_key, r->chat ? kChatMaxTokensRange : kMaxTokensRange, &gen.max_tokens))
    return e;
  if (auto e = f.Float("temperature", ranges.temperature, &sp.temperature)) return e;
  if (auto e = f.Float("top_p", ranges.top_p, &sp.top_p)) return e;
  if (auto e = f.Int32("top_k", ranges.top_k, &sp.top_k)) return e;
  if (auto e = f.Float("min_p", ranges.min_p, &sp.min_p)) return e;
  if (auto e = f.Float("presence_penalty", ranges.presence_penalty, &sp.presence_penalty)) {
    return e;
  }
  if (auto e = f.Float("frequency_penalty", ranges.frequency_penalty, &sp.frequency_penalty)) {
    return e;
  }
  const char* rep_key = f.Has("repetition_penalty") ? "repetition_penalty" : "repeat_penalty";
  if (auto e = f.Float(rep_key, ranges.repetition_penalty, &sp.repetition_penalty)) return e;
  if (auto e = f.Seed("seed", &sp.seed)) return e;
  if (auto e = f.Int32("n", IntRange(1, kMaxChoices), &r->n)) return e;
  if (auto e = ParseStop(f, lim, &gen)) return e;
  if (const Json* ids = f.Get("stop_token_ids")) {
    if (!ids->is_array()) return Fields::TypeError("stop_token_ids", "an array", *ids);
    if (auto e = TokenIds(*ids, "stop_token_ids", lim.n_vocab, &gen.stop_token_ids)) return e;
  }
  if (auto e = ParseLogitBias(f, lim.n_vocab, &sp)) return e;
  if (auto e = f.Int32("min_tokens", kMinTokensRange, &gen.min_tokens)) return e;
  if (auto e = f.Bool("ignore_eos", &gen.ignore_eos)) return e;
  if (auto e = f.Int32("priority", kAnyInt, &gen.priority)) return e;
  if (auto e = ParseStructuredOutput(f.object(), &r->structured)) return e;
  if (auto e = f.Bool("stream", &r->stream)) return e;
  if (const Json* so = f.Get("stream_options")) {
    // Usage chunks exist only in streams: OpenAI and vLLM refuse the option elsewhere.
    if (!r->stream)
      return BadRequest("stream_options is only allowed with stream: true", "stream_options");
    if (!so->is_object()) return Fields::TypeError("stream_options", "an object", *so);
    bool include = false;
    if (auto e = Fields(*so).Bool("include_usage", &include)) {
      e->param = "stream_options.include_usage";
      e->message = "stream_options." + e->message;
      return e;
    }
    r->include_usage = include;
  }
  if (auto e = f.String("user", &r->user)) return e;
  return std::nullopt;
}

// The engine's checks of the whole request (request_validation.h) at the OpenAI ranges: what no
// single field shows (min_tokens <= max_tokens), and a net behind the field checks above.
std::optional<ApiError> CheckRequest(const OpenAiRequest& r, int n_vocab) {
  const Status st =
      ValidateGenerationParams(r.gen, {n_vocab, 0, /*has_tokenizer=*/true}, kOpenAiRanges);
  if (st.ok()) return std::nullopt;
  return ToApiError(st);
}

// One prompt of a batch: text (not empty) or token ids.
std::optional<ApiError> ParseOnePrompt(const Json& p, const std::string& param, int n_vocab,
                                       OpenAiRequest::Prompt* out) {
  if (p.is_string()) {
    out->text = p.get<std::string>();
    if (out->text.empty()) return BadRequest(param + " must not be empty", param);
    return std::nullopt;
  }
  if (!p.is_array()) return Fields::TypeError(param, "a string or an array of token ids", p);
  if (p.empty()) return BadRequest(param + " must not be empty", param);
  return TokenIds(p, param, n_vocab, &out->tokens);
}

// prompt: a string, token ids, or a batch (an array of strings or of token-id arrays).
std::optional<ApiError> ParsePrompt(const Fields& f, int n_vocab, OpenAiRequest* r) {
  const Json* p = f.Get("prompt");
  if (!p) return BadRequest("missing required parameter 'prompt'", "prompt");
  const char* shape =
      "prompt must be a string, an array of token ids, or an array of strings or of token-id "
      "arrays";
  r->prompts.clear();
  if (p->is_string() || (p->is_array() && !p->empty() && (*p)[0].is_number())) {
    r->prompts.emplace_back();
    return ParseOnePrompt(*p, "prompt", n_vocab, &r->prompts.back());
  }
  if (!p->is_array()) return BadRequest(std::string(shape) + ", got " + JsonTypeName(*p), "prompt");
  if (p->empty()) return BadRequest("prompt must not be empty", "prompt");
  if (p->size() > size_t(kMaxChoices)) {
    return BadRequest("a batched prompt may have at most " + std::to_string(kMaxChoices) +
                          " prompts, got " + std::to_string(p->size()),
                      "prompt");
  }
  const bool text = (*p)[0].is_string();
  if (!text && !(*p)[0].is_array()) return BadRequest(shape, "prompt");
  for (size_t i = 0; i < p->size(); ++i) {
    const Json& one = (*p)[i];
    const std::string param = "prompt[" + std::to_string(i) + "]";
    if (one.is_string() != text || !(one.is_string() || one.is_array()))
      return BadRequest(std::string(shape) + " (not a mix); " + param + " is " + JsonTypeName(one),
                        param);
    r->prompts.emplace_back();
    if (auto e = ParseOnePrompt(one, param, n_vocab, &r->prompts.back())) return e;
  }
  return std::nullopt;
}

}  // namespace

bool JsonDepthWithin(std::string_view s, int max_depth) {
  int depth = 0;
  bool in_string = false, escaped = false;
  for (const char c : s) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth) return false;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return true;
}

std::string JsonTypeName(const Json& v) {
  switch (v.type()) {
    case Json::value_t::null:
      return "null";
    case Json::value_t::boolean:
      return "boolean";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
      return "integer";
    case Json::value_t::number_float:
      return "number";
    case Json::value_t::string:
      return "string";
    case Json::value_t::array:
      return "array";
    case Json::value_t::object:
      return "object";
    default:
      return "binary";
  }
}

namespace {

// vLLM's add_generation_prompt and continue_final_message (after messages): whether the prompt
// opens a new assistant turn, or leaves the final assistant message open for the model to go on
// with (prefill). continue_final_message alone turns the generation prompt off (vLLM wants that
// spelled out); both true is a contradiction, refused as vLLM does.
std::optional<ApiError> ParseGenerationPrompt(const Fields& f, OpenAiRequest* r) {
  if (auto e = f.Bool("continue_final_message", &r->continue_final_message)) return e;
  r->add_generation_prompt = !r->continue_final_message;
  if (auto e = f.Bool("add_generation_prompt", &r->add_generation_prompt)) return e;
  if (!r->continue_final_message) return std::nullopt;
  if (r->add_generation_prompt) {
    return BadRequest("continue_final_message and add_generation_prompt cannot both be true",
                      "continue_final_message");
  }
  const Json& last = r->messages.back();
  if (last.value("role", "") != "assistant" || last.value("content", "").empty()) {
    return BadRequest(
        "continue_final_message needs the last message to be an assistant message with text to "
        "continue",
        "continue_final_message");
  }
  return std::nullopt;
}

// The fields only chat requests have.
std::optional<ApiError> ParseChatFields(const Fields& f, const RequestLimits& limits,
                                        OpenAiRequest* out) {
  OpenAiRequest& r = *out;
  const Json* messages = f.Get("messages");
  if (!messages) return BadRequest("missing required parameter 'messages'", "messages");
  if (auto e = ParseMessages(*messages, limits.max_messages, &r.messages)) return *e;
  if (auto e = ParseTools(f.Get("tools"), f.Get("tool_choice"), &r.tools, &r.tool_choice)) {
    return *e;
  }
  if (auto e = f.Bool("parallel_tool_calls", &r.parallel_tool_calls)) return *e;
  if (const Json* kw = f.Get("chat_template_kwargs")) {
    if (!kw->is_object()) return Fields::TypeError("chat_template_kwargs", "an object", *kw);
    r.chat_template_kwargs = *kw;
  }
  if (auto e = ParseGenerationPrompt(f, &r)) return *e;

  SamplingParams& sp = r.gen.sampling;
  if (auto e = f.Bool("logprobs", &sp.logprobs)) return *e;
  if (auto e = f.Int32("top_logprobs", kOpenAiRanges.top_logprobs, &sp.top_logprobs)) return *e;
  if (sp.top_logprobs > 0 && !sp.logprobs) {
    return BadRequest("top_logprobs requires logprobs to be true", "top_logprobs");
  }
  return std::nullopt;
}

// The fields only legacy completion requests have.
std::optional<ApiError> ParseCompletionFields(const Fields& f, const RequestLimits& limits,
                                              OpenAiRequest* out) {
  OpenAiRequest& r = *out;
  if (auto e = ParsePrompt(f, limits.n_vocab, &r)) return *e;
  if (auto e = f.Bool("echo", &r.echo)) return *e;

  std::string suffix;
  if (auto e = f.String("suffix", &suffix)) return *e;
  if (!suffix.empty())
    return ToApiError(Status::Unimplemented("suffix is not supported", "suffix"));
  // best_of > n would rank extra samples server-side: not done, so only best_of == n is taken.
  int best_of = r.n;
  if (auto e = f.Int32("best_of", kAnyInt, &best_of)) return *e;
  if (best_of != r.n) {
    return BadRequest(
        "best_of must equal n (" + std::to_string(r.n) + "), got " + std::to_string(best_of),
        "best_of");
  }
  if (r.n * int(r.prompts.size()) > kMaxChoices) {
    return BadRequest("n x prompts may be at most " + std::to_string(kMaxChoices) + ", got " +
                          std::to_string(r.n) + " x " + std::to_string(r.prompts.size()),
                      "n");
  }

  // Legacy completions: logprobs is the number of alternatives per token (0 = the chosen token's
  // log-prob only); true/false are accepted as 0/none.
  SamplingParams& sp = r.gen.sampling;
  if (const Json* lp = f.Get("logprobs")) {
    if (lp->is_boolean()) {
      sp.logprobs = lp->get<bool>();
    } else {
      if (auto e = f.Int32("logprobs", kOpenAiRanges.top_logprobs, &sp.top_logprobs)) return *e;
      sp.logprobs = true;
    }
  }
  return std::nullopt;
}

using EndpointFieldParser = std::optional<ApiError> (*)(const Fields&, const RequestLimits&,
                                                        OpenAiRequest*);

// Both endpoints: the JSON body, the fields they share, the endpoint's own fields, then the
// checks that span several fields.
std::variant<OpenAiRequest, ApiError> ParseRequest(std::string_view body,
                                                   const RequestLimits& limits, bool chat,
                                                   EndpointFieldParser parse_endpoint_fields) {
  auto parsed = ParseJsonBody(body);
  if (auto* e = std::get_if<ApiError>(&parsed)) return *e;
  const Fields f(std::get<Json>(parsed));
  OpenAiRequest r;
  r.chat = chat;
  if (auto e = ParseCommon(f, limits, &r)) return *e;
  if (auto e = parse_endpoint_fields(f, limits, &r)) return *e;
  if (auto e = CheckRequest(r, limits.n_vocab)) return *e;
  return r;
}

}  // namespace

std::variant<OpenAiRequest, ApiError> ParseChatRequest(std::string_view body,
                                                       const RequestLimits& limits) {
  return ParseRequest(body, limits, /*chat=*/true, ParseChatFields);
}

std::variant<OpenAiRequest, ApiError> ParseCompletionRequest(std::string_view body,
                                                             const RequestLimits& limits) {
  return ParseRequest(body, limits, /*chat=*/false, ParseCompletionFields);
}

std::optional<ApiError> CheckPromptLength(int prompt_tokens, const OpenAiRequest& request,
                                          int max_model_len, int* max_tokens) {
  const int wanted = request.gen.max_tokens;
  *max_tokens = wanted;
  // Without a cap the request asked for no particular length: the message counts the prompt only.
  const bool uncapped = request.max_tokens_field.empty() && wanted == kNoMaxTokensCap;
  // A generation needs room for one token at least (0 is for prefill-only requests).
  Status st = CheckPromptFits(prompt_tokens, uncapped ? 1 : wanted, max_model_len);
  if (st.ok() && !request.max_tokens_field.empty())
    st = CheckMaxTokensFit(prompt_tokens, wanted, max_model_len, request.max_tokens_field);
  if (!st.ok()) return ToApiError(st);
  *max_tokens = FitMaxTokens(prompt_tokens, wanted, max_model_len);
  return std::nullopt;
}

}  // namespace brisk::server
