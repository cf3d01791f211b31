// BenchReport <-> JSON, the SLO flag parser, and writing all report formats into a folder.
//
// The document: {"format": "brisk-bench-report", "version": 1, <every header field>, "slo":
// {"ttft_ms", "tpot_ms"}, "points": [{<every point field>, "ttft_ms": {count, mean, min, p50,
// p90, p99, max}, ..., "server": {...}}]}. Doubles are written in full precision, so a report
// reads back bit-identical; the non-finite ones JSON cannot hold (an open-loop rate of "all at
// once" is inf) are written as the strings "inf", "-inf" and "nan".
//
// Reading is strict about what is there and lenient about what is not: a present field must have
// the writer's type (integers in range and not negative, numbers finite), a missing one keeps its
// default, and unknown keys are ignored (a later writer may add fields without a version bump).
// "format", "version" and "points" are required.
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <string_view>
#include <utility>
#include <vector>

#include "bench/bench_report.h"

namespace brisk {
namespace {

using Json = nlohmann::ordered_json;

constexpr const char* kFormat = "brisk-bench-report";
constexpr int kVersion = 1;

Json Num(double v) {
  if (std::isfinite(v)) return v;
  if (std::isnan(v)) return "nan";
  return v > 0 ? "inf" : "-inf";
}

Json SummaryJson(const LatencySummary& s) {
  return {{"count", s.count},  {"mean", Num(s.mean)}, {"min", Num(s.min)}, {"p50", Num(s.p50)},
          {"p90", Num(s.p90)}, {"p99", Num(s.p99)},   {"max", Num(s.max)}};
}

const char* TypeName(const Json& j) { return j.type_name(); }

// Reads the members of one JSON object into struct fields, keeping the first error. Paths in
// messages are like "points[2].ttft_ms.p99".
class Fields {
 public:
  Fields(const Json& j, std::string path, Status* err) : j_(j), path_(std::move(path)), err_(err) {}

  void Str(const char* key, std::string& out) {
    if (const Json* v = Find(key)) {
      if (!v->is_string())
        return Fail(key, std::string("expected a string, found ") + TypeName(*v));
      out = v->get<std::string>();
    }
  }
  void Bool(const char* key, bool& out) {
    if (const Json* v = Find(key)) {
      if (!v->is_boolean())
        return Fail(key, std::string("expected true or false, found ") + TypeName(*v));
      out = v->get<bool>();
    }
  }
  template <typename I>
  void Int(const char* key, I& out) {
    const Json* v = Find(key);
    if (!v) return;
    if (!v->is_number_integer())
      return Fail(key, std::string("expected an integer, found ") +
                           (v->is_number() ? "a fraction" : TypeName(*v)));
    if (v->is_number_unsigned()) {
      uint64_t u = v->get<uint64_t>();
      if (u > (uint64_t)std::numeric_limits<I>::max()) return Fail(key, "integer out of range");
      out = (I)u;
      return;
    }
    int64_t s = v->get<int64_t>();
    if (s < 0) return Fail(key, "must not be negative");
    if (s > (int64_t)std::numeric_limits<I>::max()) return Fail(key, "integer out of range");
    out = (I)s;
  }
  void Double(const char* key, double& out) {
    const Json* v = Find(key);
    if (!v) return;
    if (v->is_string()) {  // the writer's spelling of values JSON has no numbers for
      const std::string& s = v->get_ref<const std::string&>();
      if (s == "inf") return (void)(out = INFINITY);
      if (s == "-inf") return (void)(out = -INFINITY);
      if (s == "nan") return (void)(out = NAN);
      return Fail(key, "expected a number, found the string \"" + s.substr(0, 40) + "\"");
    }
    if (!v->is_number()) return Fail(key, std::string("expected a number, found ") + TypeName(*v));
    double d = v->get<double>();
    if (!std::isfinite(d)) return Fail(key, "number out of range");
    out = d;
  }
  void Strings(const char* key, std::vector<std::string>& out) {
    const Json* v = Find(key);
    if (!v) return;
    if (!v->is_array())
      return Fail(key, std::string("expected an array of strings, found ") + TypeName(*v));
    out.clear();
    for (size_t i = 0; i < v->size(); ++i) {
      if (!(*v)[i].is_string())
        return Fail(std::string(key) + "[" + std::to_string(i) + "]",
                    std::string("expected a string, found ") + TypeName((*v)[i]));
      out.push_back((*v)[i].get<std::string>());
    }
  }
  // A member object (nullptr when missing or not an object; the latter is an error).
  const Json* Object(const char* key) {
    const Json* v = Find(key);
    if (v && !v->is_object()) {
      Fail(key, std::string("expected an object, found ") + TypeName(*v));
      return nullptr;
    }
    return v;
  }
  std::string PathOf(const std::string& key) const {
    return path_.empty() ? key : path_ + "." + key;
  }
  bool ok() const { return err_->ok(); }

