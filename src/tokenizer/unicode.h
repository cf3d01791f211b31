// UTF-8 and Unicode helpers for the tokenizer: strict UTF-8 decoding, lossy repair of invalid
// input, the character classes the Qwen2 pre-tokenizer needs, and NFC normalisation (utf8proc).
//
// Invalid UTF-8 is repaired the way Rust's String::from_utf8_lossy and Python's
// bytes.decode("utf-8", "replace") do it: each *maximal subpart* of an ill-formed sequence
// (Unicode §3.9, "U+FFFD substitution of maximal subparts") becomes one U+FFFD. A lone invalid
// byte is one subpart; a truncated but otherwise well-formed prefix such as F0 9F 98 is one
// subpart too. Surrogates (ED A0..BF ..) and overlong forms are ill-formed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace brisk::tok {

inline constexpr char32_t kReplacementChar = 0xFFFD;

// Result of looking at the bytes at one position.
struct Utf8Step {
  char32_t cp = 0;         // the code point when ok
  uint32_t len = 0;        // bytes consumed: the sequence when ok, else the maximal subpart (>= 1)
  bool ok = false;         // a complete well-formed sequence
  bool truncated = false;  // !ok only because the input ended (more bytes could complete it)
};

// Decodes the sequence starting at s[0] (n > 0 bytes available). Never reads past s[n-1].
Utf8Step DecodeUtf8(const char* s, size_t n);

bool IsValidUtf8(std::string_view s);

// Appends `s` to `out`, replacing each maximal ill-formed subpart by U+FFFD. When `final` is
// false, a trailing incomplete sequence that more bytes could still complete is not consumed.
// Returns the number of bytes of `s` consumed (s.size() when final).
size_t AppendUtf8Lossy(std::string_view s, bool final, std::string* out);

// `s` with invalid sequences replaced (a copy; s itself when already valid).
std::string ToValidUtf8(std::string_view s);

void AppendUtf8(char32_t cp, std::string* out);

// Classes of the Qwen2 pre-tokenizer regex. kNewline is \r or \n; kSpace is any other
// White_Space character (\s); kLetter is \p{L}; kNumber is \p{N}; kOther is everything else.
enum class CharClass : uint8_t { kOther, kLetter, kNumber, kSpace, kNewline };

bool IsWhiteSpace(char32_t cp);  // the Unicode White_Space property (what \s matches)
CharClass ClassOf(char32_t cp);

// NFC of valid UTF-8 `s`. Returns `s` itself when it is already in NFC as far as a quick check
// can tell (ASCII, or no character that NFC could change), else the normalised text written
// into *storage.
std::string_view NfcView(std::string_view s, std::string* storage);
std::string Nfc(std::string_view s);
// The plain utf8proc NFC of the whole string (the reference for NfcView's shortcuts).
std::string NfcReference(std::string_view s);

}  // namespace brisk::tok
