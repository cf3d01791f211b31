#include "structured/compiled_grammar.h"

#include <algorithm>
#include <map>
#include <string>
#include <utility>

namespace brisk::structured {
namespace {

using ByteRanges = std::vector<std::pair<uint8_t, uint8_t>>;

constexpr uint32_t kMaxOfLength[] = {0x7F, 0x7FF, 0xFFFF, kMaxCodePoint};

int EncodedLength(uint32_t c) { return c <= 0x7F ? 1 : c <= 0x7FF ? 2 : c <= 0xFFFF ? 3 : 4; }

// The bytes of `c`, lead byte first (c is a scalar value of EncodedLength(c) bytes).
std::array<uint8_t, 4> Encode(uint32_t c, int n) {
  std::array<uint8_t, 4> b{};
  if (n == 1) {
    b[0] = uint8_t(c);
    return b;
  }
  for (int i = n - 1; i > 0; --i, c >>= 6) b[size_t(i)] = uint8_t(0x80 | (c & 0x3F));
  b[0] = uint8_t((0xF00 >> n) | c);  // 2: 0xC0, 3: 0xE0, 4: 0xF0
  return b;
}

// [lo, hi] has one encoded length and no surrogates: split until every byte position of the
// range is an independent byte range (the trailing bytes span their whole 6-bit window
// wherever a leading byte varies).
void SplitSameLength(uint32_t lo, uint32_t hi, int n, std::vector<ByteRanges>* out) {
  for (int i = 1; i < n; ++i) {
    const uint32_t m = (uint32_t{1} << (6 * i)) - 1;
    if ((lo & ~m) == (hi & ~m)) continue;
    if ((lo & m) != 0) {
      SplitSameLength(lo, lo | m, n, out);
      SplitSameLength((lo | m) + 1, hi, n, out);
      return;
    }
    if ((hi & m) != m) {
      SplitSameLength(lo, (hi & ~m) - 1, n, out);
      SplitSameLength(hi & ~m, hi, n, out);
      return;
    }
  }
  const auto a = Encode(lo, n), b = Encode(hi, n);
  ByteRanges seq;
  for (int i = 0; i < n; ++i) seq.emplace_back(a[size_t(i)], b[size_t(i)]);
  out->push_back(std::move(seq));
}

void SplitNoSurrogates(uint32_t lo, uint32_t hi, std::vector<ByteRanges>* out) {
  while (lo <= hi) {
    const int n = EncodedLength(lo);
    const uint32_t end = std::min(hi, kMaxOfLength[n - 1]);
    SplitSameLength(lo, end, n, out);
    if (end == hi) break;
    lo = end + 1;
  }
}

// Lowers the rules of a Grammar into CompiledGrammar's element array.
class Lowering {
 public:
  explicit Lowering(const Grammar& g) : g_(g) {}

  Result<CompiledGrammar> Run() {
    const int32_t n = int32_t(g_.rules.size());
    if (g_.root < 0 || g_.root >= n) return Status::InvalidArgument("grammar has no root rule");
    out_.alternatives.resize(size_t(n));
    for (const Rule& r : g_.rules) out_.rule_names.push_back(r.name);
    out_.elements = {{CompiledGrammar::Kind::kRule, g_.root}, {CompiledGrammar::Kind::kEnd, -1}};
    for (int32_t i = 0; i < n; ++i) BRISK_RETURN_IF_ERROR(LowerRule(i));
    out_.shortest_rest = ShortestRests(out_);
    return std::move(out_);
  }

 private:
  Status LowerRule(int32_t i) {
    const Rule& r = g_.rules[size_t(i)];
    if (r.alternatives.empty())
      return Status::InvalidArgument("grammar rule '" + r.name + "' has no alternatives");
    for (const Sequence& seq : r.alternatives) {
      std::vector<CompiledGrammar::Element> els;
      for (const Symbol& s : seq) {
        if (s.is_rule()) {
          if (s.rule >= int32_t(g_.rules.size()))
            return Status::InvalidArgument("grammar rule '" + r.name + "' refers to no rule");
          els.push_back({CompiledGrammar::Kind::kRule, s.rule});
          continue;
        }
        if (s.chars.empty())
          return Status::InvalidArgument("grammar rule '" + r.name + "' has an empty set");
        els.push_back(CharsElement(s.chars));
      }
      AddAlternative(i, els);
    }
    return Status::Ok();
  }

