// `brisk info [MODEL]`: what a model file holds, from its header alone (nothing is read eagerly).
// `brisk info --machine`: the CPU, its kernel tiers and the one in use (BRISK_ISA, issue 34).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "cli/cli_util.h"
#include "cli/commands.h"
#include "formats/file_type.h"
#include "model/default_model.h"
#include "model/model.h"
#include "model/synth.h"
#include "runtime/cpu_features.h"
#include "runtime/thread_pool.h"

namespace brisk::cli {
namespace {

struct InfoOptions {
  std::string model;
  bool machine = false;
};

int RunMachineInfo() {
  std::printf("cpu:             %s\n", DescribeCpu().c_str());
  std::string tiers;
  for (Isa isa : AllIsas())
    if (IsaSupported(isa)) tiers += (tiers.empty() ? "" : " ") + std::string(IsaName(isa));
  std::printf("kernel tiers:    %s (best %s)\n", tiers.c_str(),
              std::string(IsaName(BestIsa())).c_str());
  std::printf("kernel tier:     %s%s\n", std::string(IsaName(ActiveIsa())).c_str(),
              std::getenv("BRISK_ISA") ? " (BRISK_ISA)" : "");
  std::printf("threads:         %d\n", ThreadPool::DefaultThreads());
  return 0;
}

std::string TokenText(const gguf::File& f, const char* key) {
  auto id = f.GetUInt(key);
  if (!id.ok()) return "-";
  std::string s = std::to_string(*id);
  // Look the id up without materialising the whole vocabulary.
  if (const gguf::Value* v = f.Find("tokenizer.ggml.tokens");
      v && v->type == gguf::ValueType::kArray && v->elem_type == gguf::ValueType::kString &&
      *id < v->count) {
    const uint8_t* p = v->items;
    for (uint64_t k = 0; k < *id; ++k) {
      uint64_t len;
      std::memcpy(&len, p, 8);
      p += 8 + len;
    }
    uint64_t len;
    std::memcpy(&len, p, 8);
    s += " '" + std::string(reinterpret_cast<const char*>(p + 8), len) + "'";
  }
  return s;
}

// The architecture lines both sources share.
void PrintDims(const ModelConfig& c, int64_t params) {
  std::printf("parameters:      %.1f M\n", params / 1e6);
  std::printf("layers:          %d\n", c.n_layer);
  std::printf("embedding:       %d\n", c.n_embd);
  std::printf("heads:           %d (KV heads %d, head dim %d)\n", c.n_head, c.n_head_kv,
              c.head_dim);
  std::printf("feed-forward:    %d\n", c.n_ff);
  std::printf("context length:  %d\n", c.context_length);
  std::printf("rope theta:      %g\n", c.rope_theta);
  std::printf("rms eps:         %g\n", c.rms_eps);
  std::printf("embeddings:      %s\n",
              c.tied_embeddings ? "tied (lm_head = token_embd)" : "untied");
  std::printf("vocab size:      %d\n", c.n_vocab);
}

// A Hugging Face directory: sizes from the shard files, types from the bound weights.
int PrintHfInfo(const std::string& dir, const Model& m) {
  const ModelConfig& c = m.config();
  std::error_code ec;
  size_t bytes = 0;
  int shards = 0;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->path().extension() != ".safetensors") continue;
    std::error_code size_ec;
    const auto n = it->file_size(size_ec);
    if (!size_ec) bytes += size_t(n);
    ++shards;
  }
  std::vector<const WeightTensor*> ts = {&m.weights().token_embd, &m.weights().output_norm};
  if (!c.tied_embeddings) ts.push_back(&m.weights().output);
  for (const LayerWeights& L : m.weights().layers)
    for (const WeightTensor* t : {&L.attn_norm, &L.wq, &L.wk, &L.wv, &L.wo, &L.bq, &L.bk, &L.bv,
                                  &L.q_norm, &L.k_norm, &L.ffn_norm, &L.w_gate, &L.w_up, &L.w_down})
      if (t->present()) ts.push_back(t);
  std::map<std::string, int> hist;
  int64_t params = 0;
  for (const WeightTensor* t : ts) {
    hist[std::string(TypeName(t->type))]++;
    params += t->cols * t->rows;
  }
  std::printf("directory:       %s\n", dir.c_str());
  std::printf("size:            %.1f MiB (%zu bytes), safetensors, %d file%s\n", bytes / 1048576.0,
              bytes, shards, shards == 1 ? "" : "s");
  std::printf("name:            %s\n", c.name.empty() ? "-" : c.name.c_str());
  if (IsSynthetic(m)) std::printf("                 %s\n", kSyntheticNotice);
  std::printf("architecture:    %s\n", c.arch_name.c_str());
  PrintDims(c, params);
  std::printf("tokenizer:       %s\n", m.hf_tokenizer_json().empty()
                                           ? "absent (no tokenizer.json)"
                                           : m.hf_tokenizer_json().c_str());
  std::printf("chat template:   %s\n", m.chat_template().empty() ? "absent" : "present");
  std::printf("tensors:         %zu\n", ts.size());
  for (const auto& [type, count] : hist) std::printf("  %-6s %d\n", type.c_str(), count);
  return 0;
}