 private:
  const Json* Find(const char* key) {
    if (!err_->ok()) return nullptr;  // report the first problem only
    auto it = j_.find(key);
    return it == j_.end() ? nullptr : &*it;
  }
  void Fail(const std::string& key, const std::string& what) {
    if (err_->ok()) *err_ = Status::Error(PathOf(key) + ": " + what);
  }

  const Json& j_;
  std::string path_;
  Status* err_;
};

void ReadSummary(Fields& parent, const char* key, LatencySummary& s, Status* err) {
  const Json* j = parent.Object(key);
  if (!j) return;
  Fields f(*j, parent.PathOf(key), err);
  f.Int("count", s.count);
  f.Double("mean", s.mean);
  f.Double("min", s.min);
  f.Double("p50", s.p50);
  f.Double("p90", s.p90);
  f.Double("p99", s.p99);
  f.Double("max", s.max);
}

void ReadPoint(const Json& j, const std::string& path, BenchPoint& p, Status* err) {
  Fields f(j, path, err);
  f.Int("concurrency", p.concurrency);
  f.Double("request_rate", p.request_rate);
  f.Int("max_num_seqs", p.max_num_seqs);
  f.Int("max_num_batched_tokens", p.max_num_batched_tokens);
  f.Int("max_prefill_chunk", p.max_prefill_chunk);
  f.Str("batch_policy", p.batch_policy);
  f.Str("label", p.label);
  f.Int("requests", p.requests);
  f.Int("successes", p.successes);
  f.Int("failures", p.failures);
  f.Strings("failure_messages", p.failure_messages);
  f.Double("wall_s", p.wall_s);
  f.Int("prompt_tokens", p.prompt_tokens);
  f.Int("output_tokens", p.output_tokens);
  f.Double("output_tok_s", p.output_tok_s);
  f.Double("total_tok_s", p.total_tok_s);
  f.Double("request_s", p.request_s);
  f.Double("goodput_s", p.goodput_s);
  f.Double("slo_attainment", p.slo_attainment);
  ReadSummary(f, "ttft_ms", p.ttft_ms, err);
  ReadSummary(f, "tpot_ms", p.tpot_ms, err);
  ReadSummary(f, "itl_ms", p.itl_ms, err);
  ReadSummary(f, "e2e_ms", p.e2e_ms, err);
  f.Double("peak_rss_mib", p.peak_rss_mib);
  if (const Json* sj = f.Object("server")) {
    Fields s(*sj, f.PathOf("server"), err);
    ServerSide& v = p.server;
    s.Bool("has", v.has);
    s.Int("steps", v.steps);
    s.Double("mean_batch_seqs", v.mean_batch_seqs);
    s.Double("mean_batch_tokens", v.mean_batch_tokens);
    s.Int("preemptions", v.preemptions);
    s.Int("prefix_queried_tokens", v.prefix_queried_tokens);
    s.Int("prefix_hit_tokens", v.prefix_hit_tokens);
    s.Int("generation_tokens", v.generation_tokens);
    s.Double("kv_usage_max", v.kv_usage_max);
  }
  if (const Json* gj = f.Object("gauges")) {
    Fields g(*gj, f.PathOf("gauges"), err);
    ServerGauges& v = p.gauges;
    g.Bool("has", v.has);
    g.Int("samples", v.samples);
    g.Double("kv_usage_mean", v.kv_usage_mean);
    g.Double("kv_usage_max", v.kv_usage_max);
    g.Double("running_mean", v.running_mean);
    g.Double("running_max", v.running_max);
    g.Double("waiting_mean", v.waiting_mean);
    g.Double("waiting_max", v.waiting_max);
  }
  if (const Json* gj = f.Object("gpu")) {
    Fields g(*gj, f.PathOf("gpu"), err);
    GpuSide& v = p.gpu;
    g.Bool("has", v.has);
    g.Int("gpus", v.gpus);
    g.Int("samples", v.samples);
    g.Double("util_mean_pct", v.util_mean_pct);
    g.Double("util_max_pct", v.util_max_pct);
    g.Double("mem_used_max_mib", v.mem_used_max_mib);
    g.Double("power_mean_w", v.power_mean_w);
    g.Double("power_max_w", v.power_max_w);
  }
}

std::string Trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

}  // namespace

Result<Slo> ParseSlo(const std::string& text) {
  const std::string usage =
      " (expected e.g. ttft:500,tpot:50; keys ttft, ttft_p99, tpot, tpot_p99; "
      "values in milliseconds)";
  if (Trim(text).empty()) return Status::Error("empty SLO" + usage);
  Slo slo;
  bool seen_ttft = false, seen_tpot = false;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    const std::string item = Trim(text.substr(start, comma - start));
    start = comma + 1;
    if (item.empty()) return Status::Error("SLO \"" + text + "\" has an empty item" + usage);
    size_t colon = item.find(':');
    if (colon == std::string::npos)
      return Status::Error("SLO item \"" + item + "\" has no value" + usage);
    const std::string key = Trim(item.substr(0, colon)), value = Trim(item.substr(colon + 1));
    double* field;
    bool* seen;
    if (key == "ttft" || key == "ttft_p99") {
      field = &slo.ttft_ms, seen = &seen_ttft;
    } else if (key == "tpot" || key == "tpot_p99") {
      field = &slo.tpot_ms, seen = &seen_tpot;
    } else {
      return Status::Error("unknown SLO key \"" + key + "\"" + usage);
    }
    if (*seen) return Status::Error("SLO sets " + key.substr(0, 4) + " twice" + usage);
    *seen = true;
    double v = 0;
    auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
    if (value.empty() || ec != std::errc() || end != value.data() + value.size() ||
        !std::isfinite(v) || v <= 0)
      return Status::Error("SLO " + key + ": \"" + value +
                           "\" is not a positive number of milliseconds");
    *field = v;
  }
  return slo;
}

