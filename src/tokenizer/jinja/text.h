// Text helpers for the Jinja interpreter: UTF-8 code points (Python strings index by code
// point, not byte) and Python's notion of whitespace.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace brisk::jinja::text {

// Decodes the code point starting at s[*pos] and advances *pos. A malformed byte decodes as
// itself (one byte), so every input round-trips and no position is skipped.
uint32_t Decode(std::string_view s, size_t* pos);
void AppendUtf8(std::string* out, uint32_t cp);

bool IsAscii(std::string_view s);
// Number of code points.
size_t Length(std::string_view s);
// Byte offsets of every code point start, plus s.size() at the end (size Length(s) + 1).
std::vector<size_t> CodePointOffsets(std::string_view s);
// Code-point index of a byte offset that lies on a code point boundary.
size_t CodePointIndex(std::string_view s, size_t byte_offset);

// Python str.isspace() for one code point.
bool IsSpace(uint32_t cp);
// Python str.strip()/lstrip()/rstrip(): without `chars` strips whitespace; with `chars`
// strips any of its code points.
std::string_view Strip(std::string_view s, const std::string* chars, bool left, bool right);
// Python str.split()/rsplit() (sep == nullptr: runs of whitespace, no empty pieces).
std::vector<std::string> Split(std::string_view s, const std::string* sep, int64_t maxsplit,
                               bool from_right);
// Python str.splitlines() (without keepends).
std::vector<std::string_view> SplitLines(std::string_view s);
// Python str.replace(old, new, count); count < 0 means all.
std::string Replace(std::string_view s, std::string_view from, std::string_view to, int64_t count);

// Python str.upper()/lower()/capitalize()/title() for ASCII, Latin-1, Latin Extended-A, Greek,
// Cyrillic, Armenian and fullwidth Latin (other scripts are left unchanged).
std::string Upper(std::string_view s);
std::string Lower(std::string_view s);
std::string Capitalize(std::string_view s);
std::string Title(std::string_view s);

}  // namespace brisk::jinja::text
