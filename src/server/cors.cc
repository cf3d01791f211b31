#include "server/cors.h"

#include <algorithm>
#include <utility>

#include "server/api_error.h"
#include "util/ascii.h"

namespace brisk::server {
namespace {

// What OpenAI's and Anthropic's SDKs send when the preflight does not list its headers.
constexpr const char* kAllowHeaders = "content-type, authorization, x-api-key, anthropic-version";
constexpr const char* kAllowMethods = "GET, POST, OPTIONS";
constexpr const char* kMaxAgeSeconds = "600";  // Starlette's default, as vLLM sends

std::string_view Trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

// An origin is scheme://host[:port]: browsers send it without a path, so an entry with one could
// never match. One trailing "/" is forgiven (a copied URL).
Result<std::string> ParseOrigin(std::string_view entry) {
  if (entry.ends_with('/')) entry.remove_suffix(1);
  const size_t scheme_end = entry.find("://");
  const bool ok = scheme_end != std::string_view::npos && scheme_end > 0 &&
                  entry.size() > scheme_end + 3 &&
                  entry.find_first_of("/*?# ", scheme_end + 3) == std::string_view::npos;
  if (!ok) {
    return Status::Error("--allowed-origins: '" + std::string(entry) +
                         "' is not an origin (scheme://host[:port]) or '*'");
  }
  return AsciiLower(entry);
}

// Adds the CORS headers to whatever `inner` sends; everything else is passed through.
class CorsExchange : public HttpExchange {
 public:
  CorsExchange(std::shared_ptr<HttpExchange> inner, std::string allow_origin)
      : inner_(std::move(inner)), allow_origin_(std::move(allow_origin)) {}

  void Respond(HttpResponse response) override {
    AddHeaders(response.headers);
    inner_->Respond(std::move(response));
  }
  void StartStream(int status, std::string content_type,
                   std::vector<std::pair<std::string, std::string>> headers) override {
    AddHeaders(headers);
    inner_->StartStream(status, std::move(content_type), std::move(headers));
  }
  void Write(std::string piece) override { inner_->Write(std::move(piece)); }
  void EndStream() override { inner_->EndStream(); }
  void OnDisconnect(std::function<void()> callback) override {
    inner_->OnDisconnect(std::move(callback));
  }
  bool disconnected() const override { return inner_->disconnected(); }
  size_t queued_bytes() const override { return inner_->queued_bytes(); }

 private:
  void AddHeaders(std::vector<std::pair<std::string, std::string>>& headers) const {
    headers.emplace_back("Access-Control-Allow-Origin", allow_origin_);
    headers.emplace_back("Vary", "Origin");
  }

  std::shared_ptr<HttpExchange> inner_;
  const std::string allow_origin_;
};

}  // namespace

Result<CorsPolicy> ParseAllowedOrigins(std::string_view list) {
  CorsPolicy policy;
  if (Trim(list).empty()) return policy;
  size_t start = 0;
  while (start <= list.size()) {
    const size_t comma = std::min(list.find(',', start), list.size());
    const std::string_view entry = Trim(list.substr(start, comma - start));
    start = comma + 1;
    if (entry == "*") {
      policy.any_origin = true;
      continue;
    }
    BRISK_ASSIGN_OR_RETURN(std::string origin, ParseOrigin(entry));
    policy.origins.push_back(std::move(origin));
  }
  return policy;
}

std::string AllowOriginFor(const CorsPolicy& policy, const std::string* origin) {
  if (!origin || origin->empty() || !policy.enabled()) return "";
  if (policy.any_origin) return "*";
  const std::string lower = AsciiLower(*origin);
  const bool listed =
      std::find(policy.origins.begin(), policy.origins.end(), lower) != policy.origins.end();
  return listed ? *origin : "";
}

bool IsPreflight(const HttpRequest& r) {
  return r.method == "OPTIONS" && r.Header("origin") && r.Header("access-control-request-method");
}

HttpResponse PreflightResponse(const CorsPolicy& policy, const HttpRequest& r) {
  const std::string allow_origin = AllowOriginFor(policy, r.Header("origin"));
  if (allow_origin.empty()) {
    return ErrorResponse(ToApiError(Status::FailedPrecondition(
        "origin '" + *r.Header("origin") + "' is not allowed (brisk serve --allowed-origins)")));
  }
  HttpResponse resp;
  resp.status = 204;
  resp.content_type.clear();
  const std::string* requested = r.Header("access-control-request-headers");
  resp.headers = {{"Access-Control-Allow-Origin", allow_origin},
                  {"Vary", "Origin"},
                  {"Access-Control-Allow-Methods", kAllowMethods},
                  {"Access-Control-Allow-Headers", requested ? *requested : kAllowHeaders},
                  {"Access-Control-Max-Age", kMaxAgeSeconds}};
  return resp;
}

std::shared_ptr<HttpExchange> WithCorsHeaders(std::shared_ptr<HttpExchange> ex,
                                              std::string allow_origin) {
  return std::make_shared<CorsExchange>(std::move(ex), std::move(allow_origin));
}

}  // namespace brisk::server
