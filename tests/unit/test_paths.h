// Where tests find data: a small subset committed in tests/data, the full golden set in
// ../shared/golden when present (CI has it). Tests over the full set skip with a notice otherwise.
#pragma once

#include <string>

namespace brisk::test {

// tests/data/<name>
std::string DataPath(const std::string& name);
// ../shared/golden/<name>, or "" when the golden directory is absent.
std::string GoldenPath(const std::string& name);
bool HaveGolden();
// Prefer the full golden file; fall back to the committed subset in tests/data; "" if neither.
std::string FindGoldenOrData(const std::string& golden_rel, const std::string& data_name);
// A fresh temporary directory for one test, removed (with its contents) when the test process
// exits.
std::string TempDir();
// Absolute path of the built `brisk` binary.
std::string BriskBinary();

}  // namespace brisk::test
