// Issue 31 acceptance: a ZeroMQ subscriber follows brisk's KV-cache events through a real engine
// run (the golden tiny model, a KV budget small enough to evict) with prefix hits, evictions and
// a cache reset, rebuilds the set of cached block hashes from the events alone and ends with
// exactly the engine's own view. Sequence numbers go up by one; the replay socket returns the
// buffered batches from a requested sequence, byte for byte; two engines publish the same hashes
// for the same prompt; bad endpoints are clear errors.
#include <gtest/gtest.h>
#include <zmq.h>

#include <chrono>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "engine/block_manager.h"
#include "engine/collecting_sink.h"
#include "engine/engine.h"
#include "engine/tiny_model_fixture.h"
#include "kvevents/kv_event_publisher.h"
#include "msgpack_reader.h"

namespace brisk {
namespace {

using test::MsgValue;

constexpr int kBlockSize = 16;

std::vector<std::string> Recv(void* socket, int timeout_ms) {
  zmq_pollitem_t item{socket, 0, ZMQ_POLLIN, 0};
  if (zmq_poll(&item, 1, timeout_ms) <= 0) return {};
  std::vector<std::string> frames;
  for (;;) {
    zmq_msg_t m;
    zmq_msg_init(&m);
    if (zmq_msg_recv(&m, socket, 0) < 0) break;
    frames.emplace_back(static_cast<const char*>(zmq_msg_data(&m)), zmq_msg_size(&m));
    const bool more = zmq_msg_more(&m);
    zmq_msg_close(&m);
    if (!more) break;
  }
  return frames;
}

uint64_t BigEndian64(const std::string& b) {
  uint64_t v = 0;
  for (char c : b) v = (v << 8) | uint8_t(c);
  return v;
}

std::string Seq8(uint64_t seq) {
  std::string b(8, '\0');
  for (int i = 0; i < 8; ++i) b[size_t(i)] = char(uint8_t(seq >> (8 * (7 - i))));
  return b;
}

// A subscriber as llm-d's is: keeps the hashes a replica holds, from the events only.
struct Follower {
  std::set<uint64_t> held;
  std::map<uint64_t, std::string> payloads;  // sequence -> payload, as received
  int stored = 0, removed = 0, cleared = 0;
  std::vector<uint64_t> seqs;