  void AddAlternative(int32_t rule, const std::vector<CompiledGrammar::Element>& els) {
    out_.alternatives[size_t(rule)].push_back(int32_t(out_.elements.size()));
    out_.elements.insert(out_.elements.end(), els.begin(), els.end());
    out_.elements.push_back({CompiledGrammar::Kind::kEnd, rule});
  }

  int32_t ByteSetIndex(const ByteSet& set) {
    auto [it, fresh] = byte_set_index_.try_emplace(set.bits, int32_t(out_.byte_sets.size()));
    if (fresh) out_.byte_sets.push_back(set);
    return it->second;
  }

  // An ASCII-only set is one byte element; any other set a helper rule whose alternatives are
  // its UTF-8 byte-range sequences (the ASCII part first, as one single-byte alternative).
  CompiledGrammar::Element CharsElement(const std::vector<CharRange>& chars) {
    if (chars.back().hi <= 0x7F) {
      ByteSet set;
      for (const CharRange& c : chars) set.Add(uint8_t(c.lo), uint8_t(c.hi));
      return {CompiledGrammar::Kind::kByte, ByteSetIndex(set)};
    }
    auto it = utf8_rule_.find(chars);
    if (it != utf8_rule_.end()) return {CompiledGrammar::Kind::kRule, it->second};
    const int32_t rule = int32_t(out_.alternatives.size());
    out_.alternatives.emplace_back();
    out_.rule_names.push_back("utf8-" + std::to_string(rule));
    utf8_rule_.emplace(chars, rule);
    ByteSet ascii;
    bool any_ascii = false;
    std::vector<ByteRanges> seqs;
    for (const CharRange& c : chars) {
      if (c.lo <= 0x7F) {
        ascii.Add(uint8_t(c.lo), uint8_t(std::min<uint32_t>(c.hi, 0x7F)));
        any_ascii = true;
      }
      if (c.hi > 0x7F) {
        for (ByteRanges& seq : Utf8RangeSequences(std::max<uint32_t>(c.lo, 0x80), c.hi))
          seqs.push_back(std::move(seq));
      }
    }
    if (any_ascii) AddAlternative(rule, {{CompiledGrammar::Kind::kByte, ByteSetIndex(ascii)}});
    for (const ByteRanges& seq : seqs) {
      std::vector<CompiledGrammar::Element> els;
      for (auto [lo, hi] : seq) {
        ByteSet set;
        set.Add(lo, hi);
        els.push_back({CompiledGrammar::Kind::kByte, ByteSetIndex(set)});
      }
      AddAlternative(rule, els);
    }
    return {CompiledGrammar::Kind::kRule, rule};
  }

  const Grammar& g_;
  CompiledGrammar out_;
  std::map<std::array<uint64_t, 4>, int32_t> byte_set_index_;
  std::map<std::vector<CharRange>, int32_t,
           bool (*)(const std::vector<CharRange>&, const std::vector<CharRange>&)>
      utf8_rule_{[](const std::vector<CharRange>& a, const std::vector<CharRange>& b) {
        return std::lexicographical_compare(a.begin(), a.end(), b.begin(), b.end(),
                                            [](const CharRange& x, const CharRange& y) {
                                              return std::pair(x.lo, x.hi) < std::pair(y.lo, y.hi);
                                            });
      }};
};

}  // namespace

std::vector<ByteRanges> Utf8RangeSequences(uint32_t lo, uint32_t hi) {
  std::vector<ByteRanges> out;
  hi = std::min(hi, kMaxCodePoint);
  if (lo > hi) return out;
  if (lo < 0xD800) SplitNoSurrogates(lo, std::min<uint32_t>(hi, 0xD7FF), &out);
  if (hi > 0xDFFF) SplitNoSurrogates(std::max<uint32_t>(lo, 0xE000), hi, &out);
  return out;
}

Result<CompiledGrammar> CompiledGrammar::Lower(const Grammar& g) { return Lowering(g).Run(); }

}  // namespace brisk::structured
