#include "tokenizer/tokenizer.h"

#include <algorithm>
#include <array>
#include <string>

#include "tokenizer/byte_level.h"
#include "tokenizer/pretokenizer.h"
#include "tokenizer/unicode.h"

namespace brisk {

namespace {

// Sizes FromSpec's tables can hold: ids and ranks fit int32, token offsets fit 31 bits.
Status CheckSpecSize(const tok::VocabSpec& spec) {
  const size_t n = spec.tokens.size();
  if (n == 0) return Status::Error("tokenizer: the vocabulary is empty");
  if (n > 0x7FFFFFFF || spec.merges.size() > 0x7FFFFFFF) {
    return Status::Error("tokenizer: the vocabulary is too large");
  }
  if (spec.types.size() != n) {
    return Status::Error("tokenizer: " + std::to_string(spec.types.size()) + " token types for " +
                         std::to_string(n) + " tokens");
  }
  size_t total_text = 0;
  for (std::string_view s : spec.tokens) total_text += s.size();
  if (total_text >= (size_t{1} << 31)) {
    return Status::Error("tokenizer: the token texts take " + std::to_string(total_text) +
                         " bytes (at most 2 GiB are supported)");
  }
  return Status::Ok();
}

// The one-byte tokens every piece starts from (-1 for a byte without a token).
void FindByteIds(const tok::Vocab& vocab, int32_t (&byte_ids)[256]) {
  for (int b = 0; b < 256; ++b) {
    std::string s;
    tok::AppendUtf8(tok::ByteToUnicode(static_cast<uint8_t>(b)), &s);
    byte_ids[b] = vocab.Find(s);
  }
}

// The id of the token a + b, or -1. Tries `guess` first: vocabularies usually list merge
// results in merge order. `joined` is scratch space.
int32_t FindMergeResult(const tok::Vocab& vocab, std::string_view a, std::string_view b,
                        int32_t guess, std::string* joined) {
  if (vocab.Valid(guess)) {
    const std::string_view g = vocab.Text(guess);
    if (g.size() == a.size() + b.size() && g.substr(0, a.size()) == a && g.substr(a.size()) == b) {
      return guess;
    }
  }
  joined->assign(a);
  joined->append(b);
  return vocab.Find(*joined);
}

struct MergeBuild {
  tok::MergeTable table;
  bool monotone = true;  // every merge's parts are created by earlier merges (or are bytes)
};

// Merges (left, right) -> rank, result. A merge whose parts or result are not in the
// vocabulary can never apply and is skipped. Looks the parts up a chunk at a time so the
// vocabulary and merge-table probes overlap.
MergeBuild BuildMerges(const tok::VocabSpec& spec, const tok::Vocab& vocab) {
  MergeBuild out;
  out.table.Reserve(spec.merges.size());
  // Monotone check: the latest rank that creates each token must precede every merge using it.
  std::vector<int32_t> created_at(spec.tokens.size(), -1);
  std::vector<std::array<int32_t, 3>> used;  // (left, right, rank) of the merges kept
  used.reserve(spec.merges.size());
  constexpr size_t kChunk = 256;
  std::string_view keys[2 * kChunk];
  int32_t ids[2 * kChunk];
  std::string joined;
  int32_t guess = -1;
  for (size_t base = 0; base < spec.merges.size(); base += kChunk) {
    const size_t m = std::min(kChunk, spec.merges.size() - base);
    for (size_t k = 0; k < m; ++k) {
      keys[2 * k] = spec.merges[base + k].first;
      keys[2 * k + 1] = spec.merges[base + k].second;
    }
    vocab.FindMany(keys, 2 * m, ids);
    for (size_t k = 0; k < m; ++k) {
      if (ids[2 * k] >= 0 && ids[2 * k + 1] >= 0) out.table.Prefetch(ids[2 * k], ids[2 * k + 1]);
    }
    for (size_t k = 0; k < m; ++k) {
      const int32_t ia = ids[2 * k], ib = ids[2 * k + 1];
      if (ia < 0 || ib < 0) continue;
      const int32_t im = FindMergeResult(vocab, keys[2 * k], keys[2 * k + 1], guess, &joined);
      if (im < 0) continue;
      const auto r = static_cast<int32_t>(base + k);
      created_at[im] = r;
      used.push_back({ia, ib, r});
      out.table.Insert(ia, ib, r, im);
      guess = im + 1;
    }
  }
  for (const auto& [ia, ib, r] : used) out.monotone &= created_at[ia] < r && created_at[ib] < r;
  return out;
}

}  // namespace

Result<Tokenizer> Tokenizer::FromSpec(const tok::VocabSpec& spec) {
  BRISK_RETURN_IF_ERROR(CheckSpecSize(spec));
  Tokenizer t;
  t.vocab_.Build(spec);
  int32_t byte_ids[256];
  FindByteIds(t.vocab_, byte_ids);
  MergeBuild merges = BuildMerges(spec, t.vocab_);
  t.bpe_.Init(byte_ids, std::move(merges.table), merges.monotone,
              static_cast<int32_t>(spec.merges.size()));
  t.ignore_merges_ = spec.ignore_merges;
  t.AddAddedTokens(spec);
  t.SetSpecialIds(spec);
  return t;
}

void Tokenizer::AddAddedTokens(const tok::VocabSpec& spec) {
  for (size_t i = 0; i < spec.tokens.size(); ++i) {
    const TokenType ty = spec.types[i];
    if (ty != TokenType::kControl && ty != TokenType::kUserDefined) continue;
    const bool normalized = i < spec.added_normalized.size() && spec.added_normalized[i] != 0;
    const std::string_view text = spec.tokens[i];
    const auto id = static_cast<int32_t>(i);
    if (normalized) {
      const std::string norm = spec.nfc ? tok::Nfc(tok::ToValidUtf8(text)) : std::string(text);
      norm_all_.Add(norm, id);
      if (ty == TokenType::kUserDefined) norm_plain_.Add(norm, id);
    } else {
      raw_all_.Add(text, id);
      if (ty == TokenType::kUserDefined) raw_plain_.Add(text, id);
    }
  }
}

void Tokenizer::SetSpecialIds(const tok::VocabSpec& spec) {
  const auto n = static_cast<int32_t>(spec.tokens.size());
  auto valid_or_none = [&](int32_t id) { return id >= 0 && id < n ? id : -1; };
  nfc_ = spec.nfc;
  bos_id_ = valid_or_none(spec.bos_id);
  eos_id_ = valid_or_none(spec.eos_id);
  pad_id_ = valid_or_none(spec.pad_id);
  add_bos_ = spec.add_bos;
  if (eos_id_ >= 0) eog_ids_.push_back(eos_id_);
  for (const char* name : {"<|im_end|>", "<|endoftext|>"}) {
    const int32_t id = vocab_.Find(name);
    if (id >= 0 && vocab_.Type(id) == TokenType::kControl &&
        std::find(eog_ids_.begin(), eog_ids_.end(), id) == eog_ids_.end()) {
      eog_ids_.push_back(id);
    }
  }
}

void Tokenizer::Encode(std::string_view text, bool parse_special, std::vector<int32_t>* out) const {
  std::string repaired;
  if (!tok::IsValidUtf8(text)) {
    repaired = tok::ToValidUtf8(text);
    text = repaired;
  }
  const tok::AddedTokenMatcher& m = parse_special ? raw_all_ : raw_plain_;
  size_t pos = 0;
  while (pos < text.size()) {
    const tok::AddedTokenMatcher::Match hit = m.Find(text, pos);
    const size_t end = hit.pos == std::string_view::npos ? text.size() : hit.pos;
    EncodeSegment(text.substr(pos, end - pos), parse_special, out);
    if (hit.pos == std::string_view::npos) break;
    out->push_back(hit.id);
    pos = hit.pos + hit.len;
  }
}

std::vector<int32_t> Tokenizer::Encode(std::string_view text, bool parse_special) const {
  std::vector<int32_t> out;
  out.reserve(text.size() / 3 + 4);
  Encode(text, parse_special, &out);
  return out;
}

// Text between raw-matched added tokens: normalise, split out normalised added tokens, encode.
void Tokenizer::EncodeSegment(std::string_view raw, bool parse_special,
                              std::vector<int32_t>* out) const {
  if (raw.empty()) return;
  std::string storage;
  const std::string_view text = nfc_ ? tok::NfcView(raw, &storage) : raw;
  const tok::AddedTokenMatcher& m = parse_special ? norm_all_ : norm_plain_;
  if (m.empty()) {
    EncodeNormalized(text, out);
    return;
  }
  size_t pos = 0;
  while (pos < text.size()) {
    const tok::AddedTokenMatcher::Match hit = m.Find(text, pos);
    const size_t end = hit.pos == std::string_view::npos ? text.size() : hit.pos;
    EncodeNormalized(text.substr(pos, end - pos), out);
    if (hit.pos == std::string_view::npos) break;
    out->push_back(hit.id);
    pos = hit.pos + hit.len;
  }
}

void Tokenizer::EncodeNormalized(std::string_view text, std::vector<int32_t>* out) const {
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t end = tok::NextQwen2Piece(text, pos);
    const std::string_view piece = text.substr(pos, end - pos);
    if (ignore_merges_ && piece.size() > 1) {
      const int32_t id = vocab_.Find(tok::BytesToByteLevel(piece));
      if (id >= 0 && vocab_.Type(id) == TokenType::kNormal) {
        out->push_back(id);
        pos = end;
        continue;
      }
    }
    bpe_.Encode(piece, out);
    pos = end;
  }
}

std::string_view Tokenizer::PieceBytes(int32_t id, bool show_special) const {
  if (!vocab_.Valid(id)) return {};
  if (!show_special && vocab_.Type(id) == TokenType::kControl) return {};
  return vocab_.Bytes(id);  // empty for unused rows
}

std::string Tokenizer::Decode(std::span<const int32_t> ids, bool show_special) const {
  std::string bytes;
  for (int32_t id : ids) bytes.append(PieceBytes(id, show_special));
  if (tok::IsValidUtf8(bytes)) return bytes;
  return tok::ToValidUtf8(bytes);
}

std::string_view Tokenizer::TokenText(int32_t id) const {
  return vocab_.Valid(id) ? vocab_.Text(id) : std::string_view();
}

std::string_view Tokenizer::TokenBytes(int32_t id) const {
  return vocab_.Valid(id) ? vocab_.Bytes(id) : std::string_view();
}

TokenType Tokenizer::type(int32_t id) const {
  return vocab_.Valid(id) ? vocab_.Type(id) : TokenType::kUndefined;
}

bool Tokenizer::IsEog(int32_t id) const {
  return id >= 0 && std::find(eog_ids_.begin(), eog_ids_.end(), id) != eog_ids_.end();
}

}  // namespace brisk
