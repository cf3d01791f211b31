#include "model/default_model.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "model/synth.h"

namespace brisk {
namespace fs = std::filesystem;

std::string BriskHome() {
  if (const char* h = std::getenv("BRISK_HOME"); h && *h) return h;
  if (const char* home = std::getenv("HOME"); home && *home)
    return std::string(home) + "/.cache/brisk";
  return ".brisk";
}

std::string DefaultModelPath() { return BriskHome() + "/synth-qwen2.5-0.5b-q4_k_m.gguf"; }

Result<std::string> ResolveModelPath(const std::string& model) {
  if (!model.empty()) return model;
  const std::string path = DefaultModelPath();
  std::error_code ec;
  if (fs::exists(path, ec)) return path;
  fs::create_directories(BriskHome(), ec);
  if (ec) return Status::Error("cannot create " + BriskHome() + ": " + ec.message());
  std::fprintf(stderr,
               "brisk: no -m given; generating the default model (synthetic Qwen2.5-0.5B "
               "Q4_K_M, random weights) at %s\n",
               path.c_str());
  SynthOptions o;
  int last = -1;
  o.progress = [&](double f) {
    int pct = int(f * 100);
    if (pct != last) std::fprintf(stderr, "\r  %3d%%", pct);
    last = pct;
  };
  Status st = WriteSynthModel(o, path);
  std::fprintf(stderr, "\n");
  if (!st.ok()) return st;
  return path;
}

}  // namespace brisk
