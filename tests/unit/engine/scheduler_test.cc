#include "engine/scheduler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "engine/block_manager.h"

namespace brisk {
namespace {

using Tokens = std::vector<int32_t>;

bool SmallRun() {
  const char* e = std::getenv("BRISK_TEST_SMALL");
  return e != nullptr && *e != '\0' && std::string(e) != "0";
}

Tokens Range(int32_t first, int n) {
  Tokens t(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) t[size_t(i)] = first + i;
  return t;
}

std::unique_ptr<SeqState> MakeSeq(SeqId id, int priority, uint64_t arrival, Tokens prompt) {
  auto s = std::make_unique<SeqState>();
  s->id = id;
  s->priority = priority;
  s->arrival = arrival;
  s->num_prompt = int(prompt.size());
  s->tokens = std::move(prompt);
  return s;
}

std::vector<SeqId> Ids(const std::vector<SeqState*>& seqs) {
  std::vector<SeqId> ids;
  for (const SeqState* s : seqs) ids.push_back(s->id);
  return ids;
}

std::vector<SeqId> ChunkIds(const StepPlan& plan) {
  std::vector<SeqId> ids;
  for (const ScheduledChunk& c : plan.chunks) ids.push_back(c.seq->id);
  return ids;
}

const ScheduledChunk* FindChunk(const StepPlan& plan, const SeqState* s) {
  for (const ScheduledChunk& c : plan.chunks)
    if (c.seq == s) return &c;
  return nullptr;
}

// What a model run does with a plan: commit it, then append a token to every sequence whose
// chunk asked for a sample.
void RunPlan(Scheduler& sched, const StepPlan& plan, int32_t token = 7) {
  sched.Commit(plan);
  for (const ScheduledChunk& c : plan.chunks)
    if (c.sample) c.seq->tokens.push_back(token);
}

// ---- deterministic scenarios ------------------------------------------------------------------

TEST(Scheduler, AdmitsByPriorityThenArrival) {
  BlockManager bm(64, 4, true);
  Scheduler sched({/*max_num_seqs=*/2, /*max_num_batched_tokens=*/64, 0}, bm);
  // Added in an order that matches neither priority nor arrival.
  auto a = MakeSeq(1, /*priority=*/1, /*arrival=*/0, Range(100, 3));
  auto b = MakeSeq(2, 0, 3, Range(200, 3));
  auto c = MakeSeq(3, 0, 1, Range(300, 3));  // same priority as b, arrived earlier
  auto d = MakeSeq(4, -1, 2, Range(400, 3));
  sched.Add(a.get());
  sched.Add(b.get());
  sched.Add(c.get());
  sched.Add(d.get());
  EXPECT_EQ(sched.num_waiting(), 4);
  EXPECT_EQ(sched.num_running(), 0);

  StepPlan p1 = sched.Schedule();
  EXPECT_EQ(Ids(p1.admitted), (std::vector<SeqId>{4, 3}));
  EXPECT_EQ(ChunkIds(p1), (std::vector<SeqId>{4, 3}));
  EXPECT_EQ(Ids(sched.running()), (std::vector<SeqId>{4, 3}));
  EXPECT_TRUE(d->running && c->running && !a->running && !b->running);
  EXPECT_EQ(sched.num_waiting(), 2);
  RunPlan(sched, p1);

  sched.Remove(d.get());
  sched.Remove(c.get());
  StepPlan p2 = sched.Schedule();
  EXPECT_EQ(Ids(p2.admitted), (std::vector<SeqId>{2, 1}));
  EXPECT_EQ(sched.num_waiting(), 0);

  // A newly admitted higher-priority sequence runs ahead of lower-priority running ones.
  RunPlan(sched, p2);
  sched.Remove(a.get());
  auto e = MakeSeq(5, -3, 4, Range(500, 2));
  sched.Add(e.get());
  StepPlan p3 = sched.Schedule();
  EXPECT_EQ(ChunkIds(p3), (std::vector<SeqId>{2, 5}));  // running first, then the admission
  EXPECT_EQ(Ids(sched.running()), (std::vector<SeqId>{5, 2}));
}

// Three sequences fill a 5-block pool exactly (block_size 4): x holds 4 prompt tokens (1 block),
// y and z 7 each (2 blocks). After one step x has 5 tokens and needs a second block; y and z
// (8 tokens) do not. So the next step must preempt exactly one of y, z.
struct PreemptionSetup {
  BlockManager bm{5, 4, true};
  Scheduler sched{{/*max_num_seqs=*/8, /*max_num_batched_tokens=*/64, 0}, bm};
  std::unique_ptr<SeqState> x, y, z;

