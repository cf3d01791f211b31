#include "server/responses_request.h"

#include <set>
#include <utility>

#include "engine/request_validation.h"
#include "server/chat_prompt.h"
#include "server/request_fields.h"
#include "server/structured_request.h"

namespace brisk::server {
namespace {

using Json = nlohmann::ordered_json;

// OpenAI's bounds on `metadata`.
constexpr size_t kMaxMetadataKeys = 16, kMaxMetadataKeyBytes = 64, kMaxMetadataValueBytes = 512;

std::string At(const std::string& array, size_t i) { return array + "[" + std::to_string(i) + "]"; }

// A known Responses feature brisk does not serve: 400 unsupported_value naming the field.
ApiError Unsupported(const std::string& field, const std::string& what) {
  return ToApiError(Status::Unimplemented(field + ": " + what, field));
}

// A required, non-empty string field.
std::optional<ApiError> NonEmpty(const Fields& f, const char* key, std::string* out) {
  if (auto e = f.String(key, out, /*required=*/true)) return e;
  if (out->empty()) return BadRequest(f.Name(key) + " must not be empty", f.Name(key));
  return std::nullopt;
}

bool IsMediaPart(const std::string& type) {
  return type == "input_image" || type == "input_file" || type == "input_audio";
}

// A message's `content` (or a function_call_output's `output`): a string, or text parts
// (input_text, output_text, refusal) joined with "\n", as the chat route joins its text parts.
std::optional<ApiError> ContentText(const Json& c, const std::string& at, std::string* out) {
  if (c.is_string()) {
    *out = c.get<std::string>();
    return std::nullopt;
  }
  if (!c.is_array()) return Fields::TypeError(at, "a string or an array of content parts", c);
  out->clear();
  for (size_t i = 0; i < c.size(); ++i) {
    const std::string p_at = At(at, i);
    if (!c[i].is_object()) return Fields::TypeError(p_at, "an object (a content part)", c[i]);
    const Fields p(c[i], p_at);
    std::string type, text;
    if (auto e = p.String("type", &type, true)) return e;
    if (IsMediaPart(type))
      return Unsupported(p.Name("type"),
                         type + " parts are not supported (the model reads text only)");
    const char* key = type == "refusal" ? "refusal" : "text";
    if (type != "input_text" && type != "output_text" && type != "refusal") {
      return BadRequest(
          p.Name("type") + " must be one of input_text, output_text, refusal; got '" + type + "'",
          p.Name("type"));
    }
    if (auto e = p.String(key, &text, true)) return e;
    if (i > 0) *out += '\n';
    *out += text;
  }
  return std::nullopt;
}

// A message item {role, content} (type "message" or none).
std::optional<ApiError> MessageItem(const Fields& f, Json* out) {
  std::string role, content;
  if (auto e = f.String("role", &role, true)) return e;
  if (role == "developer") role = "system";  // OpenAI's newer name for the system role
  if (role != "user" && role != "assistant" && role != "system") {
    return BadRequest(
        f.Name("role") + " must be one of user, assistant, system, developer; got '" + role + "'",
        f.Name("role"));
  }
  const Json* c = f.Get("content");
  if (!c) return BadRequest(f.Name("content") + " is required", f.Name("content"));
  if (auto e = ContentText(*c, f.Name("content"), &content)) return e;
  out->push_back(Json{{"role", role}, {"content", content}});
  return std::nullopt;
}

// {type: function_call, call_id, name, arguments} -> a tool call of the assistant message at
// *assistant (a new one when there is none right before it).
std::optional<ApiError> FunctionCallItem(const Fields& f, Json* out, int* assistant) {
  std::string call_id, name, arguments;
  if (auto e = NonEmpty(f, "call_id", &call_id)) return e;
  if (auto e = NonEmpty(f, "name", &name)) return e;
  if (auto e = f.String("arguments", &arguments, true)) return e;
  if (*assistant < 0) {
    out->push_back(Json{{"role", "assistant"}, {"content", ""}});
    *assistant = int(out->size()) - 1;
  }
  Json& msg = (*out)[size_t(*assistant)];
  if (!msg.contains("tool_calls")) msg["tool_calls"] = Json::array();
  msg["tool_calls"].push_back(Json{{"id", call_id},
                                   {"type", "function"},
                                   {"function", {{"name", name}, {"arguments", arguments}}}});
  return std::nullopt;
}

// {type: function_call_output, call_id, output} -> a tool message.
std::optional<ApiError> FunctionCallOutputItem(const Fields& f, Json* out) {
  std::string call_id, output;
  if (auto e = NonEmpty(f, "call_id", &call_id)) return e;
  const Json* o = f.Get("output");
  if (!o) return BadRequest(f.Name("output") + " is required", f.Name("output"));
  if (auto e = ContentText(*o, f.Name("output"), &output)) return e;
  out->push_back(Json{{"role", "tool"}, {"content", output}, {"tool_call_id", call_id}});
  return std::nullopt;
}

std::optional<ApiError> ConvertItem(const Json& item, const std::string& at, Json* out,
                                    int* assistant) {
  if (!item.is_object()) return Fields::TypeError(at, "an object (an input item)", item);
  const Fields f(item, at);
  std::string type = "message";
  if (auto e = f.String("type", &type)) return e;
  if (type == "message") {
    if (auto e = MessageItem(f, out)) return e;
    const bool is_assistant = out->back()["role"] == "assistant";
    *assistant = is_assistant ? int(out->size()) - 1 : -1;
    return std::nullopt;
  }
  if (type == "function_call") return FunctionCallItem(f, out, assistant);
  *assistant = -1;
  if (type == "function_call_output") return FunctionCallOutputItem(f, out);
  if (type == "item_reference")
    return Unsupported(f.Name("type"),
                       "item references are not supported; use previous_response_id");
  return Unsupported(f.Name("type"), "'" + type +
                                         "' items are not supported; brisk accepts message, "
                                         "function_call and function_call_output items");
}

std::optional<ApiError> ConvertInput(const Fields& f, size_t max_items, Json* out) {
  *out = Json::array();
  const Json* v = f.Get("input");
  if (!v) return BadRequest("input is required", "input");
  if (v->is_string()) {
    out->push_back(Json{{"role", "user"}, {"content", v->get<std::string>()}});
    return std::nullopt;
  }
  if (!v->is_array()) return Fields::TypeError("input", "a string or an array of items", *v);
  if (v->empty()) return BadRequest("input must not be empty", "input");
  if (v->size() > max_items) {
    return BadRequest("too many input items: " + std::to_string(v->size()) + " (at most " +
                          std::to_string(max_items) + ")",
                      "input");
  }
  int assistant = -1;  // the message a following function_call belongs to
  for (size_t i = 0; i < v->size(); ++i) {
    if (auto e = ConvertItem((*v)[i], At("input", i), out, &assistant)) return e;
  }
  return std::nullopt;
}

// tools [{type: function, name, description, parameters, strict}] -> the chat route's tools;
// the response object repeats them in the Responses shape.
std::optional<ApiError> ConvertTools(const Fields& f, ResponsesRequest* r,
                                     std::set<std::string>* names) {
  r->settings["tools"] = Json::array();
  const Json* v = f.Get("tools");
  if (!v) return std::nullopt;
  if (!v->is_array()) return Fields::TypeError("tools", "an array", *v);
  if (v->size() > kMaxTools) {
    return BadRequest("tools may have at most " + std::to_string(kMaxTools) + " entries, got " +
                          std::to_string(v->size()),
                      "tools");
  }
  Json chat = Json::array();
  for (size_t i = 0; i < v->size(); ++i) {
    const std::string at = At("tools", i);
    if (!(*v)[i].is_object()) return Fields::TypeError(at, "an object", (*v)[i]);
    const Fields t((*v)[i], at);
    std::string type, name, description;
    bool strict = false;
    if (auto e = t.String("type", &type, true)) return e;
    if (type != "function") {
      return Unsupported(t.Name("type"), "built-in tool '" + type +
                                             "' is not supported; only function tools {type: "
                                             "\"function\", name, description, parameters}");
    }
    if (auto e = NonEmpty(t, "name", &name)) return e;
    if (auto e = t.String("description", &description)) return e;
    if (auto e = t.Bool("strict", &strict)) return e;
    const Json* params = t.Get("parameters");
    if (params && !params->is_object())
      return Fields::TypeError(t.Name("parameters"), "an object (a JSON Schema)", *params);
    Json fn = {{"name", name}};
    if (t.Has("description")) fn["description"] = description;
    if (params) fn["parameters"] = *params;
    chat.push_back(Json{{"type", "function"}, {"function", std::move(fn)}});
    r->settings["tools"].push_back(
        Json{{"type", "function"},
             {"name", name},
             {"description", t.Has("description") ? Json(description) : Json()},
             {"parameters", params ? *params : Json()},
             {"strict", t.Has("strict") ? Json(strict) : Json()}});
    names->insert(name);
  }
  if (!chat.empty()) r->chat.tools = std::move(chat);
  return std::nullopt;
}

// tool_choice none | auto | required | {type: function, name} -> the chat route's mode or name.
std::optional<ApiError> ConvertToolChoice(const Fields& f, const std::set<std::string>& names,
                                          ResponsesRequest* r) {
  std::string& choice = r->chat.tool_choice;
  choice = names.empty() ? "none" : "auto";
  r->settings["tool_choice"] = "auto";
  const Json* v = f.Get("tool_choice");
  if (!v) return std::nullopt;
  if (v->is_string()) {
    choice = v->get<std::string>();
    if (choice != "none" && choice != "auto" && choice != "required") {
      return BadRequest(
          "tool_choice must be 'none', 'auto', 'required' or {type: 'function', "
          "name}; got '" +
              choice + "'",
          "tool_choice");
    }
    if (choice == "required" && names.empty())
      return BadRequest("tool_choice 'required' needs tools", "tool_choice");
    if (choice == "auto" && names.empty()) choice = "none";
  } else if (v->is_object()) {
    const Fields c(*v, "tool_choice");
    std::string type;
    if (auto e = c.String("type", &type, true)) return e;
    if (type != "function") {
      return Unsupported(c.Name("type"), "'" + type +
                                             "' is not supported; use none, auto, required or "
                                             "{type: 'function', name}");
    }
    if (auto e = c.String("name", &choice, true)) return e;
    if (!names.count(choice)) {
      return BadRequest("tool_choice.name names function '" + choice + "', which is not in tools",
                        "tool_choice.name");
    }
  } else {
    return Fields::TypeError("tool_choice", "a string or an object", *v);
  }
  r->settings["tool_choice"] = *v;
  return std::nullopt;
}

// text {format: {type: text | json_object | json_schema, name, schema, strict, description},
// verbosity} -> the chat route's structured output.
std::optional<ApiError> ConvertTextFormat(const Fields& f, ResponsesRequest* r) {
  r->settings["text"] = Json{{"format", {{"type", "text"}}}};
  const Json* v = f.Get("text");
  if (!v) return std::nullopt;
  if (!v->is_object()) return Fields::TypeError("text", "an object", *v);
  const Fields t(*v, "text");
  std::string verbosity;
  if (auto e = t.String("verbosity", &verbosity)) return e;
  if (!verbosity.empty() && verbosity != "medium")
    return Unsupported(t.Name("verbosity"), "only 'medium' is supported");
  const Json* format = t.Get("format");
  if (!format) return std::nullopt;
  if (!format->is_object()) return Fields::TypeError(t.Name("format"), "an object", *format);
  const Fields fm(*format, t.Name("format"));
  std::string type, name, description;
  bool strict = false;
  if (auto e = fm.String("type", &type, true)) return e;
  if (auto e = fm.String("name", &name)) return e;
  if (auto e = fm.String("description", &description)) return e;
  if (auto e = fm.Bool("strict", &strict)) return e;
  StructuredOutput& s = r->chat.structured;
  if (type == "json_object") {
    s.kind = StructuredOutput::Kind::kJsonObject;
  } else if (type == "json_schema") {
    const Json* schema = fm.Get("schema");
    if (!schema) return BadRequest(fm.Name("schema") + " is required", fm.Name("schema"));
    if (auto e = ParseJsonSchemaField(fm.Name("schema"), *schema, strict, &s)) return e;
  } else if (type != "text") {
    return BadRequest(
        fm.Name("type") + " must be one of text, json_object, json_schema; got '" + type + "'",
        fm.Name("type"));
  }
  s.field = "text.format";
  r->settings["text"] = *v;
  return std::nullopt;
}

// Known features that would change the answer and that brisk does not serve: refused by name.
std::optional<ApiError> RefuseUnsupported(const Fields& f) {
  for (const char* key : {"conversation", "prompt", "max_tool_calls"}) {
    if (f.Has(key)) return Unsupported(key, "not supported by this server");
  }
  bool background = false;
  if (auto e = f.Bool("background", &background)) return e;
  if (background) return Unsupported("background", "background responses are not supported");
  int top_logprobs = 0;
  if (auto e = f.Int32("top_logprobs", kOpenAiRanges.top_logprobs, &top_logprobs)) return e;
  if (top_logprobs > 0) return Unsupported("top_logprobs", "log-probabilities are not supported");
  if (const Json* reasoning = f.Get("reasoning")) {
    if (!reasoning->is_object()) return Fields::TypeError("reasoning", "an object", *reasoning);
    const Fields rf(*reasoning, "reasoning");
    std::string effort;
    if (auto e = rf.String("effort", &effort)) return e;
    if (!effort.empty() && effort != "none") {
      return Unsupported(rf.Name("effort"),
                         "the served model does not reason; only 'none' is supported");
    }
    for (const char* key : {"summary", "generate_summary"}) {
      if (rf.Has(key)) return Unsupported(rf.Name(key), "the served model makes no reasoning");
    }
  }
  if (const Json* include = f.Get("include")) {
    if (!include->is_array()) return Fields::TypeError("include", "an array of strings", *include);
    for (size_t i = 0; i < include->size(); ++i) {
      const Json& x = (*include)[i];
      if (!x.is_string()) return Fields::TypeError(At("include", i), "a string", x);
      // Nothing to include: no reasoning items are made, encrypted or not.
      if (x != "reasoning.encrypted_content")
        return Unsupported(At("include", i), "'" + x.get<std::string>() + "' is not supported");
    }
  }
  return std::nullopt;
}

// Fields that are checked and change nothing the model sees.
std::optional<ApiError> CheckInertFields(const Fields& f, ResponsesRequest* r) {
  for (const char* key :
       {"service_tier", "prompt_cache_key", "prompt_cache_retention", "safety_identifier"}) {
    std::string ignored;
    if (auto e = f.String(key, &ignored)) return e;
  }
  std::string truncation = "disabled";
  if (auto e = f.String("truncation", &truncation)) return e;
  if (truncation == "auto") {
    return Unsupported("truncation",
                       "'auto' is not supported: a conversation longer than the context is a 400");
  }
  if (truncation != "disabled")
    return BadRequest("truncation must be 'disabled' or 'auto', got '" + truncation + "'",
                      "truncation");
  r->settings["truncation"] = truncation;
  r->settings["metadata"] = Json::object();
  if (const Json* m = f.Get("metadata")) {
    if (!m->is_object()) return Fields::TypeError("metadata", "an object", *m);
    if (m->size() > kMaxMetadataKeys)
      return BadRequest("metadata may have at most 16 keys", "metadata");
    for (const auto& [key, value] : m->items()) {
      if (key.size() > kMaxMetadataKeyBytes)
        return BadRequest("metadata keys may be at most 64 characters long", "metadata");
      if (!value.is_string() || value.get_ref<const std::string&>().size() > kMaxMetadataValueBytes)
        return BadRequest("metadata values must be strings of at most 512 characters",
                          "metadata." + key);
    }
    r->settings["metadata"] = *m;
  }
  if (auto e = f.String("user", &r->chat.user)) return e;
  if (f.Has("user")) r->settings["user"] = r->chat.user;
  return std::nullopt;
}

// Lengths, sampling and streaming.
std::optional<ApiError> ParseGenerationFields(const Fields& f, const RequestLimits& lim,
                                              ResponsesRequest* r) {
  OpenAiRequest& chat = r->chat;
  GenerationRequest& gen = chat.gen;
  SamplingParams& sp = gen.sampling;
  // Not given: a cap that CheckPromptLength cuts to the room the prompt leaves (as chat).
  gen.max_tokens = lim.default_max_tokens > 0 ? lim.default_max_tokens : kNoMaxTokensCap;
  sp.temperature = 1.0f;  // OpenAI's defaults
  sp.top_p = 1.0f;
  if (auto e = f.Int32("max_output_tokens", kChatMaxTokensRange, &gen.max_tokens)) return e;
  if (f.Has("max_output_tokens")) chat.max_tokens_field = "max_output_tokens";
  if (auto e = f.Float("temperature", kOpenAiRanges.temperature, &sp.temperature)) return e;
  if (auto e = f.Float("top_p", kOpenAiRanges.top_p, &sp.top_p)) return e;
  if (auto e = f.Seed("seed", &sp.seed)) return e;
  if (auto e = f.Bool("parallel_tool_calls", &chat.parallel_tool_calls)) return e;
  if (auto e = f.Bool("stream", &chat.stream)) return e;
  if (const Json* so = f.Get("stream_options")) {
    if (!chat.stream)
      return BadRequest("stream_options is only allowed with stream: true", "stream_options");
    if (!so->is_object()) return Fields::TypeError("stream_options", "an object", *so);
    bool obfuscation = false;  // padding of events, never content: accepted, not sent
    if (auto e = Fields(*so, "stream_options").Bool("include_obfuscation", &obfuscation)) return e;
  }
  Json& s = r->settings;
  s["max_output_tokens"] = f.Has("max_output_tokens") ? Json(gen.max_tokens) : Json();
  s["parallel_tool_calls"] = chat.parallel_tool_calls;
  // As sent (the engine's float would come back as 0.699999988 for 0.7).
  s["temperature"] = f.Has("temperature") ? *f.Get("temperature") : Json(1.0);
  s["top_p"] = f.Has("top_p") ? *f.Get("top_p") : Json(1.0);
  const Status st =
      ValidateGenerationParams(gen, {lim.n_vocab, 0, /*has_tokenizer=*/true}, kOpenAiRanges);
  if (!st.ok()) return ToApiError(st);
  return std::nullopt;
}

std::optional<ApiError> ParseConversationFields(const Fields& f, const RequestLimits& lim,
                                                ResponsesRequest* r) {
  if (auto e = f.String("instructions", &r->instructions)) return e;
  if (auto e = f.String("previous_response_id", &r->previous_response_id)) return e;
  if (f.Has("previous_response_id") && r->previous_response_id.empty())
    return BadRequest("previous_response_id must not be empty", "previous_response_id");
  if (auto e = f.Bool("store", &r->store)) return e;
  if (auto e = ConvertInput(f, lim.max_messages, &r->input)) return e;
  Json& s = r->settings;
  s["instructions"] = r->instructions.empty() ? Json() : Json(r->instructions);
  s["previous_response_id"] =
      r->previous_response_id.empty() ? Json() : Json(r->previous_response_id);
  s["store"] = r->store;
  return std::nullopt;
}

}  // namespace

std::variant<ResponsesRequest, ApiError> ParseResponsesRequest(std::string_view body,
                                                               const RequestLimits& limits) {
  auto parsed = ParseJsonBody(body);
  if (auto* e = std::get_if<ApiError>(&parsed)) return *e;
  const Fields f(std::get<Json>(parsed));
  ResponsesRequest r;
  r.chat.chat = true;
  if (auto e = ParseModelField(f, limits.model_id, &r.chat.model)) return *e;
  if (auto e = RefuseUnsupported(f)) return *e;
  if (auto e = ParseConversationFields(f, limits, &r)) return *e;
  std::set<std::string> names;
  if (auto e = ConvertTools(f, &r, &names)) return *e;
  if (auto e = ConvertToolChoice(f, names, &r)) return *e;
  if (auto e = ConvertTextFormat(f, &r)) return *e;
  if (auto e = ParseGenerationFields(f, limits, &r)) return *e;
  if (auto e = CheckInertFields(f, &r)) return *e;
  return r;
}

void AssembleConversation(const Json* history, ResponsesRequest* r) {
  Json messages = Json::array();
  if (!r->instructions.empty())
    messages.push_back(Json{{"role", "system"}, {"content", r->instructions}});
  if (history && history->is_array()) {
    for (const Json& m : *history) messages.push_back(m);
  }
  for (const Json& m : r->input) messages.push_back(m);
  r->chat.messages = std::move(messages);
}

}  // namespace brisk::server
