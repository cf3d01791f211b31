#include "model/hf_loader.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <vector>

#include "formats/safetensors.h"
#include "formats/sentence_transformers.h"
#include "model/hf_names.h"

namespace brisk {
namespace {

namespace fs = std::filesystem;
namespace st = safetensors;

// Keeps the shard mappings (and copies of any misaligned tensor) alive for the weight views.
class HfStorage : public ModelStorage {
 public:
  void DropFilePages(const uint8_t* p, size_t n) const override {
    for (const st::File& s : shards) s.DropPages(p, n);  // each ignores ranges not its own
  }
  std::vector<st::File> shards;  // each File keeps its mapping on the heap: moves are safe
  std::vector<std::vector<uint8_t>> copies;
};

struct Source {
  const st::TensorInfo* info;
  std::string shard;  // file name, for messages
};

std::string ShapeString(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

Status CheckDim(const char* key, int64_t v, int64_t max) {
  if (v < 1 || v > max)
    return Status::Error("'" + std::string(key) + "' = " + std::to_string(v) +
                         " is out of range (1.." + std::to_string(max) + ")");
  return Status::Ok();
}

// Opens the shards of `dir` and indexes their tensors by HF name.
Status OpenShards(const std::string& dir, HfStorage* storage,
                  std::map<std::string, Source>* tensors) {
  std::error_code ec;
  const std::string index_path = dir + "/model.safetensors.index.json";
  const std::string single = dir + "/model.safetensors";
  if (fs::exists(index_path, ec)) {
    BRISK_ASSIGN_OR_RETURN(st::ShardIndex idx, st::ReadIndex(index_path));
    std::map<std::string, size_t> shard_slot;
    for (const std::string& shard : idx.shards) {
      const std::string p = dir + "/" + shard;
      if (!fs::exists(p, ec)) {
        size_t n = 0;
        std::string example;
        for (const auto& [name, s] : idx.weight_map)
          if (s == shard && n++ == 0) example = name;
        return Status::Error(index_path + ": shard '" + shard + "' (" + std::to_string(n) +
                             " tensors, e.g. '" + example + "') is missing from " + dir);
      }
      BRISK_ASSIGN_OR_RETURN(st::File f, st::File::Open(p));
      shard_slot[shard] = storage->shards.size();
      storage->shards.push_back(std::move(f));
    }
    for (const auto& [name, shard] : idx.weight_map) {
      const st::File& f = storage->shards[shard_slot[shard]];
      const st::TensorInfo* t = f.Find(name);
      if (!t)
        return Status::Error(index_path + ": tensor '" + name + "' is listed in shard '" + shard +
                             "', but that file does not contain it");
      (*tensors)[name] = Source{t, shard};
    }
    return Status::Ok();
  }

  std::vector<std::string> files;
  if (fs::exists(single, ec)) {
    files.push_back("model.safetensors");
  } else {
    // increment(ec), not ++: the throwing overloads must not be used here.
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
      if (it->path().extension() == ".safetensors") files.push_back(it->path().filename().string());
    if (ec) return Status::Error(dir + ": cannot list directory: " + ec.message());
    std::sort(files.begin(), files.end());
  }
  if (files.empty())
    return Status::Error(dir +
                         ": no weights found (expected model.safetensors, or "
                         "model.safetensors.index.json with its shards)");
  for (const std::string& name : files) {
    BRISK_ASSIGN_OR_RETURN(st::File f, st::File::Open(dir + "/" + name));
    storage->shards.push_back(std::move(f));
  }
  for (size_t i = 0; i < files.size(); ++i) {
    for (const st::TensorInfo& t : storage->shards[i].tensors()) {
      auto [it, inserted] = tensors->emplace(t.name, Source{&t, files[i]});
      if (!inserted)
        return Status::Error(dir + ": tensor '" + t.name + "' appears in both '" +
                             it->second.shard + "' and '" + files[i] +
                             "' (a sharded checkpoint needs model.safetensors.index.json)");
    }
  }
  return Status::Ok();
}

class Binder {
 public:
  // Embedding models saved by sentence-transformers (Qwen3-Embedding) hold the inner Qwen3Model:
  // its names lack the "model." prefix (and there is no lm_head).
  Binder(const std::map<std::string, Source>& tensors, HfStorage* storage)
      : tensors_(tensors),
        storage_(storage),
        bare_(!tensors.count("model.embed_tokens.weight") && tensors.count("embed_tokens.weight")) {
  }

  bool Has(const std::string& hf_name) const { return tensors_.count(Stored(hf_name)) != 0; }

  // Binds the tensor stored under `name` (transformers' *ForCausalLM name) with shape
  // [rows, cols] (or [cols] when rows == 0).
  Status Bind(const std::string& name, int64_t cols, int64_t rows, WeightTensor* out) {
    const std::string hf_name = Stored(name);
    auto it = tensors_.find(hf_name);
    if (it == tensors_.end()) return Status::Error("missing tensor '" + hf_name + "'");
    const st::TensorInfo& t = *it->second.info;
    const std::string where = "tensor '" + hf_name + "' in " + it->second.shard;
    const std::vector<int64_t> want =
        rows == 0 ? std::vector<int64_t>{cols} : std::vector<int64_t>{rows, cols};
    if (t.shape != want)
      return Status::Error(where + " has shape " + ShapeString(t.shape) + ", expected " +
                           ShapeString(want) + " for this architecture");
    GgmlType type;
    if (!st::DtypeToGgml(t.dtype, &type))
      return Status::Error(where + " has dtype " + std::string(st::DtypeName(t.dtype)) +
                           "; brisk loads F32, F16 and BF16 tensors");
    const uint8_t* data = t.data;
    // Offsets inside the data section need not respect the element size; copy such a tensor
    // so every view is aligned for its type.
    if (reinterpret_cast<uintptr_t>(data) % st::DtypeSize(t.dtype) != 0) {
      storage_->copies.emplace_back(data, data + t.nbytes());
      data = storage_->copies.back().data();
    }
    out->name = GgufNameFromHf(name);
    out->type = type;
    out->data = data;
    out->cols = cols;
    out->rows = rows == 0 ? 1 : rows;
    return Status::Ok();
  }

 private:
  std::string Stored(const std::string& name) const {
    return bare_ && name.starts_with("model.") ? name.substr(6) : name;
  }

  const std::map<std::string, Source>& tensors_;
  HfStorage* storage_;
  bool bare_;
};

Result<ModelWeights> BindWeights(Binder& b, ModelConfig* c) {
  ModelWeights w;
  const int64_t d = c->n_embd, q = c->q_dim(), kv = c->kv_dim(), ff = c->n_ff, hd = c->head_dim;
  BRISK_RETURN_IF_ERROR(b.Bind("model.embed_tokens.weight", d, c->n_vocab, &w.token_embd));
  BRISK_RETURN_IF_ERROR(b.Bind("model.norm.weight", d, 0, &w.output_norm));
  // transformers ties lm_head to the embedding when configured; without lm_head.weight there is
  // nothing else it could be.
  if (!b.Has("lm_head.weight")) c->tied_embeddings = true;
  if (c->tied_embeddings) {
    w.output = w.token_embd;
  } else {
    BRISK_RETURN_IF_ERROR(b.Bind("lm_head.weight", d, c->n_vocab, &w.output));
  }
  w.layers.resize(c->n_layer);
  for (int l = 0; l < c->n_layer; ++l) {
    LayerWeights& L = w.layers[l];
    const std::string p = "model.layers." + std::to_string(l) + ".";
    BRISK_RETURN_IF_ERROR(b.Bind(p + "input_layernorm.weight", d, 0, &L.attn_norm));
    BRISK_RETURN_IF_ERROR(b.Bind(p + "self_attn.q_proj.weight", d, q, &L.wq));
    BRISK_RETURN_IF_ERROR(b.Bind(p + "self_attn.k_proj.weight", d, kv, &L.wk));
    BRISK_RETURN_IF_ERROR(b.Bind(p + "self_attn.v_proj.weight", d, kv, &L.wv));
    BRISK_RETURN_IF_ERROR(b.Bind(p + "self_attn.o_proj.weight", q, d, &L.wo));
    if (c->qkv_bias) {
      BRISK_RETURN_IF_ERROR(b.Bind(p + "self_attn.q_proj.bias", q, 0, &L.bq));
      BRISK_RETURN_IF_ERROR(b.Bind(p + "self_attn.k_proj.bias", kv, 0, &L.bk));
      BRISK_RETURN_IF_ERROR(b.Bind(p + "self_attn.v_proj.bias", kv, 0, &L.bv));
    }
    if (c->qk_norm) {
      BRISK_RETURN_IF_ERROR(b.Bind(p + "self_attn.q_norm.weight", hd, 0, &L.q_norm));
      BRISK_RETURN_IF_ERROR(b.Bind(p + "self_attn.k_norm.weight", hd, 0, &L.k_norm));
    }
    BRISK_RETURN_IF_ERROR(b.Bind(p + "post_attention_layernorm.weight", d, 0, &L.ffn_norm));
    BRISK_RETURN_IF_ERROR(b.Bind(p + "mlp.gate_proj.weight", d, ff, &L.w_gate));
    BRISK_RETURN_IF_ERROR(b.Bind(p + "mlp.up_proj.weight", d, ff, &L.w_up));
    BRISK_RETURN_IF_ERROR(b.Bind(p + "mlp.down_proj.weight", ff, d, &L.w_down));
  }
  return w;
}

// tokenizer_config.json's chat_template, else chat_template.jinja (newer transformers); "" if
// neither exists.
Result<std::string> ReadDirChatTemplate(const std::string& dir) {
  std::error_code ec;
  const std::string tc = dir + "/tokenizer_config.json";
  std::string tmpl;
  if (fs::exists(tc, ec)) {
    BRISK_ASSIGN_OR_RETURN(tmpl, hf::ReadChatTemplate(tc));
  }
  const std::string jinja = dir + "/chat_template.jinja";
  if (tmpl.empty() && fs::exists(jinja, ec)) {
    BRISK_ASSIGN_OR_RETURN(tmpl, hf::ReadTextFile(jinja, size_t(16) << 20));
  }
  return tmpl;
}

// The pooling sentence-transformers' files declare (none without them): lasttoken is served,
// mean and cls load (and are refused where served); other modes cannot be described.
Status ReadPooling(const std::string& dir, ModelConfig* c) {
  BRISK_ASSIGN_OR_RETURN(st_modules::Info st, st_modules::Read(dir));
  if (st.pooling.empty() || st.pooling == "none") return Status::Ok();
  if (st.pooling == "lasttoken") {
    c->pooling = Pooling::kLast;
  } else if (st.pooling == "mean") {
    c->pooling = Pooling::kMean;
  } else if (st.pooling == "cls") {
    c->pooling = Pooling::kCls;
  } else {
    return Status::Error(dir + ": sentence-transformers pooling '" + st.pooling +
                         "' is not supported (brisk pools the last token)");
  }
  return Status::Ok();
}

}  // namespace

Result<ModelConfig> ConfigFromHf(const hf::Config& h) {
  ModelConfig c;
  static constexpr const char* kSupported = "Qwen2ForCausalLM, Qwen3ForCausalLM";
  if (!h.architectures.empty()) {
    bool found = false;
    for (const std::string& a : h.architectures) {
      if (a == "Qwen2ForCausalLM" || a == "Qwen3ForCausalLM") {
        c.arch_name = a == "Qwen2ForCausalLM" ? "qwen2" : "qwen3";
        found = true;
        break;
      }
    }
    if (!found)
      return Status::Error("unsupported architecture '" + h.architectures[0] +
                           "' (supported: " + kSupported + ")");
  } else if (h.model_type == "qwen2" || h.model_type == "qwen3") {
    c.arch_name = h.model_type;
  } else if (!h.model_type.empty()) {
    return Status::Error("unsupported model_type '" + h.model_type +
                         "' (supported: " + kSupportedArchitectures + ")");
  } else {
    return Status::Error("no 'architectures' or 'model_type' field: cannot tell the architecture");
  }
  const bool qwen3 = c.arch_name == "qwen3";
  c.arch = qwen3 ? Arch::kQwen3 : Arch::kQwen2;
  c.qkv_bias = !qwen3;
  c.qk_norm = qwen3;

  constexpr int64_t kMaxDim = 1 << 20;
  BRISK_RETURN_IF_ERROR(CheckDim("hidden_size", h.hidden_size, kMaxDim));
  BRISK_RETURN_IF_ERROR(CheckDim("num_hidden_layers", h.num_hidden_layers, 1024));
  BRISK_RETURN_IF_ERROR(CheckDim("num_attention_heads", h.num_attention_heads, 4096));
  BRISK_RETURN_IF_ERROR(CheckDim("intermediate_size", h.intermediate_size, kMaxDim));
  BRISK_RETURN_IF_ERROR(CheckDim("vocab_size", h.vocab_size, 1 << 24));
  const int64_t kv = h.num_key_value_heads.value_or(h.num_attention_heads);
  BRISK_RETURN_IF_ERROR(CheckDim("num_key_value_heads", kv, 4096));
  const int64_t ctx = h.max_position_embeddings.value_or(32768);
  BRISK_RETURN_IF_ERROR(CheckDim("max_position_embeddings", ctx, 1 << 24));
  c.n_embd = int(h.hidden_size);
  c.n_layer = int(h.num_hidden_layers);
  c.n_head = int(h.num_attention_heads);
  c.n_head_kv = int(kv);
  c.n_ff = int(h.intermediate_size);
  c.n_vocab = int(h.vocab_size);
  c.context_length = int(ctx);
  if (h.head_dim) {
    BRISK_RETURN_IF_ERROR(CheckDim("head_dim", *h.head_dim, 4096));
    c.head_dim = int(*h.head_dim);
  } else if (qwen3) {
    c.head_dim = 128;  // Qwen3Config's default
  } else {
    if (c.n_embd % c.n_head != 0)
      return Status::Error("hidden_size (" + std::to_string(c.n_embd) +
                           ") is not a multiple of num_attention_heads (" +
                           std::to_string(c.n_head) + ")");
    c.head_dim = c.n_embd / c.n_head;
  }
  if (c.head_dim % 2 != 0) return Status::Error("head dimension must be even for RoPE");
  if (c.n_head % c.n_head_kv != 0)
    return Status::Error("num_attention_heads (" + std::to_string(c.n_head) +
                         ") is not a multiple of num_key_value_heads (" +
                         std::to_string(c.n_head_kv) + ")");
  c.rope_theta = h.rope_theta.value_or(10000.0);  // transformers' default
  c.rms_eps = h.rms_norm_eps.value_or(1e-6);
  if (!(c.rope_theta > 0) || !(c.rms_eps > 0) || c.rms_eps > 1)
    return Status::Error("rope_theta and rms_norm_eps must be positive");
  c.tied_embeddings = h.tie_word_embeddings.value_or(false);

  if (!h.hidden_act.empty() && h.hidden_act != "silu")
    return Status::Error("hidden_act '" + h.hidden_act + "' is not supported (only silu)");
  if (!h.rope_scaling.empty())
    return Status::Error("RoPE scaling " + h.rope_scaling +
                         " is not supported (brisk implements the plain NeoX rotary embedding)");
  if (h.use_sliding_window.value_or(false))
    return Status::Error("use_sliding_window = true is not supported (full attention only)");
  if (qwen3 && h.attention_bias.value_or(false))
    return Status::Error("attention_bias = true is not supported for qwen3");
  return c;
}

Result<std::unique_ptr<Model>> LoadHfDirectory(const std::string& dir_in) {
  std::string dir = dir_in;
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  std::error_code ec;
  const std::string config_path = dir + "/config.json";
  if (!fs::exists(config_path, ec))
    return Status::Error(dir + ": not a model directory (no config.json)");
  BRISK_ASSIGN_OR_RETURN(hf::Config hc, hf::ReadConfigJson(config_path));
  Result<ModelConfig> config = ConfigFromHf(hc);
  if (!config.ok()) return config.status().WithContext(config_path);
  ModelConfig c = std::move(config).value();
  c.name = fs::path(dir).filename().string();
  BRISK_RETURN_IF_ERROR(ReadPooling(dir, &c));

  auto storage = std::make_unique<HfStorage>();
  std::map<std::string, Source> tensors;
  BRISK_RETURN_IF_ERROR(OpenShards(dir, storage.get(), &tensors));
  Binder binder(tensors, storage.get());
  Result<ModelWeights> weights = BindWeights(binder, &c);
  if (!weights.ok()) return weights.status().WithContext(dir);

  BRISK_ASSIGN_OR_RETURN(std::string chat_template, ReadDirChatTemplate(dir));
  const std::string tok = dir + "/tokenizer.json";
  const bool have_tok = fs::is_regular_file(tok, ec);

  auto model = std::make_unique<Model>(dir, std::move(c), std::move(weights).value(),
                                       std::move(storage), nullptr);
  model->set_chat_template(std::move(chat_template));
  if (have_tok) model->set_hf_tokenizer_json(tok);
  return model;
}

}  // namespace brisk