  PreemptionSetup(int y_priority, uint64_t y_arrival, int z_priority, uint64_t z_arrival) {
    x = MakeSeq(1, -1, 0, Range(10, 4));
    y = MakeSeq(2, y_priority, y_arrival, Range(20, 7));
    z = MakeSeq(3, z_priority, z_arrival, Range(30, 7));
    sched.Add(x.get());
    sched.Add(y.get());
    sched.Add(z.get());
    StepPlan p = sched.Schedule();
    EXPECT_EQ(p.admitted.size(), 3u);
    EXPECT_TRUE(p.preempted.empty());
    EXPECT_EQ(bm.num_free_blocks(), 0);
    RunPlan(sched, p);
  }
};

void ExpectPreempted(PreemptionSetup& t, SeqState* victim, SeqState* survivor) {
  StepPlan p = t.sched.Schedule();
  ASSERT_EQ(p.preempted.size(), 1u);
  EXPECT_EQ(p.preempted[0], victim);
  EXPECT_EQ(ChunkIds(p), (std::vector<SeqId>{t.x->id, survivor->id}));
  for (const ScheduledChunk& c : p.chunks) {
    EXPECT_EQ(c.n, 1);
    EXPECT_TRUE(c.sample);
  }
  EXPECT_FALSE(victim->running);
  EXPECT_EQ(victim->num_computed, 0);
  EXPECT_EQ(victim->num_preemptions, 1);
  EXPECT_EQ(survivor->num_preemptions, 0);
  EXPECT_EQ(t.sched.num_preemptions(), 1);
  EXPECT_EQ(t.sched.num_running(), 2);
  EXPECT_EQ(t.sched.num_waiting(), 1);
  EXPECT_FALSE(t.bm.HasSeq(victim->id));
  EXPECT_EQ(t.bm.BlockTable(t.x->id).size(), 2u);
  EXPECT_EQ(victim->tokens.size(), 8u);  // generated tokens are kept for the recompute
  EXPECT_TRUE(t.bm.CheckInvariants().empty()) << t.bm.CheckInvariants();
}

TEST(Scheduler, PreemptsLatestArrivalAmongLowestPriority) {
  PreemptionSetup t(/*y=*/1, 1, /*z=*/1, 2);
  ExpectPreempted(t, t.z.get(), t.y.get());
}

TEST(Scheduler, PreemptsLowestPriorityEvenIfItArrivedFirst) {
  PreemptionSetup t(/*y=*/2, 1, /*z=*/1, 2);
  ExpectPreempted(t, t.y.get(), t.z.get());
}

TEST(Scheduler, NoAdmissionsInStepThatPreempted) {
  PreemptionSetup t(1, 1, 1, 2);
  // A top-priority one-token request that would fit in the block the preemption leaves free.
  auto w = MakeSeq(4, -5, 3, Range(40, 1));
  t.sched.Add(w.get());
  StepPlan p = t.sched.Schedule();
  ASSERT_EQ(p.preempted.size(), 1u);
  EXPECT_EQ(t.bm.num_free_blocks(), 1);
  EXPECT_TRUE(p.admitted.empty());
  EXPECT_EQ(FindChunk(p, w.get()), nullptr);
  EXPECT_FALSE(w->running);
  EXPECT_EQ(t.sched.num_waiting(), 2);
  RunPlan(t.sched, p);

  // Once y finishes there is no memory trouble: w goes in first, then z (from its cached block).
  t.sched.Remove(t.y.get());
  StepPlan p2 = t.sched.Schedule();
  EXPECT_TRUE(p2.preempted.empty());
  EXPECT_EQ(Ids(p2.admitted), (std::vector<SeqId>{4, 3}));
  EXPECT_EQ(ChunkIds(p2), (std::vector<SeqId>{1, 4, 3}));
}

TEST(Scheduler, ReadmittedSequenceRestartsFromItsCachedBlocks) {
  PreemptionSetup t(1, 1, 1, 2);
  const int32_t z_block0 = t.bm.BlockTable(t.z->id)[0];  // positions 0..3, committed
  StepPlan p = t.sched.Schedule();
  ASSERT_EQ(p.preempted, (std::vector<SeqState*>{t.z.get()}));
  RunPlan(t.sched, p);
  t.sched.Remove(t.x.get());
  t.sched.Remove(t.y.get());

  StepPlan p2 = t.sched.Schedule();
  ASSERT_EQ(Ids(p2.admitted), (std::vector<SeqId>{3}));
  ASSERT_EQ(p2.chunks.size(), 1u);
  const ScheduledChunk& c = p2.chunks[0];
  EXPECT_EQ(t.z->num_cached, 4);
  EXPECT_EQ(t.z->num_computed, 4);
  EXPECT_EQ(c.start, 4);  // recomputes only the uncached tail (its prompt end + generated token)
  EXPECT_EQ(c.n, 4);
  EXPECT_TRUE(c.sample);
  EXPECT_EQ(t.bm.BlockTable(t.z->id)[0], z_block0);
  RunPlan(t.sched, p2);
  EXPECT_EQ(t.z->num_computed, 8);
  EXPECT_EQ(t.z->tokens.size(), 9u);
  EXPECT_TRUE(t.bm.CheckInvariants().empty()) << t.bm.CheckInvariants();
}

TEST(Scheduler, ReadmittedSequenceRecomputesEverythingWithoutPrefixCache) {
  BlockManager bm(5, 4, /*enable_prefix_cache=*/false);
  Scheduler sched({8, 64, 0}, bm);
  auto x = MakeSeq(1, -1, 0, Range(10, 4));
  auto z = MakeSeq(3, 1, 2, Range(30, 7));
  auto y = MakeSeq(2, 1, 1, Range(20, 7));
  for (SeqState* s : {x.get(), y.get(), z.get()}) sched.Add(s);
  RunPlan(sched, sched.Schedule());
  StepPlan p = sched.Schedule();
  ASSERT_EQ(p.preempted, (std::vector<SeqState*>{z.get()}));
  RunPlan(sched, p);
  sched.Remove(x.get());
  sched.Remove(y.get());
  StepPlan p2 = sched.Schedule();
  ASSERT_EQ(p2.chunks.size(), 1u);
  EXPECT_EQ(p2.chunks[0].start, 0);
  EXPECT_EQ(p2.chunks[0].n, 8);
  EXPECT_EQ(z->num_cached, 0);
}

// A prefill-class sequence (prompt and generated tokens in different numerics classes) registers
// only its prompt blocks, under its class's cache salt: a later prompt covering its generated
// tokens must not find them, and a decode-class query must not find its prompt blocks. A
// decode-class sequence registers its generated blocks too.
TEST(Scheduler, PrefillClassSequencesCacheOnlyTheirPromptUnderTheirOwnSalt) {
  for (bool prefill_class : {false, true}) {
    SCOPED_TRACE(prefill_class ? "prefill class" : "decode class");
    BlockManager bm(8, 4, /*enable_prefix_cache=*/true);
    Scheduler sched({8, 64, 0}, bm);
    auto a = MakeSeq(1, 0, 0, Range(10, 4));  // one full prompt block
    a->prompt_class = prefill_class ? NumericsClass::kPrefill : NumericsClass::kDecode;
    sched.Add(a.get());
    for (int step = 0; step < 5; ++step) RunPlan(sched, sched.Schedule(), 50 + step);
    ASSERT_GE(a->num_computed, 8);  // prompt block + a block of generated tokens computed
    Tokens query(a->tokens.begin(), a->tokens.begin() + 9);
    const uint64_t own = CacheSalt(a->prompt_class);
    const uint64_t other =
        CacheSalt(prefill_class ? NumericsClass::kDecode : NumericsClass::kPrefill);
    EXPECT_EQ(bm.FindCachedPrefix(query, own).num_tokens, prefill_class ? 4 : 8);
    EXPECT_EQ(bm.FindCachedPrefix(query, other).num_tokens, 0);
  }
}

TEST(Scheduler, MaxPrefillChunkSplitsLongPrompt) {
  BlockManager bm(32, 4, true);
  Scheduler sched({4, 64, /*max_prefill_chunk=*/4}, bm);
  auto s = MakeSeq(1, 0, 0, Range(100, 10));
  sched.Add(s.get());
  const int want_start[] = {0, 4, 8};
  const int want_n[] = {4, 4, 2};
  for (int step = 0; step < 3; ++step) {
    SCOPED_TRACE("step " + std::to_string(step));
    StepPlan p = sched.Schedule();
    ASSERT_EQ(p.chunks.size(), 1u);
    const ScheduledChunk& c = p.chunks[0];
    EXPECT_EQ(c.start, want_start[step]);
    EXPECT_EQ(c.n, want_n[step]);
    EXPECT_EQ(c.sample, step == 2);  // only the chunk reaching the prompt's end samples
    EXPECT_EQ(p.num_tokens, c.n);
    EXPECT_EQ(p.admitted.size(), step == 0 ? 1u : 0u);
    EXPECT_GE(bm.BlockTable(1).size() * 4, size_t(c.start + c.n));
    RunPlan(sched, p);
  }
  EXPECT_EQ(s->num_computed, 10);
  ASSERT_EQ(s->tokens.size(), 11u);
  // Then a plain decode step.
  StepPlan p = sched.Schedule();
  ASSERT_EQ(p.chunks.size(), 1u);
  EXPECT_EQ(p.chunks[0].start, 10);
  EXPECT_EQ(p.chunks[0].n, 1);
  EXPECT_TRUE(p.chunks[0].sample);
}

TEST(Scheduler, TokenBudgetSplitsPromptsAndDefersAdmissions) {
  BlockManager bm(32, 4, true);
  Scheduler sched({4, /*max_num_batched_tokens=*/6, 0}, bm);
  auto a = MakeSeq(1, 0, 0, Range(100, 10));
  auto b = MakeSeq(2, 0, 1, Range(200, 5));
  sched.Add(a.get());
  sched.Add(b.get());
  StepPlan p1 = sched.Schedule();
  ASSERT_EQ(p1.chunks.size(), 1u);  // the budget is gone before b
  EXPECT_EQ(p1.chunks[0].n, 6);
  EXPECT_FALSE(p1.chunks[0].sample);
  EXPECT_EQ(p1.num_tokens, 6);
  EXPECT_EQ(sched.num_waiting(), 1);
  RunPlan(sched, p1);

  StepPlan p2 = sched.Schedule();
  ASSERT_EQ(p2.chunks.size(), 2u);
  EXPECT_EQ(p2.chunks[0].seq, a.get());
  EXPECT_EQ(p2.chunks[0].start, 6);
  EXPECT_EQ(p2.chunks[0].n, 4);
  EXPECT_TRUE(p2.chunks[0].sample);
  EXPECT_EQ(p2.chunks[1].seq, b.get());
  EXPECT_EQ(p2.chunks[1].start, 0);
  EXPECT_EQ(p2.chunks[1].n, 2);
  EXPECT_FALSE(p2.chunks[1].sample);
  EXPECT_EQ(p2.num_tokens, 6);
}

TEST(Scheduler, RunningDecodesComeBeforeAdmissions) {
  BlockManager bm(32, 4, true);
  Scheduler sched({4, /*max_num_batched_tokens=*/3, 0}, bm);
  auto a = MakeSeq(1, 5, 0, Range(100, 1));
  auto b = MakeSeq(2, 5, 1, Range(200, 1));
  sched.Add(a.get());
  sched.Add(b.get());
  RunPlan(sched, sched.Schedule());
  // A waiting request of much higher priority does not take the running ones' decode tokens.
  auto w = MakeSeq(3, -10, 2, Range(300, 10));
  sched.Add(w.get());
  StepPlan p = sched.Schedule();
  ASSERT_EQ(p.chunks.size(), 3u);
  EXPECT_EQ(p.chunks[0].seq, a.get());
  EXPECT_EQ(p.chunks[0].n, 1);
  EXPECT_EQ(p.chunks[1].seq, b.get());
  EXPECT_EQ(p.chunks[1].n, 1);
  EXPECT_EQ(p.chunks[2].seq, w.get());
  EXPECT_EQ(p.chunks[2].n, 1);
  EXPECT_FALSE(p.chunks[2].sample);
}

// DESIGN §5: the budget goes to "running decodes first (1 token each), then the rest of
// partially-prefilled prompts in chunks". A higher-priority running sequence in the middle of a
// long prefill must not take the token a lower-priority running sequence needs to decode.
// (Regression: Schedule() used to walk the running list once, giving the prefill all 8 tokens.)
TEST(Scheduler, RunningDecodesComeBeforeRunningPrefillChunks) {
  BlockManager bm(32, 4, true);
  Scheduler sched({4, /*max_num_batched_tokens=*/8, 0}, bm);
  auto d = MakeSeq(1, /*priority=*/1, 0, Range(100, 2));
  sched.Add(d.get());
  RunPlan(sched, sched.Schedule());  // d: prompt done, one token sampled
  auto p = MakeSeq(2, /*priority=*/0, 1, Range(200, 20));
  sched.Add(p.get());
  StepPlan s1 = sched.Schedule();  // d decodes (1), p is admitted with the remaining 7
  ASSERT_EQ(ChunkIds(s1), (std::vector<SeqId>{1, 2}));
  RunPlan(sched, s1);
  ASSERT_EQ(d->tokens.size() - size_t(d->num_computed), 1u);  // d is ready to decode

  StepPlan s2 = sched.Schedule();
  const ScheduledChunk* dc = FindChunk(s2, d.get());
  const ScheduledChunk* pc = FindChunk(s2, p.get());
  ASSERT_NE(dc, nullptr) << "running decode got no token; prefill chunk took " << (pc ? pc->n : 0)
                         << " of 8";
  EXPECT_EQ(dc->n, 1);
  ASSERT_NE(pc, nullptr);
  EXPECT_EQ(pc->n, 7);
}

TEST(Scheduler, SkipsRunningSequenceWithNothingToCompute) {
  BlockManager bm(8, 4, true);
  Scheduler sched({4, 16, 0}, bm);
  auto a = MakeSeq(1, 0, 0, Range(100, 3));
  auto b = MakeSeq(2, 0, 1, Range(200, 3));
  sched.Add(a.get());
  sched.Add(b.get());
  StepPlan p = sched.Schedule();
  sched.Commit(p);
  b->tokens.push_back(9);  // a's sampled token is not appended (yet)
  StepPlan p2 = sched.Schedule();
  EXPECT_EQ(ChunkIds(p2), (std::vector<SeqId>{2}));
  EXPECT_EQ(p2.num_tokens, 1);
  EXPECT_TRUE(a->running);
}

TEST(Scheduler, LoweredSeqCapStopsAdmissionsUntilRunningDrains) {
  BlockManager bm(32, 4, true);
  Scheduler sched({3, 64, 0}, bm);
  std::vector<std::unique_ptr<SeqState>> seqs;
  for (int i = 0; i < 4; ++i) {
    seqs.push_back(MakeSeq(SeqId(i + 1), 0, uint64_t(i), Range(100 * (i + 1), 3)));
    sched.Add(seqs.back().get());
  }
  RunPlan(sched, sched.Schedule());
  EXPECT_EQ(sched.num_running(), 3);
  SchedulerConfig c = sched.config();
  c.max_num_seqs = 2;
  sched.set_config(c);
  EXPECT_EQ(sched.config().max_num_seqs, 2);
  StepPlan p = sched.Schedule();
  EXPECT_TRUE(p.admitted.empty());
  RunPlan(sched, p);
  sched.Remove(seqs[0].get());
  p = sched.Schedule();
  EXPECT_TRUE(p.admitted.empty());  // 2 running, cap 2
  RunPlan(sched, p);
  sched.Remove(seqs[1].get());
  p = sched.Schedule();
  EXPECT_EQ(Ids(p.admitted), (std::vector<SeqId>{4}));
}

TEST(Scheduler, RemoveFreesBlocksWhereverTheSequenceIs) {
  BlockManager bm(8, 4, true);
  Scheduler sched({1, 64, 0}, bm);
  auto a = MakeSeq(1, 0, 0, Range(100, 9));
  auto b = MakeSeq(2, 0, 1, Range(200, 5));
  sched.Add(a.get());
  sched.Add(b.get());
  StepPlan p = sched.Schedule();
  EXPECT_EQ(Ids(p.admitted), (std::vector<SeqId>{1}));
  EXPECT_EQ(bm.num_free_blocks(), 5);
  sched.Remove(b.get());  // waiting
  EXPECT_EQ(sched.num_waiting(), 0);
  sched.Remove(a.get());  // running, never committed
  EXPECT_EQ(sched.num_running(), 0);
  EXPECT_FALSE(a->running);
  EXPECT_EQ(bm.num_free_blocks(), 8);
  sched.Remove(a.get());  // again: a no-op
  EXPECT_EQ(bm.num_free_blocks(), 8);
  EXPECT_TRUE(sched.Schedule().chunks.empty());
  EXPECT_TRUE(bm.CheckInvariants().empty()) << bm.CheckInvariants();
}

// ---- property test: random workloads, no model ------------------------------------------------

struct PropertyConfig {
  const char* name;
  int n_blocks;
  int block_size;
  bool prefix_cache;
  SchedulerConfig sched;
  int max_live;  // submitted and not yet finished
  bool drain;    // end by running every sequence to completion (else: remove them all)
  uint64_t seed;
};

uint64_t Mix(uint64_t h, int32_t t) {
  h ^= uint64_t(uint32_t(t)) + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  h *= 0xff51afd7ed558ccdULL;
  return h ^ (h >> 33);
}

struct Live {
  std::unique_ptr<SeqState> seq;
  int max_len = 0;
  std::vector<uint64_t> prefix_hash;  // prefix_hash[p]: identity of tokens[0..p]
};

struct PropertyCounters {
  int64_t steps = 0, submits = 0, cancels = 0, finishes = 0, admissions = 0;
  int64_t preemptions = 0, cached_admissions = 0, readmissions_with_cache = 0;
  int64_t partial_admissions = 0;
  int64_t chunked_prefills = 0, decodes = 0;
};

// Drives a Scheduler with random submits, cancels, budget changes and steps; "runs" each plan
// against a fake KV store that records, for every written slot, which token prefix it holds, so
// that any block reused while still needed, or a prefix hit on the wrong content, is caught.
class Harness {
 public:
  explicit Harness(const PropertyConfig& c)
      : c_(c),
        bm_(c.n_blocks, c.block_size, c.prefix_cache),
        sched_(c.sched, bm_),
        rng_(c.seed),
        kv_(size_t(c.n_blocks) * size_t(c.block_size), 0),
        max_model_len_(std::min(56, c.n_blocks * c.block_size)) {
    for (int i = 0; i < 3; ++i) system_prompts_.push_back(RandomTokens(4 + 5 * i));
  }