Json BenchPointJson(const BenchPoint& p) {
  Json x;
  x["label"] = p.label;
  x["concurrency"] = p.concurrency;
  x["request_rate"] = Num(p.request_rate);
  x["max_num_seqs"] = p.max_num_seqs;
  x["max_num_batched_tokens"] = p.max_num_batched_tokens;
  x["max_prefill_chunk"] = p.max_prefill_chunk;
  x["batch_policy"] = p.batch_policy;
  x["requests"] = p.requests;
  x["successes"] = p.successes;
  x["failures"] = p.failures;
  x["failure_messages"] = p.failure_messages;
  x["wall_s"] = Num(p.wall_s);
  x["prompt_tokens"] = p.prompt_tokens;
  x["output_tokens"] = p.output_tokens;
  x["output_tok_s"] = Num(p.output_tok_s);
  x["total_tok_s"] = Num(p.total_tok_s);
  x["request_s"] = Num(p.request_s);
  x["goodput_s"] = Num(p.goodput_s);
  x["slo_attainment"] = Num(p.slo_attainment);
  x["ttft_ms"] = SummaryJson(p.ttft_ms);
  x["tpot_ms"] = SummaryJson(p.tpot_ms);
  x["itl_ms"] = SummaryJson(p.itl_ms);
  x["e2e_ms"] = SummaryJson(p.e2e_ms);
  x["peak_rss_mib"] = Num(p.peak_rss_mib);
  const ServerSide& s = p.server;
  x["server"] = {{"has", s.has},
                 {"steps", s.steps},
                 {"mean_batch_seqs", Num(s.mean_batch_seqs)},
                 {"mean_batch_tokens", Num(s.mean_batch_tokens)},
                 {"preemptions", s.preemptions},
                 {"prefix_queried_tokens", s.prefix_queried_tokens},
                 {"prefix_hit_tokens", s.prefix_hit_tokens},
                 {"generation_tokens", s.generation_tokens},
                 {"kv_usage_max", Num(s.kv_usage_max)}};
  // Written only when measured: reports without a GPU or gauges keep their old shape.
  if (p.gauges.has) {
    const ServerGauges& g = p.gauges;
    x["gauges"] = {{"has", true},
                   {"samples", g.samples},
                   {"kv_usage_mean", Num(g.kv_usage_mean)},
                   {"kv_usage_max", Num(g.kv_usage_max)},
                   {"running_mean", Num(g.running_mean)},
                   {"running_max", Num(g.running_max)},
                   {"waiting_mean", Num(g.waiting_mean)},
                   {"waiting_max", Num(g.waiting_max)}};
  }
  if (p.gpu.has) {
    const GpuSide& g = p.gpu;
    x["gpu"] = {{"has", true},
                {"gpus", g.gpus},
                {"samples", g.samples},
                {"util_mean_pct", Num(g.util_mean_pct)},
                {"util_max_pct", Num(g.util_max_pct)},
                {"mem_used_max_mib", Num(g.mem_used_max_mib)},
                {"power_mean_w", Num(g.power_mean_w)},
                {"power_max_w", Num(g.power_max_w)}};
  }
  return x;
}

