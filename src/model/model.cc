#include "model/model.h"

#include <filesystem>

#include "model/hf_loader.h"

namespace brisk {
namespace {

class GgufStorage : public ModelStorage {
 public:
  explicit GgufStorage(gguf::File f) : file(std::move(f)) {}
  void DropFilePages(const uint8_t* p, size_t n) const override { file.DropPages(p, n); }
  gguf::File file;
};

}  // namespace

Result<std::unique_ptr<Model>> Model::Load(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return LoadHfDirectory(path);
  BRISK_ASSIGN_OR_RETURN(gguf::File file, gguf::File::Open(path));
  Result<ModelConfig> config = ConfigFromGguf(file);
  if (!config.ok()) return config.status().WithContext(path);
  Result<ModelWeights> weights = WeightsFromGguf(file, *config);
  if (!weights.ok()) return weights.status().WithContext(path);
  // The weights point into the mapping, which lives on the heap and survives the moves.
  auto storage = std::make_unique<GgufStorage>(std::move(file));
  const gguf::File* g = &storage->file;
  auto model = std::make_unique<Model>(path, std::move(config).value(), std::move(weights).value(),
                                       std::move(storage), g);
  if (auto t = g->GetString("tokenizer.chat_template"); t.ok()) model->set_chat_template(*t);
  return model;
}

}  // namespace brisk
