#include "model/hf_loader.h"

namespace brisk {

Result<std::unique_ptr<Model>> LoadHfDirectory(const std::string& dir) {
  return Status::Error(dir + ": Hugging Face directories are not supported yet");
}

}  // namespace brisk
