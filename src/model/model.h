// A loaded model: configuration, views of its weights, and the storage those views point into
// (a mapped GGUF file, or the mapped safetensors shards of a Hugging Face directory).
#pragma once

#include <memory>
#include <string>

#include "formats/gguf.h"
#include "model/config.h"
#include "model/weights.h"

namespace brisk {

// Owns whatever keeps the weight pointers valid (mappings, converted buffers).
class ModelStorage {
 public:
  virtual ~ModelStorage() = default;
  // Takes a mapped file's pages inside [p, p + n) out of the resident set; bytes that are not in a
  // mapped file (converted copies) are kept.
  virtual void DropFilePages(const uint8_t* /*p*/, size_t /*n*/) const {}
};

class Model {
 public:
  // Opens a GGUF file or a Hugging Face model directory (config.json + *.safetensors) and
  // validates architecture, hyper-parameters and every tensor shape. Only headers are read;
  // tensor data is paged in on first use.
  static Result<std::unique_ptr<Model>> Load(const std::string& path);

  // Assembles a model from parts (loaders use this). `gguf` may be null.
  Model(std::string path, ModelConfig config, ModelWeights weights,
        std::unique_ptr<ModelStorage> storage, const gguf::File* gguf)
      : path_(std::move(path)),
        config_(std::move(config)),
        weights_(std::move(weights)),
        storage_(std::move(storage)),
        gguf_(gguf) {}

  const std::string& path() const { return path_; }
  const ModelConfig& config() const { return config_; }
  const ModelWeights& weights() const { return weights_; }
  // For a tensor the forward pass has copied (packed): its file pages leave the resident set, so
  // the process holds those weights once. A later read (reference path) pages them in again.
  void DropFilePages(const WeightTensor& t) const {
    if (storage_ && t.present()) storage_->DropFilePages(t.data, size_t(t.rows) * t.row_bytes());
  }
  // The GGUF file (metadata, tokenizer, chat template), or null for other sources.
  const gguf::File* gguf() const { return gguf_; }
  // The chat template (GGUF tokenizer.chat_template, or tokenizer_config.json), "" when none.
  const std::string& chat_template() const { return chat_template_; }
  // tokenizer.json of a Hugging Face directory, "" for other sources.
  const std::string& hf_tokenizer_json() const { return hf_tokenizer_json_; }
  // Set by the loaders.
  void set_chat_template(std::string t) { chat_template_ = std::move(t); }
  void set_hf_tokenizer_json(std::string p) { hf_tokenizer_json_ = std::move(p); }

 private:
  std::string path_;
  ModelConfig config_;
  ModelWeights weights_;
  std::unique_ptr<ModelStorage> storage_;
  const gguf::File* gguf_;
  std::string chat_template_;
  std::string hf_tokenizer_json_;
};

}  // namespace brisk
