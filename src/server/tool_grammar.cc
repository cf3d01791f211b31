#include "server/tool_grammar.h"

#include <vector>

#include "structured/json_schema.h"

namespace brisk::server {
namespace {

using Json = nlohmann::ordered_json;
using structured::GrammarBuilder;
using structured::Sequence;
using structured::Symbol;

Sequence Concat(Sequence a, const Sequence& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// {"name": "NAME", "arguments": ARGS} for function i of the tools array.
Result<Sequence> CallObject(GrammarBuilder& b, const Json& tool, size_t i) {
  const Json& fn = tool["function"];
  const std::string name = fn["name"].get<std::string>();
  const std::string field = "tools[" + std::to_string(i) + "].function.parameters";
  auto params = fn.find("parameters");
  // No parameters: OpenAI treats the function as taking an empty object.
  const Json schema = params == fn.end() || params->is_null() ? Json{{"type", "object"}} : *params;
  structured::JsonSchemaOptions options;
  options.field = field;
  // Qwen writes arguments as json.dumps does ({"city": "Paris"}): allow its bounded whitespace
  // rather than push the model off the format it was trained on.
  options.any_whitespace = true;
  Result<int32_t> args = structured::AddJsonSchema(b, schema, "args-" + std::to_string(i), options);
  if (!args.ok()) return Status::InvalidArgument(args.message(), field);
  Sequence s = GrammarBuilder::Literal("{\"name\": " + Json(name).dump() + ", \"arguments\": ");
  s.push_back(Symbol::Ref(*args));
  return Concat(std::move(s), GrammarBuilder::Literal("}"));
}

}  // namespace

Result<structured::Grammar> ToolCallGrammar(const ToolGrammarRequest& r) {
  GrammarBuilder b;
  const int32_t root = b.NewRule("root");
  const int32_t object = b.NewRule("call-object");
  std::vector<Sequence> objects;
  for (size_t i = 0; i < r.tools->size(); ++i) {
    const Json& tool = (*r.tools)[i];
    const bool named = r.choice != "required" && r.choice != "auto";
    if (named && tool["function"]["name"] != r.choice) continue;
    Result<Sequence> call = CallObject(b, tool, i);
    if (!call.ok()) return call.status();
    objects.push_back(std::move(call).value());
  }
  if (objects.empty())
    return Status::InvalidArgument("tool_choice names no offered function", "tool_choice");
  b.Define(object, std::move(objects));
  // body: "\n" object "\n</tool_call>"; a call: "<tool_call>" body.
  Sequence body = GrammarBuilder::Literal("\n");
  body.push_back(Symbol::Ref(object));
  body = Concat(std::move(body), GrammarBuilder::Literal("\n</tool_call>"));
  const int32_t call = b.AddRule("call", {Concat(GrammarBuilder::Literal(kToolCallTrigger), body)});
  Sequence first = r.after_trigger ? body : Sequence{Symbol::Ref(call)};
  if (!r.parallel) {
    b.Define(root, {first});
    return std::move(b).Build(root);
  }
  // More calls, each after a line break.
  Result<int32_t> more =
      b.Repeat("more-calls", Concat(GrammarBuilder::Literal("\n"), {Symbol::Ref(call)}), 0, -1);
  if (!more.ok()) return more.status();
  first.push_back(Symbol::Ref(*more));
  b.Define(root, {first});
  return std::move(b).Build(root);
}

}  // namespace brisk::server
