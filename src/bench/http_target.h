// The HTTP LoadTarget: any OpenAI-compatible server (brisk serve, llama-server, vLLM). Requests
// are streamed POSTs to /v1/chat/completions (stream_options.include_usage, ignore_eos for fixed
// lengths) measured as AnalyzeStream (http_bench.h) does; every connection lives on one
// io_context driven by the bench thread, so C streams cost C sockets, not C threads competing
// with a server on the same cores.
//
// Engine limits (max_num_seqs sweeps) are applied with PATCH /admin/config, which brisk serve
// has; other servers get a clear error. Counters come from GET /metrics (vLLM's names, brisk's
// extras when present).
#pragma once

#include <memory>
#include <string>

#include "bench/load_target.h"

namespace brisk {

struct HttpTargetOptions {
  std::string url;             // http://host:port (a trailing /v1 is accepted)
  std::string api_key;         // sent as "Authorization: Bearer ..."
  std::string model;           // "" = the first id of GET /v1/models (none if that fails)
  bool completions = false;    // POST /v1/completions with the user message as the prompt
  bool scrape_metrics = true;  // Counters() reads GET /metrics (false: no counters)
  int server_pid = 0;          // > 0: report this process's memory
  double connect_timeout_s = 10;
  double request_timeout_s = 600;  // send -> end of the stream
};

// Errors only for a bad URL or a --server-pid that is not running: an unreachable server shows
// as failed requests (the report says why, per point).
Result<std::unique_ptr<LoadTarget>> CreateHttpTarget(const HttpTargetOptions& options);

}  // namespace brisk