  void Apply(uint64_t seq, const std::string& payload) {
    seqs.push_back(seq);
    payloads[seq] = payload;
    std::optional<MsgValue> batch = test::MsgReader(payload).ReadAll();
    ASSERT_TRUE(batch.has_value()) << "payload of batch " << seq << " is not msgpack";
    ASSERT_EQ(batch->a.size(), 3u);  // [ts, events, data_parallel_rank]
    EXPECT_EQ(batch->a[0].type, MsgValue::Type::kFloat);
    EXPECT_EQ(batch->a[2].u, 0u);
    for (const MsgValue& e : batch->a[1].a) {
      const std::string& tag = e.a.at(0).s;
      if (tag == "BlockStored") {
        ASSERT_EQ(e.a.size(), 7u);
        const std::vector<MsgValue>& hashes = e.a[1].a;
        EXPECT_EQ(e.a[3].a.size(), hashes.size() * kBlockSize);  // token_ids
        EXPECT_EQ(e.a[4].u, uint64_t(kBlockSize));
        EXPECT_TRUE(e.a[5].is_nil());  // lora_id
        EXPECT_EQ(e.a[6].s, "CPU");
        // A consumer holding the token ids can recompute every hash of the chain.
        uint64_t h = e.a[2].is_nil() ? BlockManager::ChainRoot(0) : e.a[2].u;
        for (size_t i = 0; i < hashes.size(); ++i) {
          std::vector<int32_t> toks;
          for (int k = 0; k < kBlockSize; ++k)
            toks.push_back(int32_t(e.a[3].a[i * kBlockSize + k].u));
          h = BlockManager::ChainHash(h, toks);
          EXPECT_EQ(h, hashes[i].u);
          EXPECT_TRUE(held.insert(hashes[i].u).second) << "hash stored twice";
        }
        ++stored;
      } else if (tag == "BlockRemoved") {
        ASSERT_EQ(e.a.size(), 3u);
        for (const MsgValue& h : e.a[1].a) EXPECT_EQ(held.erase(h.u), 1u) << "removed, not held";
        ++removed;
      } else if (tag == "AllBlocksCleared") {
        held.clear();
        ++cleared;
      } else {
        ADD_FAILURE() << "unknown event " << tag;
      }
    }
  }
};

class KvEventsZmqTest : public test::TinyModelTest {
 protected:
  void TearDown() override {
    for (void* s : sockets_) zmq_close(s);
    if (ctx_) zmq_ctx_term(ctx_);
  }
  void* Socket(int type) {
    if (!ctx_) ctx_ = zmq_ctx_new();
    void* s = zmq_socket(ctx_, type);
    const int linger = 0;
    zmq_setsockopt(s, ZMQ_LINGER, &linger, sizeof(linger));
    sockets_.push_back(s);
    return s;
  }
  std::unique_ptr<Engine> MakeEngine(int kv_blocks) {
    EngineConfig c;
    c.threads = 2;
    c.max_num_seqs = 2;
    c.max_model_len = 128;
    c.kv_block_size = kBlockSize;
    c.kv_cache_bytes =
        size_t(kv_blocks) * KvStore::BlockBytes(model_->config(), kBlockSize, KvType::kF16);
    c.kv_event_queue = 1000;
    auto e = Engine::Create(*model_, tok_.get(), c);
    EXPECT_TRUE(e.ok()) << e.message();
    return e.ok() ? std::move(e).value() : nullptr;
  }
  // Runs the prompts to the end, two at a time (max_num_seqs).
  void Generate(Engine& e, const std::vector<std::vector<int32_t>>& prompts) {
    std::vector<std::shared_ptr<CollectingSink>> sinks;
    for (const auto& p : prompts) {
      GenerationRequest r;
      r.prompt = p;
      r.sampling.temperature = 0;
      r.max_tokens = 4;
      r.ignore_eos = true;
      sinks.push_back(std::make_shared<CollectingSink>());
      r.sink = sinks.back();
      ASSERT_TRUE(e.Submit(std::move(r)).ok());
    }
    for (auto& s : sinks) ASSERT_TRUE(s->WaitFor(60));
  }
  void* ctx_ = nullptr;
  std::vector<void*> sockets_;
};

TEST_F(KvEventsZmqTest, SubscriberRebuildsTheEnginesCachedBlocks) {
  KvEventPublisherOptions o;
  o.endpoint = "tcp://127.0.0.1:*";
  o.replay_endpoint = "tcp://127.0.0.1:*";
  o.topic = "kv@pod-a@tiny";
  o.encoding.block_size = kBlockSize;
  auto pub = KvEventPublisher::Open(o);
  ASSERT_TRUE(pub.ok()) << pub.message();
  void* sub = Socket(ZMQ_SUB);
  ASSERT_EQ(zmq_connect(sub, (*pub)->endpoint().c_str()), 0);
  ASSERT_EQ(zmq_setsockopt(sub, ZMQ_SUBSCRIBE, "kv@", 3), 0);
  // PUB drops what it sends before the subscription arrives (ZeroMQ's "slow joiner").
  std::this_thread::sleep_for(std::chrono::milliseconds(300));

  // 12 blocks of 16 tokens; prompts of 40 tokens + 4 generated take 3 blocks each.
  auto engine = MakeEngine(12);
  ASSERT_NE(engine, nullptr);
  (*pub)->Follow(engine->kv_events());
  Follower f;
  void* replay = Socket(ZMQ_DEALER);
  ASSERT_EQ(zmq_connect(replay, (*pub)->replay_endpoint().c_str()), 0);
  // The batches from `from` on, as the replay socket answers (fails the test on a bad answer).
  auto fetch_replay = [&](uint64_t from) {
    std::vector<std::pair<uint64_t, std::string>> out;
    const std::string start = Seq8(from);
    zmq_send(replay, "", 0, ZMQ_SNDMORE);  // the empty delimiter a REQ socket would add
    zmq_send(replay, start.data(), start.size(), 0);
    for (;;) {
      std::vector<std::string> m = Recv(replay, 5000);
      EXPECT_EQ(m.size(), 3u) << "replay timed out or sent a malformed message";
      if (m.size() != 3) return out;
      EXPECT_TRUE(m[0].empty());
      if (m[1] == std::string(8, '\xff')) {  // the end marker: -1, empty payload
        EXPECT_TRUE(m[2].empty());
        return out;
      }
      out.emplace_back(BigEndian64(m[1]), m[2]);
    }
  };
  // Like any subscriber, batches missed on the PUB socket (on a loaded machine the subscription
  // can still be on its way when the first ones go out) are fetched from the replay socket; the
  // test also knows how many were published, which a real subscriber learns from the next batch.
  uint64_t next = 0;  // the sequence number expected next
  auto fill_from_replay = [&](uint64_t until) {
    for (const auto& [s, payload] : fetch_replay(next))
      if (s == next && s < until) {
        f.Apply(s, payload);
        ++next;
      }
  };
  auto drain = [&](int timeout_ms) {
    for (;;) {
      std::vector<std::string> m = Recv(sub, timeout_ms);
      if (m.empty()) break;
      ASSERT_EQ(m.size(), 3u);
      EXPECT_EQ(m[0], "kv@pod-a@tiny");
      ASSERT_EQ(m[1].size(), 8u);
      const uint64_t seq = BigEndian64(m[1]);
      if (seq < next) {  // already fetched from the replay socket
        EXPECT_EQ(m[2], f.payloads.at(seq));
        continue;
      }
      if (seq > next) fill_from_replay(seq);
      ASSERT_EQ(seq, next) << "sequence numbers must go up by one";
      f.Apply(seq, m[2]);
      ++next;
    }
    if ((*pub)->published() > next) fill_from_replay((*pub)->published());
  };
  auto caught_up = [&](int timeout_s) {  // until the follower holds what the engine holds
    for (int i = 0; i < timeout_s * 10; ++i) {
      drain(100);
      if (std::vector<uint64_t>(f.held.begin(), f.held.end()) == engine->CachedBlockHashes())
        return true;
    }
    return false;
  };

  const std::vector<int32_t> shared = Prompt(40, 1);
  Generate(*engine, {shared});
  Generate(*engine, {shared});  // hits the first one's two full blocks
  ASSERT_TRUE(caught_up(10));
  const int64_t hits = engine->Stats().prefix_hit_tokens;
  EXPECT_GE(hits, 32);
  std::vector<std::vector<int32_t>> many;  // 8 more distinct prompts: far more than 12 blocks
  for (int i = 2; i < 10; ++i) many.push_back(Prompt(40, i));
  Generate(*engine, many);
  ASSERT_TRUE(caught_up(10));
  EXPECT_GT(f.removed, 0) << "the run was meant to evict";
  engine->ResetPrefixCache();
  Generate(*engine, {Prompt(40, 20)});  // cached again after the reset,
  Generate(*engine, {Prompt(40, 20)});  // and hit
  ASSERT_TRUE(caught_up(10)) << "follower holds " << f.held.size() << " hashes";
  EXPECT_FALSE(f.held.empty());
  EXPECT_GT(f.stored, 0);
  EXPECT_EQ(f.cleared, 1);
  EXPECT_GT(engine->Stats().prefix_hit_tokens, hits);
  EXPECT_EQ(engine->Stats().kv_events_dropped, 0);

  // Sequence numbers: from 0, each the previous + 1.
  ASSERT_FALSE(f.seqs.empty());
  EXPECT_EQ(f.seqs.front(), 0u);
  for (size_t i = 1; i < f.seqs.size(); ++i) ASSERT_EQ(f.seqs[i], f.seqs[i - 1] + 1);
  EXPECT_EQ((*pub)->published(), f.seqs.back() + 1);

  // Replay from sequence 3: every batch from 3 on, identical bytes, then the end marker.
  uint64_t want = 3;
  for (const auto& [seq, payload] : fetch_replay(3)) {
    ASSERT_EQ(seq, want);
    EXPECT_EQ(payload, f.payloads.at(want)) << "replayed batch " << want << " differs";
    ++want;
  }
  EXPECT_EQ(want, f.seqs.back() + 1) << "replay ended early";
}

// Two replicas (two engines, two processes' worth of state) that cache the same prompt publish
// the same block hashes.
TEST_F(KvEventsZmqTest, SamePromptSameHashesOnTwoEngines) {
  auto a = MakeEngine(12), b = MakeEngine(16);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  Generate(*b, {Prompt(30, 5)});  // another history first
  b->ResetPrefixCache();
  const std::vector<int32_t> p = Prompt(50, 3);
  Generate(*a, {p});
  Generate(*b, {p});
  const std::vector<uint64_t> ha = a->CachedBlockHashes(), hb = b->CachedBlockHashes();
  EXPECT_EQ(ha.size(), 3u);  // 50 + 4 tokens: 3 full blocks of 16
  EXPECT_EQ(ha, hb);
  const uint64_t first =
      BlockManager::ChainHash(BlockManager::ChainRoot(0), std::span(p).subspan(0, kBlockSize));
  EXPECT_TRUE(std::find(ha.begin(), ha.end(), first) != ha.end());
}

TEST(KvEventsEndpoint, BadEndpointsAreClearErrors) {
  for (const char* bad : {"5557", "tcp://", "tcp://nohost", "http://x:1", ""}) {
    const Status s = ValidateKvEventsEndpoint(bad, "--kv-events");
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << bad;
    EXPECT_EQ(s.field(), "--kv-events");
    EXPECT_NE(s.message().find("tcp://*:PORT"), std::string::npos) << s.message();
  }
  EXPECT_TRUE(ValidateKvEventsEndpoint("tcp://*:5557", "--kv-events").ok());
  KvEventPublisherOptions o;
  o.endpoint = "tcp://*:*";
  auto first = KvEventPublisher::Open(o);
  ASSERT_TRUE(first.ok()) << first.message();
  const std::string bound = (*first)->endpoint();                // tcp://0.0.0.0:PORT
  o.endpoint = "tcp://*:" + bound.substr(bound.rfind(':') + 1);  // the same port again: busy
  auto second = KvEventPublisher::Open(o);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(second.message().find("--kv-events"), std::string::npos) << second.message();
  o.endpoint = "tcp://999.1.1.1:*";
  EXPECT_EQ(KvEventPublisher::Open(o).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace brisk
