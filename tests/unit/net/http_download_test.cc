// net::Download against the local test server: full download, resume after an interruption,
// checksum mismatch, HTTP errors, servers that ignore Range, redirects, stalls.
#include "net/http_download.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "test_http_server.h"
#include "test_paths.h"
#include "util/sha256.h"

namespace brisk {
namespace {
namespace fs = std::filesystem;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void WriteFile(const std::string& path, const std::string& data) {
  std::ofstream(path, std::ios::binary) << data;
}

class DownloadTest : public ::testing::Test {
 protected:
  void SetUp() override {
    setenv("no_proxy", "127.0.0.1,localhost", 1);
    ASSERT_TRUE(server_.ok());
    dir_ = test::TempDir();
    dest_ = dir_ + "/model.gguf";
    content_ = test::TestContent(300000, 1);
    sha_ = Sha256::HexOf(content_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  net::DownloadOptions Options() const {
    net::DownloadOptions o;
    o.retry_delay_s = 0;
    o.connect_timeout_s = 5;
    o.stall_timeout_s = 10;
    return o;
  }

  test::TestHttpServer server_;
  std::string dir_, dest_, content_, sha_;
};

TEST_F(DownloadTest, FullDownloadWithChecksum) {
  server_.SetRoute("/m.gguf", test::HttpRoute::Body(content_));
  net::DownloadOptions o = Options();
  o.expected_sha256 = sha_;
  o.expected_sha256_source = "--sha256";
  auto r = net::Download(server_.Url("/m.gguf"), dest_, o);
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(ReadFile(dest_), content_);
  EXPECT_FALSE(fs::exists(net::PartialPath(dest_)));
  EXPECT_EQ(r->size, content_.size());
  EXPECT_EQ(r->sha256, sha_);
  EXPECT_EQ(r->verified_by, "--sha256");
  EXPECT_EQ(r->resumed_from, 0u);
  EXPECT_EQ(r->requests, 1);
  ASSERT_EQ(server_.Requests().size(), 1u);
  EXPECT_EQ(server_.Requests()[0].Header("range"), "");
}

TEST_F(DownloadTest, UpperCaseExpectedHashIsAccepted) {
  server_.SetRoute("/m.gguf", test::HttpRoute::Body(content_));
  net::DownloadOptions o = Options();
  for (char& c : sha_) c = char(std::toupper(static_cast<unsigned char>(c)));
  o.expected_sha256 = sha_;
  auto r = net::Download(server_.Url("/m.gguf"), dest_, o);
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_FALSE(r->verified_by.empty());
}

TEST_F(DownloadTest, WithoutAnyChecksumTheFileIsUnverified) {
  server_.SetRoute("/m.gguf", test::HttpRoute::Body(content_).Header("ETag", "\"abc-123\""));
  auto r = net::Download(server_.Url("/m.gguf"), dest_, Options());
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(r->verified_by, "");
  EXPECT_EQ(r->sha256, sha_);
}

TEST_F(DownloadTest, InterruptedDownloadResumesWithRange) {
  server_.SetRoute("/m.gguf", test::HttpRoute::Body(content_).Drop(100000, 1));
  net::DownloadOptions o = Options();
  o.expected_sha256 = sha_;
  auto first = net::Download(server_.Url("/m.gguf"), dest_, o);
  ASSERT_FALSE(first.ok());
  EXPECT_NE(first.message().find("network error"), std::string::npos) << first.message();
  EXPECT_NE(first.message().find("run again to resume"), std::string::npos) << first.message();
  EXPECT_FALSE(fs::exists(dest_));
  ASSERT_TRUE(fs::exists(net::PartialPath(dest_)));
  EXPECT_EQ(ReadFile(net::PartialPath(dest_)), content_.substr(0, 100000));

  auto second = net::Download(server_.Url("/m.gguf"), dest_, o);
  ASSERT_TRUE(second.ok()) << second.message();
  EXPECT_EQ(ReadFile(dest_), content_);
  EXPECT_EQ(second->resumed_from, 100000u);
  EXPECT_FALSE(fs::exists(net::PartialPath(dest_)));
  auto reqs = server_.Requests();
  ASSERT_EQ(reqs.size(), 2u);
  EXPECT_EQ(reqs[0].Header("range"), "");
  EXPECT_EQ(reqs[1].Header("range"), "bytes=100000-");
}

TEST_F(DownloadTest, RetriesResumeWithinOneCall) {
  server_.SetRoute("/m.gguf", test::HttpRoute::Body(content_).Drop(70000, 2));
  net::DownloadOptions o = Options();
  o.retries = 2;
  o.expected_sha256 = sha_;
  auto r = net::Download(server_.Url("/m.gguf"), dest_, o);
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(ReadFile(dest_), content_);
  EXPECT_EQ(r->requests, 3);
  auto reqs = server_.Requests();
  ASSERT_EQ(reqs.size(), 3u);
  EXPECT_EQ(reqs[1].Header("range"), "bytes=70000-");
  EXPECT_EQ(reqs[2].Header("range"), "bytes=140000-");
}

TEST_F(DownloadTest, RetriesRunOut) {
  server_.SetRoute("/m.gguf", test::HttpRoute::Body(content_).Drop(1000, 5));
  net::DownloadOptions o = Options();
  o.retries = 1;
  auto r = net::Download(server_.Url("/m.gguf"), dest_, o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(server_.Requests().size(), 2u);
  EXPECT_EQ(fs::file_size(net::PartialPath(dest_)), 2000u);  // both attempts kept
}

TEST_F(DownloadTest, ChecksumMismatchDeletesPartialAndNamesBothHashes) {
  const std::string wrong = test::TestContent(content_.size(), 2);
  server_.SetRoute("/m.gguf", test::HttpRoute::Body(wrong));
  net::DownloadOptions o = Options();
  o.expected_sha256 = sha_;
  o.expected_sha256_source = "--sha256";
  auto r = net::Download(server_.Url("/m.gguf"), dest_, o);
  ASSERT_FALSE(r.ok());
  const std::string& m = r.message();
  EXPECT_NE(m.find("checksum mismatch"), std::string::npos) << m;
  EXPECT_NE(m.find(sha_), std::string::npos) << m;
  EXPECT_NE(m.find(Sha256::HexOf(wrong)), std::string::npos) << m;
  EXPECT_NE(m.find("--sha256"), std::string::npos) << m;
  EXPECT_NE(m.find("deleted"), std::string::npos) << m;
  EXPECT_FALSE(fs::exists(net::PartialPath(dest_)));
  EXPECT_FALSE(fs::exists(dest_));
}

TEST_F(DownloadTest, ChecksumMismatchAfterResumeOfStalePartial) {
  // The partial file holds bytes of some other file: the resumed whole does not match.
  WriteFile(net::PartialPath(dest_), test::TestContent(50000, 9));
  server_.SetRoute("/m.gguf", test::HttpRoute::Body(content_));
  net::DownloadOptions o = Options();
  o.expected_sha256 = sha_;
  auto r = net::Download(server_.Url("/m.gguf"), dest_, o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.message().find("checksum mismatch"), std::string::npos) << r.message();
  EXPECT_FALSE(fs::exists(net::PartialPath(dest_)));
  // The next attempt starts from zero and succeeds.
  auto again = net::Download(server_.Url("/m.gguf"), dest_, o);
  ASSERT_TRUE(again.ok()) << again.message();
  EXPECT_EQ(ReadFile(dest_), content_);
}

TEST_F(DownloadTest, EtagSha256IsTheExpectedHash) {
  server_.SetRoute("/good", test::HttpRoute::Body(content_).Header("ETag", "\"" + sha_ + "\""));
  auto r = net::Download(server_.Url("/good"), dest_, Options());
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(r->verified_by, "the ETag header");

  server_.SetRoute(
      "/bad",
      test::HttpRoute::Body(test::TestContent(1000, 3)).Header("ETag", "W/\"" + sha_ + "\""));
  auto bad = net::Download(server_.Url("/bad"), dir_ + "/bad.gguf", Options());
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("ETag"), std::string::npos) << bad.message();
  EXPECT_NE(bad.message().find(sha_), std::string::npos) << bad.message();
  EXPECT_FALSE(fs::exists(net::PartialPath(dir_ + "/bad.gguf")));
}

TEST_F(DownloadTest, EtagIsIgnoredWhenNotTrusted) {
  server_.SetRoute(
      "/m", test::HttpRoute::Body(content_).Header("ETag", "\"" + std::string(64, 'a') + "\""));
  net::DownloadOptions o = Options();
  o.trust_etag_sha256 = false;
  auto r = net::Download(server_.Url("/m"), dest_, o);
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(r->verified_by, "");
}

TEST_F(DownloadTest, RedirectIsFollowedAndLinkedEtagUsed) {
  // Like the Hugging Face Hub: /resolve answers 302 with the LFS sha256 in X-Linked-ETag, the CDN
  // serves the bytes with an ETag that is not a sha256.
  server_.SetRoute("/resolve/m.gguf", test::HttpRoute::Redirect("/cdn/blob?sig=1")
                                          .Header("X-Linked-Etag", "\"" + sha_ + "\"")
                                          .Header("X-Linked-Size", "300000"));
  server_.SetRoute("/cdn/blob?sig=1", test::HttpRoute::Body(content_).Header("ETag", "\"cdn-1\""));
  auto r = net::Download(server_.Url("/resolve/m.gguf"), dest_, Options());
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(ReadFile(dest_), content_);
  EXPECT_EQ(r->verified_by, "the X-Linked-ETag header");
  EXPECT_EQ(server_.Requests().size(), 2u);
}

TEST_F(DownloadTest, RedirectedResumeKeepsRange) {
  server_.SetRoute("/resolve/m.gguf", test::HttpRoute::Redirect("/cdn/blob"));
  server_.SetRoute("/cdn/blob", test::HttpRoute::Body(content_).Drop(123456, 1));
  ASSERT_FALSE(net::Download(server_.Url("/resolve/m.gguf"), dest_, Options()).ok());
  auto r = net::Download(server_.Url("/resolve/m.gguf"), dest_, Options());
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(ReadFile(dest_), content_);
  auto cdn = server_.RequestsFor("/cdn/blob");
  ASSERT_EQ(cdn.size(), 2u);
  EXPECT_EQ(cdn[1].Header("range"), "bytes=123456-");
}

TEST_F(DownloadTest, NotFoundNamesUrlAndStatus) {
  const std::string url = server_.Url("/no/such/file.gguf");
  auto r = net::Download(url, dest_, Options());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.message().find(url), std::string::npos) << r.message();
  EXPECT_NE(r.message().find("404"), std::string::npos) << r.message();
  EXPECT_NE(r.message().find("Entry not found"), std::string::npos) << r.message();
  EXPECT_FALSE(fs::exists(dest_));
  EXPECT_FALSE(fs::exists(net::PartialPath(dest_)));
}

TEST_F(DownloadTest, ServerErrorAfterRedirectNamesBothUrls) {
  server_.SetRoute("/a", test::HttpRoute::Redirect("/b"));
  server_.SetRoute("/b", test::HttpRoute::Status(403, "<html>denied</html>"));
  auto r = net::Download(server_.Url("/a"), dest_, Options());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.message().find("403"), std::string::npos) << r.message();
  EXPECT_NE(r.message().find(server_.Url("/a")), std::string::npos) << r.message();
  EXPECT_NE(r.message().find(server_.Url("/b")), std::string::npos) << r.message();
  EXPECT_EQ(r.message().find("<html>"), std::string::npos) << r.message();
}

TEST_F(DownloadTest, ServerIgnoringRangeRestartsFromZero) {
  server_.SetRoute("/m.gguf", test::HttpRoute::Body(content_).IgnoreRange().Drop(100000, 1));
  net::DownloadOptions o = Options();
  o.expected_sha256 = sha_;
  ASSERT_FALSE(net::Download(server_.Url("/m.gguf"), dest_, o).ok());
  EXPECT_EQ(fs::file_size(net::PartialPath(dest_)), 100000u);
  auto r = net::Download(server_.Url("/m.gguf"), dest_, o);
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(ReadFile(dest_), content_);
  EXPECT_EQ(r->resumed_from, 0u);
  ASSERT_EQ(server_.Requests().size(), 2u);
  EXPECT_EQ(server_.Requests()[1].Header("range"), "bytes=100000-");  // asked, but got 200
}

TEST_F(DownloadTest, CompletePartialIsVerifiedAndRenamed) {
  // A partial file that already holds every byte: the server answers 416.
  WriteFile(net::PartialPath(dest_), content_);
  server_.SetRoute("/m.gguf", test::HttpRoute::Body(content_));
  net::DownloadOptions o = Options();
  o.expected_sha256 = sha_;
  auto r = net::Download(server_.Url("/m.gguf"), dest_, o);
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(ReadFile(dest_), content_);
  EXPECT_EQ(r->resumed_from, content_.size());
  EXPECT_EQ(r->requests, 1);
}

TEST_F(DownloadTest, OversizedPartialRestarts) {
  WriteFile(net::PartialPath(dest_), content_ + "extra bytes");
  server_.SetRoute("/m.gguf", test::HttpRoute::Body(content_));
  auto r = net::Download(server_.Url("/m.gguf"), dest_, Options());
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(ReadFile(dest_), content_);
  EXPECT_EQ(r->requests, 2);
  EXPECT_EQ(server_.Requests()[1].Header("range"), "");
}

TEST_F(DownloadTest, NoResumeDeletesThePartial) {
  WriteFile(net::PartialPath(dest_), "garbage");
  server_.SetRoute("/m.gguf", test::HttpRoute::Body(content_));
  net::DownloadOptions o = Options();
  o.resume = false;
  auto r = net::Download(server_.Url("/m.gguf"), dest_, o);
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(ReadFile(dest_), content_);
  EXPECT_EQ(server_.Requests()[0].Header("range"), "");
}

TEST_F(DownloadTest, StalledConnectionTimesOutAndKeepsPartial) {
  // libcurl averages the speed over a few seconds: a small burst keeps it under the limit at once.
  server_.SetRoute("/m.gguf", test::HttpRoute::Body(content_).Stall(2000, 10));
  net::DownloadOptions o = Options();
  o.stall_timeout_s = 1;
  const auto t0 = std::chrono::steady_clock::now();
  auto r = net::Download(server_.Url("/m.gguf"), dest_, o);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_FALSE(r.ok());
  EXPECT_LT(s, 6.0);  // the server would stay silent for 10 s
  EXPECT_NE(r.message().find("network error"), std::string::npos) << r.message();
  EXPECT_EQ(fs::file_size(net::PartialPath(dest_)), 2000u);
}

TEST_F(DownloadTest, ConnectionRefusedIsANetworkError) {
  int port;
  {
    test::TestHttpServer closed;  // a port that was free a moment ago
    port = closed.port();
  }
  auto r = net::Download("http://127.0.0.1:" + std::to_string(port) + "/m", dest_, Options());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.message().find("network error"), std::string::npos) << r.message();
  EXPECT_FALSE(fs::exists(net::PartialPath(dest_)));
}

TEST_F(DownloadTest, RejectsOtherSchemesAndBadHashes) {
  EXPECT_FALSE(net::Download("ftp://example.com/m.gguf", dest_, Options()).ok());
  EXPECT_FALSE(net::Download("file:///etc/passwd", dest_, Options()).ok());
  EXPECT_FALSE(net::Download("m.gguf", dest_, Options()).ok());
  net::DownloadOptions o = Options();
  o.expected_sha256 = "1234";
  auto r = net::Download(server_.Url("/m"), dest_, o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.message().find("invalid sha256"), std::string::npos);
  EXPECT_TRUE(server_.Requests().empty());
}

TEST_F(DownloadTest, ProgressReportsGrowingBytesAndTotal) {
  server_.SetRoute("/m.gguf", test::HttpRoute::Body(content_).Drop(100000, 1));
  ASSERT_FALSE(net::Download(server_.Url("/m.gguf"), dest_, Options()).ok());
  std::vector<net::DownloadProgress> seen;
  net::DownloadOptions o = Options();
  o.progress = [&](const net::DownloadProgress& p) { seen.push_back(p); };
  auto r = net::Download(server_.Url("/m.gguf"), dest_, o);
  ASSERT_TRUE(r.ok()) << r.message();
  ASSERT_FALSE(seen.empty());
  uint64_t prev = 0;
  for (const auto& p : seen) {
    EXPECT_GT(p.bytes, prev);
    EXPECT_EQ(p.total, int64_t(content_.size()));
    EXPECT_EQ(p.resumed_from, 100000u);
    prev = p.bytes;
  }
  EXPECT_EQ(seen.back().bytes, content_.size());
}

TEST_F(DownloadTest, EmptyFile) {
  server_.SetRoute("/empty", test::HttpRoute::Body(""));
  net::DownloadOptions o = Options();
  o.expected_sha256 = Sha256::HexOf("");
  auto r = net::Download(server_.Url("/empty"), dest_, o);
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_TRUE(fs::exists(dest_));
  EXPECT_EQ(fs::file_size(dest_), 0u);
}

}  // namespace
}  // namespace brisk
