// Small helpers shared by the subcommands.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "quant/recipe.h"
#include "util/clock.h"
#include "util/status.h"

namespace brisk::cli {

// "1,2,3" -> {1, 2, 3}; rejects empty items, non-numbers and values outside int32.
Result<std::vector<int32_t>> ParseTokenList(const std::string& text);

// A file type brisk can write ("q4_k_m", "f16", ...), or an error listing the choices.
Result<FileType> ParseWritableFileType(const std::string& name);

// Progress of a long write on stderr, called with the fraction done. On a terminal it redraws
// the percentage and the seconds since t0 (behind a 25-column bar when `bar`); elsewhere it
// prints nothing, or "10% 20% ..." when `bar`.
std::function<void(double)> StderrProgress(double t0, bool bar);

// Prints "brisk: error: <message>" to stderr and returns exit code 1.
int ReportError(const Status& status);

// The command line as typed (set once by main; reports print it above their tables), with the
// value of --api-key replaced by REDACTED.
void SetCommandLine(int argc, char** argv);
const std::string& CommandLine();

}  // namespace brisk::cli
