// `brisk pull NAME|URL [-o DIR] [--sha256 HEX]`: downloads a model file over HTTP(S) with resume
// and sha256 verification; `brisk pull --list` prints the built-in catalogue. The path of the file
// goes to stdout, everything else (progress, messages) to stderr.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

#include "cli/cli_util.h"
#include "cli/commands.h"
#include "model/default_model.h"
#include "net/http_download.h"
#include "net/model_catalogue.h"
#include "util/ascii.h"
#include "util/sha256.h"

namespace brisk::cli {
namespace {
namespace fs = std::filesystem;

struct PullOptions {
  std::string what;
  std::string dir;
  std::string sha256;
  bool list = false;
  bool force = false;
  int retries = 3;
  long timeout_s = 60;
};

bool IsUrl(const std::string& s) { return s.find("://") != std::string::npos; }

// The last path segment of a URL, without query or fragment.
std::string FileNameOfUrl(const std::string& url) {
  std::string path = url.substr(url.find("://") + 3);
  path = path.substr(0, path.find_first_of("?#"));
  const size_t slash = path.find('/');
  if (slash == std::string::npos) return "";
  path = path.substr(slash);
  std::string name = path.substr(path.rfind('/') + 1);
  if (name == "." || name == "..") return "";
  return name;
}

std::string Megabytes(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f MB", bytes / 1e6);
  return buf;
}

std::string Duration(double s) {
  if (!(s >= 0) || s > 99 * 3600) return "--:--";
  const long t = long(s + 0.5);
  char buf[32];
  if (t >= 3600)
    std::snprintf(buf, sizeof(buf), "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
  else
    std::snprintf(buf, sizeof(buf), "%ld:%02ld", t / 60, t % 60);
  return buf;
}

// A bar redrawn in place on a terminal, a line every few seconds otherwise.
class ProgressReporter {
 public:
  explicit ProgressReporter(bool tty) : tty_(tty) {}

  void Update(const net::DownloadProgress& p) {
    const double now = NowSeconds();
    const bool done = p.total >= 0 && int64_t(p.bytes) >= p.total;
    if (!done && now - last_ < (tty_ ? 0.1 : 5.0)) return;
    last_ = now;
    Print(p, done);
  }

  // Ends the bar's line (terminal) once something was drawn.
  void Finish() {
    if (tty_ && drawn_) std::fputc('\n', stderr);
    drawn_ = false;
  }

 private:
  void Print(const net::DownloadProgress& p, bool done) {
    const double speed = p.elapsed_s > 0 ? double(p.bytes - p.resumed_from) / p.elapsed_s : 0;
    std::string line;
    char pct[16] = "";
    if (p.total > 0) {
      const double frac = double(p.bytes) / double(p.total);
      std::snprintf(pct, sizeof(pct), "%3d%%", int(frac * 100));
      if (tty_) {
        const int width = 30, fill = int(frac * width);
        line = "[" + std::string(fill, '#') + std::string(width - fill, '-') + "] ";
      }
      line +=
          std::string(pct) + "  " + Megabytes(double(p.bytes)) + " / " + Megabytes(double(p.total));
    } else {
      line += Megabytes(double(p.bytes));
    }
    char rate[64];
    std::snprintf(rate, sizeof(rate), "  %.1f MB/s", speed / 1e6);
    line += rate;
    if (p.total > 0 && speed > 0)
      line += "  ETA " + Duration(done ? 0 : double(p.total - int64_t(p.bytes)) / speed);
    if (tty_) {
      std::fprintf(stderr, "\r%s\x1b[K", line.c_str());
      drawn_ = true;
    } else {
      std::fprintf(stderr, "pull: %s\n", line.c_str());
    }
    std::fflush(stderr);
  }

  bool tty_;
  bool drawn_ = false;
  double last_ = -1e9;
};

int ListCatalogue() {
  std::printf("%-34s %s\n", "NAME", "URL");
  for (const net::CatalogueEntry& e : net::Catalogue())
    std::printf("%-34s %s\n", e.name.c_str(), net::CatalogueUrl(e).c_str());
  std::printf("(a name without ':TYPE' means :%s)\n",
              std::string(net::kDefaultCatalogueType).c_str());
  return 0;
}

int RunPull(const PullOptions& o) {
  if (o.list) return ListCatalogue();
  if (o.what.empty())
    return ReportError(Status::Error("pull needs a NAME or URL (see `brisk pull --list`)"));

  std::string url, file, expected = o.sha256, source = "--sha256";
  if (IsUrl(o.what)) {
    url = o.what;
    file = FileNameOfUrl(url);
    if (file.empty())
      return ReportError(Status::Error("cannot tell a file name from the URL " + url));
  } else {
    const net::CatalogueEntry* e = net::FindInCatalogue(o.what);
    if (!e)
      return ReportError(Status::Error("'" + o.what +
                                       "' is not in the catalogue: give a URL, or one of the "
                                       "names that `brisk pull --list` prints"));
    url = net::CatalogueUrl(*e);
    file = e->file;
    if (expected.empty() && !e->sha256.empty()) {
      expected = e->sha256;
      source = "the catalogue";
    }
  }
  if (!expected.empty() && !Sha256::IsHexDigest(expected))
    return ReportError(
        Status::Error("invalid --sha256 '" + expected + "': expected 64 hex digits"));

  const std::string dir = o.dir.empty() ? BriskHome() : o.dir;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return ReportError(Status::Error("cannot create directory " + dir + ": " + ec.message()));
  const std::string dest = (fs::path(dir) / file).string();
  const std::string partial = net::PartialPath(dest);

  if (!o.force && fs::exists(dest, ec)) {
    if (!expected.empty()) {
      auto hex = Sha256::HexOfFile(dest);
      if (!hex.ok()) return ReportError(hex.status());
      if (*hex != AsciiLower(expected))
        return ReportError(Status::Error(dest + " exists but its sha256 is " + *hex + ", not " +
                                         AsciiLower(expected) + " (--force downloads it again)"));
    }
    std::fprintf(stderr, "%s is already here (--force downloads it again)\n", dest.c_str());
    std::printf("%s\n", dest.c_str());
    return 0;
  }

  std::fprintf(stderr, "pulling %s\n  -> %s\n", url.c_str(), dest.c_str());
  if (!o.force && fs::is_regular_file(partial, ec))
    std::fprintf(stderr, "resuming %s (%ju bytes already there)\n", partial.c_str(),
                 uintmax_t(fs::file_size(partial, ec)));

  ProgressReporter reporter(isatty(STDERR_FILENO));
  net::DownloadOptions d;
  d.expected_sha256 = expected;
  d.expected_sha256_source = source;
  d.resume = !o.force;
  d.retries = o.retries;
  d.retry_delay_s = 2;
  d.stall_timeout_s = o.timeout_s;
  d.progress = [&reporter](const net::DownloadProgress& p) { reporter.Update(p); };
  auto r = net::Download(url, dest, d);
  reporter.Finish();
  if (!r.ok()) return ReportError(r.status());

  std::fprintf(stderr, "saved %s (%s)\n", dest.c_str(), Megabytes(double(r->size)).c_str());
  if (r->resumed_from > 0)
    std::fprintf(stderr, "resumed: %ju bytes came from the earlier partial download\n",
                 uintmax_t(r->resumed_from));
  if (r->verified_by.empty())
    std::fprintf(stderr, "sha256 %s (not verified: no checksum known; pass --sha256 to check)\n",
                 r->sha256.c_str());
  else
    std::fprintf(stderr, "sha256 %s verified (from %s)\n", r->sha256.c_str(),
                 r->verified_by.c_str());
  std::printf("%s\n", dest.c_str());
  return 0;
}

}  // namespace

CommandFn AddPullCommand(CLI::App& app) {
  auto o = std::make_shared<PullOptions>();
  CLI::App* sub = app.add_subcommand(
      "pull",
      "Download a model file (a catalogue NAME or an http(s) URL) with resume and sha256 check");
  sub->add_option("what", o->what, "catalogue name (see --list) or URL");
  sub->add_option("-o,--output", o->dir,
                  "directory to save into (default: $BRISK_HOME, ~/.cache/brisk)");
  sub->add_option("--sha256", o->sha256,
                  "expected sha256 (default: the catalogue's, or the server's X-Linked-ETag)");
  sub->add_flag("--list", o->list, "print the catalogue and exit");
  sub->add_flag("--force", o->force, "download again even if the file or a partial file is there");
  sub->add_option("--retries", o->retries, "attempts to resume after a network error")
      ->check(CLI::Range(0, 100));
  sub->add_option("--timeout", o->timeout_s, "seconds a stalled connection (under 1 kB/s) may last")
      ->check(CLI::Range(1, 3600));
  sub->footer("Catalogue names resolve against $HF_ENDPOINT (default https://huggingface.co).");
  return [o] { return RunPull(*o); };
}

}  // namespace brisk::cli
