#include "bench/quality_bench.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>

#include "bench/stats.h"
#include "bench/workloads.h"
#include "formats/file_type.h"
#include "model/fast_forward.h"
#include "model/model.h"
#include "model/model_tokenizer.h"
#include "model/synth.h"
#include "runtime/thread_pool.h"
#include "tokenizer/jinja/chat_template.h"
#include "util/clock.h"

namespace brisk {
namespace {

// Positions per forward call in the agreement pass: bounds the logit buffers (chunk x vocab
// floats per model) whatever the prompt length.
constexpr int kChunk = 64;
// Decode speed starts after this many prompt tokens (a short prompt, as in a chat turn).
constexpr int kDecodePromptTokens = 16;

// Bytes on disk: the file, or every regular file of a model directory.
Result<double> SizeMiB(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  uintmax_t bytes = 0;
  if (fs::is_directory(path, ec)) {
    for (const auto& e : fs::directory_iterator(path, ec))
      if (e.is_regular_file(ec)) bytes += e.file_size(ec);
  } else {
    bytes = fs::file_size(path, ec);
  }
  if (ec) return Status::Error(path + ": " + ec.message());
  return double(bytes) / (1024.0 * 1024.0);
}

// Reads the model's files once so the timed loads find them in the page cache (load time is
// then the cost of mapping, validating and repacking, not of the disk).
void WarmPageCache(const std::string& path) {
  namespace fs = std::filesystem;
  std::vector<std::string> files;
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    for (const auto& e : fs::directory_iterator(path, ec))
      if (e.is_regular_file(ec)) files.push_back(e.path().string());
  } else {
    files.push_back(path);
  }
  std::vector<char> buf(1 << 20);
  for (const auto& f : files) {
    std::ifstream in(f, std::ios::binary);
    while (in.read(buf.data(), std::streamsize(buf.size())) || in.gcount() > 0) {
    }
  }
}

struct Loaded {
  std::unique_ptr<Model> model;
  std::unique_ptr<FastForward> fwd;
};

Result<Loaded> LoadForward(const std::string& path, ThreadPool& pool) {
  Loaded l;
  BRISK_ASSIGN_OR_RETURN(l.model, Model::Load(path));
  l.fwd = std::make_unique<FastForward>(*l.model, pool, kChunk);
  return l;
}

// Greedy decode of `tg` tokens after `prompt`, batch 1; tokens per second of the decode steps.
Result<double> DecodeSpeed(FastForward& fwd, const ModelConfig& c,
                           const std::vector<int32_t>& prompt, int tg, KvType kv_type) {
  SeqKvCache kv(c, int(prompt.size()) + tg + 1, kv_type);
  const SeqRun pre{kv.blocks(), 0, int(prompt.size()), int(prompt.size())};  // prompt class
  const int32_t last = int32_t(prompt.size()) - 1;
  int32_t tok = 0;
  BRISK_RETURN_IF_ERROR(fwd.RunBatchArgmax(prompt, std::span(&pre, 1), std::span(&last, 1), &tok));
  const double t0 = NowSeconds();
  for (int i = 0; i < tg; ++i) {
    const SeqRun run{kv.blocks(), int(prompt.size()) + i, 1};
    const int32_t row0 = 0;
    BRISK_RETURN_IF_ERROR(
        fwd.RunBatchArgmax(std::span(&tok, 1), std::span(&run, 1), std::span(&row0, 1), &tok));
  }
  return tg / (NowSeconds() - t0);
}

// Load and tokenizer timings of one model; leaves the last load in `out` for the decode and
// agreement passes.
Result<QualityRow> Measure(const std::string& path, const QualityBenchOptions& o, ThreadPool& pool,
                           Loaded* out) {
  QualityRow row;
  row.model = path;
  BRISK_ASSIGN_OR_RETURN(row.size_mib, SizeMiB(path));
  WarmPageCache(path);
  std::vector<double> load_ms, tok_ms;
  for (int r = 0; r < o.reps; ++r) {
    *out = Loaded{};  // release the previous load first: one copy in memory at a time
    const double t0 = NowSeconds();
    auto l = LoadForward(path, pool);
    if (!l.ok()) return l.status().WithContext(path);
    load_ms.push_back((NowSeconds() - t0) * 1e3);
    *out = std::move(l).value();
  }
  for (int r = 0; r < o.reps; ++r) {
    const double t0 = NowSeconds();
    auto tok = TokenizerForModel(*out->model);
    if (!tok.ok()) return tok.status().WithContext(path + ": tokenizer");
    tok_ms.push_back((NowSeconds() - t0) * 1e3);
  }
  row.load_ms = Median(load_ms);
  row.tokenizer_ms = Median(tok_ms);
  if (const gguf::File* g = out->model->gguf())
    if (auto ft = g->GetUInt("general.file_type"); ft.ok()) row.file_type = FileTypeName(*ft);
  return row;
}

Result<double> MedianDecodeSpeed(Loaded& l, const std::vector<int32_t>& prompt,
                                 const QualityBenchOptions& o, KvType kv_type) {
  std::vector<double> rates;
  for (int r = 0; r < o.reps; ++r) {
    auto rate = DecodeSpeed(*l.fwd, l.model->config(), prompt, o.tg, kv_type);
    if (!rate.ok()) return rate.status().WithContext(l.model->path() + ": decode");
    rates.push_back(*rate);
  }
  return Median(rates);
}

// The first n prompts of "mix" as the reference would see them in a chat.
Result<std::vector<std::vector<int32_t>>> PromptTokens(const Model& ref, const Tokenizer& tok,
                                                       int n, bool* chat_template) {
  BRISK_ASSIGN_OR_RETURN(std::vector<WorkloadPrompt> mix, WorkloadPrompts("mix"));
  std::unique_ptr<jinja::ChatTemplate> tmpl;
  if (!ref.chat_template().empty()) {
    auto t = jinja::ChatTemplate::Parse(ref.chat_template());
    if (!t.ok()) return t.status().WithContext("reference chat template");
    tmpl = std::make_unique<jinja::ChatTemplate>(std::move(t).value());
  }
  *chat_template = tmpl != nullptr;
  std::vector<std::vector<int32_t>> out;
  for (int i = 0; i < n; ++i) {
    const WorkloadPrompt& p = mix[size_t(i) % mix.size()];
    std::string text = p.system + "\n\n" + p.user;
    if (tmpl) {
      nlohmann::ordered_json messages = nlohmann::ordered_json::array();
      messages.push_back({{"role", "system"}, {"content", p.system}});
      messages.push_back({{"role", "user"}, {"content", p.user}});
      auto r = jinja::RenderChat(*tmpl, messages, nullptr, true, nlohmann::ordered_json::object());
      if (!r.ok()) return r.status().WithContext("rendering prompt " + std::to_string(i));
      text = std::move(r).value();
    }
    std::vector<int32_t> ids = tok.Encode(text, /*parse_special=*/true);
    if (ids.empty()) return Status::Error("prompt " + std::to_string(i) + " has no tokens");
    out.push_back(std::move(ids));
  }
  return out;
}

struct Accumulator {
  long long positions = 0, matches = 0;
  double kl_sum = 0, kl_max = 0;
};

}  // namespace

