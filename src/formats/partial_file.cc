#include "formats/partial_file.h"

#include <filesystem>
#include <system_error>

namespace brisk {

Status FinishPartialFile(std::FILE* f, bool ok, const std::string& tmp, const std::string& path) {
  ok = (std::fclose(f) == 0) && ok;
  if (!ok) {
    std::remove(tmp.c_str());
    return Status::Error(path + ": write failed (disk full?)");
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) return Status::Error(path + ": cannot rename into place: " + ec.message());
  return Status::Ok();
}

}  // namespace brisk
