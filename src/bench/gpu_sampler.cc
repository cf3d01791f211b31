#include "bench/gpu_sampler.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <utility>

#include "bench/subprocess.h"

namespace brisk {
namespace {

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
// One nvidia-smi call answers in well under a second; a hung driver must not hang the bench.
constexpr double kNvidiaSmiTimeoutS = 5;
constexpr size_t kNvidiaSmiMaxOutput = 64 << 10;

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

// A field: a finite number >= 0, or NaN for "[N/A]", "[Not Supported]" and the like.
Result<double> ParseField(std::string_view f) {
  f = Trim(f);
  if (f.size() >= 2 && f.front() == '[' && f.back() == ']') return kNan;
  double v = 0;
  const auto [end, ec] = std::from_chars(f.data(), f.data() + f.size(), v);
  if (f.empty() || ec != std::errc() || end != f.data() + f.size() || !std::isfinite(v) || v < 0)
    return Status::InvalidArgument("'" + std::string(f) + "' is not a number");
  return v;
}

}  // namespace

std::vector<std::string> NvidiaSmiQueryArgs() {
  return {"--query-gpu=utilization.gpu,memory.used,power.draw", "--format=csv,noheader,nounits"};
}

Result<std::vector<GpuReading>> ParseNvidiaSmiCsv(std::string_view text) {
  std::vector<GpuReading> out;
  int line_no = 0;
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    const std::string_view line = Trim(text.substr(0, nl));
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    ++line_no;
    if (line.empty()) continue;
    // Exactly three comma-separated fields ("1, 2, 3," has four, the last one empty).
    std::vector<std::string_view> fields;
    for (std::string_view rest = line;;) {
      const size_t comma = rest.find(',');
      fields.push_back(rest.substr(0, comma));
      if (comma == std::string_view::npos) break;
      rest.remove_prefix(comma + 1);
    }
    if (fields.size() != 3)
      return Status::InvalidArgument("nvidia-smi line " + std::to_string(line_no) +
                                     ": expected 3 fields (utilization, memory.used, "
                                     "power.draw): '" +
                                     std::string(line.substr(0, 200)) + "'");
    double v[3];
    for (int k = 0; k < 3; ++k) {
      auto f = ParseField(fields[k]);
      if (!f.ok()) return f.status().WithContext("nvidia-smi line " + std::to_string(line_no));
      v[k] = *f;
    }
    out.push_back({v[0], v[1], v[2]});
  }
  if (out.empty()) return Status::InvalidArgument("nvidia-smi printed no GPU");
  return out;
}

bool GpuAccumulator::Add(const std::vector<GpuReading>& gpus) {
  if (gpus.empty()) return false;
  ++samples_;
  gpus_ = int(gpus.size());
  // Per reading: utilisation averaged over the GPUs that report it, memory and power summed.
  double util = 0, mem = 0, power = 0;
  int util_k = 0, mem_k = 0, power_k = 0;
  for (const GpuReading& g : gpus) {
    if (!std::isnan(g.util_pct)) util += g.util_pct, ++util_k;
    if (!std::isnan(g.mem_used_mib)) mem += g.mem_used_mib, ++mem_k;
    if (!std::isnan(g.power_w)) power += g.power_w, ++power_k;
  }
  if (util_k > 0) {
    util /= util_k;
    util_sum_ += util, ++util_n_;
    util_max_ = std::max(util_max_, util);
  }
  if (mem_k > 0) mem_max_ = std::max(mem_max_, mem), ++mem_n_;
  if (power_k > 0) {
    power_sum_ += power, ++power_n_;
    power_max_ = std::max(power_max_, power);
  }
  return true;
}

GpuSide GpuAccumulator::Summary() const {
  GpuSide g;
  g.has = samples_ > 0;
  g.gpus = gpus_;
  g.samples = samples_;
  g.util_mean_pct = util_n_ > 0 ? util_sum_ / util_n_ : kNan;
  g.util_max_pct = util_n_ > 0 ? util_max_ : kNan;
  g.mem_used_max_mib = mem_n_ > 0 ? mem_max_ : kNan;
  g.power_mean_w = power_n_ > 0 ? power_sum_ / power_n_ : kNan;
  g.power_max_w = power_n_ > 0 ? power_max_ : kNan;
  return g;
}

GpuSampler::GpuSampler(std::string program, double period_s)
    : program_(std::move(program)), thread_(period_s, [this] { Sample(); }) {}

std::unique_ptr<GpuSampler> GpuSampler::CreateIfAvailable(double period_s) {
  std::string program = FindExecutable("nvidia-smi");
  if (program.empty()) return nullptr;
  return std::make_unique<GpuSampler>(std::move(program), period_s);
}

bool GpuSampler::Sample() {
  const uint64_t point = readings_.Current();
  std::vector<std::string> argv = {program_};
  for (std::string& a : NvidiaSmiQueryArgs()) argv.push_back(std::move(a));
  auto out = RunCommandOutput(argv, {kNvidiaSmiTimeoutS, kNvidiaSmiMaxOutput});
  if (!out.ok()) return false;
  auto gpus = ParseNvidiaSmiCsv(*out);
  return gpus.ok() && readings_.Add(point, *gpus);
}

void GpuSampler::BeginPoint() {
  readings_.Begin();
  thread_.Wake();  // a first reading while the load starts, however short the point
}

void GpuSampler::EndPoint(BenchPoint* p) {
  // A point that ended before any reading finished still gets one, taken now.
  if (readings_.Empty()) Sample();
  p->gpu = readings_.End();
}

}  // namespace brisk
