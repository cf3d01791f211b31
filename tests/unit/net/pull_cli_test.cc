// `brisk pull` as a user runs it, against the local test server (never the internet).
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "net/http_download.h"
#include "test_http_server.h"
#include "test_paths.h"
#include "util/sha256.h"

namespace brisk {
namespace {
namespace fs = std::filesystem;

struct Output {
  int code = -1;
  std::string out;  // stdout and stderr together
};

Output Brisk(const std::string& env, const std::string& args) {
  const std::string cmd = env + " " + test::BriskBinary() + " " + args + " 2>&1";
  Output o;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return o;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) o.out.append(buf.data(), n);
  const int status = pclose(p);
  o.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return o;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool Contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

class PullCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(server_.ok());
    dir_ = test::TempDir();
    content_ = test::TestContent(400000, 7);
    sha_ = Sha256::HexOf(content_);
    env_ = "no_proxy=127.0.0.1 HF_ENDPOINT=" + server_.Url("") + " BRISK_HOME=" + dir_ + "/home";
  }
  void TearDown() override { fs::remove_all(dir_); }

  test::TestHttpServer server_;
  std::string dir_, content_, sha_, env_;
};

TEST_F(PullCliTest, CatalogueNameThroughHubRedirectIsVerified) {
  const std::string resolve =
      "/Qwen/Qwen2.5-0.5B-Instruct-GGUF/resolve/main/qwen2.5-0.5b-instruct-q4_k_m.gguf";
  server_.SetRoute(
      resolve, test::HttpRoute::Redirect("/cdn/xyz").Header("X-Linked-Etag", "\"" + sha_ + "\""));
  server_.SetRoute("/cdn/xyz", test::HttpRoute::Body(content_));
  Output o = Brisk(env_, "pull qwen2.5-0.5b-instruct:q4_k_m -o " + dir_ + "/models");
  ASSERT_EQ(o.code, 0) << o.out;
  const std::string path = dir_ + "/models/qwen2.5-0.5b-instruct-q4_k_m.gguf";
  EXPECT_EQ(ReadFile(path), content_);
  EXPECT_TRUE(Contains(o.out, path + "\n")) << o.out;
  EXPECT_TRUE(Contains(o.out, sha_ + " verified (from the X-Linked-ETag header)")) << o.out;
  EXPECT_TRUE(Contains(o.out, "100%")) << o.out;  // the progress line (not a TTY: plain lines)
  EXPECT_EQ(server_.RequestsFor(resolve).size(), 1u);

  // A second pull finds the file and downloads nothing.
  o = Brisk(env_, "pull qwen2.5-0.5b-instruct:q4_k_m -o " + dir_ + "/models");
  ASSERT_EQ(o.code, 0) << o.out;
  EXPECT_TRUE(Contains(o.out, "already here")) << o.out;
  EXPECT_EQ(server_.RequestsFor(resolve).size(), 1u);
}

TEST_F(PullCliTest, DefaultDirectoryIsBriskHome) {
  server_.SetRoute("/files/tiny.gguf", test::HttpRoute::Body(content_));
  Output o = Brisk(env_, "pull '" + server_.Url("/files/tiny.gguf?download=true") + "'");
  ASSERT_EQ(o.code, 0) << o.out;
  EXPECT_EQ(ReadFile(dir_ + "/home/tiny.gguf"), content_);
  EXPECT_TRUE(Contains(o.out, "not verified")) << o.out;
}

TEST_F(PullCliTest, InterruptedPullResumesOnTheNextRun) {
  server_.SetRoute("/m.gguf", test::HttpRoute::Body(content_).Drop(150000, 1));
  const std::string args =
      "pull " + server_.Url("/m.gguf") + " -o " + dir_ + " --retries 0 --sha256 " + sha_;
  Output o = Brisk(env_, args);
  EXPECT_EQ(o.code, 1) << o.out;
  EXPECT_TRUE(Contains(o.out, "run again to resume")) << o.out;
  EXPECT_EQ(fs::file_size(dir_ + "/m.gguf.partial"), 150000u);

  o = Brisk(env_, args);
  ASSERT_EQ(o.code, 0) << o.out;
  EXPECT_TRUE(Contains(o.out, "resuming")) << o.out;
  EXPECT_TRUE(Contains(o.out, "verified (from --sha256)")) << o.out;
  EXPECT_EQ(ReadFile(dir_ + "/m.gguf"), content_);
  EXPECT_FALSE(fs::exists(dir_ + "/m.gguf.partial"));
  auto reqs = server_.Requests();
  ASSERT_EQ(reqs.size(), 2u);
  EXPECT_EQ(reqs[1].Header("range"), "bytes=150000-");
}