  void RandomEvent(int64_t event) {
    if (event % 700 == 0) priority_spread_ = Uniform(0, 3);  // phases of priority mixes
    const int r = Uniform(0, 99);
    if (r < 22 && int(live_.size()) < c_.max_live) {
      Submit();
    } else if (r < 26 && !live_.empty()) {
      Cancel();
    } else if (r < 28) {
      ChangeBudget();
    } else {
      Step();
    }
  }

  void Submit() {
    Tokens prompt;
    const int kind = Uniform(0, 9);
    if (kind < 4) {
      prompt = system_prompts_[size_t(Uniform(0, 2))];
    } else if (kind < 6 && !history_.empty()) {
      prompt = history_[size_t(Uniform(0, int(history_.size()) - 1))];  // multi-turn
    }
    const Tokens tail = RandomTokens(Uniform(1, 12));
    prompt.insert(prompt.end(), tail.begin(), tail.end());
    if (int(prompt.size()) > max_model_len_ - 1) prompt.resize(size_t(max_model_len_ - 1));
    const SeqId id = next_id_++;
    Live l;
    l.seq = MakeSeq(id, Uniform(-priority_spread_, priority_spread_), next_arrival_++, prompt);
    l.max_len = std::min(max_model_len_, int(prompt.size()) + Uniform(1, 20));
    SeqState* s = l.seq.get();
    live_.emplace(id, std::move(l));
    sched_.Add(s);
    ++n_.submits;
    ExpectConsistent("submit");
  }

