// AMX tile configuration is per-thread state that every AMX kernel of this tier shares: each
// kernel keeps its own static configuration and calls UseTileConfig before its tile work, which
// reloads the tile registers' shapes only when another kernel's configuration is loaded.
// (_tile_loadconfig also zeroes the tiles, so a kernel must not rely on tile contents across
// calls.) Included only by avx512 kernel files (see isa_kernels.h).
#pragma once

#include <cstdint>

namespace brisk::kern {

// The 64-byte palette-1 layout that LDTILECFG reads.
struct alignas(64) TileConfig {
  uint8_t palette = 1;
  uint8_t start_row = 0;
  uint8_t reserved[14] = {};
  uint16_t colsb[16] = {};
  uint8_t rows[16] = {};
};

// Defined once (amx_avx512.cc) so all kernels see one record of the loaded configuration.
void UseTileConfig(const TileConfig* cfg);

}  // namespace brisk::kern
