#include "quant/recipe.h"

#include <cctype>

namespace brisk {
namespace {

struct FileTypeInfo {
  FileType ft;
  std::string_view name;
  GgmlType base;  // the type of every ordinary weight matrix
};

constexpr FileTypeInfo kFileTypes[] = {
    {FileType::kF32, "F32", GgmlType::kF32},
    {FileType::kF16, "F16", GgmlType::kF16},
    {FileType::kBF16, "BF16", GgmlType::kBF16},
    {FileType::kQ4_0, "Q4_0", GgmlType::kQ4_0},
    {FileType::kQ4_1, "Q4_1", GgmlType::kQ4_1},
    {FileType::kQ5_0, "Q5_0", GgmlType::kQ5_0},
    {FileType::kQ5_1, "Q5_1", GgmlType::kQ5_1},
    {FileType::kQ8_0, "Q8_0", GgmlType::kQ8_0},
    {FileType::kQ2_K, "Q2_K", GgmlType::kQ2_K},
    {FileType::kQ3_K_M, "Q3_K_M", GgmlType::kQ3_K},
    {FileType::kQ4_K_M, "Q4_K_M", GgmlType::kQ4_K},
    {FileType::kQ5_K_M, "Q5_K_M", GgmlType::kQ5_K},
    {FileType::kQ6_K, "Q6_K", GgmlType::kQ6_K},
    {FileType::kIQ4_NL, "IQ4_NL", GgmlType::kIQ4_NL},
    {FileType::kIQ4_XS, "IQ4_XS", GgmlType::kIQ4_XS},
};

const FileTypeInfo& Info(FileType ft) {
  for (const auto& i : kFileTypes)
    if (i.ft == ft) return i;
  return kFileTypes[0];
}

bool IsKQuant(GgmlType t) {
  return t == GgmlType::kQ2_K || t == GgmlType::kQ3_K || t == GgmlType::kQ4_K ||
         t == GgmlType::kQ5_K || t == GgmlType::kQ6_K || t == GgmlType::kIQ4_XS;
}

// llama.cpp gives a few layers more bits: the first and last eighth, and every third between.
bool UseMoreBits(int i, int n) { return i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2; }

bool Contains(std::string_view s, std::string_view part) {
  return s.find(part) != std::string_view::npos;
}

}  // namespace

bool ParseFileType(std::string_view s, FileType* out) {
  std::string up(s);
  for (char& c : up) c = char(std::toupper(static_cast<unsigned char>(c)));
  for (const auto& i : kFileTypes) {
    if (i.name == up) {
      *out = i.ft;
      return true;
    }
  }
  return false;
}

std::string FileTypeString(FileType ft) { return std::string(Info(ft).name); }

bool CanWriteFileType(FileType ft) {
  return ft != FileType::kQ2_K && ft != FileType::kQ3_K_M;  // no Q2_K/Q3_K quantizers
}

GgmlType ChooseTensorType(FileType ft, const TensorPlacement& t) {
  if (t.n_dims < 2) return GgmlType::kF32;
  const GgmlType base = Info(ft).base;
  // Float file types keep every matrix in that float type; the rules below are for quantized ones.
  if (base == GgmlType::kF32 || base == GgmlType::kF16 || base == GgmlType::kBF16) return base;

  GgmlType type = base;
  const bool is_output =
      t.name == "output.weight" || (!t.has_output && t.name == "token_embd.weight");
  if (is_output) {
    // The lm_head is the most sensitive matrix: Q6_K, or Q8_0 when rows don't fit 256-blocks.
    if (t.ne0 % 256 != 0) return GgmlType::kQ8_0;
    return type == GgmlType::kQ8_0 ? type : GgmlType::kQ6_K;
  }
  const bool iq4 = ft == FileType::kIQ4_NL || ft == FileType::kIQ4_XS;
  if (Contains(t.name, "attn_v.weight")) {
    if (iq4 && t.n_gqa >= 4)
      type = GgmlType::kQ5_K;
    else if ((ft == FileType::kQ4_K_M || ft == FileType::kQ5_K_M) &&
             UseMoreBits(t.layer, t.n_layer))
      type = GgmlType::kQ6_K;
    else if (ft == FileType::kQ3_K_M)
      type = t.layer < 2 ? GgmlType::kQ5_K : GgmlType::kQ4_K;
    else if (ft == FileType::kQ2_K)
      type = GgmlType::kQ3_K;
  } else if (Contains(t.name, "ffn_down")) {
    if (iq4 && t.layer < t.n_layer / 8)  // (llama.cpp: without an importance matrix)
      type = GgmlType::kQ5_K;
    else if ((ft == FileType::kQ4_K_M || ft == FileType::kQ5_K_M) &&
             UseMoreBits(t.layer, t.n_layer))
      type = GgmlType::kQ6_K;
    else if (ft == FileType::kQ3_K_M)
      type = t.layer < t.n_layer / 16 ? GgmlType::kQ5_K : GgmlType::kQ4_K;
    else if (ft == FileType::kQ2_K)
      type = GgmlType::kQ3_K;
  } else if (Contains(t.name, "attn_output.weight")) {
    if (ft == FileType::kQ3_K_M)
      type = GgmlType::kQ4_K;
    else if (ft == FileType::kQ2_K)
      type = GgmlType::kQ3_K;
  }
  // K-quants and IQ4_XS need rows that are a multiple of 256; llama.cpp falls back to a legacy
  // type (IQ4_XS: to IQ4_NL).
  if (IsKQuant(type) && t.ne0 % 256 != 0) {
    switch (type) {
      case GgmlType::kQ4_K:
        return GgmlType::kQ5_0;
      case GgmlType::kQ5_K:
        return GgmlType::kQ5_1;
      case GgmlType::kQ6_K:
        return GgmlType::kQ8_0;
      case GgmlType::kIQ4_XS:
        return GgmlType::kIQ4_NL;
      default:
        return GgmlType::kQ4_0;
    }
  }
  return type;
}

}  // namespace brisk
