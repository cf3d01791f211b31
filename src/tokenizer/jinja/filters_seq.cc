// Built-in filters over sequences: select/reject(attr), map, sort, dictsort, min/max, sum,
// unique, join.
#include <algorithm>

#include "tokenizer/jinja/builtins_util.h"
#include "tokenizer/jinja/text.h"

namespace brisk::jinja::internal {

namespace {

// Sort key comparison: strings compare case-insensitively unless asked otherwise.
Result<int> SortCompare(const Value& a, const Value& b, bool case_sensitive) {
  if (!case_sensitive && a.is_string() && b.is_string()) {
    return Compare(Value::Str(text::Lower(a.s())), Value::Str(text::Lower(b.s())));
  }
  return Compare(a, b);
}

// Stable sort of `items` by `key(item)`; the first comparison error wins.
template <typename KeyFn>
Status SortBy(std::vector<Value>* items, bool case_sensitive, bool reverse, KeyFn key) {
  Status err;
  std::stable_sort(items->begin(), items->end(), [&](const Value& x, const Value& y) {
    if (!err.ok()) return false;
    Result<int> c = reverse ? SortCompare(key(y), key(x), case_sensitive)
                            : SortCompare(key(x), key(y), case_sensitive);
    if (!c.ok()) {
      err = c.status();
      return false;
    }
    return *c < 0;
  });
  return err;
}

}  // namespace

// select/reject/selectattr/rejectattr.
Result<Value> FilterSelect(const Value& v, const CallArgs& args, bool attr, bool keep) {
  BRISK_ASSIGN_OR_RETURN(std::vector<Value> items, IterItems(v));
  size_t next = 0;
  std::string path;
  if (attr) {
    if (args.pos.empty() || !args.pos[0].is_string()) {
      return Status::Error("expects an attribute name");
    }
    path = args.pos[0].s();
    next = 1;
  }
  int test = -1;
  CallArgs test_args;
  if (args.pos.size() > next) {
    if (!args.pos[next].is_string()) return Status::Error("expects a test name");
    test = FindTest(args.pos[next].s());
    if (test < 0) return Status::Error("unsupported test '" + args.pos[next].s() + "'");
    test_args.pos.assign(args.pos.begin() + static_cast<long>(next) + 1, args.pos.end());
  }
  std::vector<Value> out;
  for (const Value& item : items) {
    const Value subject = attr ? LookupPath(item, path) : item;
    bool pass = subject.Truthy();
    if (test >= 0) {
      BRISK_ASSIGN_OR_RETURN(pass, ApplyTest(test, subject, test_args));
    }
    if (pass == keep) out.push_back(item);
  }
  return Value::List(std::move(out));
}

Result<Value> FilterMap(const Value& v, const CallArgs& args) {
  BRISK_ASSIGN_OR_RETURN(std::vector<Value> items, IterItems(v));
  std::vector<Value> out;
  out.reserve(items.size());
  if (const Value* attribute = args.Get(SIZE_MAX, "attribute")) {
    if (!attribute->is_string()) return Status::Error("attribute must be a string");
    const Value* dflt = args.Get(SIZE_MAX, "default");
    for (const Value& item : items) {
      Value x = LookupPath(item, attribute->s());
      out.push_back(x.is_undefined() && dflt ? *dflt : std::move(x));
    }
    return Value::List(std::move(out));
  }
  if (args.pos.empty() || !args.pos[0].is_string()) {
    return Status::Error("expects a filter name or attribute=");
  }
  const int id = FindFilter(args.pos[0].s());
  if (id < 0) return Status::Error("unsupported filter '" + args.pos[0].s() + "'");
  CallArgs fargs;
  fargs.pos.assign(args.pos.begin() + 1, args.pos.end());
  fargs.kw = args.kw;
  fargs.max_string = args.max_string;
  for (const Value& item : items) {
    BRISK_ASSIGN_OR_RETURN(Value x, ApplyFilter(id, item, fargs));
    out.push_back(std::move(x));
  }
  return Value::List(std::move(out));
}

Result<Value> FilterMinMax(const Value& v, const CallArgs& args, bool want_max) {
  BRISK_RETURN_IF_ERROR(args.Check(want_max ? "max" : "min", 2, {"case_sensitive", "attribute"}));
  BRISK_ASSIGN_OR_RETURN(std::vector<Value> items, IterItems(v));
  if (items.empty()) return Value::Undefined("empty sequence");
  const bool cs = BoolArg(args.Get(0, "case_sensitive"), false);
  const Value* attribute = args.Get(1, "attribute");
  const std::string path = attribute && attribute->is_string() ? attribute->s() : "";
  auto key = [&](const Value& x) { return path.empty() ? x : LookupPath(x, path); };
  size_t best = 0;
  for (size_t i = 1; i < items.size(); ++i) {
    BRISK_ASSIGN_OR_RETURN(int c, SortCompare(key(items[i]), key(items[best]), cs));
    if (want_max ? c > 0 : c < 0) best = i;
  }
  return items[best];
}

Result<Value> FilterDictsort(const Value& v, const CallArgs& args) {
  if (!v.is_object()) return Status::Error("expects a mapping");
  const bool cs = BoolArg(args.Get(0, "case_sensitive"), false);
  const Value* by = args.Get(1, "by");
  const bool by_value = by && by->is_string() && by->s() == "value";
  const bool reverse = BoolArg(args.Get(2, "reverse"), false);
  std::vector<Value> pairs;
  for (const auto& [k, x] : v.obj().items) pairs.push_back(Value::List({Value::Str(k), x}, true));
  BRISK_RETURN_IF_ERROR(
      SortBy(&pairs, cs, reverse, [&](const Value& p) { return p.arr().items[by_value ? 1 : 0]; }));
  return Value::List(std::move(pairs));
}

Result<Value> FilterJoin(const Value& v, const CallArgs& args) {
  BRISK_RETURN_IF_ERROR(args.Check("join", 2, {"d", "attribute"}));
  BRISK_ASSIGN_OR_RETURN(std::vector<Value> items, IterItems(v));
  const Value* sep = args.Get(0, "d");
  const std::string d = sep ? ToStr(*sep) : "";
  const Value* attribute = args.Get(1, "attribute");
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += d;
    AppendStr(attribute && attribute->is_string() ? LookupPath(items[i], attribute->s()) : items[i],
              &out);
    if (out.size() > args.max_string) return internal::TooLong();
  }
  return Value::Str(std::move(out));
}

