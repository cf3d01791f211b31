#include "bench/tuner.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <tuple>

namespace brisk {
namespace {

std::string F(const char* fmt, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

std::string Setting(const BenchPoint& p) {
  return "max_num_seqs=" + std::to_string(p.max_num_seqs) +
         ", max_num_batched_tokens=" + std::to_string(p.max_num_batched_tokens) +
         ", max_prefill_chunk=" +
         (p.max_prefill_chunk > 0 ? std::to_string(p.max_prefill_chunk) : std::string("whole"));
}

// Why a point misses the SLO, e.g. "TPOT p99 61.2 ms > 50 ms".
std::string Miss(const BenchPoint& p, const Slo& slo) {
  std::vector<std::string> why;
  if (p.failures > 0) why.push_back(std::to_string(p.failures) + " failed requests");
  if (slo.ttft_ms > 0 && p.ttft_ms.p99 > slo.ttft_ms)
    why.push_back("TTFT p99 " + F("%.1f", p.ttft_ms.p99) + " ms > " + F("%g", slo.ttft_ms) + " ms");
  if (slo.tpot_ms > 0 && p.tpot_ms.p99 > slo.tpot_ms)
    why.push_back("TPOT p99 " + F("%.1f", p.tpot_ms.p99) + " ms > " + F("%g", slo.tpot_ms) + " ms");
  std::string s;
  for (size_t i = 0; i < why.size(); ++i) s += (i ? " and " : "") + why[i];
  return s;
}

class Search {
 public:
  Search(LoadTarget& target, const TuneOptions& o) : target_(target), o_(o) {}

  // Measures (or recalls) one candidate; its index in points_.
  Result<int> Measure(int seqs, int tokens, int chunk) {
    if (chunk >= tokens) chunk = 0;  // a chunk as large as the budget is the whole budget
    const auto key = std::make_tuple(seqs, tokens, chunk);
    if (auto it = done_.find(key); it != done_.end()) return it->second;
    BenchSweepOptions b = o_.bench;
    b.concurrency = {seqs};
    b.max_num_seqs = {seqs};
    b.request_rates.clear();
    b.batch_policies = {"static"};
    b.max_num_batched_tokens = tokens;
    b.max_prefill_chunk = chunk;
    b.warmup = points_.empty() ? o_.bench.warmup : std::min(o_.bench.warmup, 1);
    BRISK_ASSIGN_OR_RETURN(BenchReport r, RunBenchSweep(target_, b));
    BRISK_CHECK(r.points.size() == 1);
    if (points_.empty()) header_ = r;
    BenchPoint p = std::move(r.points[0]);
    p.label = "seqs=" + std::to_string(seqs) + " tok=" + std::to_string(tokens) +
              " chunk=" + (chunk > 0 ? std::to_string(chunk) : std::string("all"));
    points_.push_back(std::move(p));
    done_[key] = int(points_.size()) - 1;
    return int(points_.size()) - 1;
  }

  Status Exhaustive() {
    for (int s : o_.seqs)
      for (int t : o_.batched_tokens)
        for (int c : o_.prefill_chunks) BRISK_RETURN_IF_ERROR(Measure(s, t, c).status());
    return Status::Ok();
  }

  Status Guided() {
    const Slo& slo = o_.bench.slo;
    const int t0 = o_.batched_tokens.back();
    // Phase 1: larger batches until the SLO breaks or throughput stops growing.
    int best = -1, failed_seqs = 0;
    for (int s : o_.seqs) {
      BRISK_ASSIGN_OR_RETURN(int i, Measure(s, t0, 0));
      if (!MeetsSlo(points_[size_t(i)], slo)) {
        failed_seqs = s;
        break;
      }
      if (best >= 0 && points_[size_t(i)].output_tok_s < 0.97 * points_[size_t(best)].output_tok_s)
        break;  // saturated: a larger batch only adds latency
      if (best < 0 || points_[size_t(i)].output_tok_s > points_[size_t(best)].output_tok_s)
        best = i;
    }
    // Phase 2a: at the best batch, smaller step budgets (whole-prompt chunks), then smaller
    // prefill chunks (default budget), then the best of each together. Both shorten the steps
    // that carry prefill: a lower TPOT tail, and more throughput when several admissions in one
    // step were holding the running sequences up.
    if (best >= 0) {
      const int s = points_[size_t(best)].max_num_seqs;
      int best_t = t0, best_c = 0;
      double best_t_tok = points_[size_t(best)].output_tok_s, best_c_tok = best_t_tok;
      for (int t : Descending(o_.batched_tokens)) {
        if (t == t0) continue;
        BRISK_ASSIGN_OR_RETURN(int i, Measure(s, t, 0));
        if (MeetsSlo(points_[size_t(i)], slo) && points_[size_t(i)].output_tok_s > best_t_tok)
          best_t = t, best_t_tok = points_[size_t(i)].output_tok_s;
      }
      for (int c : ChunksSmallFirst()) {
        if (c == 0) continue;
        BRISK_ASSIGN_OR_RETURN(int i, Measure(s, t0, c));
        if (MeetsSlo(points_[size_t(i)], slo) && points_[size_t(i)].output_tok_s > best_c_tok)
          best_c = c, best_c_tok = points_[size_t(i)].output_tok_s;
      }
      if (best_t != t0 && best_c != 0) BRISK_RETURN_IF_ERROR(Measure(s, best_t, best_c).status());
    }
    // Phase 2b: smaller step budgets / prefill chunks where the SLO broke, and, when one of them
    // holds it, larger batches with that budget.
    if (failed_seqs > 0) {
      for (int t : Descending(o_.batched_tokens))
        for (int c : ChunksSmallFirst()) {
          if (t == t0 && c == 0) continue;
          BRISK_ASSIGN_OR_RETURN(int i, Measure(failed_seqs, t, c));
          if (!MeetsSlo(points_[size_t(i)], slo)) continue;
          for (int s : o_.seqs) {
            if (s <= failed_seqs) continue;
            BRISK_ASSIGN_OR_RETURN(int j, Measure(s, t, c));
            if (!MeetsSlo(points_[size_t(j)], slo)) break;
          }
          return Status::Ok();
        }
    }
    return Status::Ok();
  }

  std::vector<int> Descending(std::vector<int> v) const {
    std::sort(v.rbegin(), v.rend());
    return v;
  }
  // Positive chunks ascending, then 0 (the whole budget) last.
  std::vector<int> ChunksSmallFirst() const {
    std::vector<int> v;
    for (int c : o_.prefill_chunks)
      if (c > 0) v.push_back(c);
    std::sort(v.begin(), v.end());
    if (std::find(o_.prefill_chunks.begin(), o_.prefill_chunks.end(), 0) != o_.prefill_chunks.end())
      v.push_back(0);
    return v;
  }

  std::vector<BenchPoint>& points() { return points_; }
  BenchReport& header() { return header_; }

 private:
  LoadTarget& target_;
  const TuneOptions& o_;
  std::vector<BenchPoint> points_;
  std::map<std::tuple<int, int, int>, int> done_;
  BenchReport header_;
};

std::string Explain(const TuneResult& r, const TuneOptions& o) {
  const std::vector<BenchPoint>& pts = r.report.points;
  const Slo& slo = o.bench.slo;
  std::string slo_text = (slo.ttft_ms > 0 ? "TTFT p99 <= " + F("%g", slo.ttft_ms) + " ms" : "") +
                         (slo.ttft_ms > 0 && slo.tpot_ms > 0 ? " and " : "") +
                         (slo.tpot_ms > 0 ? "TPOT p99 <= " + F("%g", slo.tpot_ms) + " ms" : "");
  std::string s = "brisk tune measured " + std::to_string(pts.size()) + " of the " +
                  std::to_string(r.grid_size) + " settings in the grid (" + o.bench.workload +
                  " workload, as many clients as max_num_seqs) against " + slo_text + ". ";
  if (r.chosen < 0) {
    int closest = -1;
    for (size_t i = 0; i < pts.size(); ++i)
      if (pts[i].failures == 0 &&
          (closest < 0 || pts[i].tpot_ms.p99 + pts[i].ttft_ms.p99 <
                              pts[size_t(closest)].tpot_ms.p99 + pts[size_t(closest)].ttft_ms.p99))
        closest = int(i);
    s += "None of them met it";
    if (closest >= 0)
      s += "; the closest, " + Setting(pts[size_t(closest)]) + ", missed with " +
           Miss(pts[size_t(closest)], slo);
    return s + ". Loosen the SLO, or expect this machine to need fewer clients per server.";
  }
  const BenchPoint& c = pts[size_t(r.chosen)];
  s += "It chose " + Setting(c) + ": " + F("%.1f", c.output_tok_s) + " output tok/s (" +
       F("%.2f", c.request_s) + " req/s) with TTFT p99 " + F("%.1f", c.ttft_ms.p99) +
       " ms and TPOT p99 " + F("%.1f", c.tpot_ms.p99) + " ms, the highest throughput of the " +
       "settings that met the SLO. ";
  int above = -1;  // the smallest larger batch that was measured
  for (size_t i = 0; i < pts.size(); ++i)
    if (pts[i].max_num_seqs > c.max_num_seqs && !r.meets[i] &&
        (above < 0 || pts[i].max_num_seqs < pts[size_t(above)].max_num_seqs))
      above = int(i);
  if (above >= 0) {
    const BenchPoint& a = pts[size_t(above)];
    s += "A batch of " + std::to_string(a.max_num_seqs) + " would give " +
         F("%.1f", a.output_tok_s) + " tok/s but missed the SLO (" + Miss(a, slo) + ")";
    int variants = 0;
    for (size_t i = 0; i < pts.size(); ++i)
      if (pts[i].max_num_seqs == a.max_num_seqs && int(i) != above) ++variants;
    s += variants > 0 ? ", also with the " + std::to_string(variants) +
                            " smaller step budgets / prefill chunks tried. "
                      : ". ";
  } else {
    s += "No larger batch measured better within the SLO. ";
  }
  int front = 0;
  for (bool b : r.pareto) front += b;
  s += std::to_string(front) + " settings are on the Pareto front of throughput against TTFT and " +
       "TPOT tails (marked P); others trade more latency for the same or less throughput.";
  return s;
}

}  // namespace

bool MeetsSlo(const BenchPoint& p, const Slo& slo) {
  if (p.failures > 0 || p.successes == 0) return false;
  if (slo.ttft_ms > 0 && !(p.ttft_ms.p99 <= slo.ttft_ms)) return false;
  if (slo.tpot_ms > 0 && !(p.tpot_ms.p99 <= slo.tpot_ms)) return false;
  return true;
}

std::vector<int> ParetoFront(const std::vector<BenchPoint>& pts) {
  std::vector<int> front;
  auto dominates = [](const BenchPoint& a, const BenchPoint& b) {
    const bool no_worse = a.output_tok_s >= b.output_tok_s && a.ttft_ms.p99 <= b.ttft_ms.p99 &&
                          a.tpot_ms.p99 <= b.tpot_ms.p99;
    const bool better = a.output_tok_s > b.output_tok_s || a.ttft_ms.p99 < b.ttft_ms.p99 ||
                        a.tpot_ms.p99 < b.tpot_ms.p99;
    return no_worse && better;
  };
  for (size_t i = 0; i < pts.size(); ++i) {
    if (pts[i].failures > 0 || pts[i].successes == 0) continue;
    bool dominated = false;
    for (size_t j = 0; j < pts.size() && !dominated; ++j)
      dominated =
          j != i && pts[j].failures == 0 && pts[j].successes > 0 && dominates(pts[j], pts[i]);
    if (!dominated) front.push_back(int(i));
  }
  return front;
}

int PickBest(const std::vector<BenchPoint>& pts, const Slo& slo) {
  int best = -1;
  for (size_t i = 0; i < pts.size(); ++i) {
    if (!MeetsSlo(pts[i], slo)) continue;
    if (best < 0 || pts[i].output_tok_s > pts[size_t(best)].output_tok_s ||
        (pts[i].output_tok_s == pts[size_t(best)].output_tok_s &&
         pts[i].tpot_ms.p99 < pts[size_t(best)].tpot_ms.p99))
      best = int(i);
  }
  return best;
}

Result<std::string> TuneResult::ConfigJson() const {
  if (chosen < 0) return Status::Error("no setting met the SLO; nothing to write");
  const BenchPoint& c = report.points[size_t(chosen)];
  nlohmann::ordered_json j;
  j["batch_policy"] = "static";
  j["max_num_seqs"] = c.max_num_seqs;
  j["max_num_batched_tokens"] = c.max_num_batched_tokens;
  if (c.max_prefill_chunk > 0) j["max_prefill_chunk"] = c.max_prefill_chunk;
  return j.dump(2) + "\n";
}

std::string TuneResult::ToTable() const {
  std::string s;
  char buf[256];
  std::snprintf(buf, sizeof buf, "%-28s %4s %10s %10s %10s %8s\n", "setting", "", "out tok/s",
                "TTFT p99", "TPOT p99", "failed");
  s += buf;
  for (size_t i = 0; i < report.points.size(); ++i) {
    const BenchPoint& p = report.points[i];
    std::string mark = std::string(meets[i] ? "ok" : "--") + (pareto[i] ? " P" : "  ");
    if (int(i) == chosen) mark = "BEST";
    std::snprintf(buf, sizeof buf, "%-28s %4s %10.1f %10.1f %10.1f %8d\n", p.label.c_str(),
                  mark.c_str(), p.output_tok_s, p.ttft_ms.p99, p.tpot_ms.p99, p.failures);
    s += buf;
  }
  s += "(ok: meets the SLO, P: on the Pareto front, BEST: chosen)\n\n" + explanation + "\n";
  return s;
}

Result<TuneResult> RunTune(LoadTarget& target, const TuneOptions& o) {
  if (o.bench.slo.empty())
    return Status::Error("brisk tune needs an SLO (--slo ttft_p99:MS,tpot_p99:MS)");
  if (o.seqs.empty() || o.batched_tokens.empty() || o.prefill_chunks.empty())
    return Status::Error("the search grid is empty");
  for (int v : o.seqs)
    if (v < 1) return Status::Error("max_num_seqs values must be >= 1");
  for (int v : o.batched_tokens)
    if (v < 1) return Status::Error("max_num_batched_tokens values must be >= 1");
  for (int v : o.prefill_chunks)
    if (v < 0) return Status::Error("prefill chunk values must be >= 0 (0 = whole budget)");
  Search search(target, o);
  BRISK_RETURN_IF_ERROR(o.exhaustive ? search.Exhaustive() : search.Guided());
  TuneResult r;
  r.report = std::move(search.header());
  r.report.points = std::move(search.points());
  r.report.sweep = "max_num_seqs x max_num_batched_tokens x max_prefill_chunk";
  r.report.command = o.bench.command;
  r.report.settings += std::string("; ") + (o.exhaustive ? "exhaustive grid" : "guided search");
  {
    std::map<std::tuple<int, int, int>, bool> grid;  // distinct settings (chunk >= budget = 0)
    for (int s : o.seqs)
      for (int t : o.batched_tokens)
        for (int c : o.prefill_chunks) grid[{s, t, c >= t ? 0 : c}] = true;
    r.grid_size = int(grid.size());
  }
  r.meets.resize(r.report.points.size());
  r.pareto.assign(r.report.points.size(), false);
  for (size_t i = 0; i < r.report.points.size(); ++i)
    r.meets[i] = MeetsSlo(r.report.points[i], o.bench.slo);
  for (int i : ParetoFront(r.report.points)) r.pareto[size_t(i)] = true;
  r.chosen = PickBest(r.report.points, o.bench.slo);
  r.explanation = Explain(r, o);
  return r;
}

}  // namespace brisk
