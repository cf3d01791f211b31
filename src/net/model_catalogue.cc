#include "net/model_catalogue.h"

#include <cstdlib>

#include "util/ascii.h"

namespace brisk::net {
namespace {

struct Model {
  const char* name;
  const char* repo;
};

constexpr Model kModels[] = {
    {"qwen2.5-0.5b-instruct", "Qwen/Qwen2.5-0.5B-Instruct-GGUF"},
    {"qwen2.5-1.5b-instruct", "Qwen/Qwen2.5-1.5B-Instruct-GGUF"},
};

// Catalogue type -> the suffix Qwen uses in its file names.
struct Type {
  const char* type;
  const char* suffix;
};

constexpr Type kTypes[] = {
    {"q2_k", "q2_k"},     {"q3_k_m", "q3_k_m"}, {"q4_0", "q4_0"},
    {"q4_k_m", "q4_k_m"}, {"q5_0", "q5_0"},     {"q5_k_m", "q5_k_m"},
    {"q6_k", "q6_k"},     {"q8_0", "q8_0"},     {"f16", "fp16"},
};

}  // namespace

const std::vector<CatalogueEntry>& Catalogue() {
  static const std::vector<CatalogueEntry> entries = [] {
    std::vector<CatalogueEntry> v;
    for (const Model& m : kModels)
      for (const Type& t : kTypes)
        v.push_back({std::string(m.name) + ":" + t.type, m.repo,
                     std::string(m.name) + "-" + t.suffix + ".gguf", ""});
    return v;
  }();
  return entries;
}

const CatalogueEntry* FindInCatalogue(std::string_view name) {
  std::string key = AsciiLower(name);
  const size_t colon = key.find(':');
  if (colon == std::string::npos) key += ":" + std::string(kDefaultCatalogueType);
  if (key.size() >= 5 && key.substr(key.size() - 5) == ":fp16")
    key.replace(key.size() - 4, 4, "f16");
  for (const CatalogueEntry& e : Catalogue())
    if (e.name == key) return &e;
  return nullptr;
}

std::string HubEndpoint() {
  const char* env = std::getenv("HF_ENDPOINT");
  std::string endpoint = env && *env ? env : "https://huggingface.co";
  while (!endpoint.empty() && endpoint.back() == '/') endpoint.pop_back();
  return endpoint;
}

std::string CatalogueUrl(const CatalogueEntry& entry) {
  return HubEndpoint() + "/" + entry.repo + "/resolve/main/" + entry.file;
}

}  // namespace brisk::net
