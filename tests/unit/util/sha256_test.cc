// SHA-256 against the FIPS 180 test vectors, and streaming in arbitrary chunks.
#include "util/sha256.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "test_paths.h"

namespace brisk {
namespace {

// Every vector runs on the portable code and (where the CPU has SHA-NI) on the hardware path.
class Sha256Vectors : public ::testing::TestWithParam<bool> {
 protected:
  std::string Hex(std::string_view data) const {
    Sha256 h(GetParam());
    h.Update(data);
    return h.FinalHex();
  }
};

INSTANTIATE_TEST_SUITE_P(Paths, Sha256Vectors, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "Hardware" : "Portable"; });

TEST_P(Sha256Vectors, EmptyString) {
  EXPECT_EQ(Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

TEST_P(Sha256Vectors, Abc) {
  EXPECT_EQ(Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST_P(Sha256Vectors, Message448Bits) {
  EXPECT_EQ(Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

TEST_P(Sha256Vectors, Message896Bits) {
  EXPECT_EQ(Hex("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmno"
                "ijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu"),
            "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
}

TEST_P(Sha256Vectors, OneMillionA) {
  const std::string a(1000000, 'a');
  EXPECT_EQ(Hex(a), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  // The same, fed 1000 bytes at a time.
  Sha256 h(GetParam());
  for (int i = 0; i < 1000; ++i) h.Update(a.data() + 1000 * i, 1000);
  EXPECT_EQ(h.FinalHex(), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST_P(Sha256Vectors, StreamingInOddChunksMatchesOneShot) {
  std::string data;
  for (int i = 0; i < 5000; ++i) data.push_back(char((i * 131 + 7) & 0xff));
  // Every length around the 55/56/64-byte padding boundaries, and chunkings of a longer input.
  for (size_t len : {0, 1, 55, 56, 57, 63, 64, 65, 119, 120, 127, 128, 129, 5000}) {
    const std::string one = Hex(std::string_view(data).substr(0, len));
    for (size_t chunk : {1, 3, 17, 63, 64, 100}) {
      Sha256 h(GetParam());
      for (size_t pos = 0; pos < len; pos += chunk)
        h.Update(data.data() + pos, std::min(chunk, len - pos));
      EXPECT_EQ(h.FinalHex(), one) << "len " << len << " chunk " << chunk;
    }
  }
}

TEST(Sha256, ResetStartsOver) {
  Sha256 h;
  h.Update("garbage");
  (void)h.Final();
  h.Reset();
  h.Update("abc");
  EXPECT_EQ(h.FinalHex(), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(Sha256, FileHashMatchesMemoryHash) {
  const std::string dir = test::TempDir();
  const std::string path = dir + "/data.bin";
  std::string data(3 * 1024 * 1024 + 17, '\0');
  for (size_t i = 0; i < data.size(); ++i) data[i] = char((i * 2654435761u) >> 13);
  FILE* f = std::fopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(std::fwrite(data.data(), 1, data.size(), f), data.size());
  std::fclose(f);
  auto hex = Sha256::HexOfFile(path);
  ASSERT_TRUE(hex.ok()) << hex.message();
  EXPECT_EQ(*hex, Sha256::HexOf(data));
  EXPECT_FALSE(Sha256::HexOfFile(dir + "/missing").ok());
  std::filesystem::remove_all(dir);
}

TEST(Sha256, PathsAgreeOnRandomData) {
  if (!Sha256::HardwareAvailable()) GTEST_SKIP() << "no SHA-NI on this CPU";
  std::string data(1 << 16, '\0');
  uint32_t x = 12345;
  for (char& c : data) c = char((x = x * 1664525u + 1013904223u) >> 24);
  for (size_t len = 0; len < data.size(); len = len * 3 + 1) {
    Sha256 a(false), b(true);
    a.Update(data.data(), len);
    b.Update(data.data(), len);
    EXPECT_EQ(a.FinalHex(), b.FinalHex()) << len;
  }
}

TEST(Sha256, IsHexDigest) {
  EXPECT_TRUE(Sha256::IsHexDigest(Sha256::HexOf("x")));
  EXPECT_TRUE(Sha256::IsHexDigest(std::string(64, 'A')));
  EXPECT_FALSE(Sha256::IsHexDigest(std::string(63, 'a')));
  EXPECT_FALSE(Sha256::IsHexDigest(std::string(64, 'g')));
  EXPECT_FALSE(Sha256::IsHexDigest("\"" + std::string(62, 'a') + "\""));
}

}  // namespace
}  // namespace brisk
