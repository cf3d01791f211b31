#include "formats/gguf.h"

#include <algorithm>
#include <cstring>
#include <limits>

namespace brisk::gguf {
namespace {

constexpr uint64_t kMaxStringBytes = uint64_t(1) << 30;  // 1 GiB: no sane key or token is larger
constexpr int kMaxArrayDepth = 4;

size_t ScalarSize(ValueType t) {
  switch (t) {
    case ValueType::kU8:
    case ValueType::kI8:
    case ValueType::kBool:
      return 1;
    case ValueType::kU16:
    case ValueType::kI16:
      return 2;
    case ValueType::kU32:
    case ValueType::kI32:
    case ValueType::kF32:
      return 4;
    case ValueType::kU64:
    case ValueType::kI64:
    case ValueType::kF64:
      return 8;
    default:
      return 0;
  }
}

bool KnownValueType(uint32_t t) { return t <= uint32_t(ValueType::kF64); }

}  // namespace

std::string_view ValueTypeName(ValueType t) {
  static constexpr std::string_view kNames[] = {"u8",  "i8",  "u16",  "i16",    "u32",
                                                "i32", "f32", "bool", "string", "array",
                                                "u64", "i64", "f64"};
  uint32_t i = uint32_t(t);
  return i < std::size(kNames) ? kNames[i] : std::string_view("unknown");
}

bool Value::IsInteger() const {
  switch (type) {
    case ValueType::kU8:
    case ValueType::kI8:
    case ValueType::kU16:
    case ValueType::kI16:
    case ValueType::kU32:
    case ValueType::kI32:
    case ValueType::kU64:
    case ValueType::kI64:
      return true;
    default:
      return false;
  }
}

namespace {
bool IsSigned(ValueType t) {
  return t == ValueType::kI8 || t == ValueType::kI16 || t == ValueType::kI32 ||
         t == ValueType::kI64;
}

// Decodes one little-endian scalar at p into v (type already set).
void DecodeScalar(const uint8_t* p, Value* v) {
  switch (v->type) {
    case ValueType::kU8:
      v->u = p[0];
      v->i = int64_t(v->u);
      break;
    case ValueType::kBool:
      v->u = p[0] != 0;
      v->i = int64_t(v->u);
      break;
    case ValueType::kI8:
      v->i = int8_t(p[0]);
      break;
    case ValueType::kU16: {
      uint16_t x;
      std::memcpy(&x, p, 2);
      v->u = x;
      v->i = x;
      break;
    }
    case ValueType::kI16: {
      int16_t x;
      std::memcpy(&x, p, 2);
      v->i = x;
      break;
    }
    case ValueType::kU32: {
      uint32_t x;
      std::memcpy(&x, p, 4);
      v->u = x;
      v->i = x;
      break;
    }
    case ValueType::kI32: {
      int32_t x;
      std::memcpy(&x, p, 4);
      v->i = x;
      break;
    }
    case ValueType::kU64: {
      uint64_t x;
      std::memcpy(&x, p, 8);
      v->u = x;
      v->i = int64_t(x);
      break;
    }
    case ValueType::kI64: {
      int64_t x;
      std::memcpy(&x, p, 8);
      v->i = x;
      break;
    }
    case ValueType::kF32: {
      float x;
      std::memcpy(&x, p, 4);
      v->f = x;
      break;
    }
    case ValueType::kF64: {
      double x;
      std::memcpy(&x, p, 8);
      v->f = x;
      break;
    }
    default:
      break;
  }
  if (IsSigned(v->type)) v->u = uint64_t(v->i);
}
}  // namespace

std::string Value::ToString(size_t max_items) const {
  switch (type) {
    case ValueType::kString:
      return std::string(str);
    case ValueType::kBool:
      return u ? "true" : "false";
    case ValueType::kF32:
    case ValueType::kF64: {
      char buf[64];
      std::snprintf(buf, sizeof buf, "%g", f);
      return buf;
    }
    case ValueType::kArray: {
      std::string s = "[" + std::string(ValueTypeName(elem_type)) + " x " + std::to_string(count);
      if (elem_type != ValueType::kArray && elem_type != ValueType::kString && count > 0) {
        s += ": ";
        size_t es = ScalarSize(elem_type);
        for (uint64_t k = 0; k < count && k < max_items; ++k) {
          Value e;
          e.type = elem_type;
          DecodeScalar(items + k * es, &e);
          s += (k ? ", " : "") + e.ToString();
        }
        if (count > max_items) s += ", ...";
      }
      return s + "]";
    }
    default:
      return IsSigned(type) ? std::to_string(i) : std::to_string(u);
  }
}

// Parser: a bounds-checked cursor over the mapping. Every read checks the remaining bytes.
class Parser {
 public:
  Parser(const uint8_t* data, size_t size) : base_(data), size_(size) {}

