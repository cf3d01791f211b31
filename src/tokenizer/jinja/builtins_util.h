// Helpers shared by the builtin filter / test / method implementations.
#pragma once

#include <string>
#include <string_view>

#include "tokenizer/jinja/builtins.h"

namespace brisk::jinja::internal {

// Items of an iterable for filters: lists as they are, dict keys, string characters,
// nothing for Undefined; an error for anything else.
Result<std::vector<Value>> IterItems(const Value& v);

// Jinja's attribute getter for `map(attribute=)`, `sort(attribute=)`, ...: a dotted path whose
// parts are dict keys or list indices.
Value LookupPath(const Value& v, std::string_view path);

// Argument helpers: the value or a default.
int64_t IntArg(const Value* v, int64_t dflt);
bool BoolArg(const Value* v, bool dflt);

Status TooLong();

// Sequence filters (filters_seq.cc).
Result<Value> FilterSelect(const Value& v, const CallArgs& args, bool attr, bool keep);
Result<Value> FilterMap(const Value& v, const CallArgs& args);
Result<Value> FilterMinMax(const Value& v, const CallArgs& args, bool want_max);
Result<Value> FilterDictsort(const Value& v, const CallArgs& args);
Result<Value> FilterJoin(const Value& v, const CallArgs& args);
Result<Value> FilterSort(const Value& v, const CallArgs& args);
Result<Value> FilterSum(const Value& v, const CallArgs& args);
Result<Value> FilterUnique(const Value& v, const CallArgs& args);

}  // namespace brisk::jinja::internal
