#include "formats/json_object.h"

namespace brisk {

Result<nlohmann::json> ParseJsonObject(std::string_view text, const std::string& origin) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text.begin(), text.end());
  } catch (const nlohmann::json::parse_error& e) {
    return Status::Error(origin + ": invalid JSON: " + e.what());
  }
  if (!j.is_object()) return Status::Error(origin + ": not a JSON object");
  return j;
}

}  // namespace brisk
