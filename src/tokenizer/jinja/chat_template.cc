#include "tokenizer/jinja/chat_template.h"

#include <exception>
#include <new>

#include "tokenizer/jinja/interpreter.h"
#include "tokenizer/jinja/parser.h"

namespace brisk::jinja {

Result<ChatTemplate> ChatTemplate::Parse(std::string_view source) {
  try {
    BRISK_ASSIGN_OR_RETURN(Program program, ParseTemplate(source));
    return ChatTemplate(std::make_shared<const Program>(std::move(program)));
  } catch (const std::bad_alloc&) {
    return Status::Error("chat template: out of memory while parsing");
  } catch (const std::exception& e) {
    return Status::Error(std::string("chat template: ") + e.what());
  }
}

Result<std::string> ChatTemplate::RenderVars(const Var* vars, size_t count,
                                             const RenderLimits& limits) const {
  try {
    Interpreter interp(*program_, limits);
    for (size_t i = 0; i < count; ++i) {
      Status st = interp.Bind(vars[i].name, *vars[i].value);
      if (!st.ok()) return st.WithContext("variable '" + std::string(vars[i].name) + "'");
    }
    return interp.Run();
  } catch (const std::bad_alloc&) {
    return Status::Error("chat template: out of memory while rendering");
  } catch (const std::exception& e) {
    return Status::Error(std::string("chat template: ") + e.what());
  }
}

Result<std::string> ChatTemplate::Render(const nlohmann::ordered_json& context,
                                         const RenderLimits& limits) const {
  if (context.is_null()) return RenderVars(nullptr, 0, limits);
  if (!context.is_object()) return Status::Error("chat template context must be a JSON object");
  std::vector<Var> vars;
  vars.reserve(context.size());
  for (const auto& [k, v] : context.items()) vars.push_back(Var{k, &v});
  return RenderVars(vars.data(), vars.size(), limits);
}

bool ChatTemplate::UsesVariable(std::string_view name) const {
  return program_->symbol_ids.count(std::string(name)) > 0;
}

Result<std::string> RenderChat(const ChatTemplate& tmpl, const nlohmann::ordered_json& messages,
                               const nlohmann::ordered_json& tools, bool add_generation_prompt,
                               const nlohmann::ordered_json& extra_kwargs,
                               const RenderLimits& limits) {
  static const nlohmann::ordered_json kNull;
  static const nlohmann::ordered_json kTrue = true;
  static const nlohmann::ordered_json kFalse = false;
  if (!extra_kwargs.is_null() && !extra_kwargs.is_object()) {
    return Status::Error("chat template kwargs must be a JSON object");
  }
  std::vector<ChatTemplate::Var> vars;
  vars.reserve(4 + extra_kwargs.size());
  vars.push_back({"messages", &messages});
  vars.push_back({"tools", tools.is_null() ? &kNull : &tools});
  vars.push_back({"documents", &kNull});
  vars.push_back({"add_generation_prompt", add_generation_prompt ? &kTrue : &kFalse});
  if (extra_kwargs.is_object()) {
    for (const auto& [k, v] : extra_kwargs.items()) vars.push_back({k, &v});
  }
  return tmpl.RenderVars(vars.data(), vars.size(), limits);
}

}  // namespace brisk::jinja
