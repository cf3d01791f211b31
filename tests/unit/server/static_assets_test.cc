// The embedded web UI (server/static_assets.h): the table must hold exactly the files of web/,
// byte for byte, plus KaTeX under /vendor/katex/ (cmake/embed_web.cmake stages it from
// BRISK_KATEX_DIR, its CSS rewritten to woff2-only fonts), with the right content types and
// ETags; lookups must never resolve anything outside the table; and the pages must only
// reference assets that exist and that the Content-Security-Policy allows (no inline scripts or
// styles, nothing from other origins).
#include "server/static_assets.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>

#include "util/sha256.h"

namespace brisk::server {
namespace {

namespace fs = std::filesystem;

fs::path WebDir() { return fs::path(BRISK_TEST_DATA_DIR) / ".." / ".." / "web"; }

std::string ReadFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// web/ as the build should have embedded it: "/rel/path" -> bytes (dotfiles and editor
// backups are skipped by cmake/embed_web.cmake).
std::map<std::string, std::string> FilesOnDisk() {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(WebDir())) {
    if (!e.is_regular_file()) continue;
    std::string rel = fs::relative(e.path(), WebDir()).generic_string();
    if (rel.front() == '.' || rel.find("/.") != std::string::npos || rel.back() == '~') continue;
    out["/" + rel] = ReadFile(e.path());
  }
  return out;
}

constexpr std::string_view kKatex = "/vendor/katex/";

TEST(StaticAssets, TableMatchesWebDirectoryByteForByte) {
  auto disk = FilesOnDisk();
  ASSERT_FALSE(disk.empty()) << "no files under " << WebDir();
  auto assets = AllStaticAssets();
  size_t vendored = std::count_if(assets.begin(), assets.end(),
                                  [](const StaticAsset& a) { return a.path.starts_with(kKatex); });
  EXPECT_EQ(assets.size() - vendored, disk.size()) << "re-run cmake if web/ changed";
  for (const auto& [path, bytes] : disk) {
    const StaticAsset* a = FindStaticAsset(path);
    ASSERT_NE(a, nullptr) << path << " is not embedded";
    EXPECT_EQ(a->path, path);
    EXPECT_TRUE(a->bytes == bytes) << path << ": embedded bytes differ from the file";
  }
}

// KaTeX as Debian's libjs-katex / fonts-katex ship it: the script and each font byte for byte;
// the CSS names only woff2 fonts, and every one it names is embedded.
TEST(StaticAssets, KatexIsEmbeddedWithItsWoff2Fonts) {
  const fs::path dir = BRISK_KATEX_DIR;
  const StaticAsset* js = FindStaticAsset("/vendor/katex/katex.min.js");
  const StaticAsset* css = FindStaticAsset("/vendor/katex/katex.min.css");
  ASSERT_NE(js, nullptr);
  ASSERT_NE(css, nullptr);
  EXPECT_TRUE(js->bytes == ReadFile(dir / "katex.min.js"));
  std::string text(css->bytes);
  EXPECT_EQ(text.find(".woff)"), std::string::npos);
  EXPECT_EQ(text.find(".ttf)"), std::string::npos);
  const std::regex font_ref(R"re(url\((fonts/[A-Za-z0-9_-]+\.woff2)\))re");
  int fonts = 0;
  for (std::sregex_iterator it(text.begin(), text.end(), font_ref), end; it != end; ++it) {
    std::string rel = (*it)[1];
    const StaticAsset* font = FindStaticAsset(std::string(kKatex) + rel);
    ASSERT_NE(font, nullptr) << rel << " is referenced but not embedded";
    EXPECT_EQ(font->content_type, "font/woff2");
    EXPECT_TRUE(font->bytes == ReadFile(dir / rel)) << rel;
    ++fonts;
  }
  EXPECT_GE(fonts, 19);  // KaTeX 0.16 ships 20 font faces
}

TEST(StaticAssets, TableIsSortedUniqueAndAbsolute) {
  auto assets = AllStaticAssets();
  for (size_t i = 0; i < assets.size(); ++i) {
    ASSERT_FALSE(assets[i].path.empty());
    EXPECT_EQ(assets[i].path.front(), '/');
    EXPECT_EQ(assets[i].path.find(".."), std::string_view::npos);
    if (i > 0) {
      EXPECT_LT(assets[i - 1].path, assets[i].path);
    }
  }
}

TEST(StaticAssets, RootIsTheChatPage) {
  const StaticAsset* root = FindStaticAsset("/");
  const StaticAsset* index = FindStaticAsset("/index.html");
  ASSERT_NE(root, nullptr);
  EXPECT_EQ(root, index);
  EXPECT_EQ(root->content_type, "text/html; charset=utf-8");
  EXPECT_EQ(root->bytes.substr(0, 15), "<!doctype html>");
  EXPECT_NE(root->bytes.find("data-testid=\"message-input\""), std::string_view::npos);
  ASSERT_NE(FindStaticAsset("/dashboard.html"), nullptr);
}

TEST(StaticAssets, ContentTypeFollowsTheExtension) {
  const std::map<std::string, std::string> want = {{".html", "text/html; charset=utf-8"},
                                                   {".css", "text/css; charset=utf-8"},
                                                   {".js", "text/javascript; charset=utf-8"},
                                                   {".svg", "image/svg+xml"},
                                                   {".png", "image/png"},
                                                   {".json", "application/json"},
                                                   {".ico", "image/x-icon"},
                                                   {".txt", "text/plain; charset=utf-8"},
                                                   {".woff2", "font/woff2"}};
  int checked = 0;
  for (const StaticAsset& a : AllStaticAssets()) {
    std::string ext = fs::path(std::string(a.path)).extension().string();
    auto it = want.find(ext);
    ASSERT_NE(it, want.end()) << a.path << " has an extension the table does not serve";
    EXPECT_EQ(a.content_type, it->second) << a.path;
    ++checked;
  }
  EXPECT_GT(checked, 3);
  EXPECT_EQ(FindStaticAsset("/js/chat_page.js")->content_type, "text/javascript; charset=utf-8");
  EXPECT_EQ(FindStaticAsset("/css/style.css")->content_type, "text/css; charset=utf-8");
}

TEST(StaticAssets, EtagIsQuotedSha256PrefixOfTheBytes) {
  for (const StaticAsset& a : AllStaticAssets()) {
    std::string want = "\"" + Sha256::HexOf(a.bytes).substr(0, 32) + "\"";
    EXPECT_EQ(a.etag, want) << a.path;
  }
  // Different files, different validators.
  EXPECT_NE(FindStaticAsset("/index.html")->etag, FindStaticAsset("/dashboard.html")->etag);
}

TEST(StaticAssets, LookupNeverLeavesTheTable) {
  const char* bad[] = {"",
                       "index.html",
                       "/../index.html",
                       "/js/../index.html",
                       "//index.html",
                       "/./index.html",
                       "/%2e%2e/index.html",
                       "/index.html?x=1",
                       "/index.html/",
                       "/INDEX.HTML",
                       "\\index.html",
                       "/js",
                       "/js/",
                       "/../../../etc/passwd",
                       "/web/index.html",
                       "/index.htm"};
  for (const char* p : bad) EXPECT_EQ(FindStaticAsset(p), nullptr) << "'" << p << "'";
  // A NUL inside the path must not truncate the comparison.
  EXPECT_EQ(FindStaticAsset(std::string_view("/index.html\0.png", 16)), nullptr);
  EXPECT_EQ(FindStaticAsset(std::string(100000, '/')), nullptr);
}

TEST(StaticAssets, IfNoneMatch) {
  const std::string tag = "\"0123abcd\"";
  EXPECT_TRUE(IfNoneMatchHits("\"0123abcd\"", tag));
  EXPECT_TRUE(IfNoneMatchHits("  \"0123abcd\"  ", tag));
  EXPECT_TRUE(IfNoneMatchHits("W/\"0123abcd\"", tag));
  EXPECT_TRUE(IfNoneMatchHits("\"zzz\", W/\"0123abcd\"", tag));
  EXPECT_TRUE(IfNoneMatchHits("\"a,b\",\"0123abcd\"", tag));
  EXPECT_TRUE(IfNoneMatchHits("*", tag));
  EXPECT_FALSE(IfNoneMatchHits("", tag));
  EXPECT_FALSE(IfNoneMatchHits("\"0123abce\"", tag));
  EXPECT_FALSE(IfNoneMatchHits("0123abcd", tag));  // unquoted: not an entity tag
  EXPECT_FALSE(IfNoneMatchHits("\"0123abcd", tag));
  EXPECT_FALSE(IfNoneMatchHits("\"0123abcd\"x", tag));
  EXPECT_FALSE(IfNoneMatchHits(",,,", tag));
  EXPECT_FALSE(IfNoneMatchHits("\"\"", ""));
  EXPECT_FALSE(IfNoneMatchHits(std::string(1 << 16, '"'), tag));
}

const std::string* HeaderOf(const HttpResponse& r, const std::string& name) {
  for (const auto& [k, v] : r.headers) {
    if (k == name) return &v;
  }
  return nullptr;
}

TEST(StaticAssets, ResponseCarriesBytesAndHeaders) {
  const StaticAsset* a = FindStaticAsset("/js/chat_page.js");
  ASSERT_NE(a, nullptr);
  HttpResponse r = StaticAssetResponse(*a, nullptr);
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.content_type, "text/javascript; charset=utf-8");
  EXPECT_TRUE(r.body == a->bytes);
  ASSERT_NE(HeaderOf(r, "ETag"), nullptr);
  EXPECT_EQ(*HeaderOf(r, "ETag"), a->etag);
  ASSERT_NE(HeaderOf(r, "Cache-Control"), nullptr);
  EXPECT_EQ(*HeaderOf(r, "Cache-Control"), "no-cache");
  ASSERT_NE(HeaderOf(r, "X-Content-Type-Options"), nullptr);
  const std::string* csp = HeaderOf(r, "Content-Security-Policy");
  ASSERT_NE(csp, nullptr);
  EXPECT_NE(csp->find("default-src 'self'"), std::string::npos);
  EXPECT_NE(csp->find("script-src 'self'"), std::string::npos);
  EXPECT_EQ(csp->find("unsafe-inline"), std::string::npos);

