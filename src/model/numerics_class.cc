#include "model/numerics_class.h"

#include "kernels/cpu/matmul.h"

namespace brisk {

bool PrefillClassAvailable() { return WidePathAvailable(); }

}  // namespace brisk
