#include "server/chat_prompt.h"

#include <set>
#include <string_view>
#include <utility>

namespace brisk::server {
namespace {

using Json = nlohmann::ordered_json;

ApiError TypeError(const std::string& param, const char* expected, const Json& got) {
  return BadRequest(param + " must be " + expected + ", got " + JsonTypeName(got), param);
}

// A string field of an object: absent/null -> *out untouched, "" when required is false.
std::optional<ApiError> StringField(const Json& obj, const char* key, const std::string& at,
                                    bool required, std::string* out) {
  auto it = obj.find(key);
  const std::string param = at + "." + key;
  if (it == obj.end() || it->is_null()) {
    if (required) return BadRequest(param + " is required", param);
    return std::nullopt;
  }
  if (!it->is_string()) return TypeError(param, "a string", *it);
  *out = it->get<std::string>();
  return std::nullopt;
}

// `content` as a string: a string, or an array of {"type": "text", "text"} parts joined with
// "\n" (as vLLM does). Other part types (images, audio) cannot be served by a text model.
std::optional<ApiError> ContentText(const Json& c, const std::string& at, std::string* out) {
  if (c.is_string()) {
    *out = c.get<std::string>();
    return std::nullopt;
  }
  if (!c.is_array()) return TypeError(at, "a string or an array of content parts", c);
  out->clear();
  for (size_t j = 0; j < c.size(); ++j) {
    const std::string part_at = at + "[" + std::to_string(j) + "]";
    const Json& part = c[j];
    if (!part.is_object()) return TypeError(part_at, "an object", part);
    std::string type, text;
    if (auto e = StringField(part, "type", part_at, true, &type)) return e;
    if (type != "text") {
      return BadRequest(
          part_at + ".type: only text content parts are supported, got '" + type + "'",
          part_at + ".type", "unsupported_value");
    }
    if (auto e = StringField(part, "text", part_at, true, &text)) return e;
    if (j > 0) *out += '\n';
    *out += text;
  }
  return std::nullopt;
}

// The tool_calls of an assistant message, rebuilt as {id?, type: "function", function: {name,
// arguments (a JSON string)}}.
std::optional<ApiError> MessageToolCalls(const Json& calls, const std::string& at, Json* out) {
  if (!calls.is_array()) return TypeError(at, "an array", calls);
  *out = Json::array();
  for (size_t k = 0; k < calls.size(); ++k) {
    const std::string call_at = at + "[" + std::to_string(k) + "]";
    const Json& c = calls[k];
    if (!c.is_object()) return TypeError(call_at, "an object", c);
    std::string type = "function", id, name;
    if (auto e = StringField(c, "type", call_at, false, &type)) return e;
    if (type != "function") {
      return BadRequest(call_at + ".type must be 'function', got '" + type + "'",
                        call_at + ".type");
    }
    if (auto e = StringField(c, "id", call_at, false, &id)) return e;
    auto fn = c.find("function");
    if (fn == c.end() || !fn->is_object()) {
      return BadRequest(call_at + ".function must be an object", call_at + ".function");
    }
    const std::string fn_at = call_at + ".function";
    if (auto e = StringField(*fn, "name", fn_at, true, &name)) return e;
    if (name.empty()) return BadRequest(fn_at + ".name must not be empty", fn_at + ".name");
    std::string arguments = "{}";
    auto args = fn->find("arguments");
    if (args != fn->end() && !args->is_null()) {
      // OpenAI sends a JSON string; some clients send the object itself.
      if (args->is_string()) {
        arguments = args->get<std::string>();
      } else if (args->is_object()) {
        arguments = args->dump();
      } else {
        return TypeError(fn_at + ".arguments", "a string", *args);
      }
    }
    Json call;
    if (!id.empty()) call["id"] = id;
    call["type"] = "function";
    call["function"] = {{"name", name}, {"arguments", arguments}};
    out->push_back(std::move(call));
  }
  return std::nullopt;
}

std::optional<ApiError> ParseMessage(const Json& m, const std::string& at, Json* out) {
  if (!m.is_object()) return TypeError(at, "an object", m);
  std::string role;
  if (auto e = StringField(m, "role", at, true, &role)) return e;
  if (role == "developer") role = "system";  // OpenAI's newer name for the system role
  if (role != "system" && role != "user" && role != "assistant" && role != "tool") {
    return BadRequest(at + ".role must be one of system, user, assistant, tool; got '" + role + "'",
                      at + ".role");
  }
  Json calls;
  if (role == "assistant") {
    auto tc = m.find("tool_calls");
    if (tc != m.end() && !tc->is_null()) {
      if (auto e = MessageToolCalls(*tc, at + ".tool_calls", &calls)) return e;
    }
  }
  const bool has_calls = calls.is_array() && !calls.empty();

  std::string content;
  auto c = m.find("content");
  if (c == m.end() || c->is_null()) {
    if (!has_calls) {
      return BadRequest(at + ".content is required (null is allowed only for assistant messages "
                             "with tool_calls)",
                        at + ".content");
    }
  } else if (auto e = ContentText(*c, at + ".content", &content)) {
    return e;
  }

  Json msg = {{"role", role}, {"content", content}};
  std::string name, tool_call_id, reasoning;
  if (auto e = StringField(m, "name", at, false, &name)) return e;
  if (!name.empty()) msg["name"] = name;
  if (has_calls) msg["tool_calls"] = std::move(calls);
  if (role == "tool") {
    if (auto e = StringField(m, "tool_call_id", at, false, &tool_call_id)) return e;
    if (!tool_call_id.empty()) msg["tool_call_id"] = tool_call_id;
  }
  if (role == "assistant") {
    if (auto e = StringField(m, "reasoning_content", at, false, &reasoning)) return e;
    if (!reasoning.empty()) msg["reasoning_content"] = reasoning;
  }
  *out = std::move(msg);
  return std::nullopt;
}

// Python's str.strip / lstrip (ASCII whitespace), as HF's continue_final_message uses them.
constexpr const char* kSpace = " \t\n\r\f\v";
std::string_view LStrip(std::string_view s) {
  const size_t b = s.find_first_not_of(kSpace);
  return b == std::string_view::npos ? std::string_view() : s.substr(b);
}
std::string_view Strip(std::string_view s) {
  s = LStrip(s);
  return s.substr(0, s.find_last_not_of(kSpace) + 1);
}

// continue_final_message, as HF's apply_chat_template does it: the rendered chat cut right after
// the final message's text, so whatever the template closes the message with (end of turn) is gone
// and the model goes on with the text. Its trailing whitespace stays only if the template kept it.
Result<std::string> OpenFinalMessage(const std::string& rendered, std::string_view final_text) {
  const std::string_view stripped = Strip(final_text), lstripped = LStrip(final_text);
  const size_t at = stripped.empty() ? std::string::npos : rendered.rfind(stripped);
  if (at == std::string::npos) {
    return Status::InvalidArgument(
        "the chat template does not render the final message's text as sent, so it cannot be "
        "continued",
        "continue_final_message");
  }
  const bool kept = rendered.compare(at, lstripped.size(), lstripped) == 0;
  return rendered.substr(0, at + (kept ? lstripped.size() : stripped.size()));
}

}  // namespace

std::optional<ApiError> ParseMessages(const Json& messages, size_t max_messages, Json* out) {
  if (!messages.is_array()) return TypeError("messages", "an array", messages);
  if (messages.empty()) return BadRequest("messages must not be empty", "messages");
  if (messages.size() > max_messages) {
    return BadRequest("too many messages: " + std::to_string(messages.size()) + " (at most " +
                          std::to_string(max_messages) + ")",
                      "messages");
  }
  Json result = Json::array();
  for (size_t i = 0; i < messages.size(); ++i) {
    Json msg;
    if (auto e = ParseMessage(messages[i], "messages[" + std::to_string(i) + "]", &msg)) return e;
    result.push_back(std::move(msg));
  }
  *out = std::move(result);
  return std::nullopt;
}

std::optional<ApiError> ParseTools(const Json* tools, const Json* tool_choice, Json* tools_out,
                                   std::string* choice_out) {
  *tools_out = nullptr;
  std::set<std::string> names;
  if (tools && !tools->is_null()) {
    if (!tools->is_array()) return TypeError("tools", "an array", *tools);
    if (tools->size() > kMaxTools) {
      return BadRequest("tools may have at most " + std::to_string(kMaxTools) + " entries, got " +
                            std::to_string(tools->size()),
                        "tools");
    }
    for (size_t i = 0; i < tools->size(); ++i) {
      const std::string at = "tools[" + std::to_string(i) + "]";
      const Json& t = (*tools)[i];
      if (!t.is_object()) return TypeError(at, "an object", t);
      std::string type = "function", name, description;
      if (auto e = StringField(t, "type", at, false, &type)) return e;
      if (type != "function") {
        return BadRequest(at + ".type must be 'function', got '" + type + "'", at + ".type");
      }
      auto fn = t.find("function");
      if (fn == t.end() || !fn->is_object()) {
        return BadRequest(at + ".function must be an object", at + ".function");
      }
      const std::string fn_at = at + ".function";
      if (auto e = StringField(*fn, "name", fn_at, true, &name)) return e;
      if (name.empty()) return BadRequest(fn_at + ".name must not be empty", fn_at + ".name");
      if (auto e = StringField(*fn, "description", fn_at, false, &description)) return e;
      auto params = fn->find("parameters");
      if (params != fn->end() && !params->is_null() && !params->is_object()) {
        return TypeError(fn_at + ".parameters", "an object (a JSON Schema)", *params);
      }
      names.insert(name);
    }
    if (!tools->empty()) *tools_out = *tools;
  }

  *choice_out = names.empty() ? "none" : "auto";  // OpenAI's defaults
  if (!tool_choice || tool_choice->is_null()) return std::nullopt;
  if (tool_choice->is_string()) {
    const std::string c = tool_choice->get<std::string>();
    if (c != "none" && c != "auto" && c != "required") {
      return BadRequest(
          "tool_choice must be 'none', 'auto', 'required' or a function, got '" + c + "'",
          "tool_choice");
    }
    if (c == "required" && names.empty()) {
      return BadRequest("tool_choice 'required' needs tools", "tool_choice");
    }
    *choice_out = c;
    return std::nullopt;
  }
  if (!tool_choice->is_object()) {
    return TypeError("tool_choice", "a string or an object", *tool_choice);
  }
  auto fn = tool_choice->find("function");
  std::string name;
  if (fn == tool_choice->end() || !fn->is_object()) {
    return BadRequest("tool_choice.function must be an object", "tool_choice");
  }
  if (auto e = StringField(*fn, "name", "tool_choice.function", true, &name)) return e;
  if (!names.count(name)) {
    return BadRequest("tool_choice names function '" + name + "', which is not in tools",
                      "tool_choice");
  }
  *choice_out = name;
  return std::nullopt;
}

Result<std::string> RenderChatPrompt(const jinja::ChatTemplate& tmpl, const OpenAiRequest& r) {
  Json messages = r.messages;
  for (Json& m : messages) {
    auto tc = m.find("tool_calls");
    if (tc == m.end() || !tc->is_array()) continue;
    for (Json& call : *tc) {
      auto fn = call.find("function");
      if (fn == call.end() || !fn->is_object()) continue;
      auto args = fn->find("arguments");
      if (args == fn->end() || !args->is_string()) continue;
      // HF templates expect the arguments as a mapping (`tool_call.arguments | tojson`); a
      // string that is not a JSON object stays as it is.
      const std::string& text = args->get_ref<const std::string&>();
      if (!JsonDepthWithin(text, kMaxJsonDepth)) continue;
      Json parsed = Json::parse(text, nullptr, /*allow_exceptions=*/false);
      if (parsed.is_object()) *args = std::move(parsed);
    }
  }

  Json tools;  // null: the template renders no tools block
  if (r.tools.is_array() && r.tool_choice != "none") {
    if (r.tool_choice == "auto" || r.tool_choice == "required") {
      tools = r.tools;
    } else {
      // A named function: offer only that one, so the model can only call it.
      tools = Json::array();
      for (const Json& t : r.tools) {
        auto fn = t.find("function");
        if (fn != t.end() && fn->is_object() && fn->value("name", "") == r.tool_choice) {
          tools.push_back(t);
        }
      }
    }
  }
  auto text =
      jinja::RenderChat(tmpl, messages, tools, r.add_generation_prompt, r.chat_template_kwargs);
  if (!text.ok() || !r.continue_final_message) return text;
  return OpenFinalMessage(*text, messages.back().value("content", ""));
}

}  // namespace brisk::server
