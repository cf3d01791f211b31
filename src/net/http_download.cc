#include "net/http_download.h"

#include <curl/curl.h>

#include <cctype>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string_view>
#include <thread>
#include <vector>

#include "util/ascii.h"
#include "util/clock.h"
#include "util/sha256.h"

namespace brisk::net {
namespace fs = std::filesystem;
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// `W/"abc"` -> `abc`.
std::string EtagValue(std::string_view v) {
  v = Trim(v);
  if (v.substr(0, 2) == "W/" || v.substr(0, 2) == "w/") v.remove_prefix(2);
  if (v.size() >= 2 && v.front() == '"' && v.back() == '"') v = v.substr(1, v.size() - 2);
  return std::string(v);
}

bool ParseInt(std::string_view s, int64_t* out) {
  s = Trim(s);
  if (s.empty()) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && p == s.data() + s.size() && *out >= 0;
}

// "bytes FIRST-LAST/TOTAL", "bytes */TOTAL", "bytes FIRST-LAST/*"; -1 for an absent part.
struct ContentRange {
  bool ok = false;
  int64_t first = -1, last = -1, total = -1;
};

ContentRange ParseContentRange(std::string_view v) {
  ContentRange r;
  v = Trim(v);
  if (AsciiLower(v.substr(0, 6)) != "bytes ") return r;
  v.remove_prefix(6);
  const size_t slash = v.find('/');
  if (slash == std::string_view::npos) return r;
  std::string_view range = Trim(v.substr(0, slash)), total = Trim(v.substr(slash + 1));
  if (total != "*" && !ParseInt(total, &r.total)) return r;
  if (range != "*") {
    const size_t dash = range.find('-');
    if (dash == std::string_view::npos || !ParseInt(range.substr(0, dash), &r.first) ||
        !ParseInt(range.substr(dash + 1), &r.last) || r.last < r.first)
      return r;
  }
  r.ok = true;
  return r;
}

// Headers of the current response of a redirect chain.
struct Response {
  long status = 0;
  std::string reason;
  std::string content_range;
  int64_t content_length = -1;
  std::string etag;
};

enum class Outcome { kComplete, kRestart, kRetryable, kFailed };

// State of one request (and the redirects it follows).
struct Transfer {
  const DownloadOptions* opts = nullptr;
  std::string partial;
  uint64_t offset = 0;      // the Range start asked for
  Response resp;            // current response
  std::string linked_etag;  // X-Linked-ETag from any response of the chain
  bool body_started = false;
  bool discard = false;    // body of an error response: not written
  std::string error_body;  // its first bytes
  bool restart = false;    // the server answered another range: start over from zero
  FILE* file = nullptr;
  Sha256 hash;
  uint64_t bytes = 0;  // bytes in the partial file
  uint64_t resumed_from = 0;
  int64_t total = -1;
  std::string sha256;  // set when the transfer completed
  Status error;        // set by a callback that stopped the transfer
  double start = 0;
};

Status HashPrefix(const std::string& path, uint64_t n, Sha256* hash) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return Status::Error("cannot open " + path + ": " + std::strerror(errno));
  std::vector<uint8_t> buf(1 << 20);
  uint64_t left = n;
  while (left > 0) {
    const size_t want = size_t(std::min<uint64_t>(left, buf.size()));
    const size_t got = std::fread(buf.data(), 1, want, f);
    if (got == 0) break;
    hash->Update(buf.data(), got);
    left -= got;
  }
  std::fclose(f);
  if (left != 0) return Status::Error(path + " changed while it was being resumed");
  return Status::Ok();
}

size_t OnHeader(char* data, size_t size, size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const size_t len = size * count;
  std::string_view line = Trim(std::string_view(data, len));
  if (line.substr(0, 5) == "HTTP/") {  // status line: a new response begins
    t->resp = Response{};
    const size_t sp = line.find(' ');
    if (sp != std::string_view::npos) {
      std::string_view rest = line.substr(sp + 1);
      const size_t sp2 = rest.find(' ');
      int64_t code = 0;
      if (ParseInt(rest.substr(0, sp2), &code)) t->resp.status = long(code);
      if (sp2 != std::string_view::npos) t->resp.reason = std::string(Trim(rest.substr(sp2 + 1)));
    }
    return len;
  }
  const size_t colon = line.find(':');
  if (colon == std::string_view::npos) return len;
  const std::string name = AsciiLower(Trim(line.substr(0, colon)));
  const std::string_view value = Trim(line.substr(colon + 1));
  if (name == "content-range") {
    t->resp.content_range = std::string(value);
  } else if (name == "content-length") {
    int64_t n = -1;
    if (ParseInt(value, &n)) t->resp.content_length = n;
  } else if (name == "etag") {
    t->resp.etag = EtagValue(value);
  } else if (name == "x-linked-etag") {
    t->linked_etag = EtagValue(value);
  }
  return len;
}

