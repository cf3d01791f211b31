#include "formats/safetensors_writer.h"

#include <cstdio>
#include <exception>
#include <nlohmann/json.hpp>

#include "formats/partial_file.h"

namespace brisk::safetensors {

void Writer::AddTensor(std::string_view name, Dtype dtype, const std::vector<int64_t>& shape,
                       const void* data, size_t nbytes) {
  size_t n = 1;
  for (int64_t d : shape) {
    BRISK_CHECK(d >= 0);
    n *= size_t(d);
  }
  BRISK_CHECK_MSG(n * DtypeSize(dtype) == nbytes, "safetensors::Writer: nbytes != shape x dtype");
  tensors_.push_back(Tensor{std::string(name), dtype, shape, data, nbytes});
}

Result<std::vector<uint8_t>> Writer::Header() const {
  std::string text;
  try {
    nlohmann::ordered_json h = nlohmann::ordered_json::object();
    if (!metadata_.empty()) h["__metadata__"] = metadata_;
    uint64_t offset = 0;
    for (const Tensor& t : tensors_) {
      if (h.contains(t.name)) return Status::Error("duplicate tensor name '" + t.name + "'");
      h[t.name] = {{"dtype", std::string(DtypeName(t.dtype))},
                   {"shape", t.shape},
                   {"data_offsets", {offset, offset + t.nbytes}}};
      offset += t.nbytes;
    }
    text = h.dump();
  } catch (const std::exception& e) {  // e.g. a name that is not valid UTF-8
    return Status::Error(std::string("cannot build safetensors header: ") + e.what());
  }
  text.resize((text.size() + 7) / 8 * 8, ' ');
  std::vector<uint8_t> out(8 + text.size());
  const uint64_t n = text.size();
  for (int i = 0; i < 8; ++i) out[i] = uint8_t(n >> (8 * i));
  std::copy(text.begin(), text.end(), out.begin() + 8);
  return out;
}

Result<std::vector<uint8_t>> Writer::Serialize() const {
  BRISK_ASSIGN_OR_RETURN(std::vector<uint8_t> out, Header());
  for (const Tensor& t : tensors_) {
    const auto* p = static_cast<const uint8_t*>(t.data);
    if (t.nbytes > 0) out.insert(out.end(), p, p + t.nbytes);
  }
  return out;
}

Status Writer::Write(const std::string& path) const {
  Result<std::vector<uint8_t>> header = Header();
  if (!header.ok()) return header.status().WithContext(path);
  const std::string tmp = path + ".partial";
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) return Status::Error(path + ": cannot create file");
  bool ok = std::fwrite(header->data(), 1, header->size(), f) == header->size();
  for (size_t k = 0; ok && k < tensors_.size(); ++k)
    if (tensors_[k].nbytes > 0)  // empty tensors may have no data pointer
      ok = std::fwrite(tensors_[k].data, 1, tensors_[k].nbytes, f) == tensors_[k].nbytes;
  return FinishPartialFile(f, ok, tmp, path);
}

}  // namespace brisk::safetensors
