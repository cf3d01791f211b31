#include "engine/block_manager.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <iterator>
#include <map>
#include <random>
#include <set>
#include <vector>

namespace brisk {
namespace {

using Tokens = std::vector<int32_t>;
using Ids = std::vector<int32_t>;

Ids Table(const BlockManager& bm, SeqId id) {
  auto t = bm.BlockTable(id);
  return Ids(t.begin(), t.end());
}

Tokens Range(int32_t first, int n) {
  Tokens t(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) t[size_t(i)] = first + i;
  return t;
}

Tokens Concat(Tokens a, const Tokens& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// Allocates `tokens` for a new sequence (with its cached prefix), marks everything computed,
// commits it and returns its table.
Ids RunSeq(BlockManager& bm, SeqId id, const Tokens& tokens) {
  PrefixMatch m = bm.FindCachedPrefix(tokens);
  EXPECT_TRUE(bm.Allocate(id, int(tokens.size()), &m));
  bm.ReleaseCopySource(id);  // a partial block's rows would be copied now
  bm.CommitFullBlocks(id, tokens, int(tokens.size()));
  return Table(bm, id);
}

TEST(BlockManager, AllocateAndFreeBasics) {
  BlockManager bm(8, 4, true);
  EXPECT_EQ(bm.num_blocks(), 8);
  EXPECT_EQ(bm.block_size(), 4);
  EXPECT_EQ(bm.num_free_blocks(), 8);
  EXPECT_DOUBLE_EQ(bm.usage(), 0.0);
  EXPECT_FALSE(bm.HasSeq(1));
  EXPECT_TRUE(bm.BlockTable(1).empty());

  EXPECT_EQ(bm.BlocksNeeded(1, 10), 3);
  ASSERT_TRUE(bm.Allocate(1, 10));
  EXPECT_TRUE(bm.HasSeq(1));
  EXPECT_EQ(Table(bm, 1), (Ids{0, 1, 2}));
  EXPECT_EQ(bm.num_free_blocks(), 5);
  EXPECT_DOUBLE_EQ(bm.usage(), 3.0 / 8.0);

  // Growing within the last block takes nothing; one past it takes one block.
  EXPECT_EQ(bm.BlocksNeeded(1, 12), 0);
  ASSERT_TRUE(bm.Allocate(1, 12));
  EXPECT_EQ(Table(bm, 1).size(), 3u);
  EXPECT_EQ(bm.BlocksNeeded(1, 13), 1);
  ASSERT_TRUE(bm.Allocate(1, 13));
  EXPECT_EQ(Table(bm, 1), (Ids{0, 1, 2, 3}));
  // A smaller request never shrinks the table.
  ASSERT_TRUE(bm.Allocate(1, 2));
  EXPECT_EQ(Table(bm, 1).size(), 4u);

  ASSERT_TRUE(bm.Allocate(2, 0));  // a sequence with no blocks yet
  EXPECT_TRUE(bm.HasSeq(2));
  EXPECT_TRUE(bm.BlockTable(2).empty());
  ASSERT_TRUE(bm.Allocate(2, 4));
  EXPECT_EQ(Table(bm, 2), (Ids{4}));
  for (int32_t b : {0, 1, 2, 3, 4}) EXPECT_EQ(bm.RefCount(b), 1);
  EXPECT_EQ(bm.RefCount(5), 0);
  EXPECT_EQ(bm.CheckInvariants(), "");

  bm.Free(1);
  EXPECT_FALSE(bm.HasSeq(1));
  EXPECT_TRUE(bm.BlockTable(1).empty());
  EXPECT_EQ(bm.num_free_blocks(), 7);
  bm.Free(1);  // unknown id: no-op
  bm.Free(2);
  EXPECT_EQ(bm.num_free_blocks(), 8);
  EXPECT_EQ(bm.num_seqs(), 0);
  EXPECT_EQ(bm.CheckInvariants(), "");
  // Uncached free blocks are reused LIFO; a table is freed tail first, so its head comes back
  // first.
  ASSERT_TRUE(bm.Allocate(3, 8));
  EXPECT_EQ(Table(bm, 3), (Ids{4, 0}));
}

TEST(BlockManager, AllocateFailureChangesNothing) {
  BlockManager bm(4, 4, true);
  ASSERT_TRUE(bm.Allocate(1, 12));
  EXPECT_EQ(bm.num_free_blocks(), 1);

  // A new sequence that does not fit is not created.
  EXPECT_EQ(bm.BlocksNeeded(2, 8), 2);
  EXPECT_FALSE(bm.Allocate(2, 8));
  EXPECT_FALSE(bm.HasSeq(2));
  EXPECT_EQ(bm.num_free_blocks(), 1);
  // An existing sequence that cannot grow keeps its table.
  EXPECT_FALSE(bm.Allocate(1, 20));
  EXPECT_EQ(Table(bm, 1), (Ids{0, 1, 2}));
  EXPECT_EQ(bm.num_free_blocks(), 1);
  EXPECT_EQ(bm.CheckInvariants(), "");
  ASSERT_TRUE(bm.Allocate(1, 16));  // exactly the last block fits
  EXPECT_EQ(bm.num_free_blocks(), 0);
  EXPECT_FALSE(bm.Allocate(1, 17));
  EXPECT_EQ(bm.CheckInvariants(), "");
  bm.Free(1);

  // With a match: matched free blocks count against the pool too, and a failure leaves them
  // cached and free.
  const Tokens a = Range(10, 9);  // two full blocks + one token
  RunSeq(bm, 1, a);
  bm.Free(1);
  const Tokens longer = Concat(a, Range(50, 11));  // 20 tokens = 5 blocks > 4
  PrefixMatch m = bm.FindCachedPrefix(longer);
  ASSERT_EQ(m.num_tokens, 8);
  EXPECT_EQ(bm.BlocksNeeded(2, 20, &m), 5);
  EXPECT_FALSE(bm.Allocate(2, 20, &m));
  EXPECT_FALSE(bm.HasSeq(2));
  EXPECT_EQ(bm.num_free_blocks(), 4);
  EXPECT_EQ(bm.stats().evictions, 0);
  EXPECT_EQ(bm.FindCachedPrefix(longer).blocks, m.blocks);
  EXPECT_EQ(bm.CheckInvariants(), "");
  EXPECT_EQ(bm.BlocksNeeded(2, 16, &m), 4);
  ASSERT_TRUE(bm.Allocate(2, 16, &m));
  const Ids t2 = Table(bm, 2);
  ASSERT_EQ(t2.size(), 4u);
  EXPECT_EQ(Ids(t2.begin(), t2.begin() + 2), m.blocks);
  EXPECT_EQ(bm.num_free_blocks(), 0);
  EXPECT_EQ(bm.CheckInvariants(), "");
}

TEST(BlockManager, PrefixHitAfterCommitAndFree) {
  BlockManager bm(16, 4, true);
  const Tokens t = Range(100, 14);  // 3 full blocks + 2 tokens
  const Ids table = RunSeq(bm, 1, t);
  ASSERT_EQ(table.size(), 4u);
  bm.Free(1);
  EXPECT_EQ(bm.num_free_blocks(), 16);

  PrefixMatch m = bm.FindCachedPrefix(t);
  EXPECT_EQ(m.blocks, (Ids{table[0], table[1], table[2]}));
  EXPECT_EQ(m.num_tokens, 12);

  // Never covering the last token: 12 tokens = 3 full blocks, but only 2 may be reused.
  EXPECT_EQ(bm.FindCachedPrefix(Range(100, 12)).num_tokens, 8);
  EXPECT_EQ(bm.FindCachedPrefix(Range(100, 13)).num_tokens, 12);
  EXPECT_EQ(bm.FindCachedPrefix(Range(100, 5)).num_tokens, 4);
  EXPECT_EQ(bm.FindCachedPrefix(Range(100, 4)).num_tokens, 0);
  EXPECT_EQ(bm.FindCachedPrefix(Tokens{}).num_tokens, 0);
  // The partial last block (tokens 12..13) was never registered, even with identical tokens.
  EXPECT_EQ(bm.FindCachedPrefix(Range(100, 30)).num_tokens, 12);
  // A differing token in block 1 stops the match after block 0; in block 0, nothing matches.
  Tokens d = t;
  d[5] = 7;
  EXPECT_EQ(bm.FindCachedPrefix(d).blocks, (Ids{table[0]}));
  d = t;
  d[0] = 7;
  EXPECT_EQ(bm.FindCachedPrefix(d).num_tokens, 0);

  // A new sequence takes exactly those blocks and computes the rest in fresh ones.
  const Tokens t2 = Concat(Range(100, 12), Range(500, 6));
  m = bm.FindCachedPrefix(t2);
  ASSERT_EQ(m.num_tokens, 12);
  ASSERT_TRUE(bm.Allocate(2, int(t2.size()), &m));
  const Ids table2 = Table(bm, 2);
  ASSERT_EQ(table2.size(), 5u);
  EXPECT_EQ(Ids(table2.begin(), table2.begin() + 3), m.blocks);
  EXPECT_EQ(std::set<int32_t>(table2.begin(), table2.end()).size(), 5u);
  for (int32_t b : table2) EXPECT_EQ(bm.RefCount(b), 1);
  EXPECT_EQ(bm.num_free_blocks(), 11);
  EXPECT_EQ(bm.stats().evictions, 0);
  // Its continuation chains off the matched blocks.
  bm.CommitFullBlocks(2, t2, int(t2.size()));
  EXPECT_EQ(bm.FindCachedPrefix(Concat(t2, {1})).blocks,
            (Ids{table2[0], table2[1], table2[2], table2[3]}));
  EXPECT_EQ(bm.CheckInvariants(), "");
}

TEST(BlockManager, CommitOnlyComputedFullBlocksAndIsIdempotent) {
  BlockManager bm(8, 4, true);
  const Tokens t = Range(1, 16);
  ASSERT_TRUE(bm.Allocate(1, 16));
  bm.CommitFullBlocks(1, t, 7);  // block 1 is only partly computed
  EXPECT_EQ(bm.FindCachedPrefix(t).num_tokens, 4);
  bm.CommitFullBlocks(1, t, 7);
  bm.CommitFullBlocks(1, t, 3);  // an older count neither un-registers nor breaks anything
  EXPECT_EQ(bm.CheckInvariants(), "");
  bm.CommitFullBlocks(1, t, 16);
  bm.CommitFullBlocks(1, t, 16);
  EXPECT_EQ(bm.FindCachedPrefix(t).num_tokens, 12);  // last token never covered
  EXPECT_EQ(bm.FindCachedPrefix(Concat(t, {0})).num_tokens, 16);
  EXPECT_EQ(bm.CheckInvariants(), "");
}

TEST(BlockManager, TwoLiveSequencesShareAPrefix) {
  BlockManager bm(16, 4, true);
  const Tokens sys = Range(1, 8);
  const Tokens a = Concat(sys, Range(200, 5));
  const Ids ta = RunSeq(bm, 1, a);  // still live

  const Tokens b = Concat(sys, Range(300, 7));
  PrefixMatch m = bm.FindCachedPrefix(b);
  ASSERT_EQ(m.blocks, (Ids{ta[0], ta[1]}));
  EXPECT_EQ(bm.BlocksNeeded(2, int(b.size()), &m), 2);  // matched blocks are in use: not free
  ASSERT_TRUE(bm.Allocate(2, int(b.size()), &m));
  const Ids tb = Table(bm, 2);
  EXPECT_EQ(tb[0], ta[0]);
  EXPECT_EQ(tb[1], ta[1]);
  EXPECT_NE(tb[2], ta[2]);
  EXPECT_EQ(bm.RefCount(ta[0]), 2);
  EXPECT_EQ(bm.RefCount(ta[1]), 2);
  EXPECT_EQ(bm.RefCount(ta[2]), 1);
  EXPECT_EQ(bm.num_free_blocks(), 16 - 6);
  EXPECT_EQ(bm.CheckInvariants(), "");

  bm.Free(1);
  EXPECT_EQ(bm.RefCount(ta[0]), 1);
  EXPECT_EQ(bm.RefCount(ta[1]), 1);
  EXPECT_EQ(bm.num_free_blocks(), 16 - 4);
  EXPECT_EQ(Table(bm, 2), tb);
  // Still findable while the other sequence holds them, and not evictable: filling the pool
  // evicts a's free cached third block but not the shared ones.
  ASSERT_EQ(bm.FindCachedPrefix(a).num_tokens, 12);
  ASSERT_TRUE(bm.Allocate(3, 12 * 4));
  EXPECT_EQ(bm.num_free_blocks(), 0);
  EXPECT_EQ(bm.stats().evictions, 1);
  EXPECT_EQ(bm.FindCachedPrefix(a).blocks, (Ids{ta[0], ta[1]}));
  EXPECT_EQ(bm.CheckInvariants(), "");
  bm.Free(3);
  bm.Free(2);
  EXPECT_EQ(bm.num_free_blocks(), 16);
  EXPECT_EQ(bm.CheckInvariants(), "");
}

TEST(BlockManager, LruEvictsLeastRecentlyFreedAfterUncachedBlocks) {
  BlockManager bm(6, 4, true);
  const Tokens a = Range(0, 9), b = Range(100, 9);  // each: 2 cached blocks + 1 partial
  const Ids ta = RunSeq(bm, 1, a);
  const Ids tb = RunSeq(bm, 2, b);
  ASSERT_EQ(ta, (Ids{0, 1, 2}));
  ASSERT_EQ(tb, (Ids{3, 4, 5}));
  bm.Free(1);  // A first: A is older
  bm.Free(2);
  ASSERT_EQ(bm.num_free_blocks(), 6);

  // Uncached free blocks (the partial ones) go first; nothing is evicted.
  ASSERT_TRUE(bm.Allocate(3, 8));
  const Ids t3 = Table(bm, 3);
  EXPECT_EQ(std::set<int32_t>(t3.begin(), t3.end()), (std::set<int32_t>{2, 5}));
  EXPECT_EQ(bm.stats().evictions, 0);
  EXPECT_EQ(bm.FindCachedPrefix(a).num_tokens, 8);
  EXPECT_EQ(bm.FindCachedPrefix(b).num_tokens, 8);

  // Then A's tail, A's head, B's tail, B's head.
  const int32_t expect_order[] = {1, 0, 4, 3};
  const int expect_a[] = {4, 0, 0, 0}, expect_b[] = {8, 8, 4, 0};
  for (int step = 0; step < 4; ++step) {
    ASSERT_TRUE(bm.Allocate(3, 8 + 4 * (step + 1)));
    EXPECT_EQ(Table(bm, 3).back(), expect_order[step]) << "step " << step;
    EXPECT_EQ(bm.stats().evictions, step + 1);
    EXPECT_EQ(bm.FindCachedPrefix(a).num_tokens, expect_a[step]) << "step " << step;
    EXPECT_EQ(bm.FindCachedPrefix(b).num_tokens, expect_b[step]) << "step " << step;
    EXPECT_EQ(bm.CheckInvariants(), "");
  }
  EXPECT_EQ(bm.num_free_blocks(), 0);
}

TEST(BlockManager, LruOrderFollowsFreeTimeNotAllocationTime) {
  BlockManager bm(4, 4, true);
  const Tokens a = Range(0, 5), b = Range(100, 5);
  const Ids ta = RunSeq(bm, 1, a);
  const Ids tb = RunSeq(bm, 2, b);
  bm.Free(2);  // B allocated later but freed first: evicted first
  bm.Free(1);
  ASSERT_TRUE(bm.Allocate(3, 12));  // two uncached blocks, then one eviction
  EXPECT_EQ(bm.stats().evictions, 1);
  EXPECT_EQ(bm.FindCachedPrefix(b).num_tokens, 0);
  EXPECT_EQ(bm.FindCachedPrefix(a).blocks, (Ids{ta[0]}));
  // Taking a cached block back (a hit) removes it from the LRU; freeing it again makes it newest.
  bm.Free(3);
  PrefixMatch m = bm.FindCachedPrefix(a);
  ASSERT_TRUE(bm.Allocate(4, 5, &m));
  bm.Free(4);
  EXPECT_EQ(bm.CheckInvariants(), "");
}

// Cache salts are separate namespaces: the same tokens registered under salt 1 are found under
// salt 1 only, also when every hash collides, and a sequence allocated under a salt chains there.
TEST(BlockManager, CacheSaltsAreSeparateNamespaces) {
  for (uint64_t mask : {~uint64_t(0), uint64_t(0)}) {
    SCOPED_TRACE(mask ? "normal hashes" : "every key collides");
    BlockManager bm(16, 4, true);
    if (!mask) bm.SetHashMaskForTesting(mask);
    const Tokens t = Range(100, 9);  // 2 full blocks + 1
    ASSERT_TRUE(bm.Allocate(1, int(t.size()), nullptr, /*cache_salt=*/1));
    bm.CommitFullBlocks(1, t, int(t.size()));
    EXPECT_EQ(bm.FindCachedPrefix(t, 1).num_tokens, 8);
    EXPECT_EQ(bm.FindCachedPrefix(t, 0).num_tokens, 0);
    EXPECT_EQ(bm.FindCachedPrefix(t, 2).num_tokens, 0);
    // The same tokens under salt 0 get their own blocks; both stay findable under their salts.
    ASSERT_TRUE(bm.Allocate(2, int(t.size())));
    bm.CommitFullBlocks(2, t, int(t.size()));
    const PrefixMatch m0 = bm.FindCachedPrefix(t, 0), m1 = bm.FindCachedPrefix(t, 1);
    EXPECT_EQ(m0.blocks, (Ids{Table(bm, 2)[0], Table(bm, 2)[1]}));
    EXPECT_EQ(m1.blocks, (Ids{Table(bm, 1)[0], Table(bm, 1)[1]}));
    EXPECT_EQ(bm.CheckInvariants(), "");
  }
}

TEST(BlockManager, HashCollisionsNeverReturnOtherTokens) {
  BlockManager bm(16, 4, true);
  bm.SetHashMaskForTesting(0);  // every key collides
  const Tokens a = Concat(Range(10, 4), {7, 7, 7, 7, 1});
  const Tokens b = Concat(Range(20, 4), {7, 7, 7, 7, 1});  // same second block, other parent
  const Tokens c = Concat(Range(30, 4), {8, 8, 8, 8, 1});
  const Ids ta = RunSeq(bm, 1, a);
  const Ids tb = RunSeq(bm, 2, b);
  const Ids tc = RunSeq(bm, 3, c);
  bm.Free(1);
  bm.Free(2);
  bm.Free(3);
  EXPECT_EQ(bm.CheckInvariants(), "");

  EXPECT_EQ(bm.FindCachedPrefix(a).blocks, (Ids{ta[0], ta[1]}));
  // Block 1 of b has the same tokens as block 1 of a but must chain off b's own block 0.
  EXPECT_EQ(bm.FindCachedPrefix(b).blocks, (Ids{tb[0], tb[1]}));
  EXPECT_EQ(bm.FindCachedPrefix(c).blocks, (Ids{tc[0], tc[1]}));
  // Mixed prefixes: the first block matches, the second exists only after another parent.
  EXPECT_EQ(bm.FindCachedPrefix(Concat(Range(30, 4), {7, 7, 7, 7, 1})).blocks, (Ids{tc[0]}));
  EXPECT_EQ(bm.FindCachedPrefix(Concat(Range(40, 4), {7, 7, 7, 7, 1})).num_tokens, 0);
  EXPECT_EQ(bm.FindCachedPrefix(Concat(Range(10, 3), {99, 7, 7, 7, 7, 1})).num_tokens, 0);

  // Evicting a parent and re-caching its id with other tokens must not revive its children.
  ASSERT_TRUE(bm.Allocate(4, 4 * 10));  // takes every uncached block
  ASSERT_EQ(bm.stats().evictions, 0);
  ASSERT_TRUE(bm.Allocate(4, 4 * 11));  // evicts a's tail first (a was freed first)
  ASSERT_TRUE(bm.Allocate(4, 4 * 12));  // then a's head
  ASSERT_EQ(bm.stats().evictions, 2);
  EXPECT_EQ(bm.FindCachedPrefix(a).num_tokens, 0);
  bm.Free(4);
  EXPECT_EQ(bm.CheckInvariants(), "");
}

TEST(BlockManager, EvictedParentIdReusedDoesNotReviveChild) {
  // A cached block D outlives the block C it chains off; C's id is then re-cached holding the
  // same tokens after a different first block. With every key colliding, only the parent's
  // identity (not its block id) tells that D's KV was computed after other tokens.
  BlockManager bm(6, 4, true);
  bm.SetHashMaskForTesting(0);
  const Tokens p = Concat(Range(10, 4), {5, 5, 5, 5});  // P C
  const Tokens pd = Concat(p, {6, 6, 6, 6});            // P C D
  const Tokens q = Concat(Range(60, 4), {5, 5, 5, 5});  // Q C'
  // Two sequences compute p concurrently; the second one goes on to register D after seq 1's C.
  ASSERT_TRUE(bm.Allocate(1, 8));
  ASSERT_TRUE(bm.Allocate(2, 12));
  ASSERT_EQ(Table(bm, 1), (Ids{0, 1}));
  ASSERT_EQ(Table(bm, 2), (Ids{2, 3, 4}));
  bm.CommitFullBlocks(1, p, 8);
  bm.CommitFullBlocks(2, pd, 12);
  bm.Free(1);  // LRU: 1 (C), 0 (P)
  bm.Free(2);  // LRU: 1, 0, 4 (D); uncached: 2, 3, 5
  ASSERT_EQ(bm.FindCachedPrefix(Concat(pd, {1})).blocks, (Ids{0, 1, 4}));

  ASSERT_TRUE(bm.Allocate(7, 12));  // filler: takes the uncached blocks
  ASSERT_TRUE(bm.Allocate(8, 4));   // evicts C (id 1)
  ASSERT_TRUE(bm.Allocate(3, 4));   // evicts P (id 0): Q goes there
  bm.Free(8);                       // id 1 back, uncached
  ASSERT_TRUE(bm.Allocate(3, 8));   // C' goes to id 1
  ASSERT_EQ(Table(bm, 3), (Ids{0, 1}));
  bm.CommitFullBlocks(3, q, 8);
  EXPECT_EQ(bm.stats().evictions, 2);

  // Q C' D would be wrong: D's KV follows P C.
  EXPECT_EQ(bm.FindCachedPrefix(Concat(q, {6, 6, 6, 6, 1})).blocks, (Ids{0, 1}));
  EXPECT_EQ(bm.FindCachedPrefix(Concat(pd, {1})).num_tokens, 0);
  EXPECT_EQ(bm.CheckInvariants(), "");
}

TEST(BlockManager, IdenticalBlocksComputedTwiceKeepTheFirstEntry) {
  // Two sequences compute the same prompt concurrently (neither could reuse the other's).
  BlockManager bm(16, 4, true);
  const Tokens p = Range(1, 9);
  ASSERT_TRUE(bm.Allocate(1, 9));
  ASSERT_TRUE(bm.Allocate(2, 9));
  const Ids t1 = Table(bm, 1), t2 = Table(bm, 2);
  bm.CommitFullBlocks(1, p, 9);
  bm.CommitFullBlocks(2, p, 9);  // identical: sequence 1's entries stay
  EXPECT_EQ(bm.FindCachedPrefix(p).blocks, (Ids{t1[0], t1[1]}));
  // Sequence 2 generates on; its new full block chains off sequence 1's cached blocks.
  const Tokens p2 = Concat(p, {50, 51, 52, 53});
  ASSERT_TRUE(bm.Allocate(2, 13));
  bm.CommitFullBlocks(2, p2, 13);
  EXPECT_EQ(bm.FindCachedPrefix(Concat(p2, {0})).blocks, (Ids{t1[0], t1[1], t2[2]}));
  bm.Free(1);
  bm.Free(2);
  EXPECT_EQ(bm.FindCachedPrefix(Concat(p2, {0})).blocks, (Ids{t1[0], t1[1], t2[2]}));
  EXPECT_EQ(bm.CheckInvariants(), "");
}

TEST(BlockManager, StatsCountQueriedAndHitTokens) {
  BlockManager bm(8, 4, true);
  const Tokens t = Range(0, 10);
  EXPECT_EQ(bm.FindCachedPrefix(t).num_tokens, 0);
  EXPECT_EQ(bm.stats().prefix_queries, 10);
  EXPECT_EQ(bm.stats().prefix_hits, 0);
  RunSeq(bm, 1, t);  // its own lookup counts too
  EXPECT_EQ(bm.stats().prefix_queries, 20);
  EXPECT_EQ(bm.stats().prefix_hits, 0);
  bm.Free(1);
  EXPECT_EQ(bm.FindCachedPrefix(t).num_tokens, 8);
  EXPECT_EQ(bm.stats().prefix_queries, 30);
  EXPECT_EQ(bm.stats().prefix_hits, 8);
  // One full block plus the first row of the next (the last token is never covered).
  const PrefixMatch m = bm.FindCachedPrefix(Range(0, 6));
  EXPECT_EQ(m.num_tokens, 4);
  EXPECT_EQ(m.tail_tokens, 1);
  EXPECT_EQ(bm.stats().prefix_queries, 36);
  EXPECT_EQ(bm.stats().prefix_hits, 8 + 5);
  EXPECT_EQ(bm.stats().evictions, 0);
  ASSERT_TRUE(bm.Allocate(2, 4 * 8));  // 6 uncached + 2 evicted
  EXPECT_EQ(bm.stats().evictions, 2);
}

TEST(BlockManager, PartialBlockMatchFindsTheLongestContinuation) {
  BlockManager bm(8, 4, true);
  const Ids ta = RunSeq(bm, 1, Range(0, 9));  // caches [0..3], [4..7]
  bm.Free(1);
  const Ids tb = RunSeq(bm, 2, Concat(Range(0, 6), {50, 51, 52}));  // caches [4, 5, 50, 51]
  bm.Free(2);
  ASSERT_EQ(tb[0], ta[0]);
  // After block [0..3], {4, 5, 6, 9} continues [4..7] for 3 tokens and the newer [4, 5, 50, 51]
  // for 2: the longer continuation wins; {4, 5, 50, 9} takes the newer one.
  PrefixMatch m = bm.FindCachedPrefix(Concat(Range(0, 7), {9, 9}));
  EXPECT_EQ(m.blocks, (Ids{ta[0]}));
  EXPECT_EQ(m.tail_block, ta[1]);
  EXPECT_EQ(m.tail_tokens, 3);
  EXPECT_EQ(m.total_tokens(), 7);
  m = bm.FindCachedPrefix(Concat(Range(0, 6), {50, 9}));
  EXPECT_EQ(m.tail_block, tb[1]);
  EXPECT_EQ(m.tail_tokens, 3);
  // The last token is never covered, by a partial block either.
  m = bm.FindCachedPrefix(Range(0, 7));
  EXPECT_EQ(m.num_tokens, 4);
  EXPECT_EQ(m.tail_tokens, 2);
  m = bm.FindCachedPrefix(Range(0, 8));  // the full block [4..7] would hold the last token
  EXPECT_EQ(m.num_tokens, 4);
  EXPECT_EQ(m.tail_block, ta[1]);
  EXPECT_EQ(m.tail_tokens, 3);
  // No full block, a partial first one: the root's children are candidates too.
  m = bm.FindCachedPrefix(Concat(Range(0, 2), {77, 78}));
  EXPECT_TRUE(m.blocks.empty());
  EXPECT_EQ(m.tail_block, ta[0]);
  EXPECT_EQ(m.tail_tokens, 2);
  // The first token differs: nothing. Another root: nothing.
  EXPECT_EQ(bm.FindCachedPrefix(Concat({99}, Range(1, 8))).total_tokens(), 0);
  EXPECT_EQ(bm.FindCachedPrefix(Range(0, 7), 1).total_tokens(), 0);
  // A continuation of another parent does not count: [4..7] follows [0..3], not [10..13].
  EXPECT_EQ(bm.FindCachedPrefix(Concat(Range(10, 4), {4, 5, 6, 9})).total_tokens(), 0);
  EXPECT_EQ(bm.CheckInvariants(), "");
}

TEST(BlockManager, PartialBlockSourceIsPinnedUntilReleased) {
  BlockManager bm(5, 4, true);
  const Ids ta = RunSeq(bm, 1, Range(0, 9));  // caches [0..3], [4..7]
  bm.Free(1);
  const Tokens q = Concat(Range(0, 6), {60, 61});
  PrefixMatch m = bm.FindCachedPrefix(q);
  ASSERT_EQ(m.num_tokens, 4);
  ASSERT_EQ(m.tail_block, ta[1]);
  ASSERT_EQ(m.tail_tokens, 2);
  // The free source counts as a block taken: matched [0..3] + the source + one new block.
  EXPECT_EQ(bm.BlocksNeeded(2, 8, &m), 3);
  ASSERT_TRUE(bm.Allocate(2, 8, &m));
  EXPECT_EQ(bm.CopySource(2), ta[1]);
  EXPECT_EQ(bm.RefCount(ta[1]), 1);
  const Ids t2 = Table(bm, 2);
  ASSERT_EQ(t2.size(), 2u);
  EXPECT_EQ(t2[0], ta[0]);
  EXPECT_NE(t2[1], ta[1]);
  EXPECT_EQ(bm.num_free_blocks(), 2);
  EXPECT_EQ(bm.CheckInvariants(), "");
  // Nothing can take the pinned source, not even an allocation that needs every free block.
  ASSERT_TRUE(bm.Allocate(3, 8));
  EXPECT_EQ(bm.num_free_blocks(), 0);
  EXPECT_FALSE(bm.Allocate(4, 1));
  for (int32_t b : Table(bm, 3)) EXPECT_NE(b, ta[1]);
  // Released, it is a free cached block again, still findable.
  bm.ReleaseCopySource(2);
  EXPECT_EQ(bm.CopySource(2), -1);
  EXPECT_EQ(bm.RefCount(ta[1]), 0);
  EXPECT_EQ(bm.num_free_blocks(), 1);
  EXPECT_EQ(bm.FindCachedPrefix(Range(0, 9)).blocks, (Ids{ta[0], ta[1]}));
  bm.ReleaseCopySource(2);  // twice: no-op
  EXPECT_EQ(bm.CheckInvariants(), "");
  // Free drops a pin that was never released.
  bm.Free(3);
  m = bm.FindCachedPrefix(Concat(Range(0, 5), {70}));
  ASSERT_EQ(m.tail_block, ta[1]);
  ASSERT_TRUE(bm.Allocate(5, 6, &m));
  EXPECT_EQ(bm.RefCount(ta[1]), 1);
  bm.Free(5);
  EXPECT_EQ(bm.RefCount(ta[1]), 0);
  bm.Free(2);
  EXPECT_EQ(bm.num_free_blocks(), 5);
  EXPECT_EQ(bm.CheckInvariants(), "");
}

TEST(BlockManager, DisabledCacheNeverMatches) {
  BlockManager bm(8, 4, false);
  EXPECT_FALSE(bm.prefix_cache_enabled());
  const Tokens t = Range(0, 10);
  const Ids t1 = RunSeq(bm, 1, t);
  bm.Free(1);
  PrefixMatch m = bm.FindCachedPrefix(t);
  EXPECT_TRUE(m.blocks.empty());
  EXPECT_EQ(m.num_tokens, 0);
  EXPECT_EQ(bm.stats().prefix_queries, 20);
  EXPECT_EQ(bm.stats().prefix_hits, 0);
  ASSERT_TRUE(bm.Allocate(2, 32, &m));
  EXPECT_EQ(bm.stats().evictions, 0);
  EXPECT_EQ(bm.CheckInvariants(), "");
}

TEST(BlockManager, ResetPrefixCacheDropsEveryHash) {
  BlockManager bm(8, 4, true);
  const Tokens a = Range(0, 9), b = Range(100, 9);
  RunSeq(bm, 1, a);
  bm.Free(1);
  const Ids tb = RunSeq(bm, 2, b);  // live
  ASSERT_EQ(bm.FindCachedPrefix(a).num_tokens, 8);
  ASSERT_EQ(bm.FindCachedPrefix(b).num_tokens, 8);
  bm.ResetPrefixCache();
  EXPECT_EQ(bm.CheckInvariants(), "");
  EXPECT_EQ(bm.FindCachedPrefix(a).num_tokens, 0);
  EXPECT_EQ(bm.FindCachedPrefix(b).num_tokens, 0);
  EXPECT_EQ(bm.num_free_blocks(), 5);
  EXPECT_EQ(Table(bm, 2), tb);
  // Reusing the formerly cached free blocks is not an eviction.
  ASSERT_TRUE(bm.Allocate(3, 20));
  EXPECT_EQ(bm.stats().evictions, 0);
  // The live sequence re-registers its own blocks on its next commit.
  bm.CommitFullBlocks(2, b, 9);
  EXPECT_EQ(bm.FindCachedPrefix(b).blocks, (Ids{tb[0], tb[1]}));
  EXPECT_EQ(bm.CheckInvariants(), "");
}

TEST(BlockManagerDeathTest, MatchEvictedBeforeAllocateIsABug) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        BlockManager bm(2, 4, true);
        const Tokens a = Range(0, 5);
        RunSeq(bm, 1, a);
        bm.Free(1);
        PrefixMatch m = bm.FindCachedPrefix(a);
        if (m.num_tokens != 4) std::abort();
        if (!bm.Allocate(2, 8)) std::abort();  // evicts the matched block
        bm.Free(2);
        bm.Allocate(3, 5, &m);
      },
      "evicted");
  EXPECT_DEATH(
      {
        BlockManager bm(4, 4, true);
        const Tokens a = Range(0, 5);
        RunSeq(bm, 1, a);
        PrefixMatch m = bm.FindCachedPrefix(a);
        bm.Allocate(1, 5, &m);  // a match for a sequence that already exists
      },
      "first Allocate");
}

