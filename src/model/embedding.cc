#include "model/embedding.h"

#include <algorithm>
#include <cmath>

#include "quant/dequantize.h"
#include "util/check.h"

namespace brisk {
namespace {

double Dot(std::span<const float> a, const std::vector<float>& b) {
  BRISK_CHECK(a.size() == b.size());
  double s = 0;
  for (size_t i = 0; i < b.size(); ++i) s += double(a[i]) * double(b[i]);
  return s;
}

std::vector<float> Row(const WeightTensor& t, int64_t r) {
  std::vector<float> out(size_t(t.cols));
  DequantizeRow(t.type, t.row(r), out.data(), t.cols);
  return out;
}

}  // namespace

std::vector<float> PoolEmbedding(std::span<const float> hidden, int dimensions) {
  const size_t n = dimensions > 0 ? std::min(hidden.size(), size_t(dimensions)) : hidden.size();
  std::vector<float> out(hidden.begin(), hidden.begin() + ptrdiff_t(n));
  double sum = 0;
  for (float v : out) sum += double(v) * double(v);
  if (sum > 0) {
    const double inv = 1.0 / std::sqrt(sum);
    for (float& v : out) v = float(double(v) * inv);
  }
  return out;
}

Result<RerankHead> RerankHead::Create(const Model& model, const Tokenizer& tokenizer) {
  RerankHead h;
  h.yes_id_ = tokenizer.TokenToId("yes");
  h.no_id_ = tokenizer.TokenToId("no");
  if (h.yes_id_ < 0 || h.no_id_ < 0)
    return Status::Error("a reranker needs the tokens \"yes\" and \"no\" in its vocabulary");
  const ModelWeights& w = model.weights();
  if (w.cls_output.present()) {
    h.yes_ = Row(w.cls_output, 0);
    h.no_ = Row(w.cls_output, 1);
  } else {
    if (h.yes_id_ >= w.output.rows || h.no_id_ >= w.output.rows)
      return Status::Error("the tokens \"yes\" and \"no\" are outside the lm_head");
    h.yes_ = Row(w.output, h.yes_id_);
    h.no_ = Row(w.output, h.no_id_);
  }
  return h;
}

double RerankHead::YesLogit(std::span<const float> hidden) const { return Dot(hidden, yes_); }
double RerankHead::NoLogit(std::span<const float> hidden) const { return Dot(hidden, no_); }

double RerankHead::Score(std::span<const float> hidden) const {
  return 1.0 / (1.0 + std::exp(NoLogit(hidden) - YesLogit(hidden)));
}

}  // namespace brisk
