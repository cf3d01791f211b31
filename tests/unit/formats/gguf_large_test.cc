// Large files. Open reads only the header: a Qwen2.5-0.5B-sized file whose tensor data is a hole
// opens quickly and none of its data pages are brought in. And counts that claim the whole of a
// multi-GB file must not turn into multi-GB allocations. Times are printed, never asserted.
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "gguf_test_util.h"

namespace brisk::gguf_test {
namespace {

namespace fs = std::filesystem;
using gguf::File;

double MsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// Writes `header` and extends the file to `size` bytes without writing the rest (a hole).
bool WriteSparse(const std::string& path, const std::vector<uint8_t>& header, uint64_t size) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  bool ok = ::write(fd, header.data(), header.size()) == ssize_t(header.size()) &&
            ::ftruncate(fd, off_t(size)) == 0;
  return (::close(fd) == 0) && ok;
}

struct Planned {
  std::string name;
  GgmlType type;
  std::vector<int64_t> dims;
};

// A file laid out like Qwen2.5-0.5B in Q8_0: header built by hand, data left as a hole.
TEST_F(GgufFileTest, SparseModelSizedFileOpensWithoutTouchingData) {
  constexpr int64_t d = 896, kv = 128, ffn = 4864, vocab = 151936;
  std::vector<Planned> plan = {{"token_embd.weight", GgmlType::kQ8_0, {d, vocab}}};
  for (int l = 0; l < 24; ++l) {
    const std::string p = "blk." + std::to_string(l) + ".";
    plan.push_back({p + "attn_norm.weight", GgmlType::kF32, {d}});
    plan.push_back({p + "attn_q.weight", GgmlType::kQ8_0, {d, d}});
    plan.push_back({p + "attn_k.weight", GgmlType::kQ8_0, {d, kv}});
    plan.push_back({p + "attn_v.weight", GgmlType::kQ8_0, {d, kv}});
    plan.push_back({p + "attn_q.bias", GgmlType::kF32, {d}});
    plan.push_back({p + "attn_k.bias", GgmlType::kF32, {kv}});
    plan.push_back({p + "attn_v.bias", GgmlType::kF32, {kv}});
    plan.push_back({p + "attn_output.weight", GgmlType::kQ8_0, {d, d}});
    plan.push_back({p + "ffn_norm.weight", GgmlType::kF32, {d}});
    plan.push_back({p + "ffn_gate.weight", GgmlType::kQ8_0, {d, ffn}});
    plan.push_back({p + "ffn_up.weight", GgmlType::kQ8_0, {d, ffn}});
    plan.push_back({p + "ffn_down.weight", GgmlType::kQ8_0, {ffn, d}});
  }
  plan.push_back({"output_norm.weight", GgmlType::kF32, {d}});

  Bytes tokens;
  for (int64_t i = 0; i < vocab; ++i) tokens.Str("tok" + std::to_string(i));
  Bytes h;
  h.Append("GGUF", 4).U32(3).U64(plan.size()).U64(4);
  h.Kv("general.architecture", ValueType::kString, StringBytes("qwen2"));
  h.Kv("general.alignment", ValueType::kU32, ScalarBytes<uint32_t>(32));
  h.Kv("qwen2.block_count", ValueType::kU32, ScalarBytes<uint32_t>(24));
  h.Kv("tokenizer.ggml.tokens", ValueType::kArray, ArrayBytes(ValueType::kString, vocab, tokens));
  uint64_t off = 0;
  for (const Planned& t : plan) {
    h.Str(t.name).U32(uint32_t(t.dims.size()));
    int64_t n = 1;
    for (int64_t x : t.dims) {
      h.U64(uint64_t(x));
      n *= x;
    }
    h.U32(uint32_t(t.type)).U64(off);
    off += RowBytes(t.type, t.dims[0]) * uint64_t(n / t.dims[0]);
    off = (off + 31) / 32 * 32;
  }
  h.PadTo(32);
  const uint64_t data_off = h.size();
  const uint64_t total = data_off + off;
  ASSERT_GT(total, uint64_t(400) << 20);
  const std::string path = dir_ + "/sparse.gguf";
  ASSERT_TRUE(WriteSparse(path, h, total));

  const auto t0 = std::chrono::steady_clock::now();
  auto f = File::Open(path);
  const double ms = MsSince(t0);
  ASSERT_TRUE(f.ok()) << f.message();
  std::printf("[ info ] opened a sparse %.0f MB file (%zu tensors, %.1f MB header) in %.2f ms\n",
              double(total) / (1 << 20), plan.size(), double(data_off) / (1 << 20), ms);
  EXPECT_EQ(f->file_size(), total);
  EXPECT_EQ(f->data_offset(), data_off);
  ASSERT_EQ(f->tensors().size(), plan.size());
  EXPECT_EQ(f->tensors().back().offset + f->tensors().back().nbytes, off);  // 3584 B, aligned
  EXPECT_EQ(f->Find("tokenizer.ggml.tokens")->count, uint64_t(vocab));

  // No page of the data section is resident: Open did not read tensor data. (The header was
  // just written, so its pages are cached; the data region is a hole nobody has read.)
  const gguf::TensorInfo& first = f->tensors()[0];
  const uint8_t* base = first.data - f->data_offset() - first.offset;
  const size_t page = size_t(::sysconf(_SC_PAGESIZE));
  ASSERT_EQ(reinterpret_cast<uintptr_t>(base) % page, 0u);
  std::vector<unsigned char> resident((f->file_size() + page - 1) / page);
  ASSERT_EQ(::mincore(const_cast<uint8_t*>(base), f->file_size(), resident.data()), 0);
  const size_t first_data_page = (f->data_offset() + page - 1) / page;
  size_t n_resident = 0;
  for (size_t p = first_data_page; p < resident.size(); ++p) n_resident += resident[p] & 1;
  std::printf("[ info ] %zu of %zu data pages resident after Open\n", n_resident,
              resident.size() - first_data_page);
  EXPECT_LT(n_resident * page, size_t(16) << 20);
}

// Counts are bounded by the file size before anything is allocated for them. A 4 GiB file (a
// hole: zeros) that claims 4 GiB / 13 metadata pairs, or an 8 GiB file claiming 8 GiB / 32
// tensors, passes those bounds; reserving that many entries up front would ask for tens of GB.
TEST_F(GgufFileTest, HugeCountsInSparseFileDoNotAllocate) {
  {
    const uint64_t size = uint64_t(4) << 30;
    const std::vector<uint8_t> h = Bytes().Append("GGUF", 4).U32(3).U64(0).U64(size / 13 - 2);
    const std::string path = dir_ + "/many_kvs.gguf";
    ASSERT_TRUE(WriteSparse(path, h, size));
    const auto t0 = std::chrono::steady_clock::now();
    auto f = File::Open(path);
    std::printf("[ info ] rejected a 4 GiB file claiming %llu kvs in %.2f ms\n",
                static_cast<unsigned long long>(size / 13 - 2), MsSince(t0));
    // Zeros read as kv "" (type u8, value 0), then a second "": a duplicate.
    EXPECT_TRUE(FailsWith(f, {"duplicate metadata key ''"}));
  }
  {
    const uint64_t size = uint64_t(8) << 30;
    const std::vector<uint8_t> h = Bytes().Append("GGUF", 4).U32(3).U64(size / 32 - 2).U64(0);
    const std::string path = dir_ + "/many_tensors.gguf";
    ASSERT_TRUE(WriteSparse(path, h, size));
    const auto t0 = std::chrono::steady_clock::now();
    auto f = File::Open(path);
    std::printf("[ info ] rejected an 8 GiB file claiming %llu tensors in %.2f ms\n",
                static_cast<unsigned long long>(size / 32 - 2), MsSince(t0));
    EXPECT_TRUE(FailsWith(f, {"has 0 dimensions"}));
  }
}

// The largest golden model: Open time printed (not asserted).
TEST(GgufGoldenTiming, LargestModelOpenTime) {
  const std::string dir = brisk::test::GoldenPath("models");
  if (dir.empty()) GTEST_SKIP() << "golden directory absent";
  std::string largest;
  uintmax_t largest_size = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().extension() != ".gguf") continue;
    if (e.file_size() > largest_size) {
      largest_size = e.file_size();
      largest = e.path().string();
    }
  }
  ASSERT_FALSE(largest.empty());
  const auto t0 = std::chrono::steady_clock::now();
  auto f = File::Open(largest);
  const double ms = MsSince(t0);
  ASSERT_TRUE(f.ok()) << f.message();
  std::printf("[ info ] opened %s (%.1f MB, %zu tensors) in %.2f ms\n", largest.c_str(),
              double(largest_size) / (1 << 20), f->tensors().size(), ms);
}

}  // namespace
}  // namespace brisk::gguf_test
