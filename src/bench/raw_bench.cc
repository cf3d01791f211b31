#include "bench/raw_bench.h"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "bench/stats.h"
#include "formats/file_type.h"
#include "kernels/cpu/matmul.h"
#include "model/fast_forward.h"
#include "model/synth.h"
#include "runtime/cpu_features.h"
#include "runtime/machine_probe.h"
#include "util/clock.h"

namespace brisk {
namespace {

std::vector<int32_t> Prompt(int n, int vocab, int salt) {
  std::vector<int32_t> t(n);
  for (int i = 0; i < n; ++i) t[i] = int32_t((int64_t(i) * 7919 + salt * 104729 + 13) % vocab);
  return t;
}

// Multiply-adds per token in the matmuls (every weight once) and in attention at context n_ctx.
double MatmulOpsPerToken(const ModelConfig& c) {
  const double d = c.n_embd, q = c.q_dim(), kv = c.kv_dim(), ff = c.n_ff;
  const double per_layer = d * (q + 2 * kv) + q * d + 2 * d * ff + ff * d;
  return 2.0 * per_layer * c.n_layer;  // lm_head excluded: only rows that need logits pay it
}

double KvBytesPerToken(const ModelConfig& c) {
  return 2.0 * c.n_layer * c.kv_dim() * 2;  // fp16 K and V (the default KV type)
}

// What every measurement needs: the forward pass, the model's shape and the machine's limits.
struct RawContext {
  FastForward& fwd;
  const ModelConfig& c;
  const RawBenchOptions& o;
  ReadBandwidthProbe& probe;
  double weight_bytes = 0;  // packed weights streamed per forward call
  double ops_tok = 0;       // matmul ops per token
  double int8_peak_gops = 0;
};

// Streamed bytes per second as % of the bandwidth (0 where the probe could not run).
double RooflinePct(double gb_s, double bandwidth) {
  return bandwidth > 0 ? 100.0 * gb_s / bandwidth : 0.0;
}

// A decode row's roofline: the higher of probes just before and after it (conservative: the
// faster the machine was around the row, the lower its %).
double RowBandwidth(ReadBandwidthProbe& probe, double before) {
  return std::max(before, probe.Measure().gb_per_s);
}

// pp: one prefill of o.pp tokens, logits for the last one.
Result<RawBenchRow> MeasurePrefill(const RawContext& x) {
  const RawBenchOptions& o = x.o;
  const auto toks = Prompt(o.pp, x.c.n_vocab, 1);
  SeqKvCache kv(x.c, o.pp);
  std::vector<double> times;
  int32_t best;
  const int32_t last = o.pp - 1;
  for (int r = 0; r <= o.reps; ++r) {              // first pass warms up (page-ins, huge pages)
    const SeqRun run{kv.blocks(), 0, o.pp, o.pp};  // prompt tokens: the prefill class
    const double t0 = NowSeconds();
    BRISK_RETURN_IF_ERROR(
        x.fwd.RunBatchArgmax(toks, std::span(&run, 1), std::span(&last, 1), &best));
    if (r > 0) times.push_back(NowSeconds() - t0);
  }
  const double t = Median(times);
  RawBenchRow row;
  row.test = "pp" + std::to_string(o.pp);
  row.tok_s = o.pp / t;
  row.gops = x.ops_tok * o.pp / t / 1e9;
  row.peak_pct = 100.0 * row.gops / x.int8_peak_gops;
  row.gb_s = x.weight_bytes / t / 1e9;
  return row;
}

// tg: o.tg tokens one at a time from an empty context (greedy, fused argmax).
Result<RawBenchRow> MeasureGeneration(const RawContext& x) {
  const RawBenchOptions& o = x.o;
  const double bw_before = x.probe.Measure().gb_per_s;
  std::vector<double> rates;
  for (int r = 0; r < o.reps; ++r) {
    SeqKvCache kv(x.c, o.tg + 1);
    int32_t tok = 1;
    const double t0 = NowSeconds();
    for (int i = 0; i < o.tg; ++i) {
      const SeqRun run{kv.blocks(), i, 1};
      const int32_t row0 = 0;
      BRISK_RETURN_IF_ERROR(
          x.fwd.RunBatchArgmax(std::span(&tok, 1), std::span(&run, 1), std::span(&row0, 1), &tok));
    }
    rates.push_back(o.tg / (NowSeconds() - t0));
  }
  RawBenchRow row;
  row.test = "tg" + std::to_string(o.tg);
  row.tok_s = Median(rates);
  const double bytes = x.weight_bytes + KvBytesPerToken(x.c) * o.tg / 2.0;  // mean context tg/2
  row.gb_s = bytes * row.tok_s / 1e9;
  row.bandwidth_gb_s = RowBandwidth(x.probe, bw_before);
  row.roofline_pct = RooflinePct(row.gb_s, row.bandwidth_gb_s);
  row.gops = x.ops_tok * row.tok_s / 1e9;
  row.peak_pct = 100.0 * row.gops / x.int8_peak_gops;
  return row;
}

// Batched decode: B sequences with o.batch_prompt tokens each, then o.batch_gen steps of B.
Result<RawBenchRow> MeasureBatchedDecode(const RawContext& x, int B) {
  const RawBenchOptions& o = x.o;
  std::vector<SeqKvCache> kvs;
  kvs.reserve(B);
  for (int b = 0; b < B; ++b) {
    kvs.emplace_back(x.c, o.batch_prompt + o.batch_gen);
    const auto p = Prompt(o.batch_prompt, x.c.n_vocab, 10 + b);
    BRISK_RETURN_IF_ERROR(x.fwd.Run(p, 0, kvs[b].blocks(), {}, nullptr));
  }
  std::vector<int32_t> toks(B, 1), rows(B), best(B);
  std::vector<SeqRun> runs(B);
  for (int b = 0; b < B; ++b) rows[b] = b;
  const double bw_before = x.probe.Measure().gb_per_s;
  const double t0 = NowSeconds();
  for (int s = 0; s < o.batch_gen; ++s) {
    for (int b = 0; b < B; ++b) runs[b] = {kvs[b].blocks(), o.batch_prompt + s, 1};
    BRISK_RETURN_IF_ERROR(x.fwd.RunBatchArgmax(toks, runs, rows, best.data()));
    toks = best;
  }
  const double t = NowSeconds() - t0;
  RawBenchRow row;
  row.test = "decode B=" + std::to_string(B);
  row.bandwidth_gb_s = RowBandwidth(x.probe, bw_before);
  row.tok_s = double(B) * o.batch_gen / t;
  const double ctx = o.batch_prompt + o.batch_gen / 2.0;
  const double bytes_step = x.weight_bytes + B * KvBytesPerToken(x.c) * ctx;
  const double steps_s = o.batch_gen / t;
  row.gb_s = bytes_step * steps_s / 1e9;
  row.roofline_pct = RooflinePct(row.gb_s, row.bandwidth_gb_s);
  row.gops = x.ops_tok * row.tok_s / 1e9;
  row.peak_pct = 100.0 * row.gops / x.int8_peak_gops;
  return row;
}

// The report header: machine, model, how pp computes its prompt.
void DescribeRawBench(const Model& model, const RawBenchOptions& o, int threads,
                      RawBenchReport* rep) {
  rep->cpu = DescribeCpu();
  rep->isa = std::string(IsaName(ActiveIsa()));
  // pp runs its prompt in the prefill numerics class (matmul.h): say which path that is here.
  rep->prefill_path = WidePathAvailable() ? "bf16 AMX (prefill class)" : "int8";
  rep->model = o.model;
  if (model.gguf())
    if (auto ft = model.gguf()->GetUInt("general.file_type"); ft.ok())
      rep->file_type = FileTypeName(uint32_t(*ft));
  rep->threads = threads;
  rep->synthetic = IsSynthetic(model);
}

}  // namespace

Result<RawBenchReport> RunRawBench(const RawBenchOptions& o) {
  ThreadPool pool(o.threads);
  // Load = open + mmap + validate + repack every weight for the kernels (what a server pays at
  // start), measured before the probes allocate their large buffers so peak RSS is the model's.
  const double t_load = NowSeconds();
  BRISK_ASSIGN_OR_RETURN(std::unique_ptr<Model> model, Model::Load(o.model));
  const int max_batch = std::max({o.pp, *std::max_element(o.batches.begin(), o.batches.end()), 1});
  FastForward fwd(*model, pool, max_batch);
  const double load_s = NowSeconds() - t_load;
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  RawBenchReport rep;
  DescribeRawBench(*model, o, pool.size(), &rep);

  std::fprintf(stderr, "measuring memory bandwidth and int8 peak...\n");
  ReadBandwidthProbe probe(pool, o.probe_bytes);
  rep.bandwidth_gb_s = probe.Measure().gb_per_s;
  Int8PeakResult peak = MeasureInt8Peak(pool);
  rep.int8_peak_gops = peak.gops;
  rep.peak_instruction = peak.instruction;
  rep.load_s = load_s;
  rep.peak_rss_mb = double(ru.ru_maxrss) / 1024.0;
  rep.weight_mb = double(fwd.packed_bytes()) / 1e6;

  const RawContext x{fwd,
                     model->config(),
                     o,
                     probe,
                     double(fwd.packed_bytes()),
                     MatmulOpsPerToken(model->config()),
                     rep.int8_peak_gops};
  BRISK_ASSIGN_OR_RETURN(RawBenchRow pp, MeasurePrefill(x));
  rep.rows.push_back(pp);
  BRISK_ASSIGN_OR_RETURN(RawBenchRow tg, MeasureGeneration(x));
  rep.rows.push_back(tg);
  for (int B : o.batches) {
    BRISK_ASSIGN_OR_RETURN(RawBenchRow row, MeasureBatchedDecode(x, B));
    rep.rows.push_back(row);
  }
  return rep;
}

std::string RawBenchReport::ToTable() const {
  std::string s;
  char buf[512];
  std::snprintf(
      buf, sizeof buf,
      "brisk %s | %s | ISA %s | %d threads | prefill matmuls %s\n"
      "model %s (%s), %.1f MB of packed weights\n"
      "load (mmap + repack) %.2f s, peak RSS after load %.0f MB\n"
      "measured: read bandwidth %.1f GB/s, int8 peak %.0f GOPS (%s); each decode row's "
      "roofline uses its own bandwidth probes (BW: the higher of just before and after)\n\n",
      BRISK_VERSION, cpu.c_str(), isa.c_str(), threads, prefill_path.c_str(), model.c_str(),
      file_type.c_str(), weight_mb, load_s, peak_rss_mb, bandwidth_gb_s, int8_peak_gops,
      peak_instruction.c_str());
  s += buf;
  if (synthetic) s += std::string(kSyntheticNotice) + "\n\n";
  s += "| test          |     tok/s |   GB/s | BW GB/s | % roofline |   GOPS | % int8 peak |\n";
  s += "|---------------|----------:|-------:|--------:|-----------:|-------:|------------:|\n";
  for (const RawBenchRow& r : rows) {
    char pct[32] = "-", bw[32] = "-";
    if (r.roofline_pct > 0) std::snprintf(pct, sizeof pct, "%.0f%%", r.roofline_pct);
    if (r.bandwidth_gb_s > 0) std::snprintf(bw, sizeof bw, "%.1f", r.bandwidth_gb_s);
    std::snprintf(buf, sizeof buf, "| %-13s | %9.1f | %6.1f | %7s | %10s | %6.0f | %10.0f%% |\n",
                  r.test.c_str(), r.tok_s, r.gb_s, bw, pct, r.gops, r.peak_pct);
    s += buf;
  }
  return s;
}

std::string RawBenchReport::ToJson() const {
  nlohmann::ordered_json j;
  j["brisk_version"] = BRISK_VERSION;
  j["cpu"] = cpu;
  j["isa"] = isa;
  j["prefill_path"] = prefill_path;
  j["threads"] = threads;
  j["model"] = model;
  j["file_type"] = file_type;
  j["synthetic_weights"] = synthetic;
  j["packed_weight_mb"] = weight_mb;
  j["load_s"] = load_s;
  j["peak_rss_mb_after_load"] = peak_rss_mb;
  j["read_bandwidth_gb_s"] = bandwidth_gb_s;
  j["int8_peak_gops"] = int8_peak_gops;
  j["int8_peak_instruction"] = peak_instruction;
  for (const RawBenchRow& r : rows)
    j["results"].push_back({{"test", r.test},
                            {"tok_s", r.tok_s},
                            {"gb_s", r.gb_s},
                            {"roofline_pct", r.roofline_pct},
                            {"roofline_read_bandwidth_gb_s", r.bandwidth_gb_s},
                            {"gops", r.gops},
                            {"int8_peak_pct", r.peak_pct}});
  return j.dump(2);
}

}  // namespace brisk
