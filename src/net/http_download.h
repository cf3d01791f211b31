// HTTP(S) file download with resume and sha256 verification (libcurl), for `brisk pull`.
//
// The body goes to `<dest>.partial`; an existing partial file is resumed with a Range request (a
// server that ignores Range and answers 200 restarts it from zero). Redirects are followed (the
// Hugging Face Hub redirects to a CDN). The complete file is checked against the expected sha256 —
// from the caller, else from an `X-Linked-ETag` / `ETag` header that is a 64-hex-digit sha256 (the
// Hub sends the LFS sha256 there) — and renamed to `dest`.
//
// Errors: an HTTP error status names the URL and the status; a checksum mismatch deletes the
// partial file and names both hashes; a network error (refused, reset, stalled) keeps the partial
// file so that the next call resumes it.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "util/status.h"

namespace brisk::net {

struct DownloadProgress {
  uint64_t bytes = 0;         // bytes of the file received so far, a resumed prefix included
  int64_t total = -1;         // size of the whole file; -1 when the server did not say
  uint64_t resumed_from = 0;  // bytes that were already on disk when this request started
  double elapsed_s = 0;       // seconds since this request started
};
using ProgressFn = std::function<void(const DownloadProgress&)>;

struct DownloadOptions {
  // Lower- or upper-case hex; "" = take it from the response headers when they carry one.
  std::string expected_sha256;
  // Where expected_sha256 came from, for messages ("--sha256", "the catalogue").
  std::string expected_sha256_source = "caller";
  // Use a 64-hex X-Linked-ETag / ETag header as the expected sha256 when none is given.
  bool trust_etag_sha256 = true;
  // Called as the body arrives (often: throttle in the callback).
  ProgressFn progress;
  // Resume an existing `<dest>.partial`; false deletes it and starts over.
  bool resume = true;
  // Further attempts after a network error, each resuming where the last one stopped.
  int retries = 0;
  double retry_delay_s = 1.0;  // doubled after each retry
  long connect_timeout_s = 30;
  // A connection slower than stall_min_bytes_per_s for stall_timeout_s seconds is a network error.
  long stall_timeout_s = 60;
  long stall_min_bytes_per_s = 1024;
  long max_redirects = 10;
};

struct DownloadResult {
  std::string path;           // the final file (dest)
  uint64_t size = 0;          // its size in bytes
  std::string sha256;         // its sha256, lower-case hex
  std::string verified_by;    // where the expected hash came from; "" when nothing to check against
  uint64_t resumed_from = 0;  // bytes reused from an earlier partial download (0: none)
  int requests = 0;           // HTTP requests made (redirects not counted)
};

// `<dest>.partial`
std::string PartialPath(const std::string& dest);

// Downloads `url` to `dest` (its directory must exist). Only http:// and https:// URLs.
Result<DownloadResult> Download(const std::string& url, const std::string& dest,
                                const DownloadOptions& options = {});

}  // namespace brisk::net