// First bytes of the final response's body: decide where they go.
bool StartBody(Transfer* t) {
  t->body_started = true;
  if (t->resp.status == 206) {
    const ContentRange cr = ParseContentRange(t->resp.content_range);
    if (!cr.ok || cr.first != int64_t(t->offset)) {
      t->restart = true;
      return false;
    }
    t->hash.Reset();
    if (t->offset > 0) {
      Status st = HashPrefix(t->partial, t->offset, &t->hash);
      if (!st.ok()) {
        t->error = st;
        return false;
      }
    }
    t->file = std::fopen(t->partial.c_str(), "ab");
    t->bytes = t->resumed_from = t->offset;
    t->total = cr.total;
  } else if (t->resp.status == 200) {  // the whole file (a server ignoring Range restarts here)
    t->file = std::fopen(t->partial.c_str(), "wb");
    t->hash.Reset();
    t->bytes = t->resumed_from = 0;
    t->total = t->resp.content_length;
  } else {
    t->discard = true;
    return true;
  }
  if (!t->file) {
    t->error = Status::Error("cannot write " + t->partial + ": " + std::strerror(errno));
    return false;
  }
  return true;
}

size_t OnBody(char* data, size_t size, size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const size_t len = size * count;
  if (!t->body_started && !StartBody(t)) return 0;  // 0 != len: libcurl stops the transfer
  if (t->discard) {
    if (t->error_body.size() < 200) t->error_body.append(data, std::min<size_t>(len, 200));
    return len;
  }
  if (std::fwrite(data, 1, len, t->file) != len) {
    t->error = Status::Error("cannot write " + t->partial + ": " + std::strerror(errno));
    return 0;
  }
  t->hash.Update(data, len);
  t->bytes += len;
  if (t->opts->progress) {
    DownloadProgress p;
    p.bytes = t->bytes;
    p.total = t->total;
    p.resumed_from = t->resumed_from;
    p.elapsed_s = NowSeconds() - t->start;
    t->opts->progress(p);
  }
  return len;
}

std::string HttpError(const std::string& url, CURL* curl, const Transfer& t) {
  std::string msg = "HTTP status " + std::to_string(t.resp.status);
  if (!t.resp.reason.empty()) msg += " (" + t.resp.reason + ")";
  msg += " for " + url;
  char* effective = nullptr;
  if (curl_easy_getinfo(curl, CURLINFO_EFFECTIVE_URL, &effective) == CURLE_OK && effective &&
      url != effective)
    msg += " (redirected to " + std::string(effective) + ")";
  // A short plain-text body says why ("Entry not found"); anything else is left out.
  std::string body(Trim(t.error_body.substr(0, 120)));
  bool printable = !body.empty() && body.find('<') == std::string::npos;
  for (char c : body) printable = printable && (c >= 0x20 && c < 0x7f);
  if (printable) msg += ": " + body;
  return msg;
}

bool Retryable(CURLcode rc) {
  switch (rc) {
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
    case CURLE_COULDNT_CONNECT:
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_PARTIAL_FILE:
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
    case CURLE_SSL_CONNECT_ERROR:
      return true;
    default:
      return false;
  }
}

std::string Interrupted(const std::string& url, const Transfer& t, const std::string& why) {
  std::string msg = "network error downloading " + url + ": " + why;
  if (t.bytes > 0) {
    msg += " (after " + std::to_string(t.bytes);
    if (t.total >= 0) msg += " of " + std::to_string(t.total);
    msg += " bytes; the partial file " + t.partial + " is kept: run again to resume)";
  }
  return msg;
}

Outcome RunOnce(CURL* curl, const std::string& url, Transfer& t, Status* err) {
  char errbuf[CURL_ERROR_SIZE] = {0};
  const std::string range = std::to_string(t.offset) + "-";
  const DownloadOptions& o = *t.opts;
  curl_easy_reset(curl);
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, errbuf);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 1L);
  curl_easy_setopt(curl, CURLOPT_MAXREDIRS, o.max_redirects);
