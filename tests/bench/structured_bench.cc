// Structured-output micro-benchmark (not a test): what enforcing a JSON Schema costs, for every
// schema of tests/data/structured/schemas on a model's real vocabulary (the synthetic
// Qwen2.5-0.5B: 151k tokens):
//   - compile time per schema (request schema -> grammar -> compiled grammar), p50 / p99 / max;
//   - memory per compiled grammar (CompiledGrammarBytes), and what one request's matcher and
//     mask cache hold at the end of its answer;
//   - the time a decode step adds per constrained row: the engine's constrained draw
//     (SampleConstrained: the check, the trie-walked or cached mask, the second draw, Accept)
//     minus a plain draw on the same logits row, on the thread's CPU clock.
// Logits are random normal rows (scale 3), as the random-weight synthetic model gives: the model
// follows no format by itself, so at every narrow position its draw is refused and the mask is
// needed — the mask's worst case; a trained model's first draw is usually allowed.
//
// Usage: structured_bench --model synth.gguf [--schemas DIR] [--max-tokens N] [--only SUBSTRING]
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "bench/stats.h"
#include "engine/batch_sampler.h"
#include "engine/grammar_constraint.h"
#include "engine/sampler.h"
#include "model/model.h"
#include "model/model_tokenizer.h"
#include "normal_row.h"
#include "runtime/machine_probe.h"
#include "server/output_constraints.h"
#include "structured/matcher.h"

using namespace brisk;
namespace fs = std::filesystem;

