#include "formats/file_type.h"

namespace brisk {

std::string FileTypeName(uint32_t ft) {
  switch (ft) {
    case 0:
      return "F32";
    case 1:
      return "F16";
    case 2:
      return "Q4_0";
    case 3:
      return "Q4_1";
    case 7:
      return "Q8_0";
    case 8:
      return "Q5_0";
    case 9:
      return "Q5_1";
    case 10:
      return "Q2_K";
    case 11:
      return "Q3_K_S";
    case 12:
      return "Q3_K_M";
    case 13:
      return "Q3_K_L";
    case 14:
      return "Q4_K_S";
    case 15:
      return "Q4_K_M";
    case 16:
      return "Q5_K_S";
    case 17:
      return "Q5_K_M";
    case 18:
      return "Q6_K";
    case 25:
      return "IQ4_NL";
    case 30:
      return "IQ4_XS";
    case 32:
      return "BF16";
    default:
      return "unknown (" + std::to_string(ft) + ")";
  }
}

}  // namespace brisk
