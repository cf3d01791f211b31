// The real Qwen2.5 vocabulary (151936 rows, merges, token types, chat template) as a GGUF image
// built into the binary, so `brisk synth` works offline and its files carry the real tokenizer.
#pragma once

#include <cstddef>
#include <cstdint>

namespace brisk {

const uint8_t* EmbeddedVocabData();
size_t EmbeddedVocabSize();

}  // namespace brisk
