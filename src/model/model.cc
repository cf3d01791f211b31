#include "model/model.h"

namespace brisk {

Result<std::unique_ptr<Model>> Model::Load(const std::string& path) {
  BRISK_ASSIGN_OR_RETURN(gguf::File file, gguf::File::Open(path));
  Result<ModelConfig> config = ConfigFromGguf(file);
  if (!config.ok()) return config.status().WithContext(path);
  Result<ModelWeights> weights = WeightsFromGguf(file, *config);
  if (!weights.ok()) return weights.status().WithContext(path);
  // The weights point into the mapping, which lives on the heap and survives the move.
  return std::unique_ptr<Model>(
      new Model(std::move(file), std::move(config).value(), std::move(weights).value()));
}

}  // namespace brisk
