// The built-in prompt sets of `brisk bench` (DESIGN §7): the three workload classes the seeds of
// this project asked about, each in English and Chinese.
//   qa           short questions, short answers (chat assistants, search boxes)
//   copywriting  a brief in, long prose out (marketing copy, emails, stories)
//   code         a task or a snippet in, code out (longer prompts, medium outputs)
//   mix          all three interleaved, one request of each class in turn
// A run takes prompts in a fixed order (prompt i = set[i % size]), so two runs of the same
// command send the same requests.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "util/status.h"

namespace brisk {

enum class WorkloadClass { kQa, kCopywriting, kCode };
const char* WorkloadClassName(WorkloadClass c);  // "qa", "copywriting", "code"

struct WorkloadPrompt {
  WorkloadClass cls = WorkloadClass::kQa;
  std::string lang;    // "en" or "zh"
  std::string system;  // system message ("" = none)
  std::string user;    // the user message
  // Output tokens when lengths are fixed (ignore_eos), typical of the class: qa 64,
  // copywriting 256, code 192. With natural lengths it is the max_tokens cap.
  int output_len = 64;
};

// "qa", "copywriting", "code" or "mix"; an error names the valid choices. English and Chinese
// prompts alternate (en, zh, en, zh, ...); mix also alternates the classes.
Result<std::vector<WorkloadPrompt>> WorkloadPrompts(std::string_view name);

}  // namespace brisk
