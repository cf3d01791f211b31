#include "model/embedded_vocab.h"

// The assembler copies assets/qwen2.5-vocab.gguf into .rodata (path set by CMake). Aligned to
// 64 so the GGUF reader's tensor-free image needs no copy.
asm(".section .rodata\n"
    ".balign 64\n"
    ".global brisk_embedded_vocab_begin\n"
    "brisk_embedded_vocab_begin:\n"
    ".incbin \"" BRISK_VOCAB_FILE
    "\"\n"
    ".global brisk_embedded_vocab_end\n"
    "brisk_embedded_vocab_end:\n"
    ".previous\n");

extern "C" const uint8_t brisk_embedded_vocab_begin[];
extern "C" const uint8_t brisk_embedded_vocab_end[];

namespace brisk {

const uint8_t* EmbeddedVocabData() { return brisk_embedded_vocab_begin; }
size_t EmbeddedVocabSize() { return size_t(brisk_embedded_vocab_end - brisk_embedded_vocab_begin); }

}  // namespace brisk