int RunInfo(const InfoOptions& o) {
  auto path = ResolveModelPath(o.model);
  if (!path.ok()) return ReportError(path.status());
  auto model = Model::Load(*path);
  if (!model.ok()) return ReportError(model.status());
  const Model& m = **model;
  const ModelConfig& c = m.config();
  if (!m.gguf()) return PrintHfInfo(*path, m);
  const gguf::File& f = *m.gguf();

  std::map<std::string, int> hist;
  int64_t params = 0;
  for (const auto& t : f.tensors()) {
    hist[std::string(TypeName(t.type))]++;
    params += t.n_elements;
  }
  std::printf("file:            %s\n", m.path().c_str());
  std::printf("size:            %.1f MiB (%zu bytes), GGUF v%u\n", f.file_size() / 1048576.0,
              f.file_size(), f.version());
  std::printf("name:            %s\n", c.name.empty() ? "-" : c.name.c_str());
  if (IsSynthetic(m)) std::printf("                 %s\n", kSyntheticNotice);
  std::printf("architecture:    %s\n", c.arch_name.c_str());
  auto ft = f.GetUInt("general.file_type");
  std::printf("file type:       %s\n", ft.ok() ? FileTypeName(uint32_t(*ft)).c_str() : "-");
  PrintDims(c, params);
  auto tok_model = f.GetString("tokenizer.ggml.model");
  auto tok_pre = f.GetString("tokenizer.ggml.pre");
  std::printf("tokenizer:       %s / %s\n", tok_model.ok() ? tok_model->c_str() : "-",
              tok_pre.ok() ? tok_pre->c_str() : "-");
  std::printf("bos token:       %s\n", TokenText(f, "tokenizer.ggml.bos_token_id").c_str());
  std::printf("eos token:       %s\n", TokenText(f, "tokenizer.ggml.eos_token_id").c_str());
  std::printf("padding token:   %s\n", TokenText(f, "tokenizer.ggml.padding_token_id").c_str());
  std::printf("chat template:   %s\n", f.Find("tokenizer.chat_template") ? "present" : "absent");
  std::printf("tensors:         %zu\n", f.tensors().size());
  for (const auto& [type, count] : hist) std::printf("  %-6s %d\n", type.c_str(), count);
  return 0;
}

}  // namespace

CommandFn AddInfoCommand(CLI::App& app) {
  auto o = std::make_shared<InfoOptions>();
  CLI::App* sub = app.add_subcommand("info", "Show architecture, sizes, tensor types, tokenizer");
  // Optional, as on every other command: without it, the embedded default model. `-m` is accepted
  // too, so `brisk info -m MODEL` reads like `brisk run -m MODEL`.
  sub->add_option("model", o->model,
                  "GGUF file or HF directory (default: the embedded synthetic Qwen2.5-0.5B)");
  sub->add_option("-m,--model", o->model, "the same as the positional MODEL");
  sub->add_flag("--machine", o->machine,
                "show this machine instead: CPU features, kernel tiers, the tier in use");
  return [o] { return o->machine ? RunMachineInfo() : RunInfo(*o); };
}

}  // namespace brisk::cli
