#include "model/model_tokenizer.h"

namespace brisk {

Result<Tokenizer> TokenizerForModel(const Model& model) {
  if (model.gguf()) return Tokenizer::FromGguf(*model.gguf());
  if (!model.hf_tokenizer_json().empty()) return Tokenizer::FromHfJson(model.hf_tokenizer_json());
  return Status::Error(model.path() + ": no tokenizer (GGUF metadata or tokenizer.json)");
}

}  // namespace brisk
