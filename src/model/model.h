// A loaded model: the mapped GGUF file, its configuration and views of its weights.
#pragma once

#include <memory>
#include <string>

#include "formats/gguf.h"
#include "model/config.h"
#include "model/weights.h"

namespace brisk {

class Model {
 public:
  // Opens a GGUF file and validates architecture, hyper-parameters and every tensor shape.
  // Only the header is read; tensor data is paged in on first use.
  static Result<std::unique_ptr<Model>> Load(const std::string& path);

  const ModelConfig& config() const { return config_; }
  const ModelWeights& weights() const { return weights_; }
  const gguf::File& file() const { return file_; }

 private:
  Model(gguf::File file, ModelConfig config, ModelWeights weights)
      : file_(std::move(file)), config_(std::move(config)), weights_(std::move(weights)) {}

  gguf::File file_;
  ModelConfig config_;
  ModelWeights weights_;
};

}  // namespace brisk
