// Python json.dumps() formatting for the `tojson` filter.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "tokenizer/jinja/text.h"
#include "tokenizer/jinja/value.h"

namespace brisk::jinja {

namespace {

void AppendHex4(uint32_t u, std::string* out) {
  char buf[16];
  snprintf(buf, sizeof(buf), "\\u%04x", u);
  out->append(buf);
}

void AppendJsonString(std::string_view s, bool ensure_ascii, std::string* out) {
  out->push_back('"');
  size_t run = 0;  // start of the pending run of bytes copied verbatim
  for (size_t pos = 0; pos < s.size();) {
    const auto c = static_cast<unsigned char>(s[pos]);
    if (c >= 0x20 && c != '"' && c != '\\' && (!ensure_ascii || c < 0x7F)) {
      ++pos;
      continue;
    }
    out->append(s.substr(run, pos - run));
    const uint32_t cp = text::Decode(s, &pos);
    switch (cp) {
      case '"':
        out->append("\\\"");
        break;
      case '\\':
        out->append("\\\\");
        break;
      case '\n':
        out->append("\\n");
        break;
      case '\r':
        out->append("\\r");
        break;
      case '\t':
        out->append("\\t");
        break;
      case '\b':
        out->append("\\b");
        break;
      case '\f':
        out->append("\\f");
        break;
      default:
        if (cp >= 0x10000) {
          const uint32_t v = cp - 0x10000;
          AppendHex4(0xD800 + (v >> 10), out);
          AppendHex4(0xDC00 + (v & 0x3FF), out);
        } else {
          AppendHex4(cp, out);
        }
    }
    run = pos;
  }
  out->append(s.substr(run));
  out->push_back('"');
}

class JsonWriter {
 public:
  JsonWriter(const JsonOptions& opts, std::string* out) : opts_(opts), out_(out) {}

  Status Write(const Value& v, int level) {
    if (level > static_cast<int>(kMaxValueDepth) + 64) {
      return Status::Error("tojson: value nested too deeply");
    }
    switch (v.kind()) {
      case Value::Kind::kNone:
        out_->append("null");
        return Status::Ok();
      case Value::Kind::kBool:
        out_->append(v.b() ? "true" : "false");
        return Status::Ok();
      case Value::Kind::kInt:
        AppendStr(v, out_);
        return Status::Ok();
      case Value::Kind::kFloat: {
        const double d = v.f();
        if (std::isnan(d)) {
          out_->append("NaN");
        } else if (std::isinf(d)) {
          out_->append(d < 0 ? "-Infinity" : "Infinity");
        } else {
          out_->append(FloatRepr(d));
        }
        return Status::Ok();
      }
      case Value::Kind::kString:
        AppendJsonString(v.s(), opts_.ensure_ascii, out_);
        return Status::Ok();
      case Value::Kind::kArray: {
        const auto& items = v.arr().items;
        if (items.empty()) {
          out_->append("[]");
          return Status::Ok();
        }
        out_->push_back('[');
        for (size_t i = 0; i < items.size(); ++i) {
          if (i > 0) out_->append(opts_.item_sep);
          NewLine(level + 1);
          BRISK_RETURN_IF_ERROR(Write(items[i], level + 1));
        }
        NewLine(level);
        out_->push_back(']');
        return Status::Ok();
      }
      case Value::Kind::kObject: {
        const ObjectData& o = v.obj();
        if (o.is_namespace) break;
        if (o.items.empty()) {
          out_->append("{}");
          return Status::Ok();
        }
        std::vector<const std::pair<std::string, Value>*> order;
        order.reserve(o.items.size());
        for (const auto& kv : o.items) order.push_back(&kv);
        if (opts_.sort_keys) {
          std::stable_sort(order.begin(), order.end(),
                           [](const auto* a, const auto* b) { return a->first < b->first; });
        }
        out_->push_back('{');
        for (size_t i = 0; i < order.size(); ++i) {
          if (i > 0) out_->append(opts_.item_sep);
          NewLine(level + 1);
          AppendJsonString(order[i]->first, opts_.ensure_ascii, out_);
          out_->append(opts_.key_sep);
          BRISK_RETURN_IF_ERROR(Write(order[i]->second, level + 1));
        }
        NewLine(level);
        out_->push_back('}');
        return Status::Ok();
      }
      default:
        break;
    }
    return Status::Error(std::string("tojson: object of type '") + v.TypeName() +
                         "' is not JSON serializable");
  }

 private:
  void NewLine(int level) {
    if (!opts_.pretty) return;
    out_->push_back('\n');
    for (int i = 0; i < level; ++i) out_->append(opts_.indent);
  }

  const JsonOptions& opts_;
  std::string* out_;
};

}  // namespace

Status AppendJson(const Value& v, const JsonOptions& opts, std::string* out) {
  return JsonWriter(opts, out).Write(v, 0);
}

}  // namespace brisk::jinja
