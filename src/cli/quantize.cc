// `brisk quantize IN OUT TYPE`: GGUF or HF directory -> GGUF of a file type (llama.cpp's recipe).
#include <unistd.h>

#include <cstdio>
#include <memory>
#include <string>

#include "cli/cli_util.h"
#include "cli/commands.h"
#include "model/quantize_model.h"

namespace brisk::cli {
namespace {

struct QuantizeCliOptions {
  std::string input, output, type;
  int threads = 0;
};

int RunQuantize(const QuantizeCliOptions& c) {
  QuantizeOptions o;
  o.threads = c.threads;
  auto type = ParseWritableFileType(c.type);
  if (!type.ok()) return ReportError(type.status());
  o.type = *type;
  const bool tty = isatty(STDERR_FILENO);
  const double t0 = NowSeconds();
  o.progress = StderrProgress(t0, /*bar=*/false);
  Status st = QuantizeGguf(c.input, c.output, o);
  if (tty) std::fprintf(stderr, "\n");
  if (!st.ok()) return ReportError(st);
  std::fprintf(stderr, "wrote %s (%s) in %.1f s\n", c.output.c_str(),
               FileTypeString(o.type).c_str(), NowSeconds() - t0);
  return 0;
}

}  // namespace

CommandFn AddQuantizeCommand(CLI::App& app) {
  auto o = std::make_shared<QuantizeCliOptions>();
  CLI::App* sub = app.add_subcommand("quantize", "Rewrite a model with another file type");
  sub->add_option("input", o->input, "source GGUF file or Hugging Face directory")->required();
  sub->add_option("output", o->output, "output GGUF file")->required();
  sub->add_option("type", o->type,
                  "f32 | f16 | bf16 | q8_0 | q4_0 | q4_1 | q5_0 | q5_1 | q4_k_m | q5_k_m | q6_k | "
                  "iq4_nl | iq4_xs")
      ->required();
  sub->add_option("-t,--threads", o->threads, "threads (default: all cores)");
  return [o] { return RunQuantize(*o); };
}

}  // namespace brisk::cli
