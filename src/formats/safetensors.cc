#include "formats/safetensors.h"

#include <algorithm>
#include <cstring>
#include <exception>
#include <nlohmann/json.hpp>

#include "formats/json_object.h"

namespace brisk::safetensors {
namespace {

using Json = nlohmann::json;

struct DtypeInfo {
  Dtype dtype;
  std::string_view name;
  size_t size;
};

constexpr DtypeInfo kDtypes[] = {
    {Dtype::kBool, "BOOL", 1},       {Dtype::kU8, "U8", 1},           {Dtype::kI8, "I8", 1},
    {Dtype::kF8_E5M2, "F8_E5M2", 1}, {Dtype::kF8_E4M3, "F8_E4M3", 1}, {Dtype::kI16, "I16", 2},
    {Dtype::kU16, "U16", 2},         {Dtype::kF16, "F16", 2},         {Dtype::kBF16, "BF16", 2},
    {Dtype::kI32, "I32", 4},         {Dtype::kU32, "U32", 4},         {Dtype::kF32, "F32", 4},
    {Dtype::kF64, "F64", 8},         {Dtype::kI64, "I64", 8},         {Dtype::kU64, "U64", 8},
};

const DtypeInfo& Info(Dtype d) {
  for (const auto& i : kDtypes)
    if (i.dtype == d) return i;
  BRISK_CHECK_MSG(false, "safetensors: unknown Dtype enumerator");
  return kDtypes[0];
}

// Reads a JSON number that must be a non-negative integer.
bool GetUInt(const Json& j, uint64_t* out) {
  if (j.is_number_unsigned()) {
    *out = j.get<uint64_t>();
    return true;
  }
  if (j.is_number_integer() && j.get<int64_t>() >= 0) {
    *out = uint64_t(j.get<int64_t>());
    return true;
  }
  return false;
}

std::string ShapeString(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

// Parses one tensor entry; the error names the tensor.
Status ParseTensor(const std::string& name, const Json& e, uint64_t data_size, TensorInfo* t) {
  const std::string where = "tensor '" + name + "'";
  if (!e.is_object())
    return Status::Error(where + ": entry must be an object, found " + e.type_name());
  t->name = name;

  auto dt = e.find("dtype");
  if (dt == e.end() || !dt->is_string())
    return Status::Error(where + ": missing or non-string 'dtype'");
  const std::string dname = dt->get<std::string>();
  if (!ParseDtype(dname, &t->dtype))
    return Status::Error(where + ": unknown dtype '" + dname + "'");

  auto sh = e.find("shape");
  if (sh == e.end() || !sh->is_array())
    return Status::Error(where + ": missing or non-array 'shape'");
  if (sh->size() > size_t(kMaxRank))
    return Status::Error(where + ": rank " + std::to_string(sh->size()) + " exceeds " +
                         std::to_string(kMaxRank));
  // Every tensor must fit in the data section, so no dimension or product can exceed it.
  const uint64_t limit = data_size;
  uint64_t n = 1;
  for (const Json& d : *sh) {
    uint64_t v;
    if (!GetUInt(d, &v))
      return Status::Error(where + ": shape entries must be non-negative integers, found " +
                           d.dump());
    if (v > (uint64_t(1) << 48))
      return Status::Error(where + ": absurd dimension " + std::to_string(v) + " in shape");
    t->shape.push_back(int64_t(v));
    if (n != 0 && v != 0 && n > limit / v)
      n = limit + 1;  // saturate: reported below
    else
      n *= v;
  }
  const size_t esize = DtypeSize(t->dtype);
  if (n > limit || n * esize > limit)
    return Status::Error(where + ": shape " + ShapeString(t->shape) + " of " + dname +
                         " needs more bytes than the data section holds (" +
                         std::to_string(data_size) + ")");
  t->n_elements = int64_t(n);

  auto off = e.find("data_offsets");
  if (off == e.end() || !off->is_array() || off->size() != 2)
    return Status::Error(where + ": 'data_offsets' must be an array [begin, end]");
  if (!GetUInt((*off)[0], &t->begin) || !GetUInt((*off)[1], &t->end))
    return Status::Error(where + ": 'data_offsets' must be non-negative integers, found " +
                         off->dump());
  const std::string range =
      "data_offsets [" + std::to_string(t->begin) + ", " + std::to_string(t->end) + "]";
  if (t->begin > t->end) return Status::Error(where + ": " + range + " has begin > end");
  if (t->end > data_size)
    return Status::Error(where + ": " + range + " lies past the end of the data section (" +
                         std::to_string(data_size) + " bytes)");
  if (t->end - t->begin != n * esize)
    return Status::Error(where + ": " + range + " spans " + std::to_string(t->end - t->begin) +
                         " bytes but shape " + ShapeString(t->shape) + " of " + dname + " needs " +
                         std::to_string(n * esize));
  return Status::Ok();
}

}  // namespace

std::string_view DtypeName(Dtype d) { return Info(d).name; }
size_t DtypeSize(Dtype d) { return Info(d).size; }

bool ParseDtype(std::string_view s, Dtype* out) {
  for (const auto& i : kDtypes) {
    if (i.name == s) {
      *out = i.dtype;
      return true;
    }
  }
  return false;
}

bool DtypeToGgml(Dtype d, GgmlType* out) {
  switch (d) {
    case Dtype::kF32:
      *out = GgmlType::kF32;
      return true;
    case Dtype::kF16:
      *out = GgmlType::kF16;
      return true;
    case Dtype::kBF16:
      *out = GgmlType::kBF16;
      return true;
    default:
      return false;
  }
}

bool GgmlToDtype(GgmlType t, Dtype* out) {
  switch (t) {
    case GgmlType::kF32:
      *out = Dtype::kF32;
      return true;
    case GgmlType::kF16:
      *out = Dtype::kF16;
      return true;
    case GgmlType::kBF16:
      *out = Dtype::kBF16;
      return true;
    default:
      return false;
  }
}

const TensorInfo* File::Find(std::string_view name) const {
  auto it = index_.find(name);
  return it == index_.end() ? nullptr : &tensors_[it->second];
}

Result<File> File::Open(const std::string& path) {
  BRISK_ASSIGN_OR_RETURN(MappedFile m, MappedFile::Open(path));
  File f;
  f.path_ = path;
  f.map_ = std::make_unique<MappedFile>(std::move(m));
  const uint8_t* data = f.map_->data();
  const size_t size = f.map_->size();
  return Parse(std::move(f), data, size);
}

Result<File> File::FromBuffer(const uint8_t* data, size_t size, const std::string& name) {
  File f;
  f.path_ = name;
  return Parse(std::move(f), data, size);
}

Result<File> File::Parse(File f, const uint8_t* data, size_t size) {
  const std::string& path = f.path_;
  auto fail = [&](const std::string& msg) { return Status::Error(path + ": " + msg); };
  f.size_ = size;
  if (size < 8)
    return fail("file is " + std::to_string(size) +
                " bytes, too short for a safetensors header length (8 bytes)");
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | data[i];  // little-endian
  if (n > size - 8)
    return fail("header length " + std::to_string(n) + " runs past the end of the file (" +
                std::to_string(size) + " bytes)");
  if (n > kMaxHeaderBytes)
    return fail("header length " + std::to_string(n) + " exceeds the limit of " +
                std::to_string(kMaxHeaderBytes) + " bytes");
  if (n < 2 || data[8] != '{') return fail("header is not a JSON object (it must start with '{')");
  f.data_offset_ = 8 + n;
  const uint64_t data_size = size - f.data_offset_;
  const uint8_t* data_start = data + f.data_offset_;

  try {
    const char* hb = reinterpret_cast<const char*>(data + 8);
    Json header;
    try {
      header = Json::parse(hb, hb + n);
    } catch (const Json::parse_error& e) {
      return fail(std::string("invalid JSON header: ") + e.what());
    }
    if (!header.is_object()) return fail("header is not a JSON object");
    for (auto it = header.begin(); it != header.end(); ++it) {
      if (it.key() == "__metadata__") {
        const Json& m = it.value();
        if (m.is_null()) continue;
        if (!m.is_object()) return fail("'__metadata__' must be an object of strings");
        for (auto mi = m.begin(); mi != m.end(); ++mi) {
          if (!mi.value().is_string())
            return fail("'__metadata__' value of '" + mi.key() + "' must be a string, found " +
                        mi.value().type_name());
          f.metadata_[mi.key()] = mi.value().get<std::string>();
        }
        continue;
      }
      TensorInfo t;
      Status st = ParseTensor(it.key(), it.value(), data_size, &t);
      if (!st.ok()) return st.WithContext(path);
      t.data = data_start + t.begin;
      f.tensors_.push_back(std::move(t));
    }
  } catch (const std::exception& e) {  // nothing from nlohmann may escape
    return fail(std::string("malformed header: ") + e.what());
  }

  // No two tensors may share bytes (empty tensors occupy none).
  std::sort(f.tensors_.begin(), f.tensors_.end(), [](const TensorInfo& a, const TensorInfo& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  const TensorInfo* prev = nullptr;
  for (const TensorInfo& t : f.tensors_) {
    if (t.begin == t.end) continue;
    if (prev && t.begin < prev->end)
      return fail("tensor '" + t.name + "' data_offsets [" + std::to_string(t.begin) + ", " +
                  std::to_string(t.end) + "] overlap tensor '" + prev->name + "' [" +
                  std::to_string(prev->begin) + ", " + std::to_string(prev->end) + "]");
    prev = &t;
  }
  for (size_t i = 0; i < f.tensors_.size(); ++i) f.index_[f.tensors_[i].name] = i;
  return f;
}

Result<ShardIndex> ParseIndex(std::string_view text, const std::string& origin) {
  auto fail = [&](const std::string& msg) { return Status::Error(origin + ": " + msg); };
  ShardIndex idx;
  try {
    BRISK_ASSIGN_OR_RETURN(const Json j, ParseJsonObject(text, origin));
    auto wm = j.find("weight_map");
    if (wm == j.end() || !wm->is_object()) return fail("missing object 'weight_map'");
    for (auto it = wm->begin(); it != wm->end(); ++it) {
      if (!it.value().is_string())
        return fail("weight_map entry '" + it.key() + "' must be a file name string");
      std::string shard = it.value().get<std::string>();
      if (shard.empty() || shard == "." || shard == ".." ||
          shard.find_first_of("/\\") != std::string::npos || shard.find('\0') != std::string::npos)
        return fail("weight_map entry '" + it.key() + "' names shard '" + shard +
                    "', which is not a plain file name");
      idx.weight_map[it.key()] = shard;
      idx.shards.push_back(std::move(shard));
    }
  } catch (const std::exception& e) {
    return fail(std::string("malformed index: ") + e.what());
  }
  if (idx.weight_map.empty()) return fail("'weight_map' is empty");
  std::sort(idx.shards.begin(), idx.shards.end());
  idx.shards.erase(std::unique(idx.shards.begin(), idx.shards.end()), idx.shards.end());
  return idx;
}

Result<ShardIndex> ReadIndex(const std::string& path) {
  BRISK_ASSIGN_OR_RETURN(MappedFile m, MappedFile::Open(path));
  std::string_view text(reinterpret_cast<const char*>(m.data()), m.size());
  return ParseIndex(text, path);
}

}  // namespace brisk::safetensors
