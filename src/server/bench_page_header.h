// The frame the server's /bench page puts around a `brisk bench` report (issue 32): the top bar
// of every UI page (brand, model, Chat / Dashboard / Bench), and a verdict on whether the report
// was measured on this server. The report file on disk has neither: it is opened offline, where
// "this server" means nothing.
#pragma once

#include <string>

#include "bench/bench_report.h"

namespace brisk::server {

// Who shows the report: this server's model id and the Host header the browser sent.
struct BenchPageServer {
  std::string model_id;  // "" = unknown
  std::string host;      // "host[:port]", "" = unknown
};

enum class ReportOrigin {
  kThisServer,   // measured over HTTP against this host:port, with this model
  kOtherServer,  // another URL, or another model
  kInProcess,    // `brisk bench` loaded the model itself: no server was measured
};

// The report is untrusted input: an unparsable URL is simply "another server".
ReportOrigin OriginOf(const BenchReport& report, const BenchPageServer& server);

// The top bar's CSS and markup (for the "no report yet" page too); the model id is escaped.
std::string_view BenchTopBarCss();
std::string BenchTopBar(const std::string& model_id);

// The CSS, top bar and verdict for BenchReport::ToHtml; all text in them is escaped.
ReportPageChrome BenchPageChrome(const BenchReport& report, const BenchPageServer& server);

}  // namespace brisk::server