namespace {

struct Options {
  std::string model;
  std::string schemas = BRISK_SOURCE_DIR "/tests/data/structured/schemas";
  int max_tokens = 256;
  std::string only;
};

struct SchemaFile {
  std::string name;
  server::StructuredOutput spec;
};

std::vector<SchemaFile> ReadSchemas(const Options& o) {
  std::vector<SchemaFile> out;
  for (const auto& e : fs::directory_iterator(o.schemas)) {
    if (e.path().extension() != ".json") continue;
    const std::string name = e.path().filename().string();
    if (!o.only.empty() && name.find(o.only) == std::string::npos) continue;
    std::ifstream in(e.path());
    const auto doc = nlohmann::ordered_json::parse(in);
    SchemaFile f{name, {}};
    f.spec.kind = server::StructuredOutput::Kind::kJsonSchema;
    f.spec.field = "response_format";
    f.spec.schema = doc.at("schema");
    f.spec.strict = doc.value("strict", false);
    out.push_back(std::move(f));
  }
  std::sort(out.begin(), out.end(),
            [](const SchemaFile& a, const SchemaFile& b) { return a.name < b.name; });
  return out;
}

struct Answer {
  std::vector<double> added_ms;  // per step: constrained draw minus plain draw
  std::vector<double> plain_ms;  // per step: the plain draw alone
  bool complete = false;         // ended where the grammar allows
};

// One seeded temperature-1.0 answer of up to max_tokens, as the engine samples it.
Answer Decode(const Tokenizer& tok, const std::vector<std::vector<float>>& rows,
              GrammarConstraint* constraint, int max_tokens, uint64_t seed) {
  SamplingParams params;
  params.temperature = 1.0f;
  const int V = tok.n_vocab();
  Sampler constrained(params, V, seed), plain(params, V, seed);
  constraint->SetMaxTokens(max_tokens);
  std::vector<float> work(static_cast<size_t>(V)), saved;
  std::vector<int32_t> context;
  Answer a;
  for (int step = 0; step < max_tokens; ++step) {
    const std::vector<float>& row = rows[size_t(step) % rows.size()];
    std::copy(row.begin(), row.end(), work.begin());
    const double p0 = ThreadCpuSeconds();
    plain.Sample(work.data(), context, {});
    const double p1 = ThreadCpuSeconds();
    std::copy(row.begin(), row.end(), work.begin());
    const double c0 = ThreadCpuSeconds();
    const SampleResult r =
        SampleConstrained(constrained, *constraint, V, work.data(), context, &saved, {});
    const double c1 = ThreadCpuSeconds();
    a.plain_ms.push_back((p1 - p0) * 1e3);
    a.added_ms.push_back(((c1 - c0) - (p1 - p0)) * 1e3);
    if (r.token < 0) return a;
    if (tok.IsEog(r.token)) {
      a.complete = true;
      return a;
    }
    context.push_back(r.token);
  }
  a.complete = constraint->Allows(tok.eog_ids().front());
  return a;
}

void PrintSummary(const char* what, std::vector<double> v, const char* unit) {
  const LatencySummary s = Summarize(std::move(v));
  std::printf("%-44s p50 %9.3f  mean %9.3f  p90 %9.3f  p99 %9.3f  max %9.3f %s\n", what, s.p50,
              s.mean, s.p90, s.p99, s.max, unit);
}

bool ParseArgs(int argc, char** argv, Options* o) {
  for (int i = 1; i < argc; ++i) {
    const bool has_value = i + 1 < argc;
    if (!std::strcmp(argv[i], "--model") && has_value) {
      o->model = argv[++i];
    } else if (!std::strcmp(argv[i], "--schemas") && has_value) {
      o->schemas = argv[++i];
    } else if (!std::strcmp(argv[i], "--max-tokens") && has_value) {
      o->max_tokens = std::atoi(argv[++i]);
    } else if (!std::strcmp(argv[i], "--only") && has_value) {
      o->only = argv[++i];
    } else {
      return false;
    }
  }
  return !o->model.empty() && o->max_tokens > 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (!ParseArgs(argc, argv, &o)) {
    std::fprintf(stderr,
                 "usage: %s --model M.gguf [--schemas DIR] [--max-tokens N] [--only SUBSTRING]\n",
                 argv[0]);
    return 2;
  }
  auto model = Model::Load(o.model);
  if (!model.ok()) return std::fprintf(stderr, "%s\n", model.message().c_str()), 1;
  auto tokenizer = TokenizerForModel(**model);
  if (!tokenizer.ok()) return std::fprintf(stderr, "%s\n", tokenizer.message().c_str()), 1;
  const Tokenizer& tok = *tokenizer;
  const double v0 = ThreadCpuSeconds();
  const auto vocab = std::make_shared<GrammarVocab>(tok);
  std::printf("vocabulary trie: %d tokens, %.1f MB, built in %.0f ms (once per model)\n",
              tok.n_vocab(), double(vocab->trie().memory_bytes()) / 1e6,
              (ThreadCpuSeconds() - v0) * 1e3);

  std::vector<std::vector<float>> rows;
  for (uint64_t r = 1; r <= 16; ++r) rows.push_back(NormalRow(tok.n_vocab(), r, 3.0));

  std::vector<double> compile_ms, grammar_kb, request_mb, added_ms, plain_ms;
  int answers = 0, complete = 0, refused = 0;
  uint64_t seed = 1;
  for (const SchemaFile& f : ReadSchemas(o)) {
    const double c0 = ThreadCpuSeconds();
    auto grammar = server::GrammarFor(f.spec);
    auto compiled =
        grammar.ok() ? structured::CompileGrammar(*grammar)
                     : Result<std::shared_ptr<const structured::CompiledGrammar>>(grammar.status());
    const double c1 = ThreadCpuSeconds();
    if (!compiled.ok()) {
      ++refused;
      std::fprintf(stderr, "%s: %s\n", f.name.c_str(), compiled.message().c_str());
      continue;
    }
    compile_ms.push_back((c1 - c0) * 1e3);
    grammar_kb.push_back(double(structured::CompiledGrammarBytes(**compiled)) / 1e3);
    GrammarConstraint constraint(vocab, *compiled);
    Answer a = Decode(tok, rows, &constraint, o.max_tokens, seed++);
    request_mb.push_back(double(constraint.memory_bytes()) / 1e6);
    ++answers;
    complete += a.complete;
    added_ms.insert(added_ms.end(), a.added_ms.begin(), a.added_ms.end());
    plain_ms.insert(plain_ms.end(), a.plain_ms.begin(), a.plain_ms.end());
  }
  std::printf("%zu schemas compiled (%d refused), %d answers (%d complete), %zu decode steps\n",
              compile_ms.size(), refused, answers, complete, added_ms.size());
  if (compile_ms.empty()) return 1;
  PrintSummary("compile time per schema", compile_ms, "ms");
  PrintSummary("compiled grammar size", grammar_kb, "kB");
  PrintSummary("per request at the end (matcher + masks)", request_mb, "MB");
  PrintSummary("plain draw per step", plain_ms, "ms");
  PrintSummary("added per step by the constraint", added_ms, "ms");
  return complete == answers ? 0 : 1;
}
