#include "formats/sentence_transformers.h"

#include <filesystem>
#include <nlohmann/json.hpp>

#include "formats/hf_config.h"

namespace brisk::st_modules {
namespace {

using Json = nlohmann::json;
constexpr size_t kMaxFileBytes = size_t(1) << 20;

// A module path we may join to the folder: one plain name, no separators, not "." or "..".
bool PlainFolderName(const std::string& p) {
  return !p.empty() && p != "." && p != ".." && p.find('/') == std::string::npos &&
         p.find('\\') == std::string::npos && p.find('\0') == std::string::npos;
}

std::string StringField(const Json& obj, const char* key) {
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace

Result<std::string> ParsePoolingConfig(std::string_view text, const std::string& origin) {
  const Json j = Json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return Status::Error(origin + ": not a JSON object");
  if (std::string mode = StringField(j, "pooling_mode"); !mode.empty()) return mode;
  static constexpr const char* kPrefix = "pooling_mode_";
  std::string found;
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (!it.key().starts_with(kPrefix) || !it->is_boolean() || !it->get<bool>()) continue;
    if (!found.empty())
      return Status::Error(origin + ": several pooling modes are set (" + found + ", " +
                           it.key().substr(13) + "); brisk pools one way");
    found = it.key().substr(13);
  }
  if (found == "cls_token") found = "cls";
  if (found == "mean_tokens") found = "mean";
  if (found == "max_tokens") found = "max";
  if (found.empty()) return Status::Error(origin + ": no pooling_mode_* flag is true");
  return found;
}

Result<Info> Read(const std::string& dir) {
  namespace fs = std::filesystem;
  Info info;
  std::error_code ec;
  const std::string modules_path = dir + "/modules.json";
  if (!fs::exists(modules_path, ec)) return info;
  info.present = true;
  BRISK_ASSIGN_OR_RETURN(std::string text, hf::ReadTextFile(modules_path, kMaxFileBytes));
  const Json modules = Json::parse(text, nullptr, false);
  if (modules.is_discarded() || !modules.is_array())
    return Status::Error(modules_path + ": not a JSON array of modules");
  for (const Json& m : modules) {
    if (!m.is_object()) return Status::Error(modules_path + ": a module is not an object");
    const std::string type = StringField(m, "type");
    if (type.ends_with(".Normalize")) info.normalize = true;
    if (!type.ends_with(".Pooling")) continue;
    const std::string path = StringField(m, "path");
    if (!PlainFolderName(path))
      return Status::Error(modules_path + ": the Pooling module's path '" + path +
                           "' is not a folder name inside the model folder");
    const std::string config = dir + "/" + path + "/config.json";
    BRISK_ASSIGN_OR_RETURN(std::string pooling_text, hf::ReadTextFile(config, kMaxFileBytes));
    BRISK_ASSIGN_OR_RETURN(info.pooling, ParsePoolingConfig(pooling_text, config));
  }
  return info;
}

}  // namespace brisk::st_modules
