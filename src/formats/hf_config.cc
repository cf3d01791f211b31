#include "formats/hf_config.h"

#include <exception>
#include <nlohmann/json.hpp>

#include "formats/json_object.h"
#include "util/mapped_file.h"

namespace brisk::hf {
namespace {

using Json = nlohmann::json;

std::string TypeOf(const Json& v) { return std::string(v.type_name()); }

// Finds `key`; null counts as absent.
const Json* Get(const Json& obj, const char* key) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return nullptr;
  return &*it;
}

class Reader {
 public:
  Reader(const Json& obj, const std::string& origin) : obj_(obj), origin_(origin) {}

  Status Error(const std::string& msg) const { return Status::Error(origin_ + ": " + msg); }

  Status Int(const char* key, std::optional<int64_t>* out) const {
    const Json* v = Get(obj_, key);
    if (!v) return Status::Ok();
    if (!v->is_number_integer())
      return Error("'" + std::string(key) + "' must be an integer, found " + TypeOf(*v) + " " +
                   v->dump());
    *out = v->get<int64_t>();
    return Status::Ok();
  }
  Status RequiredInt(const char* key, int64_t* out) const {
    std::optional<int64_t> v;
    BRISK_RETURN_IF_ERROR(Int(key, &v));
    if (!v) return Error("missing required field '" + std::string(key) + "'");
    *out = *v;
    return Status::Ok();
  }
  Status Float(const char* key, std::optional<double>* out) const {
    const Json* v = Get(obj_, key);
    if (!v) return Status::Ok();
    if (!v->is_number())
      return Error("'" + std::string(key) + "' must be a number, found " + TypeOf(*v) + " " +
                   v->dump());
    *out = v->get<double>();
    return Status::Ok();
  }
  Status Bool(const char* key, std::optional<bool>* out) const {
    const Json* v = Get(obj_, key);
    if (!v) return Status::Ok();
    if (!v->is_boolean())
      return Error("'" + std::string(key) + "' must be true or false, found " + TypeOf(*v) + " " +
                   v->dump());
    *out = v->get<bool>();
    return Status::Ok();
  }
  Status String(const char* key, std::string* out) const {
    const Json* v = Get(obj_, key);
    if (!v) return Status::Ok();
    if (!v->is_string())
      return Error("'" + std::string(key) + "' must be a string, found " + TypeOf(*v) + " " +
                   v->dump());
    *out = v->get<std::string>();
    return Status::Ok();
  }

 private:
  const Json& obj_;
  const std::string& origin_;
};

Status ParseConfigObject(const Json& j, const std::string& origin, Config* c) {
  Reader r(j, origin);
  if (const Json* a = Get(j, "architectures")) {
    if (!a->is_array()) return r.Error("'architectures' must be a list of strings");
    for (const Json& s : *a) {
      if (!s.is_string()) return r.Error("'architectures' must be a list of strings");
      c->architectures.push_back(s.get<std::string>());
    }
  }
  BRISK_RETURN_IF_ERROR(r.String("model_type", &c->model_type));
  BRISK_RETURN_IF_ERROR(r.RequiredInt("hidden_size", &c->hidden_size));
  BRISK_RETURN_IF_ERROR(r.RequiredInt("num_hidden_layers", &c->num_hidden_layers));
  BRISK_RETURN_IF_ERROR(r.RequiredInt("num_attention_heads", &c->num_attention_heads));
  BRISK_RETURN_IF_ERROR(r.RequiredInt("intermediate_size", &c->intermediate_size));
  BRISK_RETURN_IF_ERROR(r.RequiredInt("vocab_size", &c->vocab_size));
  BRISK_RETURN_IF_ERROR(r.Int("num_key_value_heads", &c->num_key_value_heads));
  BRISK_RETURN_IF_ERROR(r.Int("head_dim", &c->head_dim));
  BRISK_RETURN_IF_ERROR(r.Int("max_position_embeddings", &c->max_position_embeddings));
  BRISK_RETURN_IF_ERROR(r.Float("rope_theta", &c->rope_theta));
  BRISK_RETURN_IF_ERROR(r.Float("rms_norm_eps", &c->rms_norm_eps));
  BRISK_RETURN_IF_ERROR(r.Bool("tie_word_embeddings", &c->tie_word_embeddings));
  BRISK_RETURN_IF_ERROR(r.Bool("attention_bias", &c->attention_bias));
  BRISK_RETURN_IF_ERROR(r.Bool("use_sliding_window", &c->use_sliding_window));
  BRISK_RETURN_IF_ERROR(r.String("hidden_act", &c->hidden_act));
  BRISK_RETURN_IF_ERROR(r.String("torch_dtype", &c->torch_dtype));
  if (c->torch_dtype.empty()) BRISK_RETURN_IF_ERROR(r.String("dtype", &c->torch_dtype));

  // RoPE scaling: "rope_scaling" (transformers 4.x) or "rope_parameters" (5.x, which also moves
  // rope_theta there). Only the plain ("default") rotary embedding is recorded as absent.
  for (const char* key : {"rope_scaling", "rope_parameters"}) {
    const Json* rs = Get(j, key);
    if (!rs) continue;
    if (!rs->is_object()) return r.Error("'" + std::string(key) + "' must be an object or null");
    Reader rr(*rs, origin);
    if (!c->rope_theta) BRISK_RETURN_IF_ERROR(rr.Float("rope_theta", &c->rope_theta));
    std::string type;
    BRISK_RETURN_IF_ERROR(rr.String("rope_type", &type));
    if (type.empty()) BRISK_RETURN_IF_ERROR(rr.String("type", &type));
    if (!type.empty() && type != "default") c->rope_scaling = rs->dump();
    if (type.empty() && std::string(key) == "rope_scaling" && !rs->empty())
      c->rope_scaling = rs->dump();
  }
  return Status::Ok();
}

}  // namespace

