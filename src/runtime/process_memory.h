// This process's resident memory, as the kernel counts it against a memory cgroup.
#pragma once

#include <cstddef>

namespace brisk {

// Anonymous resident bytes (RssAnon of /proc/self/status): what cannot be dropped under memory
// pressure, unlike the clean pages of a mapped model file. 0 where unknown.
size_t ProcessAnonRssBytes();

}  // namespace brisk
