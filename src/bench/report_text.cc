// BenchReport as text: the terminal table, CSV (RFC 4180) and Markdown. The table and Markdown
// take their header lines and columns from report_columns.h, as the HTML page does.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <string>

#include "bench/bench_report.h"
#include "bench/report_columns.h"

namespace brisk {
namespace {

// Display width of UTF-8 text: code points, not bytes (labels and names may be non-ASCII).
size_t Width(const std::string& s) {
  size_t n = 0;
  for (unsigned char ch : s) n += (ch & 0xC0) != 0x80;
  return n;
}

// One line of cell text for a table: a newline would end the row, and `|` would split the cell
// (Markdown reads `\|` as a literal bar). `<` and `>` would be taken as HTML by Markdown viewers.
std::string Cell(const std::string& s, bool markdown) {
  std::string out;
  for (char ch : s) {
    if (ch == '\n' || ch == '\r' || ch == '\t')
      out += ' ';
    else if (ch == '|')
      out += "\\|";
    else if (markdown && ch == '<')
      out += "&lt;";
    else if (markdown && ch == '>')
      out += "&gt;";
    else
      out += ch;
  }
  return out;
}

// The result table with padded columns; the same text is valid GitHub Markdown.
std::string Table(const BenchReport& r, bool markdown) {
  const std::vector<ReportColumn> cols = ReportColumns(r);
  std::vector<std::vector<std::string>> rows;
  std::vector<size_t> width(cols.size());
  for (size_t c = 0; c < cols.size(); ++c) width[c] = Width(Cell(cols[c].header, markdown));
  for (const BenchPoint& p : r.points) {
    std::vector<std::string> row;
    for (size_t c = 0; c < cols.size(); ++c) {
      row.push_back(Cell(cols[c].cell(p), markdown));
      width[c] = std::max(width[c], Width(row.back()));
    }
    rows.push_back(std::move(row));
  }
  auto line = [&](auto text_of) {
    std::string s = "|";
    for (size_t c = 0; c < cols.size(); ++c) {
      std::string t = text_of(c);
      std::string pad(width[c] - Width(t), ' ');
      s += " " + (cols[c].numeric ? pad + t : t + pad) + " |";
    }
    return s + "\n";
  };
  std::string s = line([&](size_t c) { return Cell(cols[c].header, markdown); });
  s += "|";
  for (size_t c = 0; c < cols.size(); ++c)
    s += std::string(width[c] + 1, '-') + (cols[c].numeric ? ":" : "-") + "|";
  s += "\n";
  for (const auto& row : rows) s += line([&](size_t c) { return row[c]; });
  return s;
}

// Shortest text that reads back as the same double ("0.1", "1e+300", "inf").
std::string Shortest(double v) {
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, res.ptr);
}

// RFC 4180: a field with a comma, quote, CR or LF is quoted, and its quotes doubled.
std::string CsvField(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char ch : s) out += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return out + "\"";
}

}  // namespace

std::string BenchReport::ToTable() const {
  std::string s;
  for (const auto& [key, value] : ReportHeader(*this)) s += key + ": " + value + "\n";
  s += "\n" + Table(*this, false);
  std::vector<std::string> failures = FailureLines(*this);
  if (!failures.empty()) {
    s += "\nfailures:\n";
    for (const std::string& f : failures) s += "  " + f + "\n";
  }
  return s;
}

std::string BenchReport::ToMarkdown() const {
  std::string s = "# brisk bench report\n\n";
  if (synthetic) s += std::string("> **Synthetic model** (") + kSyntheticNote + ").\n\n";
  for (const auto& [key, value] : ReportHeader(*this))
    s += "- **" + key + "**: " + Cell(value, true) + "\n";
  s += "\n" + Table(*this, true);
  std::vector<std::string> failures = FailureLines(*this);
  if (!failures.empty()) {
    s += "\n**Failures**\n\n";
    for (const std::string& f : failures) s += "- " + Cell(f, true) + "\n";
  }
  return s;
}

std::string BenchReport::ToCsv() const {
  // Every numeric field of a point, flat; CRLF line ends as RFC 4180 has them.
  std::vector<std::string> head = {"label",
                                   "concurrency",
                                   "request_rate",
                                   "max_num_seqs",
                                   "max_num_batched_tokens",
                                   "max_prefill_chunk",
                                   "batch_policy",
                                   "requests",
                                   "successes",
                                   "failures",
                                   "wall_s",
                                   "prompt_tokens",
                                   "output_tokens",
                                   "output_tok_s",
                                   "total_tok_s",
                                   "request_s",
                                   "goodput_s",
                                   "slo_attainment"};
  const char* latencies[] = {"ttft_ms", "tpot_ms", "itl_ms", "e2e_ms"};
  const char* stats[] = {"count", "mean", "min", "p50", "p90", "p99", "max"};
  for (const char* l : latencies)
    for (const char* st : stats) head.push_back(std::string(l) + "_" + st);
  for (const char* h : {"peak_rss_mib", "server_has", "server_steps", "server_mean_batch_seqs",
                        "server_mean_batch_tokens", "server_preemptions",
                        "server_prefix_queried_tokens", "server_prefix_hit_tokens",
                        "server_generation_tokens", "server_kv_usage_max", "failure_messages"})
    head.push_back(h);

  std::string s;
  auto row = [&](const std::vector<std::string>& fields) {
    for (size_t i = 0; i < fields.size(); ++i) s += (i ? "," : "") + CsvField(fields[i]);
    s += "\r\n";
  };
  row(head);
  for (const BenchPoint& p : points) {
    auto i = [](int64_t v) { return std::to_string(v); };
    std::vector<std::string> f = {p.label,
                                  i(p.concurrency),
                                  Shortest(p.request_rate),
                                  i(p.max_num_seqs),
                                  i(p.max_num_batched_tokens),
                                  i(p.max_prefill_chunk),
                                  p.batch_policy,
                                  i(p.requests),
                                  i(p.successes),
                                  i(p.failures),
                                  Shortest(p.wall_s),
                                  i(p.prompt_tokens),
                                  i(p.output_tokens),
                                  Shortest(p.output_tok_s),
                                  Shortest(p.total_tok_s),
                                  Shortest(p.request_s),
                                  Shortest(p.goodput_s),
                                  Shortest(p.slo_attainment)};
    for (const LatencySummary* l : {&p.ttft_ms, &p.tpot_ms, &p.itl_ms, &p.e2e_ms}) {
      f.push_back(i(l->count));
      for (double v : {l->mean, l->min, l->p50, l->p90, l->p99, l->max}) f.push_back(Shortest(v));
    }
    const ServerSide& sv = p.server;
    for (const std::string& v :
         {Shortest(p.peak_rss_mib), std::string(sv.has ? "1" : "0"), i(sv.steps),
          Shortest(sv.mean_batch_seqs), Shortest(sv.mean_batch_tokens), i(sv.preemptions),
          i(sv.prefix_queried_tokens), i(sv.prefix_hit_tokens), i(sv.generation_tokens),
          Shortest(sv.kv_usage_max)})
      f.push_back(v);
    std::string messages;
    for (const std::string& m : p.failure_messages) messages += (messages.empty() ? "" : "; ") + m;
    f.push_back(messages);
    row(f);
  }
  return s;
}

}  // namespace brisk
