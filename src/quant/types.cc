#include "quant/types.h"

#include <cctype>
#include <string>

#include "util/check.h"

namespace brisk {
namespace {

constexpr TypeTraits kTraits[] = {
    {GgmlType::kF32, "F32", 1, 4, true, false},
    {GgmlType::kF16, "F16", 1, 2, true, true},
    {GgmlType::kQ4_0, "Q4_0", 32, 18, true, true},
    {GgmlType::kQ4_1, "Q4_1", 32, 20, true, true},
    {GgmlType::kQ5_0, "Q5_0", 32, 22, true, true},
    {GgmlType::kQ5_1, "Q5_1", 32, 24, true, true},
    {GgmlType::kQ8_0, "Q8_0", 32, 34, true, true},
    {GgmlType::kQ8_1, "Q8_1", 32, 36, false, false},
    {GgmlType::kQ2_K, "Q2_K", 256, 84, true, false},
    {GgmlType::kQ3_K, "Q3_K", 256, 110, true, false},
    {GgmlType::kQ4_K, "Q4_K", 256, 144, true, true},
    {GgmlType::kQ5_K, "Q5_K", 256, 176, true, true},
    {GgmlType::kQ6_K, "Q6_K", 256, 210, true, true},
    {GgmlType::kQ8_K, "Q8_K", 256, 292, false, false},
    {GgmlType::kIQ4_NL, "IQ4_NL", 32, 18, true, true},
    {GgmlType::kIQ4_XS, "IQ4_XS", 256, 136, true, true},
    {GgmlType::kBF16, "BF16", 1, 2, true, true},
};

}  // namespace

const TypeTraits* FindTypeTraits(uint32_t id) {
  for (const auto& t : kTraits)
    if (uint32_t(t.type) == id) return &t;
  return nullptr;
}

const TypeTraits& GetTypeTraits(GgmlType t) {
  const TypeTraits* tr = FindTypeTraits(uint32_t(t));
  BRISK_CHECK(tr != nullptr);
  return *tr;
}

std::string_view TypeName(GgmlType t) { return GetTypeTraits(t).name; }

bool ParseTypeName(std::string_view s, GgmlType* out) {
  std::string up(s);
  for (char& c : up) c = char(std::toupper(static_cast<unsigned char>(c)));
  for (const auto& t : kTraits) {
    if (t.name == up) {
      *out = t.type;
      return true;
    }
  }
  return false;
}

size_t RowBytes(GgmlType t, int64_t n) {
  const TypeTraits& tr = GetTypeTraits(t);
  BRISK_CHECK(n % tr.block_size == 0);
  return size_t(n / tr.block_size) * size_t(tr.type_size);
}

}  // namespace brisk
