#include "server/anthropic_request.h"

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "engine/request_validation.h"
#include "server/chat_prompt.h"
#include "server/request_fields.h"

namespace brisk::server {
namespace {

using Json = nlohmann::ordered_json;

std::string At(const std::string& array, size_t i) { return array + "[" + std::to_string(i) + "]"; }

// A content block is an object with a string `type`.
std::optional<ApiError> BlockType(const Json& b, const std::string& at, std::string* type) {
  if (!b.is_object()) return Fields::TypeError(at, "an object (a content block)", b);
  return Fields(b, at).String("type", type, /*required=*/true);
}

bool IsMediaBlock(const std::string& type) { return type == "image" || type == "document"; }

// Images and documents: a known Anthropic feature that a text-only model cannot serve.
ApiError MediaBlockError(const std::string& at, const std::string& type) {
  return ToApiError(Status::Unimplemented(
      at + ".type: " + type + " blocks are not supported (the model reads text only)",
      at + ".type"));
}

ApiError BlockTypeError(const std::string& at, const char* allowed, const std::string& type) {
  return BadRequest(at + ".type must be one of " + allowed + "; got '" + type + "'", at + ".type");
}

// `system` and tool_result `content`: a string, or text blocks whose texts are joined with "\n"
// (as the chat route joins text parts).
std::optional<ApiError> TextOrTextBlocks(const Json& v, const std::string& at, std::string* out) {
  if (v.is_string()) {
    *out = v.get<std::string>();
    return std::nullopt;
  }
  if (!v.is_array()) return Fields::TypeError(at, "a string or an array of text blocks", v);
  out->clear();
  for (size_t i = 0; i < v.size(); ++i) {
    const std::string b_at = At(at, i);
    std::string type, text;
    if (auto e = BlockType(v[i], b_at, &type)) return e;
    if (IsMediaBlock(type)) return MediaBlockError(b_at, type);
    if (type != "text") return BlockTypeError(b_at, "text", type);
    if (auto e = Fields(v[i], b_at).String("text", &text, true)) return e;
    if (i > 0) *out += '\n';
    *out += text;
  }
  return std::nullopt;
}

// tool_result {tool_use_id, content, is_error} -> {"role": "tool", "content", "tool_call_id"}.
// The chat template has no error flag, so a failed tool says so in its text.
std::optional<ApiError> ToolResultMessage(const Json& b, const std::string& at, Json* out) {
  const Fields f(b, at);
  std::string id, content;
  bool is_error = false;
  if (auto e = f.String("tool_use_id", &id, true)) return e;
  if (const Json* c = f.Get("content")) {
    if (auto e = TextOrTextBlocks(*c, f.Name("content"), &content)) return e;
  }
  if (auto e = f.Bool("is_error", &is_error)) return e;
  if (is_error) content = "Error: " + content;
  *out = Json{{"role", "tool"}, {"content", content}};
  if (!id.empty()) (*out)["tool_call_id"] = id;
  return std::nullopt;
}

// tool_use {id, name, input} -> {id, type: "function", function: {name, arguments}}, arguments
// the input as a JSON string: the form the chat route keeps an assistant's tool calls in.
std::optional<ApiError> ToolUseCall(const Json& b, const std::string& at, Json* out) {
  const Fields f(b, at);
  std::string id, name;
  if (auto e = f.String("id", &id, true)) return e;
  if (auto e = f.String("name", &name, true)) return e;
  if (name.empty()) return BadRequest(f.Name("name") + " must not be empty", f.Name("name"));
  const Json* input = f.Get("input");
  if (!input) return BadRequest(f.Name("input") + " is required", f.Name("input"));
  if (!input->is_object()) return Fields::TypeError(f.Name("input"), "an object", *input);
  Json call;
  if (!id.empty()) call["id"] = id;
  call["type"] = "function";
  call["function"] = {{"name", name},
                      {"arguments", input->dump(-1, ' ', false, Json::error_handler_t::replace)}};
  *out = std::move(call);
  return std::nullopt;
}

// A text block's text, joined to the text before it with "\n" (several blocks make one message).
std::optional<ApiError> AppendTextBlock(const Json& block, const std::string& at, std::string* text,
                                        bool* has_text) {
  std::string piece;
  if (auto e = Fields(block, at).String("text", &piece, true)) return e;
  if (*has_text) *text += '\n';
  *text += piece;
  *has_text = true;
  return std::nullopt;
}

// A user turn's blocks, in their order: each tool_result becomes a tool message, each run of text
// blocks one user message.
std::optional<ApiError> UserBlocks(const Json& blocks, const std::string& at, Json* out) {
  std::string text;
  bool has_text = false;
  const auto flush_text = [&] {
    if (has_text) out->push_back(Json{{"role", "user"}, {"content", text}});
    text.clear();
    has_text = false;
  };
  for (size_t i = 0; i < blocks.size(); ++i) {
    const std::string b_at = At(at, i);
    std::string type;
    if (auto e = BlockType(blocks[i], b_at, &type)) return e;
    if (type == "text") {
      if (auto e = AppendTextBlock(blocks[i], b_at, &text, &has_text)) return e;
    } else if (type == "tool_result") {
      Json tool;
      if (auto e = ToolResultMessage(blocks[i], b_at, &tool)) return e;
      flush_text();
      out->push_back(std::move(tool));
    } else if (IsMediaBlock(type)) {
      return MediaBlockError(b_at, type);
    } else {
      return BlockTypeError(b_at, "text, tool_result (in a user message)", type);
    }
  }
  flush_text();
  return std::nullopt;
}

// An assistant turn's blocks: one assistant message, its text blocks joined with "\n" as the
// content and its tool_use blocks as tool_calls.
std::optional<ApiError> AssistantBlocks(const Json& blocks, const std::string& at, Json* out) {
  std::string text;
  Json calls = Json::array();
  bool has_text = false;
  for (size_t i = 0; i < blocks.size(); ++i) {
    const std::string b_at = At(at, i);
    std::string type;
    if (auto e = BlockType(blocks[i], b_at, &type)) return e;
    if (type == "text") {
      if (auto e = AppendTextBlock(blocks[i], b_at, &text, &has_text)) return e;
    } else if (type == "tool_use") {
      Json call;
      if (auto e = ToolUseCall(blocks[i], b_at, &call)) return e;
      calls.push_back(std::move(call));
    } else if (IsMediaBlock(type)) {
      return MediaBlockError(b_at, type);
    } else {
      return BlockTypeError(b_at, "text, tool_use (in an assistant message)", type);
    }
  }
  Json msg = {{"role", "assistant"}, {"content", text}};
  if (!calls.empty()) msg["tool_calls"] = std::move(calls);
  out->push_back(std::move(msg));
  return std::nullopt;
}

std::optional<ApiError> ConvertMessage(const Json& m, const std::string& at, bool last, Json* out) {
  if (!m.is_object()) return Fields::TypeError(at, "an object", m);
  const Fields f(m, at);
  std::string role;
  if (auto e = f.String("role", &role, true)) return e;
  if (role != "user" && role != "assistant") {
    const char* hint = role == "system" ? " (the system prompt is the top-level `system`)" : "";
    return BadRequest(f.Name("role") + " must be 'user' or 'assistant', got '" + role + "'" + hint,
                      f.Name("role"));
  }
  if (last && role == "assistant") {
    // Anthropic continues a final assistant message (prefill); the chat template closes every
    // turn it renders, so the reply would not continue it.
    return ToApiError(Status::Unimplemented(
        f.Name("role") +
            ": a final assistant message (prefill) is not supported; end with a user message",
        f.Name("role")));
  }
  const Json* c = f.Get("content");
  if (!c) return BadRequest(f.Name("content") + " is required", f.Name("content"));
  if (c->is_string()) {
    out->push_back(Json{{"role", role}, {"content", c->get<std::string>()}});
    return std::nullopt;
  }
  if (!c->is_array())
    return Fields::TypeError(f.Name("content"), "a string or an array of content blocks", *c);
  if (c->empty()) return BadRequest(f.Name("content") + " must not be empty", f.Name("content"));
  return role == "user" ? UserBlocks(*c, f.Name("content"), out)
                        : AssistantBlocks(*c, f.Name("content"), out);
}

// `system` then `messages` -> the chat route's messages.
std::optional<ApiError> ConvertConversation(const Fields& f, size_t max_messages, Json* out) {
  *out = Json::array();
  if (const Json* system = f.Get("system")) {
    std::string text;
    if (auto e = TextOrTextBlocks(*system, "system", &text)) return e;
    // An empty system prompt is none: the template's default system prompt applies.
    if (!text.empty()) out->push_back(Json{{"role", "system"}, {"content", text}});
  }
  const Json* v = f.Get("messages");
  if (!v) return BadRequest("messages is required", "messages");
  if (!v->is_array()) return Fields::TypeError("messages", "an array", *v);
  if (v->empty()) return BadRequest("messages must not be empty", "messages");
  if (v->size() > max_messages) {
    return BadRequest("too many messages: " + std::to_string(v->size()) + " (at most " +
                          std::to_string(max_messages) + ")",
                      "messages");
  }
  for (size_t i = 0; i < v->size(); ++i) {
    if (auto e = ConvertMessage((*v)[i], At("messages", i), i + 1 == v->size(), out)) return e;
  }
  return std::nullopt;
}

// tools [{name, description, input_schema}] -> the chat route's function tools (null when none).
std::optional<ApiError> ConvertTools(const Fields& f, Json* tools, std::set<std::string>* names) {
  *tools = nullptr;
  const Json* v = f.Get("tools");
  if (!v) return std::nullopt;
  if (!v->is_array()) return Fields::TypeError("tools", "an array", *v);
  if (v->size() > kMaxTools) {
    return BadRequest("tools may have at most " + std::to_string(kMaxTools) + " entries, got " +
                          std::to_string(v->size()),
                      "tools");
  }
  Json out = Json::array();
  for (size_t i = 0; i < v->size(); ++i) {
    const std::string at = At("tools", i);
    if (!(*v)[i].is_object()) return Fields::TypeError(at, "an object", (*v)[i]);
    const Fields t((*v)[i], at);
    std::string type = "custom", name, description;
    if (auto e = t.String("type", &type)) return e;
    if (type != "custom") {
      return ToApiError(Status::Unimplemented(
          t.Name("type") + ": server tools ('" + type +
              "') are not supported; only custom tools {name, description, input_schema}",
          t.Name("type")));
    }
    if (auto e = t.String("name", &name, true)) return e;
    if (name.empty()) return BadRequest(t.Name("name") + " must not be empty", t.Name("name"));
    if (auto e = t.String("description", &description)) return e;
    const Json* schema = t.Get("input_schema");
    if (!schema) return BadRequest(t.Name("input_schema") + " is required", t.Name("input_schema"));
    if (!schema->is_object())
      return Fields::TypeError(t.Name("input_schema"), "an object (a JSON Schema)", *schema);
    Json fn = {{"name", name}};
    if (t.Has("description")) fn["description"] = description;
    fn["parameters"] = *schema;
    out.push_back(Json{{"type", "function"}, {"function", std::move(fn)}});
    names->insert(name);
  }
  if (!out.empty()) *tools = std::move(out);
  return std::nullopt;
}

// tool_choice {type: auto | any | tool | none, name, disable_parallel_tool_use} -> the chat route's
// "auto" | "required" | the tool's name | "none"; disable_parallel_tool_use -> parallel_tool_calls
// false (a forced call is then exactly one <tool_call>).
std::optional<ApiError> ConvertToolChoice(const Fields& f, const std::set<std::string>& names,
                                          std::string* choice, bool* parallel) {
  *choice = names.empty() ? "none" : "auto";  // Anthropic's default with tools is auto
  const Json* v = f.Get("tool_choice");
  if (!v) return std::nullopt;
  if (!v->is_object()) return Fields::TypeError("tool_choice", "an object", *v);
  const Fields c(*v, "tool_choice");
  std::string type, name;
  bool no_parallel = false;
  if (auto e = c.String("type", &type, true)) return e;
  if (auto e = c.Bool("disable_parallel_tool_use", &no_parallel)) return e;
  *parallel = !no_parallel;
  if (type == "auto" || type == "none") {
    *choice = type;
  } else if (type == "any") {
    if (names.empty()) return BadRequest("tool_choice 'any' needs tools", "tool_choice.type");
    *choice = "required";
  } else if (type == "tool") {
    if (auto e = c.String("name", &name, true)) return e;
    if (!names.count(name)) {
      return BadRequest("tool_choice.name names tool '" + name + "', which is not in tools",
                        "tool_choice.name");
    }
    *choice = name;
  } else {
    return BadRequest("tool_choice.type must be one of auto, any, tool, none; got '" + type + "'",
                      "tool_choice.type");
  }
  return std::nullopt;
}

std::optional<ApiError> ParseStopSequences(const Fields& f, size_t max_stop,
                                           std::vector<std::string>* out) {
  const Json* v = f.Get("stop_sequences");
  if (!v) return std::nullopt;
  if (!v->is_array()) return Fields::TypeError("stop_sequences", "an array of strings", *v);
  if (v->size() > max_stop) {
    return BadRequest("stop_sequences may have at most " + std::to_string(max_stop) +
                          " sequences, got " + std::to_string(v->size()),
                      "stop_sequences");
  }
  std::vector<std::string> stops;
  for (size_t i = 0; i < v->size(); ++i) {
    const std::string at = At("stop_sequences", i);
    if (!(*v)[i].is_string()) return Fields::TypeError(at, "a string", (*v)[i]);
    stops.push_back((*v)[i].get<std::string>());
    if (stops.back().empty()) return BadRequest(at + " must not be empty", at);
  }
  *out = std::move(stops);
  return std::nullopt;
}

// What only generation needs: lengths, sampling, stops, streaming, metadata.
std::optional<ApiError> ParseGenerationFields(const Fields& f, const RequestLimits& lim,
                                              OpenAiRequest* r) {
  GenerationRequest& gen = r->gen;
  SamplingParams& sp = gen.sampling;
  if (!f.Has("max_tokens")) return BadRequest("max_tokens is required", "max_tokens");
  if (auto e = f.Int32("max_tokens", kChatMaxTokensRange, &gen.max_tokens)) return e;
  r->max_tokens_field = "max_tokens";  // always the client's: it must fit the context
  // Anthropic documents temperature in [0, 1]; the OpenAI routes' wider range is accepted.
  if (auto e = f.Float("temperature", kOpenAiRanges.temperature, &sp.temperature)) return e;
  if (auto e = f.Float("top_p", kOpenAiRanges.top_p, &sp.top_p)) return e;
  if (auto e = f.Int32("top_k", kOpenAiRanges.top_k, &sp.top_k)) return e;
  if (auto e = ParseStopSequences(f, lim.max_stop, &gen.stop)) return e;
  if (auto e = f.Bool("stream", &r->stream)) return e;
  if (const Json* m = f.Get("metadata")) {
    if (!m->is_object()) return Fields::TypeError("metadata", "an object", *m);
    std::string user_id;  // accepted and ignored
    if (auto e = Fields(*m, "metadata").String("user_id", &user_id)) return e;
  }
  // The engine's checks of the whole request at the OpenAI routes' ranges, as a net.
  const Status st =
      ValidateGenerationParams(gen, {lim.n_vocab, 0, /*has_tokenizer=*/true}, kOpenAiRanges);
  if (!st.ok()) return ToApiError(st);
  return std::nullopt;
}

std::variant<OpenAiRequest, ApiError> Parse(std::string_view body, const RequestLimits& lim,
                                            bool generate) {
  auto parsed = ParseJsonBody(body);
  if (auto* e = std::get_if<ApiError>(&parsed)) return *e;
  const Fields f(std::get<Json>(parsed));
  OpenAiRequest r;
  r.chat = true;
  if (auto e = ParseModelField(f, lim.model_id, &r.model)) return *e;
  if (auto e = ConvertConversation(f, lim.max_messages, &r.messages)) return *e;
  std::set<std::string> names;
  if (auto e = ConvertTools(f, &r.tools, &names)) return *e;
  if (auto e = ConvertToolChoice(f, names, &r.tool_choice, &r.parallel_tool_calls)) return *e;
  if (generate) {
    if (auto e = ParseGenerationFields(f, lim, &r)) return *e;
  }
  return r;
}

}  // namespace

std::variant<OpenAiRequest, ApiError> ParseAnthropicRequest(std::string_view body,
                                                            const RequestLimits& limits) {
  return Parse(body, limits, /*generate=*/true);
}

std::variant<OpenAiRequest, ApiError> ParseAnthropicCountTokens(std::string_view body,
                                                                const RequestLimits& limits) {
  return Parse(body, limits, /*generate=*/false);
}

}  // namespace brisk::server
