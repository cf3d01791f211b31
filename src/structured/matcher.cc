#include "structured/matcher.h"

#include <algorithm>
#include <array>
#include <unordered_map>
#include <utility>
#include <vector>

#include "structured/compiled_grammar.h"

namespace brisk::structured {

static_assert(Matcher::kNoBytesToEnd == CompiledGrammar::kNoEnd);

Result<std::shared_ptr<const CompiledGrammar>> CompileGrammar(const Grammar& g) {
  Result<CompiledGrammar> lowered = CompiledGrammar::Lower(g);
  if (!lowered.ok()) return lowered.status();
  return std::make_shared<const CompiledGrammar>(std::move(lowered).value());
}

size_t CompiledGrammarBytes(const CompiledGrammar& g) {
  size_t bytes = sizeof(g) + g.elements.size() * sizeof(CompiledGrammar::Element) +
                 g.byte_sets.size() * sizeof(ByteSet);
  for (const auto& a : g.alternatives) bytes += sizeof(a) + a.size() * sizeof(int32_t);
  for (const auto& n : g.rule_names) bytes += sizeof(n) + n.size();
  bytes += g.shortest_rest.size() * sizeof(int32_t);
  return bytes;
}

// A family's tables. A stack is a chain of frames, each (element position, parent frame); the
// top frame always sits on a byte element. Frames are hash-consed, so a stack is one frame
// number; a position is the sorted set of its stacks' top frames plus "a sentence ends here",
// interned to a number; steps are memoised per (position, byte).
struct Matcher::Family {
  using G = CompiledGrammar;

  struct Frame {
    int32_t element;
    int32_t parent;  // -1: the bottom
  };
  struct PositionRec {
    std::vector<int32_t> tops;  // sorted frame numbers
    bool can_end = false;
    int32_t bytes_to_end = kUnknown;  // fewest bytes that finish a sentence (memoised)
  };

  explicit Family(std::shared_ptr<const CompiledGrammar> grammar) : g(std::move(grammar)) {}

  std::shared_ptr<const CompiledGrammar> g;
  std::vector<Frame> frames;
  std::unordered_map<uint64_t, int32_t> frame_ids;
  std::vector<PositionRec> positions;
  std::unordered_map<size_t, std::vector<Position>> position_ids;  // by hash
  // Memoised steps: a dense row of 256 per position for the first kDenseRows positions (the
  // trie walk's inner loop is then one load), a hash map beyond.
  static constexpr Position kDenseRows = 4096;
  static constexpr Position kUnknown = -2;
  std::vector<std::array<Position, 256>> dense;
  std::unordered_map<uint64_t, Position> sparse;  // (position << 8) | byte
  bool overflowed = false;

  std::vector<int32_t> frame_bytes_to_end;  // per frame, memoised (kUnknown: not yet)

  // Closure scratch.
  std::vector<std::pair<int32_t, int32_t>> work;  // (element, parent) to expand
  std::unordered_map<uint64_t, bool> seen;
  std::vector<int32_t> tops;
  std::vector<int32_t> work_frames;

  static uint64_t Key(int32_t a, int32_t b) { return (uint64_t(uint32_t(a)) << 32) | uint32_t(b); }

  int32_t FrameId(int32_t element, int32_t parent) {
    auto [it, fresh] = frame_ids.try_emplace(Key(element, parent), int32_t(frames.size()));
    if (fresh) frames.push_back({element, parent});
    return it->second;
  }

  // Expands every queued (element, parent) until each stack's top is a byte element; returns
  // the interned position (kDead when nothing is left).
  Position Close() {
    seen.clear();
    tops.clear();
    bool can_end = false;
    while (!work.empty()) {
      auto [element, parent] = work.back();
      work.pop_back();
      if (!seen.try_emplace(Key(element, parent), true).second) continue;
      if (frames.size() >= kMaxStacks || seen.size() > 16 * kMaxPositionWidth) return Overflow();
      const G::Element& e = g->elements[size_t(element)];
      if (e.kind == G::Kind::kByte) {
        tops.push_back(FrameId(element, parent));
      } else if (e.kind == G::Kind::kRule) {
        // A call in tail position returns straight to the caller's caller: right recursion
        // (every x* and x{m,n} tail) keeps the stack flat instead of one frame per item, so
        // long outputs cost O(1) per byte and ambiguous repetitions do not multiply stacks.
        const bool tail = g->elements[size_t(element) + 1].kind == G::Kind::kEnd;
        const int32_t ret = tail ? parent : FrameId(element + 1, parent);
        for (int32_t start : g->alternatives[size_t(e.arg)]) work.emplace_back(start, ret);
      } else if (parent < 0) {
        can_end = true;
      } else {
        work.emplace_back(frames[size_t(parent)].element, frames[size_t(parent)].parent);
      }
    }
    if (tops.size() > kMaxPositionWidth) return Overflow();
    std::sort(tops.begin(), tops.end());
    tops.erase(std::unique(tops.begin(), tops.end()), tops.end());
    return Intern(can_end);
  }

  Position Overflow() {
    overflowed = true;
    work.clear();
    return kDead;
  }

  Position Intern(bool can_end) {
    if (tops.empty() && !can_end) return kDead;
    size_t h = can_end ? 0x9e3779b97f4a7c15ull : 0;
    for (int32_t t : tops) h = (h ^ size_t(t)) * 0x100000001b3ull;
    std::vector<Position>& bucket = position_ids[h];
    for (Position p : bucket) {
      const PositionRec& r = positions[size_t(p)];
      if (r.can_end == can_end && r.tops == tops) return p;
    }
    bucket.push_back(Position(positions.size()));
    positions.push_back({tops, can_end});
    return bucket.back();
  }

