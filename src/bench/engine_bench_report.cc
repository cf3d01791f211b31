// EngineBenchReport's table and JSON. The latency table is the one bench http prints too
// (latency_table.h), so the two reports can be laid side by side.
#include <cstdio>
#include <nlohmann/json.hpp>

#include "bench/engine_bench.h"
#include "bench/latency_table.h"
#include "model/synth.h"

namespace brisk {

std::string EngineBenchReport::ToTable() const {
  const EngineBenchOptions& o = options;
  std::string s;
  char buf[1024];
  std::snprintf(
      buf, sizeof buf,
      "brisk %s | %s | ISA %s | %d threads\nmodel %s (%s)%s\n"
      "engine: max_num_seqs %d, max_batched_tokens %d, max_prefill_chunk %s, "
      "max_model_len %d, KV cache %.0f MiB (%d blocks of %d), prefix caching on, "
      "batch policy %s (TPOT target %.0f ms)\n"
      "workload: prompt %d tokens%s, output %d tokens (greedy, ignore_eos), "
      "warmup %d%s\n\n",
      brisk_version.c_str(), cpu.c_str(), isa.c_str(), threads, model.c_str(),
      file_type.empty() ? "?" : file_type.c_str(), tokenizer ? "" : ", no tokenizer",
      o.max_num_seqs, o.max_num_batched_tokens,
      o.max_prefill_chunk > 0 ? std::to_string(o.max_prefill_chunk).c_str() : "budget",
      max_model_len, kv_cache_mib, kv_blocks, kv_block_size, BatchPolicyName(o.batch_policy),
      o.tpot_target_ms, o.prompt_len,
      o.shared_prefix > 0 ? (" after a shared prefix of " + std::to_string(o.shared_prefix)).c_str()
                          : "",
      o.output_len, o.warmup,
      warmup_failures > 0 ? (" (" + std::to_string(warmup_failures) + " failed)").c_str() : "");
  s += buf;
  if (synthetic) s += std::string(kSyntheticNotice) + "\n\n";
  if (has_shared_prefix_probe) {
    const double ratio =
        shared.second_ttft_ms > 0 ? shared.first_ttft_ms / shared.second_ttft_ms : 0;
    std::snprintf(buf, sizeof buf,
                  "shared prefix: first request TTFT %.1f ms, second request TTFT %.1f ms "
                  "(%.1f x); cached prompt tokens %d then %d%s\n\n",
                  shared.first_ttft_ms, shared.second_ttft_ms, ratio, shared.first_cached_tokens,
                  shared.second_cached_tokens, shared.failures > 0 ? " (FAILED requests)" : "");
    s += buf;
  }

  s += "| conc | reqs | fail | wall s | out tok/s | total tok/s | steps | tok/step | preempt "
       "| prefix hit tok |\n";
  s += "|-----:|-----:|-----:|-------:|----------:|------------:|------:|---------:|--------:"
       "|---------------:|\n";
  for (const EngineBenchRun& r : runs) {
    std::snprintf(buf, sizeof buf,
                  "| %4d | %4d | %4d | %6.2f | %9.1f | %11.1f | %5lld | %8.1f | %7lld | %14lld |\n",
                  r.concurrency, r.requests, r.failures, r.wall_s, r.output_tok_s, r.total_tok_s,
                  (long long)r.engine.steps, r.engine.tokens_per_step,
                  (long long)r.engine.preemptions, (long long)r.engine.prefix_hit_tokens);
    s += buf;
  }
  std::vector<LatencyRow> latency;
  for (const EngineBenchRun& r : runs)
    latency.push_back({r.concurrency, &r.ttft_ms, &r.tpot_ms, &r.itl_ms, &r.e2e_ms});
  s += LatencyTable(latency);
  if (!long_runs.empty()) {
    s += "\nstream TPOT (per-token gaps) while a long prompt prefills, vs the same streams "
         "unloaded:\n\n";
    s += "| conc | long prompt | long TTFT ms | unloaded p50 | unloaded p99 | during p50 "
         "| during p99 | p99 x | fail |\n";
    s += "|-----:|------------:|-------------:|-------------:|-------------:|-----------:"
         "|-----------:|------:|-----:|\n";
    for (const LongPromptRun& r : long_runs) {
      char ratio[32] = "-";
      if (r.unloaded_tpot_ms.count > 0 && r.loaded_tpot_ms.count > 0 && r.unloaded_tpot_ms.p99 > 0)
        std::snprintf(ratio, sizeof ratio, "%.1f", r.loaded_tpot_ms.p99 / r.unloaded_tpot_ms.p99);
      std::snprintf(buf, sizeof buf,
                    "| %4d | %11d | %12.1f | %12s | %12s | %10s | %10s | %5s | %4d |\n",
                    r.concurrency, r.long_prompt_tokens, r.long_ttft_ms,
                    MsCell(r.unloaded_tpot_ms, r.unloaded_tpot_ms.p50).c_str(),
                    MsCell(r.unloaded_tpot_ms, r.unloaded_tpot_ms.p99).c_str(),
                    MsCell(r.loaded_tpot_ms, r.loaded_tpot_ms.p50).c_str(),
                    MsCell(r.loaded_tpot_ms, r.loaded_tpot_ms.p99).c_str(), ratio, r.failures);
      s += buf;
    }
  }
  bool any_failure = false;
  for (const EngineBenchRun& r : runs)
    for (const std::string& m : r.failure_messages) {
      if (!any_failure) s += "\nfailures:\n";
      any_failure = true;
      s += "  concurrency " + std::to_string(r.concurrency) + ": " + m + "\n";
    }
  for (const LongPromptRun& r : long_runs)
    for (const std::string& m : r.failure_messages) {
      if (!any_failure) s += "\nfailures:\n";
      any_failure = true;
      s += "  long prompt, concurrency " + std::to_string(r.concurrency) + ": " + m + "\n";
    }
  return s;
}

std::string EngineBenchReport::ToJson() const {
  const EngineBenchOptions& o = options;
  nlohmann::ordered_json j;
  j["brisk_version"] = brisk_version;
  j["cpu"] = cpu;
  j["isa"] = isa;
  j["threads"] = threads;
  j["model"] = model;
  j["file_type"] = file_type;
  j["synthetic_weights"] = synthetic;
  j["tokenizer"] = tokenizer;
  j["engine"] = {{"max_num_seqs", o.max_num_seqs},
                 {"max_num_batched_tokens", o.max_num_batched_tokens},
                 {"max_prefill_chunk", o.max_prefill_chunk},
                 {"max_model_len", max_model_len},
                 {"kv_cache_mib", kv_cache_mib},
                 {"kv_blocks", kv_blocks},
                 {"kv_block_size", kv_block_size}};
  j["workload"] = {{"prompt_len", o.prompt_len},
                   {"output_len", o.output_len},
                   {"shared_prefix", o.shared_prefix},
                   {"long_prompt", o.long_prompt},
                   {"warmup", o.warmup},
                   {"num_prompts", o.num_prompts},
                   {"seed", o.seed}};
  j["warmup_failures"] = warmup_failures;
  if (has_shared_prefix_probe)
    j["shared_prefix"] = {{"prefix_tokens", shared.prefix_tokens},
                          {"first_ttft_ms", shared.first_ttft_ms},
                          {"second_ttft_ms", shared.second_ttft_ms},
                          {"first_cached_tokens", shared.first_cached_tokens},
                          {"second_cached_tokens", shared.second_cached_tokens},
                          {"failures", shared.failures}};
  j["runs"] = nlohmann::ordered_json::array();
  for (const EngineBenchRun& r : runs) {
    nlohmann::ordered_json x = BenchPointJson(r);
    x["cached_tokens"] = r.cached_tokens;
    x["engine"] = {{"steps", r.engine.steps},
                   {"prompt_tokens", r.engine.prompt_tokens},
                   {"generation_tokens", r.engine.generation_tokens},
                   {"tokens_per_step", r.engine.tokens_per_step},
                   {"preemptions", r.engine.preemptions},
                   {"prefix_queried_tokens", r.engine.prefix_queried_tokens},
                   {"prefix_hit_tokens", r.engine.prefix_hit_tokens}};
    j["runs"].push_back(std::move(x));
  }
  if (!long_runs.empty()) {
    j["long_prompt"] = nlohmann::ordered_json::array();
    for (const LongPromptRun& r : long_runs)
      j["long_prompt"].push_back({{"concurrency", r.concurrency},
                                  {"long_prompt_tokens", r.long_prompt_tokens},
                                  {"long_ttft_ms", r.long_ttft_ms},
                                  {"unloaded_tpot_ms", LatencyJson(r.unloaded_tpot_ms)},
                                  {"loaded_tpot_ms", LatencyJson(r.loaded_tpot_ms)},
                                  {"failures", r.failures},
                                  {"failure_messages", r.failure_messages}});
  }
  return j.dump(2);
}

}  // namespace brisk
