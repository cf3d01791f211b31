// The msgpack writer against the format spec (github.com/msgpack/msgpack/blob/master/spec.md):
// exact bytes at every boundary between encodings, and vLLM's KV-event batch layout byte for
// byte (what msgspec writes for KVEventBatch(ts, [BlockStored, BlockRemoved, AllBlocksCleared],
// data_parallel_rank=0) with array_like tagged structs).
#include "kvevents/msgpack.h"

#include <gtest/gtest.h>

#include <string>

#include "kvevents/kv_event_codec.h"
#include "msgpack_reader.h"

namespace brisk {
namespace {

std::string Hex(const std::string& b) {
  static const char* d = "0123456789abcdef";
  std::string out;
  for (unsigned char c : b) {
    if (!out.empty()) out += ' ';
    out += d[c >> 4];
    out += d[c & 15];
  }
  return out;
}

template <typename F>
std::string Bytes(F write) {
  msgpack::Writer w;
  write(w);
  return Hex(w.bytes());
}

TEST(Msgpack, UnsignedTakesTheShortestForm) {
  EXPECT_EQ(Bytes([](auto& w) { w.Uint(0); }), "00");       // positive fixint
  EXPECT_EQ(Bytes([](auto& w) { w.Uint(127); }), "7f");     // largest fixint
  EXPECT_EQ(Bytes([](auto& w) { w.Uint(128); }), "cc 80");  // uint 8
  EXPECT_EQ(Bytes([](auto& w) { w.Uint(255); }), "cc ff");
  EXPECT_EQ(Bytes([](auto& w) { w.Uint(256); }), "cd 01 00");  // uint 16, big-endian
  EXPECT_EQ(Bytes([](auto& w) { w.Uint(65535); }), "cd ff ff");
  EXPECT_EQ(Bytes([](auto& w) { w.Uint(65536); }), "ce 00 01 00 00");  // uint 32
  EXPECT_EQ(Bytes([](auto& w) { w.Uint(4294967295ULL); }), "ce ff ff ff ff");
  EXPECT_EQ(Bytes([](auto& w) { w.Uint(4294967296ULL); }), "cf 00 00 00 01 00 00 00 00");
  EXPECT_EQ(Bytes([](auto& w) { w.Uint(~0ULL); }), "cf ff ff ff ff ff ff ff ff");
}

TEST(Msgpack, SignedUsesUnsignedFormsForNonNegativeValues) {
  EXPECT_EQ(Bytes([](auto& w) { w.Int(0); }), "00");
  EXPECT_EQ(Bytes([](auto& w) { w.Int(200); }), "cc c8");
  EXPECT_EQ(Bytes([](auto& w) { w.Int(-1); }), "ff");      // negative fixint 111xxxxx
  EXPECT_EQ(Bytes([](auto& w) { w.Int(-32); }), "e0");     // smallest negative fixint
  EXPECT_EQ(Bytes([](auto& w) { w.Int(-33); }), "d0 df");  // int 8
  EXPECT_EQ(Bytes([](auto& w) { w.Int(-128); }), "d0 80");
  EXPECT_EQ(Bytes([](auto& w) { w.Int(-129); }), "d1 ff 7f");          // int 16
  EXPECT_EQ(Bytes([](auto& w) { w.Int(-32769); }), "d2 ff ff 7f ff");  // int 32
  EXPECT_EQ(Bytes([](auto& w) { w.Int(INT64_MIN); }), "d3 80 00 00 00 00 00 00 00");
}

TEST(Msgpack, NilFloatStrBinArray) {
  EXPECT_EQ(Bytes([](auto& w) { w.Nil(); }), "c0");
  EXPECT_EQ(Bytes([](auto& w) { w.Float64(1.0); }), "cb 3f f0 00 00 00 00 00 00");
  EXPECT_EQ(Bytes([](auto& w) { w.Float64(-2.5); }), "cb c0 04 00 00 00 00 00 00");
  EXPECT_EQ(Bytes([](auto& w) { w.Str(""); }), "a0");
  EXPECT_EQ(Bytes([](auto& w) { w.Str("CPU"); }), "a3 43 50 55");  // fixstr 101xxxxx
  EXPECT_EQ(Bytes([](auto& w) { w.Str(std::string(31, 'a')); }).substr(0, 5), "bf 61");
  EXPECT_EQ(Bytes([](auto& w) { w.Str(std::string(32, 'a')); }).substr(0, 8), "d9 20 61");
  EXPECT_EQ(Bytes([](auto& w) { w.Str(std::string(256, 'a')); }).substr(0, 11), "da 01 00 61");
  EXPECT_EQ(Bytes([](auto& w) { w.Bin(std::string("\x01\x02", 2)); }), "c4 02 01 02");
  EXPECT_EQ(Bytes([](auto& w) { w.Bin(std::string(256, '\0')); }).substr(0, 8), "c5 01 00");
  EXPECT_EQ(Bytes([](auto& w) { w.ArrayHeader(0); }), "90");  // fixarray 1001xxxx
  EXPECT_EQ(Bytes([](auto& w) { w.ArrayHeader(15); }), "9f");
  EXPECT_EQ(Bytes([](auto& w) { w.ArrayHeader(16); }), "dc 00 10");  // array 16
  EXPECT_EQ(Bytes([](auto& w) { w.ArrayHeader(65536); }), "dd 00 01 00 00");
  // The spec's own example shape: [1, [2, "a"], nil].
  EXPECT_EQ(Bytes([](auto& w) {
              w.ArrayHeader(3);
              w.Uint(1);
              w.ArrayHeader(2);
              w.Uint(2);
              w.Str("a");
              w.Nil();
            }),
            "93 01 92 02 a1 61 c0");
}

TEST(Msgpack, KvEventBatchHasVllmsLayout) {
  KvEventBatch b;
  b.timestamp = 1.0;
  KvCacheEvent stored;
  stored.kind = KvCacheEvent::Kind::kBlockStored;
  stored.block_hashes = {1, 0x8000000000000000ULL};
  stored.token_ids = {5, 300};
  KvCacheEvent removed;
  removed.kind = KvCacheEvent::Kind::kBlockRemoved;
  removed.block_hashes = {7};
  KvCacheEvent cleared;
  cleared.kind = KvCacheEvent::Kind::kAllBlocksCleared;
  b.events = {stored, removed, cleared};
  KvEventEncoding enc;
  enc.block_size = 1;
  const std::string want =
      "93 cb 3f f0 00 00 00 00 00 00 "           // [ts=1.0,
      "93 "                                      //  [3 events:
      "97 ab 42 6c 6f 63 6b 53 74 6f 72 65 64 "  // ["BlockStored",
      "92 01 cf 80 00 00 00 00 00 00 00 "        //  [1, 2^63],
      "c0 92 05 cd 01 2c 01 c0 a3 43 50 55 "     //  nil, [5, 300], 1, nil, "CPU"],
      "93 ac 42 6c 6f 63 6b 52 65 6d 6f 76 65 64 91 07 a3 43 50 55 "  // ["BlockRemoved", [7],
                                                                      // "CPU"],
      "91 b0 41 6c 6c 42 6c 6f 63 6b 73 43 6c 65 61 72 65 64 "        // ["AllBlocksCleared"]],
      "00";                                                           //  data_parallel_rank 0]
  EXPECT_EQ(Hex(EncodeKvEventBatch(b, enc)), want);
  // And the parent of a continuing chain, and a nil medium.
  b.events = {stored};
  b.events[0].parent_hash = 9;
  enc.medium = "";
  auto v = test::MsgReader(EncodeKvEventBatch(b, enc)).ReadAll();
  ASSERT_TRUE(v.has_value());
  const test::MsgValue& e = v->a[1].a[0];
  EXPECT_EQ(e.a[2].u, 9u);
  EXPECT_TRUE(e.a[6].is_nil());
}

}  // namespace
}  // namespace brisk
