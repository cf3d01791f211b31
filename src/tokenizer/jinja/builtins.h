// Built-in filters, tests, methods and global functions. Filters and tests are resolved by name
// at parse time (an unknown one is a parse error); methods at render time.
#pragma once

#include <string_view>
#include <utility>
#include <vector>

#include "tokenizer/jinja/value.h"

namespace brisk::jinja {

// Arguments of a filter, test, method or function call.
struct CallArgs {
  std::vector<Value> pos;
  std::vector<std::pair<std::string_view, Value>> kw;
  size_t max_string = SIZE_MAX;  // results longer than this are an error

  // The argument at position `i`, else the keyword argument `name`; nullptr when absent.
  const Value* Get(size_t i, std::string_view name) const;
  // Fails when more than `max_pos` positional arguments or an unknown keyword is given.
  Status Check(const char* what, size_t max_pos, std::initializer_list<std::string_view> kws) const;
};

// -1 when the name is not a supported filter / test.
int FindFilter(std::string_view name);
int FindTest(std::string_view name);

Result<Value> ApplyFilter(int id, const Value& input, const CallArgs& args);
Result<bool> ApplyTest(int id, const Value& v, const CallArgs& args);

// Methods of str, dict and list values (`s.startswith('x')`, `d.items()`), and `loop.cycle`.
Result<Value> CallMethod(const Value& obj, std::string_view name, const CallArgs& args);

// Global functions. The interpreter implements kNamespace and kRaiseException itself.
enum class Global : int { kRange, kNamespace, kRaiseException, kDict, kStrftimeNow };
int FindGlobal(std::string_view name);  // a Global, or -1
Result<Value> CallGlobal(Global g, const CallArgs& args, int64_t max_items);

// Python str % args (printf-style formatting).
Result<std::string> PercentFormat(std::string_view fmt, const Value& args);

}  // namespace brisk::jinja
