// `brisk logits -m MODEL --tokens 1,2,3 -o FILE`: logits of every position in the golden file
// format, so anyone can hold brisk against another implementation.
#include <cstdio>
#include <memory>
#include <numeric>
#include <string>

#include "cli/cli_util.h"
#include "cli/commands.h"
#include "formats/logits_file.h"
#include "model/default_model.h"
#include "model/forward.h"
#include "model/synth.h"

namespace brisk::cli {
namespace {

struct LogitsOptions {
  std::string model;
  std::string tokens;
  std::string output;
  int threads = 0;
};

int RunLogits(const LogitsOptions& o) {
  auto tokens = ParseTokenList(o.tokens);
  if (!tokens.ok()) return ReportError(tokens.status());
  auto path = ResolveModelPath(o.model);
  if (!path.ok()) return ReportError(path.status());
  auto model = Model::Load(*path);
  if (!model.ok()) return ReportError(model.status());
  const ModelConfig& c = (*model)->config();
  if (IsSynthetic(**model)) std::fprintf(stderr, "%s\n", kSyntheticNotice);
  ThreadPool pool(o.threads);
  ReferenceForward fwd(**model, pool);
  KvCache kv(c, int(tokens->size()));
  std::vector<int32_t> rows(tokens->size());
  std::iota(rows.begin(), rows.end(), 0);
  LogitsFile out;
  out.n_tokens = int32_t(tokens->size());
  out.n_vocab = c.n_vocab;
  out.data.resize(size_t(out.n_tokens) * size_t(out.n_vocab));
  Status st = fwd.Run(*tokens, 0, kv, rows, out.data.data());
  if (!st.ok()) return ReportError(st);
  st = WriteLogitsFile(o.output, out);
  if (!st.ok()) return ReportError(st);
  return 0;
}

}  // namespace

CommandFn AddLogitsCommand(CLI::App& app) {
  auto o = std::make_shared<LogitsOptions>();
  CLI::App* sub = app.add_subcommand("logits", "Write the logits of every position to a file");
  sub->add_option("-m,--model", o->model,
                  "GGUF file or HF directory (default: the embedded synthetic Qwen2.5-0.5B)");
  sub->add_option("--tokens", o->tokens, "token ids, comma-separated")->required();
  sub->add_option("-o,--output", o->output, "output file (int32 n, int32 vocab, f32 rows)")
      ->required();
  sub->add_option("-t,--threads", o->threads, "compute threads (default: all cores)");
  return [o] { return RunLogits(*o); };
}

}  // namespace brisk::cli