Result<Value> FilterSort(const Value& v, const CallArgs& args) {
  BRISK_RETURN_IF_ERROR(args.Check("sort", 3, {"reverse", "case_sensitive", "attribute"}));
  BRISK_ASSIGN_OR_RETURN(std::vector<Value> items, IterItems(v));
  const bool reverse = BoolArg(args.Get(0, "reverse"), false);
  const bool cs = BoolArg(args.Get(1, "case_sensitive"), false);
  const Value* attribute = args.Get(2, "attribute");
  const std::string path = attribute && attribute->is_string() ? attribute->s() : "";
  BRISK_RETURN_IF_ERROR(SortBy(
      &items, cs, reverse, [&](const Value& x) { return path.empty() ? x : LookupPath(x, path); }));
  return Value::List(std::move(items));
}

Result<Value> FilterSum(const Value& v, const CallArgs& args) {
  BRISK_ASSIGN_OR_RETURN(std::vector<Value> items, IterItems(v));
  const Value* attribute = args.Get(0, "attribute");
  const Value* start = args.Get(1, "start");
  Value acc = start ? *start : Value::Int(0);
  for (const Value& item : items) {
    const Value x = attribute && attribute->is_string() ? LookupPath(item, attribute->s()) : item;
    if (!x.is_number() || !acc.is_number()) return Status::Error("can only sum numbers");
    if (x.is_integral() && acc.is_integral()) {
      int64_t r = 0;
      if (__builtin_add_overflow(acc.i(), x.i(), &r)) return Status::Error("integer overflow");
      acc = Value::Int(r);
    } else {
      acc = Value::Float(acc.f() + x.f());
    }
  }
  return acc;
}

Result<Value> FilterUnique(const Value& v, const CallArgs& args) {
  BRISK_ASSIGN_OR_RETURN(std::vector<Value> items, IterItems(v));
  const bool cs = BoolArg(args.Get(0, "case_sensitive"), false);
  const Value* attribute = args.Get(1, "attribute");
  auto key = [&](const Value& x) {
    Value k = attribute && attribute->is_string() ? LookupPath(x, attribute->s()) : x;
    return (!cs && k.is_string()) ? Value::Str(text::Lower(k.s())) : k;
  };
  std::vector<Value> out;
  std::vector<Value> seen;
  for (const Value& item : items) {
    const Value k = key(item);
    if (std::any_of(seen.begin(), seen.end(), [&](const Value& s) { return Equals(s, k); })) {
      continue;
    }
    seen.push_back(k);
    out.push_back(item);
  }
  return Value::List(std::move(out));
}

}  // namespace brisk::jinja::internal
