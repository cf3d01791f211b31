// Reading a server's /metrics (Prometheus text exposition) for benchmarks: every sample's value,
// summed per metric name over its label sets (vLLM's counters are split by labels such as
// finished_reason; a benchmark wants the totals).
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "util/status.h"

namespace brisk {

// Comments and blank lines are skipped; a sample line whose value cannot be read is an error
// naming the line (a server sending garbage should not be measured as zeros).
Result<std::map<std::string, double, std::less<>>> SumPrometheusSamples(std::string_view text);

}  // namespace brisk
