// Cross-origin access for browser clients served from another origin (`brisk serve
// --allowed-origins`), as vLLM's --allowed-origins does with Starlette's CORS middleware. Off by
// default: without it no CORS header is sent and OPTIONS is not a route. With it, a request whose
// Origin is allowed gets Access-Control-Allow-Origin (and Vary: Origin) on every response, streams
// included, and a preflight (OPTIONS with Origin and Access-Control-Request-Method) is answered
// before authentication, since browsers never send credentials with one.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "server/http_server.h"
#include "util/status.h"

namespace brisk::server {

struct CorsPolicy {
  bool any_origin = false;           // "*"
  std::vector<std::string> origins;  // exact origins ("https://app.example.com")
  bool enabled() const { return any_origin || !origins.empty(); }
};

// "*" or a comma-separated list of origins (scheme://host[:port], no path); "" = off. Errors name
// the entry that is not an origin.
Result<CorsPolicy> ParseAllowedOrigins(std::string_view list);

// The Access-Control-Allow-Origin value for a request's Origin header: "*", the origin itself, or
// "" when the policy is off, the header is absent, or the origin is not allowed.
std::string AllowOriginFor(const CorsPolicy& policy, const std::string* origin);

// True for a CORS preflight: OPTIONS with Origin and Access-Control-Request-Method.
bool IsPreflight(const HttpRequest& r);

// The answer to a preflight: 204 with the allowed methods, headers (the requested ones echoed, else
// the ones OpenAI and Anthropic clients send) and max age; 400 when the origin is not allowed.
HttpResponse PreflightResponse(const CorsPolicy& policy, const HttpRequest& r);

// `ex`, adding Access-Control-Allow-Origin: allow_origin and Vary: Origin to its response or its
// stream's header.
std::shared_ptr<HttpExchange> WithCorsHeaders(std::shared_ptr<HttpExchange> ex,
                                              std::string allow_origin);

}  // namespace brisk::server
