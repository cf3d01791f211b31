// Writes a tokenizer as GGUF metadata (tokenizer.ggml.*), so a model converted from a Hugging
// Face directory carries its vocabulary the way llama.cpp and brisk read it.
#pragma once

#include "formats/gguf_writer.h"
#include "tokenizer/tokenizer.h"

namespace brisk {

void WriteGgufTokenizer(const Tokenizer& tokenizer, gguf::Writer& w);

}  // namespace brisk
