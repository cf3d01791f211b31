#include "formats/gguf_writer.h"

#include <cstdio>
#include <cstring>

#include "formats/partial_file.h"

namespace brisk::gguf {
namespace {

template <typename T>
void Append(std::vector<uint8_t>* out, const T& v) {
  const uint8_t* p = reinterpret_cast<const uint8_t*>(&v);
  out->insert(out->end(), p, p + sizeof(T));
}

void AppendString(std::vector<uint8_t>* out, std::string_view s) {
  Append<uint64_t>(out, s.size());
  out->insert(out->end(), s.begin(), s.end());
}

template <typename T>
std::vector<uint8_t> Scalar(const T& v) {
  std::vector<uint8_t> b;
  Append(&b, v);
  return b;
}

template <typename Strings>
std::vector<uint8_t> StringArray(const Strings& v) {
  std::vector<uint8_t> b;
  Append<uint32_t>(&b, uint32_t(ValueType::kString));
  Append<uint64_t>(&b, v.size());
  for (const auto& s : v) AppendString(&b, s);
  return b;
}

}  // namespace

void Writer::Put(std::string_view key, ValueType type, std::vector<uint8_t> bytes) {
  for (Kv& kv : kvs_) {
    if (kv.key == key) {  // setting a key again replaces it, keeping its position
      kv.type = type;
      kv.bytes = std::move(bytes);
      return;
    }
  }
  kvs_.push_back({std::string(key), type, std::move(bytes)});
}

void Writer::SetU8(std::string_view key, uint8_t v) { Put(key, ValueType::kU8, Scalar(v)); }
void Writer::SetU32(std::string_view key, uint32_t v) { Put(key, ValueType::kU32, Scalar(v)); }
void Writer::SetI32(std::string_view key, int32_t v) { Put(key, ValueType::kI32, Scalar(v)); }
void Writer::SetU64(std::string_view key, uint64_t v) { Put(key, ValueType::kU64, Scalar(v)); }
void Writer::SetF32(std::string_view key, float v) { Put(key, ValueType::kF32, Scalar(v)); }
void Writer::SetBool(std::string_view key, bool v) {
  Put(key, ValueType::kBool, Scalar<uint8_t>(v ? 1 : 0));
}
void Writer::SetString(std::string_view key, std::string_view v) {
  std::vector<uint8_t> b;
  AppendString(&b, v);
  Put(key, ValueType::kString, std::move(b));
}
void Writer::SetStringArray(std::string_view key, const std::vector<std::string>& v) {
  Put(key, ValueType::kArray, StringArray(v));
}
void Writer::SetStringArray(std::string_view key, const std::vector<std::string_view>& v) {
  Put(key, ValueType::kArray, StringArray(v));
}
void Writer::SetI32Array(std::string_view key, const std::vector<int32_t>& v) {
  std::vector<uint8_t> b;
  Append<uint32_t>(&b, uint32_t(ValueType::kI32));
  Append<uint64_t>(&b, v.size());
  for (int32_t x : v) Append(&b, x);
  Put(key, ValueType::kArray, std::move(b));
}
void Writer::SetF32Array(std::string_view key, const std::vector<float>& v) {
  std::vector<uint8_t> b;
  Append<uint32_t>(&b, uint32_t(ValueType::kF32));
  Append<uint64_t>(&b, v.size());
  for (float x : v) Append(&b, x);
  Put(key, ValueType::kArray, std::move(b));
}
void Writer::SetRaw(std::string_view key, const Value& v) {
  Put(key, v.type, std::vector<uint8_t>(v.raw, v.raw + v.raw_bytes));
}

void Writer::AddTensor(std::string_view name, GgmlType type, const std::vector<int64_t>& dims,
                       const void* data, size_t nbytes) {
  BRISK_CHECK(!dims.empty() && dims.size() <= size_t(kMaxDims));
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  BRISK_CHECK(RowBytes(type, dims[0]) * size_t(n / dims[0]) == nbytes);
  tensors_.push_back({std::string(name), type, dims, data, nbytes});
}

uint64_t Writer::Alignment() const {
  for (const Kv& kv : kvs_) {
    if (kv.key != "general.alignment") continue;
    // The reader honours any integer type, so the layout must follow u8/u16/u64 as well as u32.
    // A value the reader would reject (not a power of two up to 1 MiB) keeps the default,
    // rather than padding to an absurd size.
    const bool is_unsigned = kv.type == ValueType::kU8 || kv.type == ValueType::kU16 ||
                             kv.type == ValueType::kU32 || kv.type == ValueType::kU64;
    uint64_t a = 0;
    if (is_unsigned && kv.bytes.size() <= sizeof a)
      std::memcpy(&a, kv.bytes.data(), kv.bytes.size());
    if (a > 0 && (a & (a - 1)) == 0 && a <= (uint64_t(1) << 20)) return a;
    break;
  }
  return kDefaultAlignment;
}

std::vector<uint8_t> Writer::Header(std::vector<uint64_t>* offsets) const {
  const uint64_t align = Alignment();
  std::vector<uint8_t> h;
  h.insert(h.end(), {'G', 'G', 'U', 'F'});
  Append<uint32_t>(&h, 3);
  Append<uint64_t>(&h, tensors_.size());
  Append<uint64_t>(&h, kvs_.size());
  for (const Kv& kv : kvs_) {
    AppendString(&h, kv.key);
    Append<uint32_t>(&h, uint32_t(kv.type));
    h.insert(h.end(), kv.bytes.begin(), kv.bytes.end());
  }
  uint64_t off = 0;
  offsets->clear();
  for (const Tensor& t : tensors_) {
    AppendString(&h, t.name);
    Append<uint32_t>(&h, uint32_t(t.dims.size()));
    for (int64_t d : t.dims) Append<uint64_t>(&h, uint64_t(d));
    Append<uint32_t>(&h, uint32_t(t.type));
    Append<uint64_t>(&h, off);
    offsets->push_back(off);
    off = (off + t.nbytes + align - 1) / align * align;
  }
  h.resize((h.size() + align - 1) / align * align, 0);
  return h;
}

std::vector<uint8_t> Writer::Serialize() const {
  std::vector<uint64_t> offsets;
  std::vector<uint8_t> out = Header(&offsets);
  const size_t data_start = out.size();
  for (size_t k = 0; k < tensors_.size(); ++k) {
    out.resize(data_start + offsets[k], 0);
    const uint8_t* p = static_cast<const uint8_t*>(tensors_[k].data);
    out.insert(out.end(), p, p + tensors_[k].nbytes);
  }
  const uint64_t align = Alignment();
  out.resize((out.size() + align - 1) / align * align, 0);
  return out;
}

Status Writer::Write(const std::string& path) const {
  const std::string tmp = path + ".partial";
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) return Status::Error(path + ": cannot create file");
  std::vector<uint64_t> offsets;
  std::vector<uint8_t> header = Header(&offsets);
  bool ok = std::fwrite(header.data(), 1, header.size(), f) == header.size();
  uint64_t written = 0;  // bytes of the data section so far
  static const uint8_t kZeros[4096] = {};
  for (size_t k = 0; ok && k < tensors_.size(); ++k) {
    while (ok && written < offsets[k]) {
      size_t pad = size_t(std::min<uint64_t>(sizeof kZeros, offsets[k] - written));
      ok = std::fwrite(kZeros, 1, pad, f) == pad;
      written += pad;
    }
    ok = ok && std::fwrite(tensors_[k].data, 1, tensors_[k].nbytes, f) == tensors_[k].nbytes;
    written += tensors_[k].nbytes;
  }
  const uint64_t align = Alignment();
  size_t tail = size_t((align - written % align) % align);
  ok = ok && std::fwrite(kZeros, 1, tail, f) == tail;
  return FinishPartialFile(f, ok, tmp, path);
}

}  // namespace brisk::gguf
