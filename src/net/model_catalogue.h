// The built-in catalogue of `brisk pull`: the official Qwen2.5 Instruct GGUF files on the Hugging
// Face Hub, named `<model>:<type>` (e.g. `qwen2.5-0.5b-instruct:q4_k_m`).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace brisk::net {

struct CatalogueEntry {
  std::string name;    // "qwen2.5-0.5b-instruct:q4_k_m"
  std::string repo;    // "Qwen/Qwen2.5-0.5B-Instruct-GGUF"
  std::string file;    // "qwen2.5-0.5b-instruct-q4_k_m.gguf"
  std::string sha256;  // "" = not pinned: the Hub's X-Linked-ETag header supplies it
};

const std::vector<CatalogueEntry>& Catalogue();

// The default file type when a name has none (`qwen2.5-0.5b-instruct`).
inline constexpr std::string_view kDefaultCatalogueType = "q4_k_m";

// Looks up "model:type" or "model" (case-insensitive; "fp16" is accepted for "f16"). nullptr when
// the name is not in the catalogue.
const CatalogueEntry* FindInCatalogue(std::string_view name);

// $HF_ENDPOINT when set (a mirror, or a test server), else https://huggingface.co.
std::string HubEndpoint();

// <endpoint>/<repo>/resolve/main/<file>
std::string CatalogueUrl(const CatalogueEntry& entry);

}  // namespace brisk::net