// ---- property test ----------------------------------------------------------------------------

bool SmallTests() {
  const char* e = std::getenv("BRISK_TEST_SMALL");
  return e && *e && *e != '0';
}

struct SimSeq {
  Tokens tokens;
  int computed = 0;
};

struct PropertyCounters {
  int admitted = 0, rejected = 0, grow_failed = 0, preempted = 0, partial = 0;
};

// Random scheduler-like traffic. Besides CheckInvariants after every event, a shadow of the KV
// contents (which token prefix each block's positions were computed after) checks the property
// that matters: every block a lookup returns holds KV for exactly the queried prefix, and no
// sequence ever writes into a block another sequence holds.
void RunPropertyTest(uint64_t hash_mask, uint64_t seed, PropertyCounters* counters,
                     BlockManagerStats* final_stats) {
  constexpr int kBlocks = 48, kBs = 4, kMaxSeqs = 10, kMaxLen = 64;
  const int n_events = SmallTests() ? 2000 : 10000;
  BlockManager bm(kBlocks, kBs, true);
  if (hash_mask != ~uint64_t(0)) bm.SetHashMaskForTesting(hash_mask);
  std::mt19937_64 rng(seed);
  auto rnd = [&](int lo, int hi) { return int(lo + int64_t(rng() % uint64_t(hi - lo + 1))); };

  // Shared "system prompts" plus a 3-token alphabet: hits, near-misses and coincidences.
  std::vector<Tokens> bases = {{}, {}, {}, {}};
  for (size_t i = 1; i < bases.size(); ++i) {
    const int len = rnd(3, 14);
    for (int j = 0; j < len; ++j) bases[i].push_back(rnd(0, 2));
  }
  std::vector<Tokens> content(kBlocks);  // empty: garbage (freshly allocated)
  std::map<SeqId, SimSeq> live;
  SeqId next_id = 1;

  auto check_match = [&](const PrefixMatch& m, const Tokens& tokens) {
    ASSERT_EQ(m.num_tokens, int(m.blocks.size()) * kBs);
    ASSERT_LT(size_t(m.num_tokens), std::max<size_t>(tokens.size(), 1));
    for (size_t i = 0; i < m.blocks.size(); ++i) {
      const Tokens want(tokens.begin(), tokens.begin() + ptrdiff_t((i + 1) * kBs));
      ASSERT_EQ(content[size_t(m.blocks[i])], want) << "block " << m.blocks[i] << " at " << i;
    }
    if (m.tail_block < 0) {
      ASSERT_EQ(m.tail_tokens, 0);
      return;
    }
    // A partial block continues the matched chain: its first rows were computed after exactly
    // the queried tokens.
    ASSERT_GE(m.tail_tokens, 1);
    ASSERT_LT(m.tail_tokens, kBs);
    ASSERT_LT(size_t(m.total_tokens()), tokens.size());
    const Tokens& c = content[size_t(m.tail_block)];
    ASSERT_GE(c.size(), size_t(m.total_tokens()));
    ASSERT_TRUE(std::equal(tokens.begin(), tokens.begin() + m.total_tokens(), c.begin()))
        << "partial block " << m.tail_block << " holds another prefix";
  };
  // Admits `id` with `tokens` (its cached prefix first), prefilling part of the prompt.
  auto admit = [&](SeqId id, const Tokens& tokens) {
    const int free_before = bm.num_free_blocks();
    const PrefixMatch m = bm.FindCachedPrefix(tokens);
    check_match(m, tokens);
    const int want = rng() % 2 ? int(tokens.size()) : rnd(m.total_tokens() + 1, int(tokens.size()));
    const int needed = bm.BlocksNeeded(id, want, &m);
    const bool ok = bm.Allocate(id, want, &m);
    ASSERT_EQ(ok, needed <= free_before);
    if (!ok) {
      ASSERT_FALSE(bm.HasSeq(id));
      ASSERT_EQ(bm.num_free_blocks(), free_before);
      ++counters->rejected;
      return;
    }
    ASSERT_EQ(bm.num_free_blocks(), free_before - needed);
    const Ids table = Table(bm, id);
    ASSERT_GE(table.size(), m.blocks.size());
    ASSERT_TRUE(std::equal(m.blocks.begin(), m.blocks.end(), table.begin()));
    for (size_t i = m.blocks.size(); i < table.size(); ++i) content[size_t(table[i])].clear();
    if (m.tail_block >= 0) {
      // The engine's copy: the pinned source still holds what the lookup saw.
      ASSERT_EQ(bm.CopySource(id), m.tail_block);
      ASSERT_GE(bm.RefCount(m.tail_block), 1);
      check_match(m, tokens);
      const int32_t dst = table[m.blocks.size()];
      ASSERT_EQ(bm.RefCount(dst), 1);
      content[size_t(dst)].assign(tokens.begin(), tokens.begin() + m.total_tokens());
      ++counters->partial;
      if (rng() % 2) bm.ReleaseCopySource(id);  // else it stays pinned until the next events
    } else {
      ASSERT_EQ(bm.CopySource(id), -1);
    }
    live[id] = SimSeq{tokens, m.total_tokens()};
    ++counters->admitted;
  };
  auto random_live = [&]() {
    auto it = live.begin();
    std::advance(it, rnd(0, int(live.size()) - 1));
    return it;
  };
  auto new_prompt = [&]() {
    Tokens t = bases[size_t(rnd(0, int(bases.size()) - 1))];
    const int len = rnd(1, 16);
    for (int j = 0; j < len; ++j) t.push_back(rnd(0, 2));
    return t;
  };

  for (int e = 0; e < n_events; ++e) {
    const int kind = rnd(0, 99);
    if (live.empty() || (kind < 25 && int(live.size()) < kMaxSeqs)) {
      admit(next_id++, new_prompt());
    } else if (kind < 60) {  // grow: prefill a chunk, or decode a few tokens
      auto it = random_live();
      SimSeq& s = it->second;
      if (s.computed == int(s.tokens.size())) {
        if (int(s.tokens.size()) >= kMaxLen) continue;
        const int n = rnd(1, 6);
        for (int j = 0; j < n; ++j) s.tokens.push_back(rnd(0, 2));
      }
      const int target = rnd(s.computed + 1, int(s.tokens.size()));
      const Ids before = Table(bm, it->first);
      bm.ReleaseCopySource(it->first);  // copied at admission: the pin may go any time after
      if (!bm.Allocate(it->first, target)) {
        ASSERT_EQ(Table(bm, it->first), before);
        ++counters->grow_failed;
        continue;
      }
      const Ids table = Table(bm, it->first);
      for (size_t i = before.size(); i < table.size(); ++i) content[size_t(table[i])].clear();
      for (int pos = s.computed; pos < target; ++pos) {
        const int32_t b = table[size_t(pos / kBs)];
        ASSERT_EQ(bm.RefCount(b), 1) << "writing into a shared block " << b;
        const int end = std::min((pos / kBs + 1) * kBs, target);
        content[size_t(b)].assign(s.tokens.begin(), s.tokens.begin() + end);
      }
      s.computed = target;
    } else if (kind < 75) {  // commit (sometimes twice, or with an older count)
      auto it = random_live();
      bm.CommitFullBlocks(it->first, it->second.tokens, it->second.computed);
      if (rng() % 4 == 0) {
        bm.CommitFullBlocks(it->first, it->second.tokens, rnd(0, it->second.computed));
      }
    } else if (kind < 87) {  // finish
      auto it = random_live();
      bm.Free(it->first);
      live.erase(it);
    } else if (kind < 95) {  // preempt: free, then re-add with the same tokens
      auto it = random_live();
      const SeqId id = it->first;
      const Tokens tokens = it->second.tokens;
      bm.Free(id);
      live.erase(it);
      ++counters->preempted;
      admit(rng() % 2 ? id : next_id++, tokens);
    } else {  // a lookup only (a request waiting in the queue)
      const Tokens t = new_prompt();
      check_match(bm.FindCachedPrefix(t), t);
    }
    if (::testing::Test::HasFatalFailure()) return;
    ASSERT_EQ(bm.CheckInvariants(), "") << "after event " << e;
    ASSERT_EQ(bm.num_seqs(), int(live.size()));
    std::set<int32_t> used;
    for (const auto& [id, s] : live) {
      ASSERT_TRUE(bm.HasSeq(id));
      ASSERT_GE(int(bm.BlockTable(id).size()) * kBs, s.computed);
      used.insert(bm.BlockTable(id).begin(), bm.BlockTable(id).end());
      if (bm.CopySource(id) >= 0) used.insert(bm.CopySource(id));
    }
    ASSERT_EQ(kBlocks - bm.num_free_blocks(), int(used.size()));
  }
  for (const auto& [id, s] : live) bm.Free(id);
  EXPECT_EQ(bm.num_free_blocks(), bm.num_blocks());
  EXPECT_EQ(bm.num_seqs(), 0);
  EXPECT_EQ(bm.CheckInvariants(), "");
  *final_stats = bm.stats();
}

void ExpectExercised(const PropertyCounters& c, const BlockManagerStats& s) {
  // The traffic must actually hit, evict, reject and preempt, or the test proves little.
  EXPECT_GT(c.admitted, 100);
  EXPECT_GT(c.rejected + c.grow_failed, 0);
  EXPECT_GT(c.preempted, 10);
  EXPECT_GT(c.partial, 10);
  EXPECT_GT(s.prefix_hits, 0);
  EXPECT_GT(s.evictions, 0);
}

TEST(BlockManagerProperty, RandomEvents) {
  PropertyCounters c;
  BlockManagerStats s;
  RunPropertyTest(~uint64_t(0), 12345, &c, &s);
  ExpectExercised(c, s);
}

TEST(BlockManagerProperty, RandomEventsWithFewHashBits) {
  PropertyCounters c;
  BlockManagerStats s;
  RunPropertyTest(0x7, 777, &c, &s);
  ExpectExercised(c, s);
}

TEST(BlockManagerProperty, RandomEventsWithDegenerateHash) {
  PropertyCounters c;
  BlockManagerStats s;
  RunPropertyTest(0, 4242, &c, &s);
  ExpectExercised(c, s);
}

}  // namespace
}  // namespace brisk
