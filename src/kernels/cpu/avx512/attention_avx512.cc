// The attention kernel compiled for the avx512 tier (same source as every tier:
// attention_impl.inc).
#include <cstring>

#include "kernels/cpu/attention.h"

namespace brisk::attention_avx512 {
namespace {
#include "kernels/cpu/attention_impl.inc"
}  // namespace
void Attend(const AttendArgs& a) { AttendImpl(a); }
}  // namespace brisk::attention_avx512