LogitComparison CompareLogits(std::span<const float> ref, std::span<const float> model) {
  BRISK_CHECK(ref.size() == model.size() && !ref.empty());
  const size_t n = ref.size();
  // Stable log-sum-exp: log sum exp(z) = m + log sum exp(z - m), m = max z.
  auto lse_argmax = [n](std::span<const float> z, size_t* arg) {
    size_t a = 0;
    for (size_t i = 1; i < n; ++i)
      if (z[i] > z[a]) a = i;
    *arg = a;
    const double m = z[a];
    double s = 0;
    for (size_t i = 0; i < n; ++i) s += std::exp(double(z[i]) - m);
    return m + std::log(s);
  };
  size_t ar = 0, am = 0;
  const double lse_r = lse_argmax(ref, &ar);
  const double lse_m = lse_argmax(model, &am);
  double kl = 0;
  for (size_t i = 0; i < n; ++i) {
    const double log_p = double(ref[i]) - lse_r;
    const double log_q = double(model[i]) - lse_m;
    kl += std::exp(log_p) * (log_p - log_q);
  }
  LogitComparison c;
  c.top1_match = ar == am;
  // KL >= 0 in exact arithmetic; rounding can leave a tiny negative sum for near-equal rows.
  // NaN (non-finite logits) passes through for the caller to reject.
  c.kl = kl < 0 ? 0.0 : kl;
  return c;
}

