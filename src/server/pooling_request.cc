#include "server/pooling_request.h"

#include <climits>

#include "engine/param_range.h"
#include "server/openai_request.h"
#include "server/request_fields.h"

namespace brisk::server {
namespace {

using Json = nlohmann::ordered_json;

std::string At(const std::string& field, size_t i) { return field + "[" + std::to_string(i) + "]"; }

std::optional<ApiError> CountWithin(const Json& arr, const char* field, size_t max_inputs) {
  if (arr.empty()) return BadRequest(std::string(field) + " must not be empty", field);
  if (arr.size() > max_inputs)
    return BadRequest(std::string(field) + " holds " + std::to_string(arr.size()) +
                          " items; this server takes at most " + std::to_string(max_inputs) +
                          " per request",
                      field);
  return std::nullopt;
}

std::optional<ApiError> Text(const Json& v, const std::string& name, std::string* out) {
  if (!v.is_string()) return Fields::TypeError(name, "a string", v);
  *out = v.get<std::string>();
  if (out->empty()) return BadRequest(name + " must not be an empty string", name);
  return std::nullopt;
}

std::optional<ApiError> Ids(const Json& arr, const std::string& name, int n_vocab,
                            std::vector<int32_t>* out) {
  if (arr.empty()) return BadRequest(name + " must not be an empty array", name);
  for (size_t i = 0; i < arr.size(); ++i) {
    int64_t id = 0;
    if (!Fields::AsInt64(arr[i], &id))
      return Fields::TypeError(At(name, i), "a token id (integer)", arr[i]);
    if (Status st = CheckTokenId(id, n_vocab, name, At(name, i)); !st.ok()) return ToApiError(st);
    out->push_back(int32_t(id));
  }
  return std::nullopt;
}

// input: a string, an array of strings, an array of token ids, or an array of such arrays.
std::optional<ApiError> ParseInput(const Fields& f, const PoolingLimits& lim,
                                   EmbeddingsRequest* r) {
  const Json* in = f.Get("input");
  if (!in) return BadRequest("missing required parameter 'input'", "input");
  if (in->is_string()) {
    r->texts.emplace_back();
    return Text(*in, "input", &r->texts.back());
  }
  static constexpr const char* kShape =
      "input must be a string, an array of strings, an array of token ids or an array of token "
      "id arrays";
  if (!in->is_array())
    return BadRequest(std::string(kShape) + ", got " + JsonTypeName(*in), "input");
  if (auto e = CountWithin(*in, "input", lim.max_inputs)) return e;
  const Json& first = (*in)[0];
  if (first.is_number()) {
    r->token_inputs.emplace_back();
    return Ids(*in, "input", lim.n_vocab, &r->token_inputs.back());
  }
  for (size_t i = 0; i < in->size(); ++i) {
    const Json& item = (*in)[i];
    const std::string name = At("input", i);
    if (first.is_string()) {
      r->texts.emplace_back();
      if (auto e = Text(item, name, &r->texts.back())) return e;
    } else if (first.is_array()) {
      if (!item.is_array()) return Fields::TypeError(name, "an array of token ids", item);
      r->token_inputs.emplace_back();
      if (auto e = Ids(item, name, lim.n_vocab, &r->token_inputs.back())) return e;
    } else {
      return BadRequest(kShape, "input");
    }
  }
  return std::nullopt;
}

std::optional<ApiError> ParseEncoding(const Fields& f, bool* base64) {
  std::string format = "float";
  if (auto e = f.String("encoding_format", &format)) return e;
  if (format != "float" && format != "base64")
    return BadRequest("encoding_format must be \"float\" or \"base64\", got \"" + format + "\"",
                      "encoding_format");
  *base64 = format == "base64";
  return std::nullopt;
}

std::optional<ApiError> ParseDocuments(const Fields& f, size_t max_inputs, RerankRequest* r) {
  const Json* docs = f.Get("documents");
  if (!docs) return BadRequest("missing required parameter 'documents'", "documents");
  if (!docs->is_array()) return Fields::TypeError("documents", "an array", *docs);
  if (auto e = CountWithin(*docs, "documents", max_inputs)) return e;
  for (size_t i = 0; i < docs->size(); ++i) {
    const Json& d = (*docs)[i];
    const std::string name = At("documents", i);
    r->documents.emplace_back();
    if (d.is_object()) {
      // Cohere's and Jina's object form: {"text": ...}.
      auto t = d.find("text");
      if (t == d.end()) return BadRequest(name + " must have a \"text\" string", name + ".text");
      if (auto e = Text(*t, name + ".text", &r->documents.back())) return e;
    } else if (auto e = Text(d, name, &r->documents.back())) {
      return e;
    }
  }
  return std::nullopt;
}

}  // namespace

std::variant<EmbeddingsRequest, ApiError> ParseEmbeddingsRequest(std::string_view body,
                                                                 const PoolingLimits& limits) {
  auto parsed = ParseJsonBody(body);
  if (auto* err = std::get_if<ApiError>(&parsed)) return *err;
  const Fields f(std::get<Json>(parsed));
  EmbeddingsRequest r;
  if (auto e = ParseModelField(f, limits.model_id, &r.model)) return *e;
  if (auto e = ParseInput(f, limits, &r)) return *e;
  if (auto e = f.Int32("dimensions", IntRange(1, limits.n_embd), &r.dimensions)) return *e;
  if (auto e = ParseEncoding(f, &r.base64)) return *e;
  std::string user;  // accepted and ignored, as the API documents it (abuse monitoring)
  if (auto e = f.String("user", &user)) return *e;
  return r;
}

std::variant<RerankRequest, ApiError> ParseRerankRequest(std::string_view body,
                                                         const PoolingLimits& limits) {
  auto parsed = ParseJsonBody(body);
  if (auto* err = std::get_if<ApiError>(&parsed)) return *err;
  const Fields f(std::get<Json>(parsed));
  RerankRequest r;
  if (auto e = ParseModelField(f, limits.model_id, &r.model)) return *e;
  const Json* query = f.Get("query");
  if (!query) return BadRequest("missing required parameter 'query'", "query");
  if (auto e = Text(*query, "query", &r.query)) return *e;
  if (auto e = ParseDocuments(f, limits.max_inputs, &r)) return *e;
  if (auto e = f.String("instruction", &r.instruction)) return *e;
  if (auto e = f.Int32("top_n", IntRange(0, INT_MAX), &r.top_n)) return *e;
  if (auto e = f.Bool("return_documents", &r.return_documents)) return *e;
  return r;
}

}  // namespace brisk::server