  void Cancel() {
    auto it = live_.begin();
    std::advance(it, Uniform(0, int(live_.size()) - 1));
    sched_.Remove(it->second.seq.get());
    live_.erase(it);
    ++n_.cancels;
    ExpectConsistent("cancel");
  }

  void ChangeBudget() {
    SchedulerConfig sc = sched_.config();
    const int base = c_.sched.max_num_batched_tokens;
    const int choices[] = {base, std::max(1, base / 2), base * 2, 1};
    sc.max_num_batched_tokens = choices[Uniform(0, 3)];
    sc.max_prefill_chunk = Uniform(0, 1) ? c_.sched.max_prefill_chunk : Uniform(0, 6);
    sched_.set_config(sc);
  }

  void Step() {
    const SchedulerConfig cfg = sched_.config();
    const int bs = c_.block_size;
    // Snapshot before scheduling.
    const std::vector<SeqState*> run_before = sched_.running();
    std::vector<SeqState*> wait_before;
    std::map<const SeqState*, int> computed_before;
    for (auto& [id, l] : live_) {
      computed_before[l.seq.get()] = l.seq->num_computed;
      if (!l.seq->running) wait_before.push_back(l.seq.get());
    }
    std::sort(wait_before.begin(), wait_before.end(), Earlier);

    const StepPlan plan = sched_.Schedule();
    ++n_.steps;
    ExpectConsistent("schedule");

    // Sizes.
    int sum = 0;
    std::set<const SeqState*> in_plan;
    for (const ScheduledChunk& c : plan.chunks) {
      sum += c.n;
      ASSERT_TRUE(in_plan.insert(c.seq).second) << "sequence " << c.seq->id << " twice in a plan";
    }
    ASSERT_EQ(plan.num_tokens, sum);
    ASSERT_LE(plan.num_tokens, cfg.max_num_batched_tokens);
    ASSERT_LE(int(plan.chunks.size()), cfg.max_num_seqs);
    ASSERT_LE(sched_.num_running(), cfg.max_num_seqs);

    // Each chunk.
    for (size_t i = 0; i < plan.chunks.size(); ++i) {
      const ScheduledChunk& c = plan.chunks[i];
      SeqState* s = c.seq;
      ASSERT_TRUE(live_.count(s->id)) << "a removed sequence was scheduled";
      ASSERT_TRUE(s->running);
      ASSERT_GE(c.n, 1);
      ASSERT_EQ(c.start, s->num_computed);
      ASSERT_LE(c.start + c.n, int(s->tokens.size()));
      ASSERT_EQ(c.sample, c.start + c.n == int(s->tokens.size()));
      if (cfg.max_prefill_chunk > 0) {
        ASSERT_LE(c.n, cfg.max_prefill_chunk);
      }
      ASSERT_GE(bm_.BlockTable(s->id).size() * size_t(bs), size_t(c.start + c.n))
          << "block table of seq " << s->id << " does not cover its chunk";
      if (c.n > 1 || c.start < s->num_prompt)
        ++n_.chunked_prefills;
      else
        ++n_.decodes;
    }

    ASSERT_LE(plan.admitted.size(), plan.chunks.size());
    // Running sequences' chunks: decodes in scheduling order, prefill chunks in scheduling order
    // (whether the two kinds interleave is not fixed here).
    const size_t n_running_chunks = plan.chunks.size() - plan.admitted.size();
    const SeqState* last[2] = {nullptr, nullptr};
    for (size_t i = 0; i < n_running_chunks; ++i) {
      const SeqState* s = plan.chunks[i].seq;
      const int kind = int(s->tokens.size()) - computed_before[s] == 1 ? 0 : 1;
      if (last[kind] != nullptr) {
        ASSERT_TRUE(Earlier(last[kind], s)) << "running chunks out of scheduling order";
      }
      last[kind] = s;
    }

    // Preemptions: the tail of the running order, moved back to waiting, nothing kept.
    std::set<const SeqState*> preempted(plan.preempted.begin(), plan.preempted.end());
    ASSERT_EQ(preempted.size(), plan.preempted.size());
    for (SeqState* v : plan.preempted) {
      ASSERT_TRUE(std::count(run_before.begin(), run_before.end(), v)) << "preempted a non-runner";
      ASSERT_FALSE(in_plan.count(v)) << "preempted sequence " << v->id << " has a chunk";
      ASSERT_FALSE(v->running);
      ASSERT_EQ(v->num_computed, 0);
      ASSERT_FALSE(bm_.HasSeq(v->id));
      for (SeqState* r : run_before) {
        if (!preempted.count(r)) {
          ASSERT_TRUE(Earlier(r, v)) << "preempted " << v->id << " before " << r->id;
        }
      }
    }
    n_.preemptions += int64_t(plan.preempted.size());

    // Admissions: a prefix of the waiting order, after every running chunk, never with a
    // preemption in the same step.
    if (!plan.preempted.empty()) {
      ASSERT_TRUE(plan.admitted.empty()) << "admitted after preempting";
    }
    ASSERT_LE(plan.admitted.size(), wait_before.size());
    for (size_t i = 0; i < plan.admitted.size(); ++i) {
      SeqState* s = plan.admitted[i];
      ASSERT_EQ(s, wait_before[i]) << "admission out of priority/arrival order";
      const size_t at = plan.chunks.size() - plan.admitted.size() + i;
      ASSERT_EQ(plan.chunks[at].seq, s) << "admissions must come after the running chunks";
      ASSERT_EQ(plan.chunks[at].start, s->num_cached);
      // Cached tokens beyond whole blocks come from exactly one partial-block copy.
      const auto copy = std::find_if(plan.copies.begin(), plan.copies.end(),
                                     [&](const KvBlockCopy& k) { return k.seq == s->id; });
      if (s->num_cached % bs == 0) {
        ASSERT_TRUE(copy == plan.copies.end()) << "seq " << s->id << " copies nothing it uses";
      } else {
        ASSERT_TRUE(copy != plan.copies.end()) << "seq " << s->id << " has no copy of its tail";
        ASSERT_EQ(copy->rows, s->num_cached % bs);
        ASSERT_EQ(copy->dst, bm_.BlockTable(s->id)[size_t(s->num_cached / bs)]);
        ASSERT_NE(copy->src, copy->dst);
        ASSERT_GE(bm_.RefCount(copy->src), 1) << "copy source not pinned";
        ++n_.partial_admissions;
      }
      if (!c_.prefix_cache) {
        ASSERT_EQ(s->num_cached, 0);
      }
      ++n_.admissions;
      if (s->num_cached > 0) {
        ++n_.cached_admissions;
        if (s->num_preemptions > 0) ++n_.readmissions_with_cache;
      }
    }

    // Running sequences are served before any admission: if anything was admitted, every
    // sequence that was running (and not preempted) with work left got a chunk, and those ready
    // to decode got exactly one token.
    if (!plan.admitted.empty() ||
        (plan.preempted.empty() && plan.num_tokens < cfg.max_num_batched_tokens)) {
      for (SeqState* r : run_before) {
        if (preempted.count(r)) continue;
        const int left = int(r->tokens.size()) - computed_before[r];
        if (left <= 0) continue;
        const ScheduledChunk* c = FindChunk(plan, r);
        ASSERT_NE(c, nullptr) << "running seq " << r->id << " got nothing with budget left";
        if (left == 1) {
          ASSERT_EQ(c->n, 1);
        }
      }
    }
    // Work conservation: admissions stop with budget and seats left only when the head of the
    // waiting queue does not fit in the free blocks.
    if (plan.preempted.empty() && plan.num_tokens < cfg.max_num_batched_tokens &&
        sched_.num_running() < cfg.max_num_seqs && wait_before.size() > plan.admitted.size()) {
      SeqState* head = wait_before[plan.admitted.size()];
      PrefixMatch m = bm_.FindCachedPrefix(head->tokens);
      const int remaining = int(head->tokens.size()) - m.total_tokens();
      const int cap =
          cfg.max_prefill_chunk > 0 ? cfg.max_prefill_chunk : cfg.max_num_batched_tokens;
      const int n = std::min(
          {remaining, cfg.max_num_batched_tokens - plan.num_tokens, remaining > 1 ? cap : 1});
      ASSERT_GT(bm_.BlocksNeeded(head->id, m.total_tokens() + n, &m), bm_.num_free_blocks())
          << "seq " << head->id << " fits but was not admitted";
    }

    // "Run" the plan: first the partial-block copies (whole blocks, as the engine copies), then
    // the chunks. The KV a chunk reads must be the KV of its own prefix; what it writes goes to
    // blocks no other sequence holds.
    for (const KvBlockCopy& k : plan.copies) {
      ASSERT_TRUE(std::any_of(plan.admitted.begin(), plan.admitted.end(),
                              [&](const SeqState* s) { return s->id == k.seq; }))
          << "copy for seq " << k.seq << ", which was not admitted this step";
      ASSERT_EQ(bm_.RefCount(k.dst), 1) << "copy into a shared block " << k.dst;
      for (int p = 0; p < bs; ++p)
        kv_[size_t(k.dst) * size_t(bs) + size_t(p)] = kv_[size_t(k.src) * size_t(bs) + size_t(p)];
    }
    for (const ScheduledChunk& c : plan.chunks) {
      Live& l = live_.at(c.seq->id);
      ExtendHashes(l);
      const auto table = bm_.BlockTable(c.seq->id);
      for (int p = 0; p < c.start; ++p) {
        ASSERT_EQ(Slot(table, p), l.prefix_hash[size_t(p)])
            << "seq " << c.seq->id << " position " << p << " reads KV of another prefix";
      }
      for (int p = c.start; p < c.start + c.n; ++p) {
        const int32_t b = table[size_t(p / bs)];
        ASSERT_EQ(bm_.RefCount(b), 1) << "seq " << c.seq->id << " writes into shared block " << b;
        Slot(table, p) = l.prefix_hash[size_t(p)];
      }
    }
    sched_.Commit(plan);
    ExpectConsistent("commit");
    for (const KvBlockCopy& k : plan.copies) {
      ASSERT_EQ(bm_.CopySource(k.seq), -1) << "copy source still pinned after Commit";
    }
    for (const ScheduledChunk& c : plan.chunks) {
      ASSERT_EQ(c.seq->num_computed, c.start + c.n);
    }
    for (const ScheduledChunk& c : plan.chunks) {
      if (!c.sample) continue;
      SeqState* s = c.seq;
      s->tokens.push_back(Uniform(0, kVocab - 1));
      Live& l = live_.at(s->id);
      if (int(s->tokens.size()) >= l.max_len) {
        if (history_.size() < 64) history_.push_back(s->tokens);
        sched_.Remove(s);
        live_.erase(s->id);
        ++n_.finishes;
      }
    }
    ExpectConsistent("finish");
  }