namespace {

// The models in memory and the token sequences they are compared on.
struct QualitySetup {
  std::vector<Loaded> loaded;  // [0] is the reference
  std::vector<std::vector<int32_t>> seqs;
  int ctx = 1 << 30;  // the smallest context of all models
};

// Loads and times every model (rows in rep), and turns the prompt set into sequences with the
// reference's tokenizer and template.
Status MeasureModels(const QualityBenchOptions& o, ThreadPool& pool, QualitySetup* q,
                     QualityReport* rep) {
  auto note = [&](const std::string& s) {
    if (o.progress) std::fprintf(stderr, "%s\n", s.c_str());
  };
  q->loaded.resize(1 + o.models.size());
  note("measuring " + o.ref);
  Loaded& ref = q->loaded[0];
  BRISK_ASSIGN_OR_RETURN(QualityRow ref_row, Measure(o.ref, o, pool, &ref));
  auto tok = TokenizerForModel(*ref.model);
  if (!tok.ok()) return tok.status().WithContext(o.ref + ": tokenizer");
  BRISK_ASSIGN_OR_RETURN(q->seqs, PromptTokens(*ref.model, *tok, o.prompts, &rep->chat_template));
  const ModelConfig& rc = ref.model->config();
  if (rc.context_length > 0) q->ctx = rc.context_length;
  std::vector<int32_t> decode_prompt(
      q->seqs[0].begin(),
      q->seqs[0].begin() + std::min<size_t>(q->seqs[0].size(), kDecodePromptTokens));
  BRISK_ASSIGN_OR_RETURN(ref_row.decode_tok_s,
                         MedianDecodeSpeed(ref, decode_prompt, o, KvType::kF16));
  ref_row.is_ref = true;
  rep->rows.push_back(ref_row);
  rep->synthetic = IsSynthetic(*ref.model);
  for (size_t k = 0; k < o.models.size(); ++k) {
    note("measuring " + o.models[k]);
    Loaded& l = q->loaded[k + 1];
    BRISK_ASSIGN_OR_RETURN(QualityRow row, Measure(o.models[k], o, pool, &l));
    const ModelConfig& mc = l.model->config();
    if (mc.n_vocab != rc.n_vocab)
      return Status::Error(o.models[k] + " has a vocabulary of " + std::to_string(mc.n_vocab) +
                           " tokens, the reference " + std::to_string(rc.n_vocab) +
                           ": logits cannot be compared");
    if (mc.context_length > 0) q->ctx = std::min(q->ctx, mc.context_length);
    rep->synthetic = rep->synthetic || IsSynthetic(*l.model);
    if (o.kv_type == KvType::kQ8_0 && mc.head_dim % kKvQ8Group != 0)
      return Status::Error(o.models[k] + ": --kv-type q8_0 needs a head dimension divisible by " +
                           std::to_string(kKvQ8Group));
    row.kv_type = KvTypeName(o.kv_type);
    BRISK_ASSIGN_OR_RETURN(row.decode_tok_s, MedianDecodeSpeed(l, decode_prompt, o, o.kv_type));
    rep->rows.push_back(row);
  }
  return Status::Ok();
}

// Buffers of the agreement pass, sized once for a chunk of positions.
struct ChunkBuffers {
  size_t nv = 0;
  std::vector<float> ref_logits, logits;
  std::vector<int32_t> rows;
  std::vector<LogitComparison> cmp;
  explicit ChunkBuffers(size_t n_vocab)
      : nv(n_vocab),
        ref_logits(kChunk * n_vocab),
        logits(kChunk * n_vocab),
        rows(kChunk),
        cmp(kChunk) {
    for (int i = 0; i < kChunk; ++i) rows[size_t(i)] = i;
  }
};

// One chunk of sequence s from `start`: every model's logits against the reference's.
Status CompareChunk(const QualityBenchOptions& o, ThreadPool& pool, QualitySetup& q,
                    std::vector<SeqKvCache>& kvs, size_t s, size_t start, ChunkBuffers& b,
                    std::vector<Accumulator>& acc) {
  const auto& seq = q.seqs[s];
  const size_t nv = b.nv;
  const int n = int(std::min<size_t>(kChunk, seq.size() - start));
  const std::span<const int32_t> toks(seq.data() + start, size_t(n));
  const std::span<const int32_t> lrows(b.rows.data(), size_t(n));
  BRISK_RETURN_IF_ERROR(q.loaded[0]
                            .fwd->Run(toks, int(start), kvs[0].blocks(), lrows, b.ref_logits.data())
                            .WithContext(o.ref));
  for (size_t k = 0; k < q.loaded.size(); ++k) {
    const float* mine = b.ref_logits.data();
    if (k > 0) {
      BRISK_RETURN_IF_ERROR(q.loaded[k]
                                .fwd->Run(toks, int(start), kvs[k].blocks(), lrows, b.logits.data())
                                .WithContext(o.models[k - 1]));
      mine = b.logits.data();
    }
    // Rows are independent: compare them on all threads, then sum in position order so the
    // totals do not depend on the thread count.
    pool.Run([&](int t, int nt) {
      for (int p = t; p < n; p += nt)
        b.cmp[size_t(p)] = CompareLogits(std::span(b.ref_logits.data() + p * nv, nv),
                                         std::span(mine + p * nv, nv));
    });
    for (int p = 0; p < n; ++p) {
      const LogitComparison& c = b.cmp[size_t(p)];
      if (!std::isfinite(c.kl))
        return Status::Error((k == 0 ? o.ref : o.models[k - 1]) + ": non-finite logits at prompt " +
                             std::to_string(s) + " position " + std::to_string(start + size_t(p)));
      Accumulator& a = acc[k];
      a.positions += 1;
      a.matches += c.top1_match;
      a.kl_sum += c.kl;
      a.kl_max = std::max(a.kl_max, c.kl);
    }
  }
  return Status::Ok();
}

// Teacher forcing: every model reads each sequence in the same chunks; each chunk's logits are
// compared position by position with the reference's. Sequences longer than the smallest
// context are cut to it.
Result<std::vector<Accumulator>> AgreementPass(const QualityBenchOptions& o, ThreadPool& pool,
                                               QualitySetup& q) {
  size_t longest = 0;
  for (auto& s : q.seqs) {
    if (s.size() > size_t(q.ctx)) s.resize(size_t(q.ctx));
    longest = std::max(longest, s.size());
  }
  std::vector<SeqKvCache> kvs;
  kvs.reserve(q.loaded.size());
  for (size_t k = 0; k < q.loaded.size(); ++k)
    kvs.emplace_back(q.loaded[k].model->config(), int(longest), k == 0 ? KvType::kF16 : o.kv_type);
  ChunkBuffers buffers(size_t(q.loaded[0].model->config().n_vocab));
  std::vector<Accumulator> acc(q.loaded.size());
  for (size_t s = 0; s < q.seqs.size(); ++s) {
    if (o.progress) std::fprintf(stderr, "agreement: prompt %zu/%zu\n", s + 1, q.seqs.size());
    for (size_t start = 0; start < q.seqs[s].size(); start += kChunk)
      BRISK_RETURN_IF_ERROR(CompareChunk(o, pool, q, kvs, s, start, buffers, acc));
  }
  return acc;
}

}  // namespace

