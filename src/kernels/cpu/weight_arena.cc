#include "kernels/cpu/weight_arena.h"

#include <sys/mman.h>

#include <cstdint>
#include <mutex>

#include "runtime/huge_page_allocator.h"
#include "util/check.h"

namespace brisk {
namespace {

constexpr size_t kHuge = kHugePageBytes;
constexpr size_t kSlab = size_t(64) << 20;

size_t RoundUp(size_t n, size_t to) { return (n + to - 1) / to * to; }

struct Slab {
  void* raw = nullptr;  // the mapping (one huge page larger, for the alignment)
  size_t raw_len = 0;
  uint8_t* base = nullptr;  // 2 MiB aligned
  size_t len = 0;
  ~Slab() {
    if (raw) munmap(raw, raw_len);
  }
};

std::shared_ptr<Slab> NewSlab(size_t len) {
  auto s = std::make_shared<Slab>();
  s->raw_len = len + kHuge;
  s->raw = mmap(nullptr, s->raw_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  BRISK_CHECK_MSG(s->raw != MAP_FAILED, "out of memory packing weights");
  s->base = reinterpret_cast<uint8_t*>(RoundUp(reinterpret_cast<uintptr_t>(s->raw), kHuge));
  s->len = len;
#ifdef MADV_HUGEPAGE
  madvise(s->base, len, MADV_HUGEPAGE);
#endif
  return s;
}

std::mutex g_mu;
std::weak_ptr<Slab> g_current;  // the slab new pieces come from (weak: freed with its last piece)
size_t g_used = 0;

}  // namespace

std::shared_ptr<void> AllocWeightMemory(size_t bytes) {
  if (bytes == 0) return nullptr;
  const size_t need = RoundUp(bytes, 64);
  if (need > kSlab / 2) {  // a large tensor (the lm_head) gets a slab of its own
    std::shared_ptr<Slab> s = NewSlab(RoundUp(need, kHuge));
    return std::shared_ptr<void>(s, s->base);
  }
  std::lock_guard<std::mutex> lock(g_mu);
  std::shared_ptr<Slab> s = g_current.lock();
  if (!s || g_used + need > s->len) {
    s = NewSlab(kSlab);
    g_current = s;
    g_used = 0;
  }
  void* p = s->base + g_used;
  g_used += need;
  return std::shared_ptr<void>(s, p);
}

}  // namespace brisk
