#include "engine/scheduler.h"

#include <algorithm>

#include "util/check.h"

namespace brisk {

Scheduler::Scheduler(const SchedulerConfig& config, BlockManager& blocks)
    : config_(config), blocks_(blocks) {}

bool Scheduler::Before(const SeqState* a, const SeqState* b) {
  if (a->priority != b->priority) return a->priority < b->priority;
  return a->arrival < b->arrival;
}

void Scheduler::InsertWaiting(SeqState* s) {
  s->running = false;
  waiting_.insert(std::upper_bound(waiting_.begin(), waiting_.end(), s, Before), s);
}

void Scheduler::Add(SeqState* seq) {
  BRISK_CHECK(!seq->tokens.empty() && seq->num_computed == 0);
  InsertWaiting(seq);
}

void Scheduler::Remove(SeqState* seq) {
  auto r = std::find(running_.begin(), running_.end(), seq);
  if (r != running_.end()) running_.erase(r);
  auto w = std::find(waiting_.begin(), waiting_.end(), seq);
  if (w != waiting_.end()) waiting_.erase(w);
  blocks_.Free(seq->id);
  seq->running = false;
}

void Scheduler::Preempt(SeqState* s) {
  blocks_.Free(s->id);
  s->num_computed = 0;
  s->num_cached = 0;
  ++s->num_preemptions;
  ++preemptions_;
  running_.erase(std::find(running_.begin(), running_.end(), s));
  InsertWaiting(s);
}

StepPlan Scheduler::Schedule() {
  StepPlan plan;
  int budget = config_.max_num_batched_tokens;
  const int chunk_cap = config_.max_prefill_chunk > 0 ? config_.max_prefill_chunk : budget;

  // 1. Running sequences: first every decode (one token each), then the rest of partially
  // prefilled prompts in chunks, each pass in scheduling order, so a long prompt never takes
  // the budget a decoding sequence needs for its next token.
  for (int pass = 0; pass < 2; ++pass) {
    for (size_t i = 0; i < running_.size() && budget > 0;) {
      SeqState* s = running_[i];
      const int remaining = int(s->tokens.size()) - s->num_computed;
      const bool decode = remaining == 1;
      const int n = std::min({remaining, budget, decode ? 1 : chunk_cap});
      if (n <= 0 || decode != (pass == 0)) {
        ++i;
        continue;
      }
      bool scheduled = true;
      while (!blocks_.Allocate(s->id, s->num_computed + n)) {
        // Out of blocks: preempt the last sequence in scheduling order (maybe this one). If it
        // was given a chunk in the decode pass, that chunk goes with it.
        SeqState* victim = running_.back();
        for (auto c = plan.chunks.begin(); c != plan.chunks.end(); ++c)
          if (c->seq == victim) {
            budget += c->n;
            plan.chunks.erase(c);
            break;
          }
        Preempt(victim);
        plan.preempted.push_back(victim);
        if (victim == s) {
          scheduled = false;
          break;
        }
      }
      if (!scheduled) continue;  // running_[i] is now the next sequence
      plan.chunks.push_back({s, s->num_computed, n, s->num_computed + n == int(s->tokens.size())});
      budget -= n;
      ++i;
    }
  }

  // 2. Admissions, unless this step had to preempt (memory is short: let running ones finish).
  while (plan.preempted.empty() && !waiting_.empty() && budget > 0 &&
         int(running_.size()) < config_.max_num_seqs) {
    SeqState* s = waiting_.front();
    const uint64_t salt = CacheSalt(s->prompt_class);
    PrefixMatch match =
        s->skip_prefix_cache ? PrefixMatch{} : blocks_.FindCachedPrefix(s->tokens, salt);
    const int computed = match.total_tokens();
    const int remaining = int(s->tokens.size()) - computed;
    const int n = std::min({remaining, budget, remaining > 1 ? chunk_cap : 1});
    if (!blocks_.Allocate(s->id, computed + n, &match, salt)) break;
    waiting_.pop_front();
    s->num_computed = computed;
    s->num_cached = computed;
    s->running = true;
    running_.insert(std::upper_bound(running_.begin(), running_.end(), s, Before), s);
    plan.admitted.push_back(s);
    if (match.tail_block >= 0) {
      plan.copies.push_back({s->id, match.tail_block,
                             blocks_.BlockTable(s->id)[match.blocks.size()], match.tail_tokens});
    }
    plan.chunks.push_back({s, computed, n, computed + n == int(s->tokens.size())});
    budget -= n;
  }
  plan.num_tokens = config_.max_num_batched_tokens - budget;
  return plan;
}

void Scheduler::Commit(const StepPlan& plan) {
  for (const KvBlockCopy& c : plan.copies) blocks_.ReleaseCopySource(c.seq);
  for (const ScheduledChunk& c : plan.chunks) {
    BRISK_CHECK(c.seq->num_computed == c.start);
    c.seq->num_computed += c.n;
    const bool prefill_class = c.seq->prompt_class == NumericsClass::kPrefill;
    const int cacheable =
        prefill_class ? std::min(c.seq->num_computed, c.seq->num_prompt) : c.seq->num_computed;
    blocks_.CommitFullBlocks(c.seq->id, c.seq->tokens, cacheable);
  }
}

}  // namespace brisk
