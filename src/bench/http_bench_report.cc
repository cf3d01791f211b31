// HttpBenchReport's table and JSON. The tables keep bench engine's columns and order
// (engine_bench.cc), so the two reports can be laid side by side.
#include <cstdio>
#include <nlohmann/json.hpp>

#include "bench/http_bench.h"
#include "bench/latency_table.h"

namespace brisk {
namespace {

// A counter delta, or "-" when the server does not export it.
std::string Count(bool has, double v) {
  if (!has) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f", v);
  return buf;
}

}  // namespace

std::string HttpBenchReport::ToTable() const {
  const HttpBenchOptions& o = options;
  std::string s;
  char buf[1024];
  std::snprintf(buf, sizeof buf, "brisk %s bench http | client CPU %s\n", brisk_version.c_str(),
                cpu.c_str());
  s += buf;
  s += "server " + url + (server.empty() ? "" : " (Server: " + server + ")") + ", POST " +
       endpoint + ", model " + (model.empty() ? "(not named)" : model) + "\n";
  std::string prompt = o.prompt_len > 0
                           ? "user messages of ~" + std::to_string(o.prompt_len) + " words"
                           : "short user messages";
  std::string per_level;
  if (o.duration_s > 0) {
    std::snprintf(buf, sizeof buf, "%.1f s per level", o.duration_s);
    per_level = buf;
  } else if (o.num_prompts > 0) {
    per_level = std::to_string(o.num_prompts) + " requests per level";
  } else {
    per_level = "4 x concurrency (at least 8) requests per level";
  }
  std::snprintf(
      buf, sizeof buf,
      "workload: %s, output %d tokens (temperature 0, ignore_eos, streamed), "
      "warmup %d%s, %s\n",
      prompt.c_str(), o.output_len, o.warmup,
      warmup_failures > 0 ? (" (" + std::to_string(warmup_failures) + " failed)").c_str() : "",
      per_level.c_str());
  s += buf;
  if (has_rss) {
    std::snprintf(buf, sizeof buf,
                  "server RSS (pid %d): after warm-up %.1f MiB, at the end %.1f MiB, max %.1f "
                  "MiB\n",
                  o.server_pid, rss_after_warmup_mib, rss_end_mib, rss_max_mib);
    s += buf;
  }
  s += "\n| conc | reqs | fail | wall s | out tok/s | total tok/s |  req/s | out tokens |\n";
  s += "|-----:|-----:|-----:|-------:|----------:|------------:|-------:|-----------:|\n";
  for (const HttpBenchRun& r : runs) {
    std::snprintf(buf, sizeof buf,
                  "| %4d | %4d | %4d | %6.2f | %9.1f | %11.1f | %6.2f | %10lld |\n", r.concurrency,
                  r.requests, r.failures, r.wall_s, r.output_tok_s, r.total_tok_s, r.request_s,
                  (long long)r.output_tokens);
    s += buf;
  }
  std::vector<LatencyRow> latency;
  for (const HttpBenchRun& r : runs)
    latency.push_back({r.concurrency, &r.ttft_ms, &r.tpot_ms, &r.itl_ms, &r.e2e_ms});
  s += LatencyTable(latency);
  if (o.metrics) {
    s += "\nserver /metrics over each level (vLLM names; differences) vs what the clients "
         "received:\n\n";
    s += "| conc | generation tok | client tok | tokens   | success | e2e count | ttft count "
         "| finished | counts   |\n";
    s += "|-----:|---------------:|-----------:|----------|--------:|----------:|-----------:"
         "|---------:|----------|\n";
    for (const HttpBenchRun& r : runs) {
      const MetricsCheck& m = r.metrics;
      const ServerCounters& d = m.delta;
      if (!m.ok) {
        s += "| " + std::to_string(r.concurrency) + " | scrape failed: " + m.error + " |\n";
        continue;
      }
      std::snprintf(buf, sizeof buf,
                    "| %4d | %14s | %10lld | %-8s | %7s | %9s | %10s | %8lld | %-8s |\n",
                    r.concurrency, Count(d.has_generation_tokens, d.generation_tokens).c_str(),
                    (long long)m.client_tokens, m.tokens_match ? "MATCH" : "MISMATCH",
                    Count(d.has_request_success, d.request_success).c_str(),
                    Count(d.has_e2e_count, d.e2e_count).c_str(),
                    Count(d.has_ttft_count, d.ttft_count).c_str(), (long long)m.client_finished,
                    m.count_match ? "MATCH" : "MISMATCH");
      s += buf;
    }
  }
  bool any_failure = false;
  auto failure = [&](const std::string& line) {
    if (!any_failure) s += "\nfailures:\n";
    any_failure = true;
    s += "  " + line + "\n";
  };
  for (const std::string& m : warmup_messages) failure("warmup: " + m);
  for (const HttpBenchRun& r : runs) {
    for (const std::string& m : r.failure_messages)
      failure("concurrency " + std::to_string(r.concurrency) + ": " + m);
    if (r.usage_missing > 0)
      failure("concurrency " + std::to_string(r.concurrency) + ": " +
              std::to_string(r.usage_missing) +
              " streams had no usage chunk (content events counted as tokens)");
  }
  return s;
}

std::string HttpBenchReport::ToJson() const {
  const HttpBenchOptions& o = options;
  nlohmann::ordered_json j;
  j["brisk_version"] = brisk_version;
  j["client_cpu"] = cpu;
  j["url"] = url;
  j["endpoint"] = endpoint;
  j["model"] = model;
  j["server"] = server;
  j["workload"] = {{"prompt_len_words", o.prompt_len},
                   {"output_len", o.output_len},
                   {"warmup", o.warmup},
                   {"num_prompts", o.num_prompts},
                   {"duration_s", o.duration_s},
                   {"request_timeout_s", o.request_timeout_s}};
  j["waited_for_ready"] = waited_for_ready;
  j["warmup_failures"] = warmup_failures;
  j["warmup_failure_messages"] = warmup_messages;
  if (has_rss)
    j["server_rss_mib"] = {{"pid", o.server_pid},
                           {"after_warmup", rss_after_warmup_mib},
                           {"end", rss_end_mib},
                           {"max", rss_max_mib}};
  j["runs"] = nlohmann::ordered_json::array();
  for (const HttpBenchRun& r : runs) {
    nlohmann::ordered_json x = BenchPointJson(r);
    x["usage_missing"] = r.usage_missing;
    if (o.metrics) {
      const MetricsCheck& m = r.metrics;
      const ServerCounters& d = m.delta;
      nlohmann::ordered_json mj;
      mj["ok"] = m.ok;
      if (!m.ok) mj["error"] = m.error;
      auto opt = [](bool has, double v) { return has ? nlohmann::ordered_json(v) : nullptr; };
      mj["generation_tokens"] = opt(d.has_generation_tokens, d.generation_tokens);
      mj["request_success"] = opt(d.has_request_success, d.request_success);
      mj["e2e_count"] = opt(d.has_e2e_count, d.e2e_count);
      mj["ttft_count"] = opt(d.has_ttft_count, d.ttft_count);
      mj["client_tokens"] = m.client_tokens;
      mj["client_finished"] = m.client_finished;
      mj["tokens_match"] = m.tokens_match;
      mj["count_match"] = m.count_match;
      x["metrics"] = std::move(mj);
    }
    j["runs"].push_back(std::move(x));
  }
  return j.dump(2);
}

}  // namespace brisk
