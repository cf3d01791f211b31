#include "tokenizer/detokenizer.h"

#include "tokenizer/unicode.h"

namespace brisk {

size_t StreamingDetokenizer::Push(int32_t id, std::string* out) {
  const std::string_view bytes = tok_->PieceBytes(id, show_special_);
  if (bytes.empty()) return 0;
  const size_t before = out->size();
  if (pending_.empty()) {
    const size_t used = tok::AppendUtf8Lossy(bytes, /*final=*/false, out);
    pending_.assign(bytes.substr(used));
  } else {
    pending_.append(bytes);
    const size_t used = tok::AppendUtf8Lossy(pending_, /*final=*/false, out);
    pending_.erase(0, used);
  }
  return out->size() - before;
}

std::string StreamingDetokenizer::Push(int32_t id) {
  std::string out;
  Push(id, &out);
  return out;
}

size_t StreamingDetokenizer::Flush(std::string* out) {
  const size_t before = out->size();
  tok::AppendUtf8Lossy(pending_, /*final=*/true, out);
  pending_.clear();
  return out->size() - before;
}

std::string StreamingDetokenizer::Flush() {
  std::string out;
  Flush(&out);
  return out;
}

}  // namespace brisk