#if LIBCURL_VERSION_NUM >= 0x075500
  curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(curl, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
#endif
  curl_easy_setopt(curl, CURLOPT_USERAGENT, "brisk/" BRISK_VERSION);
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT, o.connect_timeout_s);
  curl_easy_setopt(curl, CURLOPT_LOW_SPEED_LIMIT, o.stall_min_bytes_per_s);
  curl_easy_setopt(curl, CURLOPT_LOW_SPEED_TIME, o.stall_timeout_s);
  curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, OnHeader);
  curl_easy_setopt(curl, CURLOPT_HEADERDATA, &t);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, OnBody);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &t);
  if (t.offset > 0) curl_easy_setopt(curl, CURLOPT_RANGE, range.c_str());

  const CURLcode rc = curl_easy_perform(curl);
  if (t.file) {
    if (std::fclose(t.file) != 0 && t.error.ok())
      t.error = Status::Error("cannot write " + t.partial + ": " + std::strerror(errno));
    t.file = nullptr;
  }
  if (t.restart) return Outcome::kRestart;
  if (!t.error.ok()) {
    *err = t.error;
    return Outcome::kFailed;
  }
  const long status = t.resp.status;
  if (status == 416 && t.offset > 0) {  // nothing past the partial file: complete or stale
    const ContentRange cr = ParseContentRange(t.resp.content_range);
    if (!cr.ok || cr.total != int64_t(t.offset)) return Outcome::kRestart;
    auto hex = Sha256::HexOfFile(t.partial);
    if (!hex.ok()) {
      *err = hex.status();
      return Outcome::kFailed;
    }
    t.sha256 = *hex;
    t.bytes = t.resumed_from = t.offset;
    t.total = cr.total;
    return Outcome::kComplete;
  }
  if (status >= 400) {
    *err = Status::Error(HttpError(url, curl, t));
    return Outcome::kFailed;
  }
  if (rc != CURLE_OK) {
    *err = Status::Error(Interrupted(url, t, errbuf[0] ? errbuf : curl_easy_strerror(rc)));
    return Retryable(rc) ? Outcome::kRetryable : Outcome::kFailed;
  }
  if (status != 200 && status != 206) {
    *err = Status::Error("unexpected HTTP status " + std::to_string(status) + " for " + url);
    return Outcome::kFailed;
  }
  if (!t.body_started) {  // an empty body
    if (status == 206) return Outcome::kRestart;
    if (!StartBody(&t)) {
      *err = t.error;
      return Outcome::kFailed;
    }
    std::fclose(t.file);
    t.file = nullptr;
  }
  if (t.total >= 0 && t.bytes != uint64_t(t.total)) {
    *err = Status::Error(Interrupted(url, t, "the connection closed early"));
    return Outcome::kRetryable;
  }
  t.sha256 = t.hash.FinalHex();
  return Outcome::kComplete;
}

void GlobalInit() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

}  // namespace

std::string PartialPath(const std::string& dest) { return dest + ".partial"; }

Result<DownloadResult> Download(const std::string& url, const std::string& dest,
                                const DownloadOptions& o) {
  const std::string scheme = AsciiLower(url.substr(0, url.find("://") + 3));
  if (scheme != "http://" && scheme != "https://")
    return Status::Error("unsupported URL '" + url + "': only http:// and https:// are supported");
  if (!o.expected_sha256.empty() && !Sha256::IsHexDigest(o.expected_sha256))
    return Status::Error("invalid sha256 '" + o.expected_sha256 + "': expected 64 hex digits");
  GlobalInit();
  const std::string partial = PartialPath(dest);
  std::error_code ec;
  if (!o.resume) fs::remove(partial, ec);
  std::unique_ptr<CURL, void (*)(CURL*)> curl(curl_easy_init(), curl_easy_cleanup);
  if (!curl) return Status::Error("cannot initialise libcurl");

  DownloadResult res;
  res.path = dest;
  bool restarted = false;
  int failures = 0;
  double delay = o.retry_delay_s;
  Transfer t;
  for (;;) {
    uint64_t offset = 0;
    if (fs::is_regular_file(partial, ec)) {
      const auto size = fs::file_size(partial, ec);
      if (!ec) offset = size;
    }
    t = Transfer();
    t.opts = &o;
    t.partial = partial;
    t.offset = offset;
    t.start = NowSeconds();
    Status err;
    const Outcome out = RunOnce(curl.get(), url, t, &err);
    ++res.requests;
    if (out == Outcome::kComplete) break;
    if (out == Outcome::kFailed) return err;
    if (out == Outcome::kRestart) {
      if (restarted)
        return Status::Error("the server for " + url +
                             " keeps answering with the wrong byte range");
      restarted = true;
      fs::remove(partial, ec);
      continue;
    }
    if (failures++ >= o.retries) return err;  // kRetryable: resume after a pause
    std::this_thread::sleep_for(std::chrono::duration<double>(delay));
    delay *= 2;
  }

  std::string expected = AsciiLower(o.expected_sha256), source = o.expected_sha256_source;
  if (expected.empty() && o.trust_etag_sha256) {
    if (Sha256::IsHexDigest(t.linked_etag)) {
      expected = AsciiLower(t.linked_etag);
      source = "the X-Linked-ETag header";
    } else if (Sha256::IsHexDigest(t.resp.etag)) {
      expected = AsciiLower(t.resp.etag);
      source = "the ETag header";
    }
  }
  if (!expected.empty() && expected != t.sha256) {
    fs::remove(partial, ec);
    return Status::Error("checksum mismatch for " + url + ": expected sha256 " + expected +
                         " (from " + source + "), got " + t.sha256 + "; deleted the partial file " +
                         partial);
  }
  fs::rename(partial, dest, ec);
  if (ec) return Status::Error("cannot rename " + partial + " to " + dest + ": " + ec.message());
  res.size = t.bytes;
  res.sha256 = t.sha256;
  res.verified_by = expected.empty() ? "" : source;
  res.resumed_from = t.resumed_from;
  return res;
}

}  // namespace brisk::net
