// The Qwen2 pre-tokenizer: splits text into the pieces the regex
//   (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|
//   \s*[\r\n]+|\s+(?!\S)|\s+
// matches (HF Split, behaviour "Isolated"), written out by hand as a scanner. Every character
// starts a match of one alternative, so the pieces tile the text exactly.
#pragma once

#include <cstddef>
#include <string_view>

namespace brisk::tok {

// End (byte offset) of the piece that starts at `pos` (< text.size()) of valid UTF-8 `text`.
// On invalid UTF-8 it still returns a position in (pos, text.size()], never reading past it.
size_t NextQwen2Piece(std::string_view text, size_t pos);

}  // namespace brisk::tok