std::string BenchReport::ToJson() const {
  Json j;
  j["format"] = kFormat;
  j["version"] = kVersion;
  j["brisk_version"] = brisk_version;
  j["started_at"] = started_at;
  j["command"] = command;
  j["cpu"] = cpu;
  j["isa"] = isa;
  j["cores"] = cores;
  j["threads"] = threads;
  j["mode"] = mode;
  j["url"] = url;
  j["server"] = server;
  j["model"] = model;
  j["file_type"] = file_type;
  j["synthetic"] = synthetic;
  j["model_load_ms"] = Num(model_load_ms);
  j["tokenizer_load_ms"] = Num(tokenizer_load_ms);
  j["workload"] = workload;
  j["output_len"] = output_len;
  j["sampling"] = sampling;
  j["sweep"] = sweep;
  j["settings"] = settings;
  j["slo"] = {{"ttft_ms", Num(slo.ttft_ms)}, {"tpot_ms", Num(slo.tpot_ms)}};
  Json pts = Json::array();
  for (const BenchPoint& p : points) pts.push_back(BenchPointJson(p));
  j["points"] = std::move(pts);
  // Invalid UTF-8 in a string (a model name from a file) is replaced rather than thrown on.
  return j.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

Result<BenchReport> BenchReportFromJson(const std::string& text) {
  Json j;
  try {
    j = Json::parse(text);
  } catch (const std::exception& e) {  // nothing from nlohmann may escape
    return Status::Error(std::string("bench report: not valid JSON: ") + e.what());
  }
  if (!j.is_object())
    return Status::Error(std::string("bench report: expected a JSON object, found ") + TypeName(j));
  auto fmt = j.find("format");
  if (fmt == j.end() || !fmt->is_string() || fmt->get<std::string>() != kFormat)
    return Status::Error(std::string("bench report: \"format\" is not \"") + kFormat +
                         "\" (not a brisk bench report)");
  auto ver = j.find("version");
  if (ver == j.end() || !ver->is_number_integer() || ver->get<int64_t>() != kVersion)
    return Status::Error("bench report: unsupported \"version\" (this brisk reads version " +
                         std::to_string(kVersion) + ")");
  auto pts = j.find("points");
  if (pts == j.end() || !pts->is_array())
    return Status::Error("bench report: \"points\" must be an array");

  BenchReport r;
  Status err;
  Fields f(j, "", &err);
  f.Str("brisk_version", r.brisk_version);
  f.Str("started_at", r.started_at);
  f.Str("command", r.command);
  f.Str("cpu", r.cpu);
  f.Str("isa", r.isa);
  f.Int("cores", r.cores);
  f.Int("threads", r.threads);
  f.Str("mode", r.mode);
  f.Str("url", r.url);
  f.Str("server", r.server);
  f.Str("model", r.model);
  f.Str("file_type", r.file_type);
  f.Bool("synthetic", r.synthetic);
  f.Double("model_load_ms", r.model_load_ms);
  f.Double("tokenizer_load_ms", r.tokenizer_load_ms);
  f.Str("workload", r.workload);
  f.Str("output_len", r.output_len);
  f.Str("sampling", r.sampling);
  f.Str("sweep", r.sweep);
  f.Str("settings", r.settings);
  if (const Json* s = f.Object("slo")) {
    Fields sf(*s, "slo", &err);
    sf.Double("ttft_ms", r.slo.ttft_ms);
    sf.Double("tpot_ms", r.slo.tpot_ms);
  }
  for (size_t i = 0; i < pts->size() && err.ok(); ++i) {
    const std::string path = "points[" + std::to_string(i) + "]";
    const Json& pj = (*pts)[i];
    if (!pj.is_object()) {
      err = Status::Error(path + ": expected an object, found " + TypeName(pj));
      break;
    }
    ReadPoint(pj, path, r.points.emplace_back(), &err);
  }
  if (!err.ok()) return err.WithContext("bench report");
  return r;
}

namespace {

Status WriteText(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return Status::Error("cannot write " + path + ": " + std::strerror(errno));
  out.write(text.data(), (std::streamsize)text.size());
  out.close();
  if (!out) return Status::Error("error writing " + path);
  return Status::Ok();
}

// The report page's inline <svg class="chart" data-metric="M"> elements as standalone SVG
// documents: the namespace an image file needs, and the page's chart styles carried inside.
std::vector<std::pair<std::string, std::string>> StandaloneCharts(const std::string& html) {
  static constexpr std::string_view kOpen = "<svg class=\"chart\" data-metric=\"";
  static constexpr std::string_view kStyle =
      "<style>text{font:12px system-ui,sans-serif;fill:#333}text.title{font-size:14px}"
      "text.nodata{font-size:16px;fill:#888}</style>";
  std::vector<std::pair<std::string, std::string>> out;
  size_t pos = 0;
  while ((pos = html.find(kOpen, pos)) != std::string::npos) {
    const size_t name_end = html.find('"', pos + kOpen.size());
    const size_t tag_end = html.find('>', pos);
    const size_t end = html.find("</svg>", pos);
    if (name_end == std::string::npos || tag_end == std::string::npos || end == std::string::npos)
      break;
    std::string metric = html.substr(pos + kOpen.size(), name_end - pos - kOpen.size());
    std::string svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" style=\"background:#fff\"" +
                      html.substr(pos + 4, tag_end - pos - 4) + ">" + std::string(kStyle) +
                      html.substr(tag_end + 1, end + 6 - tag_end - 1) + "\n";
    out.emplace_back(std::move(metric), std::move(svg));
    pos = end;
  }
  return out;
}

}  // namespace

Status WriteBenchReport(const BenchReport& report, const std::string& dir_text) {
  namespace fs = std::filesystem;
  const fs::path dir = dir_text.empty() ? fs::path(".") : fs::path(dir_text);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return Status::Error("cannot create directory " + dir.string() + ": " + ec.message());
  if (!fs::is_directory(dir, ec)) return Status::Error(dir.string() + " is not a directory");
  const std::pair<const char*, std::string> files[] = {{"report.json", report.ToJson()},
                                                       {"report.csv", report.ToCsv()},
                                                       {"report.md", report.ToMarkdown()},
                                                       {"report.html", report.ToHtml()}};
  for (const auto& [name, text] : files)
    BRISK_RETURN_IF_ERROR(WriteText((dir / name).string(), text));
  // Every chart also as its own .svg file (Markdown documents embed them as images).
  const fs::path charts = dir / "charts";
  fs::create_directories(charts, ec);
  if (ec) return Status::Error("cannot create directory " + charts.string() + ": " + ec.message());
  for (const auto& [metric, svg] : StandaloneCharts(files[3].second))
    BRISK_RETURN_IF_ERROR(WriteText((charts / (metric + ".svg")).string(), svg));
  return Status::Ok();
}

}  // namespace brisk
