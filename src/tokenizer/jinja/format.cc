// Python string formatting: `str % args` (and the `format` filter) and `str.format(...)`.
#include <cmath>
#include <cstdio>

#include "tokenizer/jinja/builtins.h"
#include "tokenizer/jinja/text.h"

namespace brisk::jinja {

Result<std::string> StrFormat(std::string_view fmt, const CallArgs& args);

namespace {

struct Spec {
  std::string flags;
  int width = -1;
  int precision = -1;
  char fill = ' ';
  char align = '\0';  // '<', '>', '^' (str.format only)
};

void Pad(std::string s, const Spec& spec, bool left_default, std::string* out) {
  const size_t len = text::Length(s);
  const size_t width = spec.width < 0 ? 0 : static_cast<size_t>(spec.width);
  if (len >= width) {
    out->append(s);
    return;
  }
  const size_t pad = width - len;
  char align = spec.align;
  if (align == '\0') align = spec.flags.find('-') != std::string::npos || left_default ? '<' : '>';
  if (align == '<') {
    out->append(s);
    out->append(pad, spec.fill);
  } else if (align == '^') {
    out->append(pad / 2, spec.fill);
    out->append(s);
    out->append(pad - pad / 2, spec.fill);
  } else {
    out->append(pad, spec.fill);
    out->append(s);
  }
}

std::string Truncate(const std::string& s, int precision) {
  if (precision < 0) return s;
  const std::vector<size_t> off = text::CodePointOffsets(s);
  if (static_cast<size_t>(precision) + 1 >= off.size()) return s;
  return s.substr(0, off[static_cast<size_t>(precision)]);
}

// Formats a number with a C conversion (d, x, X, o, f, F, e, E, g, G).
Result<std::string> FormatNumber(const Value& v, char type, const Spec& spec) {
  if (!v.is_number()) {
    return Status::Error(std::string("%") + type + " format: a real number is required, not " +
                         v.TypeName());
  }
  std::string f = "%" + spec.flags;
  if (spec.width >= 0) f += std::to_string(spec.width);
  if (spec.precision >= 0) f += "." + std::to_string(spec.precision);
  char buf[512];
  if (type == 'd' || type == 'i' || type == 'u' || type == 'x' || type == 'X' || type == 'o') {
    if (v.is_float() && !std::isfinite(v.f())) return Status::Error("cannot convert float to int");
    const long long i = v.is_float() ? static_cast<long long>(v.f()) : v.i();
    f += "ll";
    f.push_back(type == 'i' || type == 'u' ? 'd' : type);
    snprintf(buf, sizeof(buf), f.c_str(), i);
  } else {
    f.push_back(type);
    snprintf(buf, sizeof(buf), f.c_str(), v.f());
  }
  return std::string(buf);
}

// The arguments of `str % args`: a tuple's items in order, a mapping for `%(key)s`, or one value.
struct PercentArgs {
  std::vector<Value> values;
  const ObjectData* mapping = nullptr;
  size_t next = 0;  // the next positional value to consume
};

PercentArgs SplitPercentArgs(const Value& args) {
  PercentArgs out;
  if (args.is_array() && args.arr().is_tuple) {
    out.values = args.arr().items;
  } else if (args.is_object() && !args.obj().is_namespace) {
    out.mapping = &args.obj();
  } else {
    out.values.push_back(args);
  }
  return out;
}

// A width or precision at fmt[*i]: digits, or '*' taking the next integral argument.
void ParsePercentNumber(std::string_view fmt, size_t* i, PercentArgs* args, int* dst) {
  if (*i < fmt.size() && fmt[*i] == '*') {
    ++*i;
    if (args->next < args->values.size() && args->values[args->next].is_integral())
      *dst = static_cast<int>(args->values[args->next++].i());
    return;
  }
  int n = -1;
  while (*i < fmt.size() && fmt[*i] >= '0' && fmt[*i] <= '9') {
    n = (n < 0 ? 0 : n) * 10 + (fmt[(*i)++] - '0');
    if (n > 4096) n = 4096;
  }
  if (n >= 0) *dst = n;
}

// Flags, width, precision and length modifiers from fmt[*i]; leaves *i on the conversion type.
Spec ParsePercentSpec(std::string_view fmt, size_t* i, PercentArgs* args) {
  Spec spec;
  while (*i < fmt.size() && std::string_view("-+ #0").find(fmt[*i]) != std::string_view::npos) {
    spec.flags.push_back(fmt[(*i)++]);
  }
  ParsePercentNumber(fmt, i, args, &spec.width);
  if (*i < fmt.size() && fmt[*i] == '.') {
    ++*i;
    spec.precision = 0;
    ParsePercentNumber(fmt, i, args, &spec.precision);
  }
  while (*i < fmt.size() && (fmt[*i] == 'h' || fmt[*i] == 'l' || fmt[*i] == 'L')) ++*i;
  return spec;
}

// One `%` conversion of `v` appended to *out.
Status AppendPercentConversion(char type, const Value& v, const Spec& spec, std::string* out) {
  switch (type) {
    case 's':
    case 'r':
    case 'a': {
      std::string s;
      if (type == 's') {
        s = ToStr(v);
      } else {
        AppendRepr(v, &s);
      }
      Pad(Truncate(s, spec.precision), spec, false, out);
      return Status::Ok();
    }
    case 'c': {
      std::string s;
      if (v.is_integral() && v.i() >= 0 && v.i() <= 0x10FFFF) {
        text::AppendUtf8(&s, static_cast<uint32_t>(v.i()));
      } else if (v.is_string() && text::Length(v.s()) == 1) {
        s = v.s();
      } else {
        return Status::Error("%c requires an int or a single character");
      }
      Pad(s, spec, false, out);
      return Status::Ok();
    }
    case 'd':
    case 'i':
    case 'u':
    case 'x':
    case 'X':
    case 'o':
    case 'f':
    case 'F':
    case 'e':
    case 'E':
    case 'g':
    case 'G': {
      BRISK_ASSIGN_OR_RETURN(std::string s, FormatNumber(v, type, spec));
      *out += s;
      return Status::Ok();
    }
    default:
      return Status::Error(std::string("unsupported format character '") + type + "'");
  }
}

// One `%...` directive starting after the '%' at fmt[*i]; leaves *i on its last character.
Status AppendPercentDirective(std::string_view fmt, size_t* i, PercentArgs* args,
                              std::string* out) {
  const Value* v = nullptr;
  if (fmt[*i] == '(') {
    const size_t close = fmt.find(')', *i);
    if (close == std::string_view::npos) return Status::Error("incomplete format key");
    if (args->mapping == nullptr) return Status::Error("format requires a mapping");
    v = args->mapping->Find(fmt.substr(*i + 1, close - *i - 1));
    if (v == nullptr) return Status::Error("format key not found");
    *i = close + 1;
  }
  Spec spec = ParsePercentSpec(fmt, i, args);
  if (*i >= fmt.size()) return Status::Error("incomplete format");
  const char type = fmt[*i];
  if (v == nullptr) {
    if (args->next >= args->values.size()) {
      return Status::Error("not enough arguments for format string");
    }
    v = &args->values[args->next++];
  }
  if (spec.flags.find('0') != std::string::npos && spec.flags.find('-') == std::string::npos &&
      (type == 's' || type == 'r')) {
    spec.flags.clear();
  }
  return AppendPercentConversion(type, *v, spec, out);
}

// The argument a `{field}` names: the next positional one, a positional index, or a keyword.
const Value* FindFormatField(std::string_view field, const CallArgs& args, size_t* auto_index) {
  if (field.empty()) {
    const Value* v = *auto_index < args.pos.size() ? &args.pos[*auto_index] : nullptr;
    ++*auto_index;
    return v;
  }
  if (field.find_first_not_of("0123456789") == std::string_view::npos) {
    const size_t idx = std::stoul(std::string(field));
    return idx < args.pos.size() ? &args.pos[idx] : nullptr;
  }
  return args.Get(SIZE_MAX, field);
}

// A str.format spec: [[fill]align][width][.precision][type].
struct FormatSpec {
  Spec pad;  // fill, align and width
  int precision = -1;
  char type = '\0';
};

Result<FormatSpec> ParseFormatSpec(std::string_view spec_text) {
  FormatSpec spec;
  size_t p = 0;
  if (spec_text.size() >= 2 &&
      std::string_view("<>^").find(spec_text[1]) != std::string_view::npos) {
    spec.pad.fill = spec_text[0];
    spec.pad.align = spec_text[1];
    p = 2;
  } else if (!spec_text.empty() &&
             std::string_view("<>^").find(spec_text[0]) != std::string_view::npos) {
    spec.pad.align = spec_text[0];
    p = 1;
  }
  int width = -1;
  while (p < spec_text.size() && spec_text[p] >= '0' && spec_text[p] <= '9') {
    width = (width < 0 ? 0 : width) * 10 + (spec_text[p++] - '0');
    if (width > 4096) width = 4096;
  }
  spec.pad.width = width;
  if (p < spec_text.size() && spec_text[p] == '.') {
    ++p;
    spec.precision = 0;
    while (p < spec_text.size() && spec_text[p] >= '0' && spec_text[p] <= '9') {
      spec.precision = spec.precision * 10 + (spec_text[p++] - '0');
      if (spec.precision > 100) spec.precision = 100;
    }
  }
  spec.type = p < spec_text.size() ? spec_text[p++] : '\0';
  if (p != spec_text.size()) {
    return Status::Error("unsupported format spec '" + std::string(spec_text) + "'");
  }
  return spec;
}

// `v` formatted by a parsed spec and a conversion ('s' or 'r'), appended to *out.
Status AppendFormatted(const Value& v, FormatSpec spec, char conversion, std::string* out) {
  std::string s;
  if (spec.type == '\0' && spec.precision >= 0 && v.is_float()) spec.type = 'g';
  const char type = spec.type;
  if (type == 'd' || type == 'f' || type == 'F' || type == 'e' || type == 'E' || type == 'g' ||
      type == 'x' || type == 'X' || type == 'o') {
    Spec num;
    num.precision = spec.precision;
    BRISK_ASSIGN_OR_RETURN(s, FormatNumber(v, type, num));
    Pad(std::move(s), spec.pad, false, out);
    return Status::Ok();
  }
  if (type != '\0' && type != 's') {
    return Status::Error(std::string("unsupported format type '") + type + "'");
  }
  if (conversion == 'r') {
    AppendRepr(v, &s);
  } else {
    AppendStr(v, &s);
  }
  Pad(Truncate(s, spec.precision), spec.pad, !v.is_number(), out);
  return Status::Ok();
}

// One `{field!conversion:spec}` (the text between the braces) appended to *out.
Status AppendReplacementField(std::string_view field, const CallArgs& args, size_t* auto_index,
                              std::string* out) {
  std::string_view spec_text;
  if (size_t colon = field.find(':'); colon != std::string_view::npos) {
    spec_text = field.substr(colon + 1);
    field = field.substr(0, colon);
  }
  char conversion = 's';
  if (size_t bang = field.find('!'); bang != std::string_view::npos) {
    if (bang + 2 != field.size()) return Status::Error("bad conversion in format string");
    conversion = field[bang + 1];
    field = field.substr(0, bang);
  }
  const Value* v = FindFormatField(field, args, auto_index);
  if (v == nullptr) {
    return Status::Error("format field '" + std::string(field) + "' has no argument");
  }
  BRISK_ASSIGN_OR_RETURN(FormatSpec spec, ParseFormatSpec(spec_text));
  return AppendFormatted(*v, spec, conversion, out);
}

}  // namespace

Result<std::string> PercentFormat(std::string_view fmt, const Value& args) {
  PercentArgs split = SplitPercentArgs(args);
  std::string out;
  for (size_t i = 0; i < fmt.size(); ++i) {
    if (fmt[i] != '%') {
      out.push_back(fmt[i]);
      continue;
    }
    if (++i >= fmt.size()) return Status::Error("incomplete format");
    if (fmt[i] == '%') {
      out.push_back('%');
      continue;
    }
    BRISK_RETURN_IF_ERROR(AppendPercentDirective(fmt, &i, &split, &out));
  }
  if (split.mapping == nullptr && split.next < split.values.size()) {
    return Status::Error("not all arguments converted during string formatting");
  }
  return out;
}

Result<std::string> StrFormat(std::string_view fmt, const CallArgs& args) {
  std::string out;
  size_t auto_index = 0;
  for (size_t i = 0; i < fmt.size(); ++i) {
    const char c = fmt[i];
    if (c == '}') {
      if (i + 1 < fmt.size() && fmt[i + 1] == '}') ++i;
      out.push_back('}');
      continue;
    }
    if (c != '{') {
      out.push_back(c);
      continue;
    }
    if (i + 1 < fmt.size() && fmt[i + 1] == '{') {
      out.push_back('{');
      ++i;
      continue;
    }
    const size_t close = fmt.find('}', i);
    if (close == std::string_view::npos) return Status::Error("single '{' in format string");
    const std::string_view field = fmt.substr(i + 1, close - i - 1);
    i = close;
    BRISK_RETURN_IF_ERROR(AppendReplacementField(field, args, &auto_index, &out));
  }
  if (out.size() > args.max_string) return Status::Error("string result exceeds the output limit");
  return out;
}

}  // namespace brisk::jinja
