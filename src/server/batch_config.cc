#include "server/batch_config.h"

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace brisk::server {
namespace {

Result<int> PositiveInt(const nlohmann::json& v, const std::string& key, int max) {
  if (!v.is_number_integer() || v.get<int64_t>() < 1 || v.get<int64_t>() > max)
    return Status::Error(key + " must be an integer in 1.." + std::to_string(max));
  return v.get<int>();
}

}  // namespace

Result<BatchSettings> ParseBatchSettings(const std::string& json_text) {
  nlohmann::json j = nlohmann::json::parse(json_text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return Status::Error("not a JSON object");
  BatchSettings s;
  for (const auto& [key, v] : j.items()) {
    if (key == "batch_policy") {
      if (!v.is_string()) return Status::Error("batch_policy must be a string");
      BRISK_ASSIGN_OR_RETURN(s.batch_policy, ParseBatchPolicy(v.get<std::string>()));
    } else if (key == "max_num_seqs") {
      BRISK_ASSIGN_OR_RETURN(s.max_num_seqs, PositiveInt(v, key, 4096));
    } else if (key == "max_num_batched_tokens") {
      BRISK_ASSIGN_OR_RETURN(s.max_num_batched_tokens, PositiveInt(v, key, 1 << 20));
    } else if (key == "max_prefill_chunk") {
      BRISK_ASSIGN_OR_RETURN(s.max_prefill_chunk, PositiveInt(v, key, 1 << 20));
    } else if (key == "tpot_target_ms") {
      if (!v.is_number() || !(v.get<double>() > 0) || v.get<double>() > 1e6)
        return Status::Error("tpot_target_ms must be a number > 0");
      s.tpot_target_ms = v.get<double>();
    } else if (key == "comment" || key == "explanation" || key == "slo" || key == "measured") {
      // Informational keys `brisk tune` writes next to the settings.
    } else {
      return Status::Error("unknown setting \"" + key + "\"");
    }
  }
  return s;
}

Result<BatchSettings> LoadBatchSettings(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return Status::Error(path + ": cannot open");
  std::ostringstream ss;
  ss << f.rdbuf();
  if (ss.str().size() > (1u << 20)) return Status::Error(path + ": larger than 1 MiB");
  auto s = ParseBatchSettings(ss.str());
  if (!s.ok()) return s.status().WithContext(path);
  return s;
}

}  // namespace brisk::server
