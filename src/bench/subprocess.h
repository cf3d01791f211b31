// Running a helper program for its standard output (bench samplers: nvidia-smi), bounded in time
// and size so a hung or chatty tool cannot stall or swamp a benchmark. posix_spawn, not fork:
// the bench process has threads, and nothing may run between fork and exec in a threaded child.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "util/status.h"

namespace brisk {

// The first executable file named `name` in the directories of $PATH ("" when there is none).
std::string FindExecutable(std::string_view name);

struct CommandLimits {
  double timeout_s = 5;                 // then the program is killed (SIGKILL) and it is an error
  size_t max_output = size_t{1} << 20;  // bytes of stdout kept; more is an error
};

// Runs argv[0] (a path) with argv, stdin and stderr on /dev/null, and returns what it wrote to
// stdout. Errors: not_found when it cannot be started, unavailable when it timed out, exited
// non-zero or was killed, resource_exhausted when its output passes the limit.
Result<std::string> RunCommandOutput(const std::vector<std::string>& argv,
                                     const CommandLimits& limits = {});

}  // namespace brisk
