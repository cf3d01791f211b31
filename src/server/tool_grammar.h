// The grammar of forced tool calls, in the form Qwen's chat template teaches the model and
// ToolCallParser reads back:
//   <tool_call>\n{"name": "NAME", "arguments": ARGS}\n</tool_call>
// with ARGS an instance of that function's "parameters" schema (compact JSON), calls separated
// by "\n" when several are allowed. tool_choice "required" allows any offered function, a named
// choice only that one; "auto" uses the same calls after the model's own "<tool_call>"
// (kToolCallTrigger), through TriggeredGrammarConstraint.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "structured/grammar.h"
#include "util/status.h"

namespace brisk::server {

inline constexpr const char* kToolCallTrigger = "<tool_call>";

struct ToolGrammarRequest {
  const nlohmann::ordered_json* tools = nullptr;  // the request's validated tools array
  std::string choice;                             // "required", "auto" or a function name
  bool parallel = true;                           // parallel_tool_calls
  // true: the grammar starts after the trigger (tool_choice auto); false: at the first byte.
  bool after_trigger = false;
};

// Errors name the tool's parameters (field "tools[i].function.parameters") when its schema cannot
// be enforced.
Result<structured::Grammar> ToolCallGrammar(const ToolGrammarRequest& r);

}  // namespace brisk::server