  Status Parse(File* f);

 private:
  Status Fail(const std::string& what) const {
    return Status::Error("GGUF: " + what + " (at byte offset " + std::to_string(pos_) + ")");
  }
  size_t remaining() const { return size_ - pos_; }
  template <typename T>
  Status Read(T* out, const char* what) {
    if (remaining() < sizeof(T)) return Fail(std::string("file truncated while reading ") + what);
    std::memcpy(out, base_ + pos_, sizeof(T));
    pos_ += sizeof(T);
    return Status::Ok();
  }
  Status ReadString(std::string_view* out, const char* what);
  Status ReadValue(ValueType type, Value* v, int depth);
  // Parse's steps, in file order.
  Status ReadHeader(File* f, uint64_t* n_tensors, uint64_t* n_kv);
  Status ReadMetadata(File* f, uint64_t n_kv);
  Status ReadTensorInfos(File* f, uint64_t n_tensors);
  Status ReadTensorInfo(uint64_t alignment, TensorInfo* ti);
  Status ReadTensorShape(const std::string& where, TensorInfo* ti);
  Status ReadTensorType(const std::string& where, TensorInfo* ti);
  Status PlaceTensorData(File* f, uint64_t n_tensors) const;

  const uint8_t* base_;
  size_t size_;
  size_t pos_ = 0;
};

Status Parser::ReadString(std::string_view* out, const char* what) {
  uint64_t len;
  BRISK_RETURN_IF_ERROR(Read(&len, what));
  if (len > kMaxStringBytes || len > remaining())
    return Fail(std::string(what) + " length " + std::to_string(len) + " runs past end of file");
  *out = std::string_view(reinterpret_cast<const char*>(base_ + pos_), len);
  pos_ += len;
  return Status::Ok();
}

Status Parser::ReadValue(ValueType type, Value* v, int depth) {
  v->type = type;
  const size_t start = pos_;
  if (type == ValueType::kString) {
    BRISK_RETURN_IF_ERROR(ReadString(&v->str, "string value"));
  } else if (type == ValueType::kArray) {
    if (depth >= kMaxArrayDepth) return Fail("arrays nested too deeply");
    uint32_t et;
    BRISK_RETURN_IF_ERROR(Read(&et, "array element type"));
    if (!KnownValueType(et)) return Fail("unknown array element type " + std::to_string(et));
    v->elem_type = ValueType(et);
    BRISK_RETURN_IF_ERROR(Read(&v->count, "array length"));
    v->items = base_ + pos_;
    size_t es = ScalarSize(v->elem_type);
    if (es > 0) {
      if (v->count > remaining() / es)
        return Fail("array of " + std::to_string(v->count) + " " +
                    std::string(ValueTypeName(v->elem_type)) + " runs past end of file");
      pos_ += v->count * es;
    } else {
      // Strings / nested arrays: each element takes at least 8 bytes, so a count larger than
      // remaining/8 is certainly bogus — reject it before looping.
      if (v->count > remaining() / 8)
        return Fail("array count " + std::to_string(v->count) + " exceeds the file size");
      for (uint64_t k = 0; k < v->count; ++k) {
        Value e;
        BRISK_RETURN_IF_ERROR(ReadValue(v->elem_type, &e, depth + 1));
      }
    }
    v->items_bytes = pos_ - size_t(v->items - base_);
  } else {
    size_t es = ScalarSize(type);
    if (es == 0) return Fail("unknown value type " + std::to_string(uint32_t(type)));
    if (remaining() < es) return Fail("file truncated while reading a value");
    DecodeScalar(base_ + pos_, v);
    pos_ += es;
  }
  v->raw = base_ + start;
  v->raw_bytes = pos_ - start;
  return Status::Ok();
}

Status Parser::Parse(File* f) {
  uint64_t n_tensors, n_kv;
  BRISK_RETURN_IF_ERROR(ReadHeader(f, &n_tensors, &n_kv));
  BRISK_RETURN_IF_ERROR(ReadMetadata(f, n_kv));
  BRISK_RETURN_IF_ERROR(ReadTensorInfos(f, n_tensors));
  return PlaceTensorData(f, n_tensors);
}

Status Parser::ReadHeader(File* f, uint64_t* n_tensors, uint64_t* n_kv) {
  uint32_t magic;
  BRISK_RETURN_IF_ERROR(Read(&magic, "magic"));
  if (std::memcmp(&magic, "GGUF", 4) != 0) return Fail("bad magic: not a GGUF file");
  BRISK_RETURN_IF_ERROR(Read(&f->version_, "version"));
  if (f->version_ != 2 && f->version_ != 3)
    return Fail("unsupported GGUF version " + std::to_string(f->version_) + " (supported: 2, 3)");
  BRISK_RETURN_IF_ERROR(Read(n_tensors, "tensor count"));
  BRISK_RETURN_IF_ERROR(Read(n_kv, "metadata count"));
  // Each kv takes >= 8+4+1 bytes and each tensor info >= 8+4+8+4+8: bound counts by file size.
  if (*n_kv > remaining() / 13)
    return Fail("metadata count " + std::to_string(*n_kv) + " exceeds the file size");
  if (*n_tensors > remaining() / 32)
    return Fail("tensor count " + std::to_string(*n_tensors) + " exceeds the file size");
  return Status::Ok();
}

// The key-value pairs, then general.alignment from them.
Status Parser::ReadMetadata(File* f, uint64_t n_kv) {
  // The bounds above still allow ~file_size/13 entries, and an entry takes ~10x its minimal
  // encoding in memory: reserve only a plausible number up front, grow as entries really parse.
  f->kvs_.reserve(size_t(std::min<uint64_t>(n_kv, 4096)));
  for (uint64_t k = 0; k < n_kv; ++k) {
    std::string_view key;
    BRISK_RETURN_IF_ERROR(ReadString(&key, "metadata key"));
    uint32_t type;
    BRISK_RETURN_IF_ERROR(Read(&type, "value type"));
    if (!KnownValueType(type))
      return Fail("metadata key '" + std::string(key) + "' has unknown value type " +
                  std::to_string(type));
    Value v;
    Status st = ReadValue(ValueType(type), &v, 0);
    if (!st.ok()) return st.WithContext("metadata key '" + std::string(key) + "'");
    std::string k_str(key);
    if (f->kv_index_.count(k_str)) return Fail("duplicate metadata key '" + k_str + "'");
    f->kv_index_[k_str] = f->kvs_.size();
    f->kvs_.emplace_back(std::move(k_str), v);
  }
  if (const Value* a = f->Find("general.alignment")) {
    if (!a->IsInteger() || a->u == 0 || (a->u & (a->u - 1)) != 0 || a->u > (1u << 20))
      return Fail("general.alignment must be a power of two up to 1 MiB, found " + a->ToString());
    f->alignment_ = a->u;
  }
  return Status::Ok();
}

Status Parser::ReadTensorInfos(File* f, uint64_t n_tensors) {
  f->tensors_.reserve(size_t(std::min<uint64_t>(n_tensors, 4096)));
  for (uint64_t t = 0; t < n_tensors; ++t) {
    TensorInfo ti;
    BRISK_RETURN_IF_ERROR(ReadTensorInfo(f->alignment_, &ti));
    if (f->tensor_index_.count(ti.name)) return Fail("duplicate tensor name '" + ti.name + "'");
    f->tensor_index_[ti.name] = f->tensors_.size();
    f->tensors_.push_back(std::move(ti));
  }
  return Status::Ok();
}

Status Parser::ReadTensorInfo(uint64_t alignment, TensorInfo* ti) {
  std::string_view name;
  BRISK_RETURN_IF_ERROR(ReadString(&name, "tensor name"));
  ti->name = std::string(name);
  const std::string where = "tensor '" + ti->name + "'";
  BRISK_RETURN_IF_ERROR(ReadTensorShape(where, ti));
  BRISK_RETURN_IF_ERROR(ReadTensorType(where, ti));
  BRISK_RETURN_IF_ERROR(Read(&ti->offset, "tensor offset"));
  if (ti->offset % alignment != 0)
    return Fail(where + " data offset " + std::to_string(ti->offset) + " is not aligned to " +
                std::to_string(alignment));
  return Status::Ok();
}

// Dimension count and sizes; sets n_dims, ne and n_elements (at most 2^62).
Status Parser::ReadTensorShape(const std::string& where, TensorInfo* ti) {
  uint32_t n_dims;
  BRISK_RETURN_IF_ERROR(Read(&n_dims, "tensor dimension count"));
  if (n_dims == 0 || n_dims > uint32_t(kMaxDims))
    return Fail(where + " has " + std::to_string(n_dims) + " dimensions (1..4 allowed)");
  ti->n_dims = int(n_dims);
  uint64_t n_el = 1;
  for (uint32_t d = 0; d < n_dims; ++d) {
    uint64_t ne;
    BRISK_RETURN_IF_ERROR(Read(&ne, "tensor shape"));
    if (ne == 0 || ne > (uint64_t(1) << 62))
      return Fail(where + " has invalid dimension " + std::to_string(ne));
    if (n_el > (uint64_t(1) << 62) / ne) return Fail(where + " element count overflows 2^62");
    n_el *= ne;
    ti->ne[d] = int64_t(ne);
  }
  ti->n_elements = int64_t(n_el);
  return Status::Ok();
}

// The type id; sets type and nbytes after checking the shape fits the type's blocks.
Status Parser::ReadTensorType(const std::string& where, TensorInfo* ti) {
  uint32_t type;
  BRISK_RETURN_IF_ERROR(Read(&type, "tensor type"));
  const TypeTraits* tr = FindTypeTraits(type);
  if (!tr) return Fail(where + " has unknown type id " + std::to_string(type));
  if (!tr->supported)
    return Fail(where + " has type " + std::string(tr->name) + ", which brisk cannot load");
  ti->type = tr->type;
  if (ti->ne[0] % tr->block_size != 0)
    return Fail(where + ": row length " + std::to_string(ti->ne[0]) + " is not a multiple of the " +
                std::string(tr->name) + " block size " + std::to_string(tr->block_size));
  // n_el <= 2^62, but 2^62 F32 elements are 2^64 bytes: that must not wrap to 0.
  const uint64_t n_blocks = uint64_t(ti->n_elements) / uint64_t(tr->block_size);
  if (n_blocks > std::numeric_limits<uint64_t>::max() / uint64_t(tr->type_size))
    return Fail(where + " byte size overflows 64 bits");
  ti->nbytes = n_blocks * uint64_t(tr->type_size);
  return Status::Ok();
}

// Sets the data offset and each tensor's data pointer: every tensor must lie inside the file,
// and no two may overlap.
Status Parser::PlaceTensorData(File* f, uint64_t n_tensors) const {
  // Data section starts at the next multiple of the alignment.
  uint64_t data = (uint64_t(pos_) + f->alignment_ - 1) / f->alignment_ * f->alignment_;
  if (n_tensors > 0 && data > size_) return Fail("file truncated before the tensor data");
  f->data_offset_ = data;
  const uint64_t data_bytes = data <= size_ ? size_ - data : 0;
  std::vector<const TensorInfo*> by_offset;
  for (TensorInfo& ti : f->tensors_) {
    if (ti.offset > data_bytes || ti.nbytes > data_bytes - ti.offset)
      return Status::Error("GGUF: tensor '" + ti.name + "' data [" + std::to_string(ti.offset) +
                           ", +" + std::to_string(ti.nbytes) + ") runs past end of file (" +
                           std::to_string(data_bytes) + " data bytes)");
    ti.data = base_ + data + ti.offset;
    by_offset.push_back(&ti);
  }
  std::sort(by_offset.begin(), by_offset.end(),
            [](const TensorInfo* a, const TensorInfo* b) { return a->offset < b->offset; });
  for (size_t k = 1; k < by_offset.size(); ++k) {
    const TensorInfo* a = by_offset[k - 1];
    const TensorInfo* b = by_offset[k];
    if (a->offset + a->nbytes > b->offset)
      return Status::Error("GGUF: tensors '" + a->name + "' and '" + b->name + "' overlap");
  }
  return Status::Ok();
}

Result<File> File::Open(const std::string& path) {
  BRISK_ASSIGN_OR_RETURN(MappedFile m, MappedFile::Open(path));
  File f;
  f.path_ = path;
  f.map_ = std::make_unique<MappedFile>(std::move(m));
  f.size_ = f.map_->size();
  Parser p(f.map_->data(), f.map_->size());
  Status st = p.Parse(&f);
  if (!st.ok()) return st.WithContext(path);
  return f;
}

Result<File> File::FromBuffer(const uint8_t* data, size_t size, const std::string& name) {
  File f;
  f.path_ = name;
  f.size_ = size;
  Parser p(data, size);
  Status st = p.Parse(&f);
  if (!st.ok()) return st.WithContext(name);
  return f;
}

const Value* File::Find(std::string_view key) const {
  auto it = kv_index_.find(key);
  return it == kv_index_.end() ? nullptr : &kvs_[it->second].second;
}

const TensorInfo* File::FindTensor(std::string_view name) const {
  auto it = tensor_index_.find(name);
  return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

namespace {
Status Missing(std::string_view key) {
  return Status::Error("missing required metadata key '" + std::string(key) + "'");
}
Status WrongType(std::string_view key, const Value& v, const char* want) {
  return Status::Error("metadata key '" + std::string(key) + "' should be " + want + ", found " +
                       std::string(ValueTypeName(v.type)));
}
}  // namespace

Result<std::string> File::GetString(std::string_view key) const {
  const Value* v = Find(key);
  if (!v) return Missing(key);
  if (v->type != ValueType::kString) return WrongType(key, *v, "a string");
  return std::string(v->str);
}

Result<uint64_t> File::GetUInt(std::string_view key) const {
  const Value* v = Find(key);
  if (!v) return Missing(key);
  if (!v->IsInteger()) return WrongType(key, *v, "an integer");
  if (IsSigned(v->type) && v->i < 0)
    return Status::Error("metadata key '" + std::string(key) + "' is negative");
  return v->u;
}

Result<int64_t> File::GetInt(std::string_view key) const {
  const Value* v = Find(key);
  if (!v) return Missing(key);
  if (!v->IsInteger()) return WrongType(key, *v, "an integer");
  if (!IsSigned(v->type) && v->u > uint64_t(std::numeric_limits<int64_t>::max()))
    return Status::Error("metadata key '" + std::string(key) + "' is too large");
  return v->i;
}

Result<double> File::GetFloat(std::string_view key) const {
  const Value* v = Find(key);
  if (!v) return Missing(key);
  if (v->type == ValueType::kF32 || v->type == ValueType::kF64) return v->f;
  if (v->IsInteger()) return IsSigned(v->type) ? double(v->i) : double(v->u);
  return WrongType(key, *v, "a number");
}

Result<bool> File::GetBool(std::string_view key) const {
  const Value* v = Find(key);
  if (!v) return Missing(key);
  if (v->type != ValueType::kBool) return WrongType(key, *v, "a bool");
  return v->u != 0;
}

Result<std::vector<std::string_view>> File::GetStringArray(std::string_view key) const {
  const Value* v = Find(key);
  if (!v) return Missing(key);
  if (v->type != ValueType::kArray || v->elem_type != ValueType::kString)
    return WrongType(key, *v, "an array of strings");
  std::vector<std::string_view> out;
  out.reserve(v->count);
  const uint8_t* p = v->items;
  for (uint64_t k = 0; k < v->count; ++k) {  // bounds were validated when the file was parsed
    uint64_t len;
    std::memcpy(&len, p, 8);
    out.emplace_back(reinterpret_cast<const char*>(p + 8), len);
    p += 8 + len;
  }
  return out;
}

Result<std::vector<int64_t>> File::GetIntArray(std::string_view key) const {
  const Value* v = Find(key);
  if (!v) return Missing(key);
  Value probe;
  probe.type = v->elem_type;
  if (v->type != ValueType::kArray || !probe.IsInteger())
    return WrongType(key, *v, "an array of integers");
  std::vector<int64_t> out(v->count);
  size_t es = ScalarSize(v->elem_type);
  for (uint64_t k = 0; k < v->count; ++k) {
    Value e;
    e.type = v->elem_type;
    DecodeScalar(v->items + k * es, &e);
    out[k] = e.i;
  }
  return out;
}

Result<std::vector<float>> File::GetFloatArray(std::string_view key) const {
  const Value* v = Find(key);
  if (!v) return Missing(key);
  if (v->type != ValueType::kArray ||
      (v->elem_type != ValueType::kF32 && v->elem_type != ValueType::kF64))
    return WrongType(key, *v, "an array of floats");
  std::vector<float> out(v->count);
  size_t es = ScalarSize(v->elem_type);
  for (uint64_t k = 0; k < v->count; ++k) {
    Value e;
    e.type = v->elem_type;
    DecodeScalar(v->items + k * es, &e);
    out[k] = float(e.f);
  }
  return out;
}

}  // namespace brisk::gguf
