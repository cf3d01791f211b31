#include "model/quantize_model.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "formats/gguf_writer.h"
#include "model/model.h"
#include "quant/dequantize.h"
#include "runtime/thread_pool.h"

namespace brisk {

Status QuantizeGguf(const std::string& input, const std::string& output, const QuantizeOptions& o) {
  if (!CanWriteFileType(o.type))
    return Status::Error("brisk cannot write file type " + FileTypeString(o.type));
  // Loading the model validates architecture and shapes before any work is done.
  BRISK_ASSIGN_OR_RETURN(std::unique_ptr<Model> model, Model::Load(input));
  const gguf::File* src = model->gguf();
  if (!src) return Status::Error(input + ": quantize reads GGUF files");
  const ModelConfig& c = model->config();

  gguf::Writer w;
  for (const auto& [key, value] : src->metadata()) {
    if (key == "general.file_type" || key == "general.quantization_version") continue;
    w.SetRaw(key, value);
  }
  w.SetU32("general.file_type", uint32_t(o.type));
  w.SetU32("general.quantization_version", 2);

  const bool has_output = src->FindTensor("output.weight") != nullptr;
  int64_t total = 0, done = 0;
  for (const auto& t : src->tensors()) total += t.n_elements;

  ThreadPool pool(o.threads);
  std::vector<std::vector<uint8_t>> buffers;  // keeps converted data alive until Write()
  buffers.reserve(src->tensors().size());
  for (const auto& t : src->tensors()) {
    TensorPlacement p;
    p.name = t.name;
    p.n_dims = t.n_dims;
    p.ne0 = t.ne[0];
    p.n_layer = c.n_layer;
    p.has_output = has_output;
    if (t.name.rfind("blk.", 0) == 0) p.layer = std::atoi(t.name.c_str() + 4);
    const GgmlType target = ChooseTensorType(o.type, p);
    const std::vector<int64_t> dims(t.ne, t.ne + t.n_dims);
    if (target == t.type) {
      w.AddTensor(t.name, t.type, dims, t.data, t.nbytes);
    } else {
      const int64_t cols = t.ne[0], rows = t.n_elements / cols;
      const size_t src_row = RowBytes(t.type, cols), dst_row = RowBytes(target, cols);
      buffers.emplace_back(dst_row * size_t(rows));
      uint8_t* dst = buffers.back().data();
      std::vector<float> scratch(size_t(pool.size()) * size_t(cols));
      pool.ParallelFor(rows, 16, [&](int64_t r0, int64_t r1, int thread) {
        float* row = &scratch[size_t(thread) * size_t(cols)];
        for (int64_t r = r0; r < r1; ++r) {
          DequantizeRow(t.type, t.data + size_t(r) * src_row, row, cols);
          if (target == GgmlType::kF32)
            std::memcpy(dst + size_t(r) * dst_row, row, size_t(cols) * 4);
          else
            QuantizeRow(target, row, dst + size_t(r) * dst_row, cols);
        }
      });
      w.AddTensor(t.name, target, dims, dst, buffers.back().size());
    }
    done += t.n_elements;
    if (o.progress) o.progress(double(done) / double(std::max<int64_t>(total, 1)));
  }
  return w.Write(output);
}

}  // namespace brisk
