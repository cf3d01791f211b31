#include "server/responses_response.h"

#include <utility>

namespace brisk::server {

using Json = nlohmann::ordered_json;

Json ResponsesUsage(const Usage& u) {
  return Json{{"input_tokens", u.prompt_tokens},
              {"input_tokens_details", {{"cached_tokens", u.cached_tokens}}},
              {"output_tokens", u.completion_tokens},
              {"output_tokens_details", {{"reasoning_tokens", 0}}},
              {"total_tokens", u.prompt_tokens + u.completion_tokens}};
}

const char* ResponseStatusOf(const FinishInfo& f) {
  switch (f.reason) {
    case FinishReason::kStop:
      return "completed";
    case FinishReason::kLength:
      return "incomplete";
    default:
      return nullptr;
  }
}

Json IncompleteDetails(const FinishInfo& f) {
  if (f.reason != FinishReason::kLength) return nullptr;
  return Json{{"reason", "max_output_tokens"}};
}

Json OutputTextPart(std::string_view text) {
  return Json{{"type", "output_text"},
              {"text", text},
              {"annotations", Json::array()},
              {"logprobs", Json::array()}};
}

Json MessageItem(const std::string& id, std::string_view text, const char* status, bool with_text) {
  Json content = Json::array();
  if (with_text) content.push_back(OutputTextPart(text));
  return Json{{"id", id},
              {"type", "message"},
              {"status", status},
              {"role", "assistant"},
              {"content", std::move(content)}};
}

Json FunctionCallItem(const std::string& id, const ToolCall& call, const char* status) {
  const bool done = std::string_view(status) != "in_progress";
  return Json{{"id", id},          {"type", "function_call"},
              {"status", status},  {"call_id", call.id},
              {"name", call.name}, {"arguments", done ? call.arguments : ""}};
}

Json ResponseObject(const ResponseMeta& m, const Json& settings, const char* status, Json output,
                    Json usage, Json incomplete_details, Json error) {
  Json r = {{"id", m.id},
            {"object", "response"},
            {"created_at", m.created},
            {"status", status},
            {"error", std::move(error)},
            {"incomplete_details", std::move(incomplete_details)}};
  const auto setting = [&](const char* key) {
    auto it = settings.find(key);
    r[key] = it == settings.end() ? Json() : *it;
  };
  setting("instructions");
  setting("max_output_tokens");
  r["model"] = m.model;
  r["output"] = std::move(output);
  for (const char* key : {"parallel_tool_calls", "previous_response_id"}) setting(key);
  r["reasoning"] = Json{{"effort", nullptr}, {"summary", nullptr}};
  for (const char* key :
       {"store", "temperature", "text", "tool_choice", "tools", "top_p", "truncation"}) {
    setting(key);
  }
  r["usage"] = std::move(usage);
  if (settings.contains("user")) setting("user");
  setting("metadata");
  return r;
}

Json ResponsesEvent(const char* type, Json fields) {
  Json e = {{"type", type}};
  for (auto& [key, value] : fields.items()) e[key] = std::move(value);
  return e;
}

std::string ResponsesSseEvent(const Json& event) {
  auto type = event.find("type");
  std::string s = "event: ";
  s += type != event.end() && type->is_string() ? type->get<std::string>() : "error";
  s += "\n";
  s += SseData(event);
  return s;
}

}  // namespace brisk::server