Result<QualityReport> RunQualityBench(const QualityBenchOptions& o) {
  if (o.ref.empty()) return Status::Error("a reference model is required (--ref)");
  if (o.prompts < 1 || o.prompts > 48) return Status::Error("--prompts must be in 1..48");
  if (o.reps < 1 || o.tg < 1) return Status::Error("reps and tg must be >= 1");
  ThreadPool pool(o.threads);
  QualityReport rep;
  rep.ref = o.ref;
  rep.threads = pool.size();
  rep.prompts = o.prompts;
  rep.tg = o.tg;
  QualitySetup q;
  BRISK_RETURN_IF_ERROR(MeasureModels(o, pool, &q, &rep));
  BRISK_ASSIGN_OR_RETURN(std::vector<Accumulator> acc, AgreementPass(o, pool, q));
  for (size_t k = 0; k < q.loaded.size(); ++k) {
    QualityRow& r = rep.rows[k];
    r.positions = acc[k].positions;
    r.top1_pct = r.positions ? 100.0 * double(acc[k].matches) / double(r.positions) : 0;
    r.mean_kl = r.positions ? acc[k].kl_sum / double(r.positions) : 0;
    r.max_kl = acc[k].kl_max;
  }
  rep.positions = acc[0].positions;
  return rep;
}

