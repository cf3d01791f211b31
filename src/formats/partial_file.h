// Model files are written under a ".partial" name and renamed into place when complete, so a
// reader never sees half a file.
#pragma once

#include <cstdio>
#include <string>

#include "util/status.h"

namespace brisk {

// Closes `f` (the open `tmp`); if every write succeeded (`ok`) and the close did too, renames
// `tmp` to `path`, else removes `tmp` and reports the failure against `path`.
Status FinishPartialFile(std::FILE* f, bool ok, const std::string& tmp, const std::string& path);

}  // namespace brisk
