#include "test_paths.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>

namespace brisk::test {
namespace fs = std::filesystem;

std::string DataPath(const std::string& name) {
  return std::string(BRISK_TEST_DATA_DIR) + "/" + name;
}

bool HaveGolden() {
  const char* env = std::getenv("BRISK_GOLDEN_DIR");
  std::string dir = env ? env : BRISK_GOLDEN_DIR;
  return fs::is_directory(dir + "/models");
}

std::string GoldenPath(const std::string& name) {
  if (!HaveGolden()) return "";
  const char* env = std::getenv("BRISK_GOLDEN_DIR");
  std::string dir = env ? env : BRISK_GOLDEN_DIR;
  return dir + "/" + name;
}

std::string FindGoldenOrData(const std::string& golden_rel, const std::string& data_name) {
  std::string g = GoldenPath(golden_rel);
  if (!g.empty() && fs::exists(g)) return g;
  std::string d = DataPath(data_name);
  if (fs::exists(d)) return d;
  return "";
}

std::string TempDir() {
  std::string tmpl = (fs::temp_directory_path() / "brisk_test_XXXXXX").string();
  char* p = mkdtemp(tmpl.data());
  return p ? std::string(p) : std::string();
}

std::string BriskBinary() { return BRISK_BINARY; }

}  // namespace brisk::test