  Position Start() {
    work.emplace_back(0, -1);
    return Close();
  }

  Position Step(Position from, uint8_t byte) {
    if (from == kDead || overflowed) return kDead;
    Position* slot = Slot(from, byte);
    if (slot && *slot != kUnknown) return *slot;
    const uint64_t key = (uint64_t(uint32_t(from)) << 8) | byte;
    if (!slot)
      if (auto it = sparse.find(key); it != sparse.end()) return it->second;
    for (int32_t top : positions[size_t(from)].tops) {
      const Frame f = frames[size_t(top)];
      if (g->byte_sets[size_t(g->elements[size_t(f.element)].arg)].Has(byte))
        work.emplace_back(f.element + 1, f.parent);
    }
    const Position to = work.empty() ? kDead : Close();
    if (overflowed) return kDead;
    if ((slot = Slot(from, byte))) {  // Close may have grown `dense`
      *slot = to;
    } else {
      sparse.emplace(key, to);
    }
    return to;
  }

  int32_t BytesToEnd(Position p) {
    if (p == kDead || overflowed) return G::kNoEnd;
    PositionRec& rec = positions[size_t(p)];
    if (rec.bytes_to_end != kUnknown) return rec.bytes_to_end;
    int32_t best = rec.can_end ? 0 : G::kNoEnd;
    for (int32_t top : rec.tops) best = std::min(best, FrameBytesToEnd(top));
    return rec.bytes_to_end = best;
  }

  // A stack finishes by finishing its top frame's alternative, then each caller's rest in turn.
  int32_t FrameBytesToEnd(int32_t frame) {
    if (frame_bytes_to_end.size() < frames.size())
      frame_bytes_to_end.resize(frames.size(), kUnknown);
    std::vector<int32_t>& chain = work_frames;
    chain.clear();
    for (int32_t f = frame; f >= 0 && frame_bytes_to_end[size_t(f)] == kUnknown;
         f = frames[size_t(f)].parent)
      chain.push_back(f);
    for (size_t i = chain.size(); i-- > 0;) {
      const Frame fr = frames[size_t(chain[i])];
      const int32_t below = fr.parent < 0 ? 0 : frame_bytes_to_end[size_t(fr.parent)];
      const int32_t own = g->shortest_rest[size_t(fr.element)];
      frame_bytes_to_end[size_t(chain[i])] = own >= G::kNoEnd - below ? G::kNoEnd : own + below;
    }
    return frame_bytes_to_end[size_t(frame)];
  }

  Position* Slot(Position from, uint8_t byte) {
    if (from >= kDenseRows) return nullptr;
    while (Position(dense.size()) <= from) {
      dense.emplace_back();
      dense.back().fill(kUnknown);
    }
    return &dense[size_t(from)][byte];
  }
};

Matcher::Matcher(std::shared_ptr<const CompiledGrammar> grammar)
    : family_(std::make_shared<Family>(std::move(grammar))) {
  position_ = family_->Start();
}

Matcher::~Matcher() = default;
Matcher::Matcher(const Matcher&) = default;
Matcher& Matcher::operator=(const Matcher&) = default;

Matcher::Position Matcher::Step(Position from, uint8_t byte) const {
  return family_->Step(from, byte);
}

bool Matcher::PositionCanEnd(Position p) const {
  return p != kDead && family_->positions[size_t(p)].can_end;
}

bool Matcher::PositionHasNext(Position p) const {
  return p != kDead && !family_->positions[size_t(p)].tops.empty();
}

int32_t Matcher::PositionBytesToEnd(Position p) const { return family_->BytesToEnd(p); }

Matcher::Position Matcher::After(std::string_view bytes) const {
  Position p = position_;
  for (size_t i = 0; i < bytes.size() && p != kDead; ++i) p = Step(p, uint8_t(bytes[i]));
  return p;
}

bool Matcher::Finished() const { return !PositionHasNext(position_); }

bool Matcher::overflowed() const { return family_->overflowed; }

size_t Matcher::memory_bytes() const {
  const Family& f = *family_;
  size_t bytes = sizeof(f) + f.frames.capacity() * sizeof(Family::Frame) +
                 f.frame_ids.size() * (sizeof(uint64_t) + sizeof(int32_t) + 2 * sizeof(void*)) +
                 f.frame_bytes_to_end.capacity() * sizeof(int32_t) +
                 f.dense.capacity() * sizeof(f.dense[0]) +
                 f.sparse.size() * (sizeof(uint64_t) + sizeof(Position) + 2 * sizeof(void*));
  for (const Family::PositionRec& p : f.positions)
    bytes += sizeof(p) + p.tops.capacity() * sizeof(int32_t);
  return bytes;
}

bool Matcher::CanAccept(std::string_view bytes) const { return After(bytes) != kDead; }

bool Matcher::Accept(std::string_view bytes) {
  const Position p = After(bytes);
  if (p == kDead) return false;
  position_ = p;
  return true;
}

bool Matches(const std::shared_ptr<const CompiledGrammar>& g, std::string_view text) {
  Matcher m(g);
  return m.Accept(text) && m.CanEnd();
}

bool Matches(const CompiledGrammar& g, std::string_view text) {
  // A non-owning view: the grammar outlives this call.
  return Matches(std::shared_ptr<const CompiledGrammar>(&g, [](const CompiledGrammar*) {}), text);
}

}  // namespace brisk::structured