  void RemoveAll() {
    while (!live_.empty()) {
      sched_.Remove(live_.begin()->second.seq.get());
      live_.erase(live_.begin());
    }
    ExpectConsistent("remove all");
  }

  void ExpectConsistent(const char* where) {
    const std::string inv = bm_.CheckInvariants();
    ASSERT_TRUE(inv.empty()) << where << ": " << inv;
    ASSERT_EQ(sched_.num_running() + sched_.num_waiting(), int(live_.size())) << where;
    int running = 0;
    for (auto& [id, l] : live_) {
      running += l.seq->running;
      if (!l.seq->running) {
        ASSERT_FALSE(bm_.HasSeq(id)) << where << ": waiting seq holds blocks";
      }
    }
    ASSERT_EQ(running, sched_.num_running()) << where;
    for (SeqState* s : sched_.running()) ASSERT_TRUE(s->running && live_.count(s->id)) << where;
    ASSERT_EQ(bm_.num_seqs(), running) << where;
  }

  const PropertyCounters& counters() const { return n_; }
  bool empty() const { return live_.empty(); }
  BlockManager& blocks() { return bm_; }
  Scheduler& scheduler() { return sched_; }

 private:
  static constexpr int kVocab = 6;  // small: identical blocks arise by chance too

  static bool Earlier(const SeqState* a, const SeqState* b) {
    if (a->priority != b->priority) return a->priority < b->priority;
    return a->arrival < b->arrival;
  }
  int Uniform(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  Tokens RandomTokens(int n) {
    Tokens t(static_cast<size_t>(n));
    for (int32_t& x : t) x = Uniform(0, kVocab - 1);
    return t;
  }
  void ExtendHashes(Live& l) {
    const Tokens& t = l.seq->tokens;
    while (l.prefix_hash.size() < t.size()) {
      const uint64_t prev = l.prefix_hash.empty() ? 0x1234 : l.prefix_hash.back();
      l.prefix_hash.push_back(Mix(prev, t[l.prefix_hash.size()]) | 1);  // 0 = never written
    }
  }
  uint64_t& Slot(std::span<const int32_t> table, int p) {
    const int bs = c_.block_size;
    return kv_[size_t(table[size_t(p / bs)]) * size_t(bs) + size_t(p % bs)];
  }

  PropertyConfig c_;
  BlockManager bm_;
  Scheduler sched_;
  std::mt19937_64 rng_;
  std::vector<uint64_t> kv_;
  int max_model_len_;
  std::vector<Tokens> system_prompts_;
  std::vector<Tokens> history_;
  std::map<SeqId, Live> live_;
  SeqId next_id_ = 1;
  uint64_t next_arrival_ = 0;
  int priority_spread_ = 1;
  PropertyCounters n_;
};

void RunProperty(const PropertyConfig& c) {
  SCOPED_TRACE(std::string(c.name) + " seed " + std::to_string(c.seed));
  const int64_t events = SmallRun() ? 2000 : 10000;
  Harness h(c);
  for (int64_t e = 0; e < events; ++e) {
    h.RandomEvent(e);
    if (::testing::Test::HasFailure()) {
      ADD_FAILURE() << "stopped at event " << e;
      return;
    }
  }
  if (c.drain) {
    // Liveness: with no new work every sequence finishes (no livelock between preemptions).
    for (int i = 0; i < 20000 && !h.empty(); ++i) {
      h.Step();
      if (::testing::Test::HasFailure()) return;
    }
    EXPECT_TRUE(h.empty()) << "sequences still unfinished after 20000 steps";
    EXPECT_EQ(h.scheduler().num_running() + h.scheduler().num_waiting(), 0);
  }
  h.RemoveAll();
  EXPECT_EQ(h.blocks().num_free_blocks(), h.blocks().num_blocks());
  EXPECT_EQ(h.blocks().num_seqs(), 0);
  EXPECT_EQ(h.scheduler().num_running(), 0);
  EXPECT_EQ(h.scheduler().num_waiting(), 0);

  const PropertyCounters& n = h.counters();
  EXPECT_EQ(n.preemptions, h.scheduler().num_preemptions());
  // The workload must actually exercise what is being checked.
  EXPECT_GT(n.preemptions, 10);
  EXPECT_GT(n.finishes, 20);
  EXPECT_GT(n.cancels, 10);
  EXPECT_GT(n.decodes, 100);
  EXPECT_GT(n.chunked_prefills, 50);
  if (c.prefix_cache) {
    EXPECT_GT(n.cached_admissions, 10);
    EXPECT_GT(n.readmissions_with_cache, 0);
    EXPECT_GT(n.partial_admissions, 10);
  }
  std::printf(
      "[ %s ] steps %lld submits %lld finishes %lld cancels %lld preemptions %lld "
      "admissions %lld (cached %lld, partial block %lld, re-admitted from cache %lld)\n",
      c.name, (long long)n.steps, (long long)n.submits, (long long)n.finishes, (long long)n.cancels,
      (long long)n.preemptions, (long long)n.admissions, (long long)n.cached_admissions,
      (long long)n.partial_admissions, (long long)n.readmissions_with_cache);
}

TEST(SchedulerProperty, RandomWorkloadPrefixCache) {
  RunProperty({"prefix-cache",
               /*n_blocks=*/16,
               /*block_size=*/4,
               true,
               {/*max_num_seqs=*/6, /*max_num_batched_tokens=*/16, /*max_prefill_chunk=*/0},
               /*max_live=*/10,
               /*drain=*/false,
               /*seed=*/0x5eed0001});
}

TEST(SchedulerProperty, RandomWorkloadChunkedPrefillDrains) {
  RunProperty({"chunked-drain", 14, 4, true, {4, 12, 5}, 8, /*drain=*/true, 0x5eed0002});
}

TEST(SchedulerProperty, RandomWorkloadNoPrefixCache) {
  RunProperty({"no-cache", 24, 2, false, {8, 10, 3}, 12, false, 0x5eed0003});
}

TEST(SchedulerProperty, RandomWorkloadLargeBlocksDrains) {
  RunProperty({"large-blocks", 9, 8, true, {3, 64, 0}, 6, true, 0x5eed0004});
}

}  // namespace
}  // namespace brisk