TEST_F(PullCliTest, RetriesResumeInOneRun) {
  server_.SetRoute("/m.gguf", test::HttpRoute::Body(content_).Drop(150000, 1));
  Output o = Brisk(env_, "pull " + server_.Url("/m.gguf") + " -o " + dir_ + " --sha256 " + sha_);
  ASSERT_EQ(o.code, 0) << o.out;
  EXPECT_EQ(ReadFile(dir_ + "/m.gguf"), content_);
  EXPECT_EQ(server_.Requests().size(), 2u);
}

TEST_F(PullCliTest, ChecksumMismatchDeletesPartialAndReportsIt) {
  const std::string wrong = test::TestContent(content_.size(), 8);
  server_.SetRoute("/m.gguf", test::HttpRoute::Body(wrong));
  Output o = Brisk(env_, "pull " + server_.Url("/m.gguf") + " -o " + dir_ + " --sha256 " + sha_);
  EXPECT_EQ(o.code, 1) << o.out;
  EXPECT_TRUE(Contains(o.out, "checksum mismatch")) << o.out;
  EXPECT_TRUE(Contains(o.out, sha_)) << o.out;
  EXPECT_TRUE(Contains(o.out, Sha256::HexOf(wrong))) << o.out;
  EXPECT_FALSE(fs::exists(dir_ + "/m.gguf.partial"));
  EXPECT_FALSE(fs::exists(dir_ + "/m.gguf"));
}

TEST_F(PullCliTest, NotFoundReportsUrlAndStatus) {
  const std::string url = server_.Url("/missing.gguf");
  Output o = Brisk(env_, "pull " + url + " -o " + dir_);
  EXPECT_EQ(o.code, 1) << o.out;
  EXPECT_TRUE(Contains(o.out, "brisk: error:")) << o.out;
  EXPECT_TRUE(Contains(o.out, url)) << o.out;
  EXPECT_TRUE(Contains(o.out, "404")) << o.out;
}

TEST_F(PullCliTest, ListPrintsTheCatalogue) {
  Output o = Brisk("HF_ENDPOINT=", "pull --list");
  ASSERT_EQ(o.code, 0) << o.out;
  EXPECT_TRUE(Contains(o.out, "qwen2.5-0.5b-instruct:q4_k_m")) << o.out;
  EXPECT_TRUE(Contains(o.out, "qwen2.5-1.5b-instruct:q8_0")) << o.out;
  EXPECT_TRUE(Contains(o.out,
                       "https://huggingface.co/Qwen/Qwen2.5-1.5B-Instruct-GGUF/resolve/main/"
                       "qwen2.5-1.5b-instruct-fp16.gguf"))
      << o.out;
}

TEST_F(PullCliTest, BadArgumentsFailClearly) {
  Output o = Brisk(env_, "pull no-such-model");
  EXPECT_EQ(o.code, 1) << o.out;
  EXPECT_TRUE(Contains(o.out, "not in the catalogue")) << o.out;
  o = Brisk(env_, "pull");
  EXPECT_EQ(o.code, 1) << o.out;
  o = Brisk(env_, "pull " + server_.Url("/x.gguf") + " --sha256 abc");
  EXPECT_EQ(o.code, 1) << o.out;
  EXPECT_TRUE(Contains(o.out, "invalid --sha256")) << o.out;
  o = Brisk(env_, "pull ftp://example.com/x.gguf -o " + dir_);
  EXPECT_EQ(o.code, 1) << o.out;
  EXPECT_TRUE(server_.Requests().empty());
}

}  // namespace
}  // namespace brisk
