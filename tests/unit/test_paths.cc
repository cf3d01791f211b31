#include "test_paths.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <system_error>
#include <vector>

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

namespace {
// The directories TempDir() made, removed with everything in them when the test process exits,
// so a suite run leaves nothing in the temporary directory (some tests write models of ~200 MB
// there; without this, repeated runs of scripts/test piled up gigabytes).
class TempDirs {
 public:
  ~TempDirs() {
    for (const std::string& d : dirs_) {
      std::error_code ec;
      fs::remove_all(d, ec);
    }
  }
  void Add(const std::string& d) {
    std::lock_guard<std::mutex> lock(mu_);
    dirs_.push_back(d);
  }

 private:
  std::mutex mu_;
  std::vector<std::string> dirs_;
};
TempDirs& MadeDirs() {
  static TempDirs dirs;
  return dirs;
}
}  // namespace

std::string TempDir() {
  std::string tmpl = (fs::temp_directory_path() / "brisk_test_XXXXXX").string();
  char* p = mkdtemp(tmpl.data());
  if (!p) return std::string();
  MadeDirs().Add(p);
  return std::string(p);
}

#ifdef BRISK_BINARY
std::string BriskBinary() { return BRISK_BINARY; }
#else
std::string BriskBinary() { return ""; }  // BRISK_CORE_ONLY builds have no CLI
#endif

}  // namespace brisk::test
