// The step scheduler (DESIGN §5, after vLLM v1): one token budget per step, spent on running
// sequences first (decode tokens, then the rest of partially prefilled prompts in chunks), then on
// admitting waiting sequences by priority and arrival, while num_seqs <= max_num_seqs,
// tokens <= max_num_batched_tokens and KV blocks last. When blocks run out, the lowest-priority,
// latest-arrived running sequence is preempted: its blocks are freed and it is recomputed later
// (through the prefix cache, usually most of it for free). No sequence is dropped for memory.
//
// Pure bookkeeping over a BlockManager: no threads, no model. The engine owns the SeqState
// objects and runs the plan; tests drive it with random workloads.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "engine/block_manager.h"
#include "model/numerics_class.h"

namespace brisk {

struct SchedulerConfig {
  int max_num_seqs = 16;             // sequences per step
  int max_num_batched_tokens = 512;  // tokens per step (all sequences)
  int max_prefill_chunk = 0;         // tokens of one prompt per step; 0 = the whole budget
};

struct SeqState {
  SeqId id = 0;
  int priority = 0;             // lower runs first (vLLM's convention)
  uint64_t arrival = 0;         // submission order
  std::vector<int32_t> tokens;  // prompt + generated so far
  int num_prompt = 0;
  int num_computed = 0;  // tokens whose K/V are in the cache
  // Of those, how many came from the prefix cache at the last admission (shared full blocks plus
  // the rows of a partial block copied in, see KvBlockCopy).
  int num_cached = 0;
  int num_preemptions = 0;
  bool running = false;
  // The class its prompt tokens are computed in (model/numerics_class.h); generated tokens are
  // always in the decode class. A prefill-class sequence's blocks live under that class's cache
  // salt and only its prompt blocks are registered: a later prompt covering its generated tokens
  // would compute them in the prefill class, so a hit would not reproduce a cold run bit for bit.
  NumericsClass prompt_class = NumericsClass::kDecode;
  // Admit without looking in the prefix cache (every prompt position is computed: a request for
  // prompt logprobs needs each position's logits).
  bool skip_prefix_cache = false;
};

struct ScheduledChunk {
  SeqState* seq;
  int start;    // first position
  int n;        // tokens [start, start + n)
  bool sample;  // the chunk reaches the last known token: sample the next one
};

// A partial prefix-cache hit (BlockManager, "Partial blocks"): before the step runs, the K/V of
// block `src` (its first `rows` positions are what the sequence needs; copying the whole block is
// fine, the rest is overwritten or never read) go into the sequence's own block `dst`. `src`
// stays pinned until Commit.
struct KvBlockCopy {
  SeqId seq;
  int32_t src, dst;
  int rows;
};

struct StepPlan {
  std::vector<ScheduledChunk> chunks;  // running sequences' chunks first, then new admissions
  std::vector<KvBlockCopy> copies;     // do these first
  int num_tokens = 0;
  std::vector<SeqState*> preempted;  // moved back to waiting this step
  std::vector<SeqState*> admitted;   // newly running this step
};

class Scheduler {
 public:
  Scheduler(const SchedulerConfig& config, BlockManager& blocks);

  // Queues a sequence (not yet running). The caller keeps it alive until Remove.
  void Add(SeqState* seq);
  // Drops a sequence wherever it is and frees its blocks.
  void Remove(SeqState* seq);

  StepPlan Schedule();
  // After the forward pass of `plan`: marks chunks computed, registers full blocks in the
  // prefix cache and unpins the plan's copy sources. Call before appending sampled tokens (or
  // after: only computed tokens count).
  void Commit(const StepPlan& plan);

  void set_config(const SchedulerConfig& c) { config_ = c; }
  const SchedulerConfig& config() const { return config_; }
  int num_running() const { return int(running_.size()); }
  int num_waiting() const { return int(waiting_.size()); }
  const std::vector<SeqState*>& running() const { return running_; }
  int64_t num_preemptions() const { return preemptions_; }

 private:
  static bool Before(const SeqState* a, const SeqState* b);  // scheduling order
  void InsertWaiting(SeqState* s);
  void Preempt(SeqState* s);

  SchedulerConfig config_;
  BlockManager& blocks_;
  std::vector<SeqState*> running_;  // kept in scheduling order
  std::deque<SeqState*> waiting_;   // kept in scheduling order
  int64_t preemptions_ = 0;
};

}  // namespace brisk