std::string QualityReport::ToTable() const {
  std::string s;
  char buf[1024];
  std::snprintf(buf, sizeof buf,
                "reference %s | %d threads | %d prompts of the mix workload, %lld positions "
                "(teacher forcing%s) | decode: greedy tg%d, batch 1\n",
                ref.c_str(), threads, prompts, positions,
                chat_template ? "" : ", no chat template: plain text", tg);
  s += buf;
  if (synthetic)
    s += std::string(kSyntheticNotice) +
         "; agreement measures quantization noise on random weights, not real-model quality\n";
  s += "\n| model | type | KV | size MiB | load ms | tokenizer ms | decode tok/s | top-1 % | "
       "mean KL | max KL | positions |\n";
  s += "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const QualityRow& r : rows) {
    std::filesystem::path path(r.model);
    if (!path.has_filename()) path = path.parent_path();  // "dir/" of a HF model
    const std::string name = path.filename().string() + (r.is_ref ? " (ref)" : "");
    std::snprintf(buf, sizeof buf,
                  "| %s | %s | %s | %.1f | %.0f | %.1f | %.1f | %.2f | %.3g | %.3g | %lld |\n",
                  name.c_str(), r.file_type.empty() ? "-" : r.file_type.c_str(), r.kv_type.c_str(),
                  r.size_mib, r.load_ms, r.tokenizer_ms, r.decode_tok_s, r.top1_pct, r.mean_kl,
                  r.max_kl, r.positions);
    s += buf;
  }
  return s;
}

std::string QualityReport::ToJson() const {
  nlohmann::ordered_json j;
  j["reference"] = ref;
  j["threads"] = threads;
  j["prompts"] = prompts;
  j["workload"] = "mix";
  j["positions"] = positions;
  j["chat_template"] = chat_template;
  j["decode_tokens"] = tg;
  j["synthetic_weights"] = synthetic;
  j["models"] = nlohmann::ordered_json::array();
  for (const QualityRow& r : rows)
    j["models"].push_back({{"model", r.model},
                           {"file_type", r.file_type},
                           {"reference", r.is_ref},
                           {"kv_type", r.kv_type},
                           {"size_mib", r.size_mib},
                           {"load_ms", r.load_ms},
                           {"tokenizer_ms", r.tokenizer_ms},
                           {"decode_tok_s", r.decode_tok_s},
                           {"top1_pct", r.top1_pct},
                           {"mean_kl_nats", r.mean_kl},
                           {"max_kl_nats", r.max_kl},
                           {"positions", r.positions}});
  return j.dump(2);
}

}  // namespace brisk
