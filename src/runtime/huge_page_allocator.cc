#include "runtime/huge_page_allocator.h"

#include <sys/mman.h>

#include <cstdlib>

#include "util/check.h"

namespace brisk {

void* HugePageAlloc(size_t bytes) {
  if (bytes < kHugePageBytes / 2) {  // small: not worth a huge page
    void* p = std::aligned_alloc(64, (bytes + 63) / 64 * 64);
    BRISK_CHECK_MSG(p != nullptr, "out of memory");
    return p;
  }
  const size_t len = (bytes + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes;
  void* p = std::aligned_alloc(kHugePageBytes, len);
  BRISK_CHECK_MSG(p != nullptr, "out of memory");
#ifdef MADV_HUGEPAGE
  madvise(p, len, MADV_HUGEPAGE);
#endif
  return p;
}

void HugePageFree(void* p, size_t) { std::free(p); }

}  // namespace brisk
