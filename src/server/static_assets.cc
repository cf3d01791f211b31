// Lookup and HTTP answers for the embedded web UI (see static_assets.h).
#include "server/static_assets.h"

#include <algorithm>
#include <string>

namespace brisk::server {

std::span<const StaticAsset> AllStaticAssets() { return internal::EmbeddedStaticAssets(); }

const StaticAsset* FindStaticAsset(std::string_view url_path) {
  if (url_path == "/") url_path = "/index.html";
  // Only exact table paths match; no normalisation is attempted, so traversal tricks and
  // encoded spellings never resolve to anything.
  if (url_path.empty() || url_path.front() != '/') return nullptr;
  std::span<const StaticAsset> assets = AllStaticAssets();
  auto it =
      std::lower_bound(assets.begin(), assets.end(), url_path,
                       [](const StaticAsset& a, std::string_view path) { return a.path < path; });
  if (it == assets.end() || it->path != url_path) return nullptr;
  return &*it;
}

namespace {

bool IsSpace(char c) { return c == ' ' || c == '\t'; }

std::string_view Trim(std::string_view s) {
  while (!s.empty() && IsSpace(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsSpace(s.back())) s.remove_suffix(1);
  return s;
}

std::string_view StripWeak(std::string_view tag) {
  if (tag.size() >= 2 && tag[0] == 'W' && tag[1] == '/') tag.remove_prefix(2);
  return tag;
}

}  // namespace

bool IfNoneMatchHits(std::string_view if_none_match, std::string_view etag) {
  std::string_view want = StripWeak(etag);
  if (want.empty()) return false;
  std::string_view rest = if_none_match;
  if (Trim(rest) == "*") return true;
  // A comma-separated list of entity tags. Tags are quoted and cannot contain '"', so splitting
  // on commas outside quotes is enough; anything malformed simply does not match.
  while (!rest.empty()) {
    size_t end = 0;
    bool quoted = false;
    while (end < rest.size() && (quoted || rest[end] != ',')) {
      if (rest[end] == '"') quoted = !quoted;
      ++end;
    }
    std::string_view tag = StripWeak(Trim(rest.substr(0, end)));
    if (tag == want) return true;
    rest.remove_prefix(end < rest.size() ? end + 1 : end);
  }
  return false;
}

HttpResponse StaticAssetResponse(const StaticAsset& asset, const std::string* if_none_match) {
  HttpResponse r;
  r.content_type = std::string(asset.content_type);
  r.headers.emplace_back("ETag", std::string(asset.etag));
  r.headers.emplace_back("Cache-Control", "no-cache");
  r.headers.emplace_back("X-Content-Type-Options", "nosniff");
  // Everything the UI needs is embedded here: refuse any other origin, inline script and framing.
  r.headers.emplace_back("Content-Security-Policy",
                         "default-src 'self'; img-src 'self' data:; script-src 'self'; "
                         "style-src 'self'; connect-src 'self'; object-src 'none'; "
                         "base-uri 'none'; frame-ancestors 'none'");
  if (if_none_match != nullptr && IfNoneMatchHits(*if_none_match, asset.etag)) {
    r.status = 304;
    return r;
  }
  r.status = 200;
  r.body = std::string(asset.bytes);
  return r;
}

}  // namespace brisk::server