  std::string same(a->etag);
  HttpResponse cached = StaticAssetResponse(*a, &same);
  EXPECT_EQ(cached.status, 304);
  EXPECT_TRUE(cached.body.empty());
  ASSERT_NE(HeaderOf(cached, "ETag"), nullptr);
  EXPECT_EQ(*HeaderOf(cached, "ETag"), a->etag);

  std::string other = "\"not-it\"";
  EXPECT_EQ(StaticAssetResponse(*a, &other).status, 200);
}

// Every local reference in the pages and modules must resolve to an embedded asset, and the
// pages must not depend on anything the CSP blocks (inline script/style, other origins).
TEST(StaticAssets, ReferencesResolveAndRespectTheCsp) {
  const std::regex html_ref(R"re((?:src|href)="([^"#]*)")re");
  const std::regex js_import(R"re((?:import|from)\s*\(?\s*'(\.{0,2}/[^']+)')re");
  int refs = 0;
  for (const StaticAsset& a : AllStaticAssets()) {
    std::string text(a.bytes);
    std::string dir = fs::path(std::string(a.path)).parent_path().generic_string();
    if (a.path.ends_with(".html")) {
      for (std::sregex_iterator it(text.begin(), text.end(), html_ref), end; it != end; ++it) {
        std::string ref = (*it)[1];
        EXPECT_TRUE(ref.rfind("//", 0) != 0 && ref.find("://") == std::string::npos)
            << a.path << " loads from another origin: " << ref;
        if (ref.rfind("/", 0) == 0) {
          EXPECT_NE(FindStaticAsset(ref), nullptr) << a.path << " references missing " << ref;
          ++refs;
        }
      }
      // CSP: every <script> has a src, and no element carries an inline style or handler.
      for (size_t p = text.find("<script"); p != std::string::npos;
           p = text.find("<script", p + 1)) {
        std::string tag = text.substr(p, text.find('>', p) - p);
        EXPECT_NE(tag.find("src="), std::string::npos) << a.path << ": inline script " << tag;
      }
      EXPECT_EQ(text.find("<style"), std::string::npos) << a.path << ": inline <style>";
      EXPECT_EQ(text.find(" style=\""), std::string::npos) << a.path << ": style attribute";
      EXPECT_FALSE(std::regex_search(text, std::regex(R"( on[a-z]+=")")))
          << a.path << ": inline event handler";
    }
    if (a.path.ends_with(".js")) {
      for (std::sregex_iterator it(text.begin(), text.end(), js_import), end; it != end; ++it) {
        std::string ref = (*it)[1];
        std::string target =
            ref[0] == '/' ? ref : fs::path(dir + "/" + ref).lexically_normal().generic_string();
        EXPECT_NE(FindStaticAsset(target), nullptr)
            << a.path << " imports missing " << ref << " (" << target << ")";
        ++refs;
      }
      EXPECT_EQ(text.find("innerHTML"), std::string::npos)
          << a.path << ": innerHTML (model text must never be parsed as HTML)";
    }
  }
  EXPECT_GT(refs, 10);
}

}  // namespace
}  // namespace brisk::server