Result<std::string> ReadTextFile(const std::string& path, size_t max_bytes) {
  BRISK_ASSIGN_OR_RETURN(MappedFile m, MappedFile::Open(path));
  if (m.size() > max_bytes)
    return Status::Error(path + ": file is " + std::to_string(m.size()) + " bytes, more than the " +
                         std::to_string(max_bytes) + " expected");
  return std::string(reinterpret_cast<const char*>(m.data()), m.size());
}

Result<Config> ParseConfigJson(std::string_view text, const std::string& origin) {
  Config c;
  try {
    BRISK_ASSIGN_OR_RETURN(const Json j, ParseJsonObject(text, origin));
    BRISK_RETURN_IF_ERROR(ParseConfigObject(j, origin, &c));
  } catch (const std::exception& e) {  // nothing from nlohmann may escape
    return Status::Error(origin + ": malformed config: " + e.what());
  }
  return c;
}

Result<Config> ReadConfigJson(const std::string& path) {
  BRISK_ASSIGN_OR_RETURN(std::string text, ReadTextFile(path, size_t(64) << 20));
  return ParseConfigJson(text, path);
}

Result<std::string> ParseChatTemplate(std::string_view text, const std::string& origin) {
  auto fail = [&](const std::string& msg) { return Status::Error(origin + ": " + msg); };
  try {
    BRISK_ASSIGN_OR_RETURN(const Json j, ParseJsonObject(text, origin));
    const Json* t = Get(j, "chat_template");
    if (!t) return std::string();
    if (t->is_string()) return t->get<std::string>();
    if (!t->is_array())
      return fail("'chat_template' must be a string or a list of {name, template}, found " +
                  TypeOf(*t));
    std::string first;
    bool have_first = false;
    for (const Json& e : *t) {
      if (!e.is_object()) return fail("'chat_template' list entries must be objects");
      const Json* name = Get(e, "name");
      const Json* tmpl = Get(e, "template");
      if (!name || !name->is_string() || !tmpl || !tmpl->is_string())
        return fail("'chat_template' list entries need string 'name' and 'template'");
      if (name->get<std::string>() == "default") return tmpl->get<std::string>();
      if (!have_first) {
        first = tmpl->get<std::string>();
        have_first = true;
      }
    }
    return first;
  } catch (const std::exception& e) {
    return fail(std::string("malformed tokenizer config: ") + e.what());
  }
}

Result<std::string> ReadChatTemplate(const std::string& path) {
  BRISK_ASSIGN_OR_RETURN(std::string text, ReadTextFile(path, size_t(64) << 20));
  return ParseChatTemplate(text, path);
}

}  // namespace brisk::hf
