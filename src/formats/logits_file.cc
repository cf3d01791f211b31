#include "formats/logits_file.h"

#include <cstdio>
#include <memory>

namespace brisk {

Result<LogitsFile> ReadLogitsFile(const std::string& path) {
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(path.c_str(), "rb"), std::fclose);
  if (!f) return Status::Error(path + ": cannot open");
  LogitsFile l;
  if (std::fread(&l.n_tokens, 4, 1, f.get()) != 1 || std::fread(&l.n_vocab, 4, 1, f.get()) != 1)
    return Status::Error(path + ": truncated header");
  if (l.n_tokens < 0 || l.n_vocab <= 0 || l.n_tokens > (1 << 20) || l.n_vocab > (1 << 24))
    return Status::Error(path + ": implausible shape " + std::to_string(l.n_tokens) + " x " +
                         std::to_string(l.n_vocab));
  std::fseek(f.get(), 0, SEEK_END);
  const long size = std::ftell(f.get());
  const size_t want = 8 + size_t(l.n_tokens) * size_t(l.n_vocab) * 4;
  if (size < 0 || size_t(size) != want)
    return Status::Error(path + ": size " + std::to_string(size) + " does not match the header (" +
                         std::to_string(want) + " bytes expected)");
  std::fseek(f.get(), 8, SEEK_SET);
  l.data.resize(size_t(l.n_tokens) * size_t(l.n_vocab));
  if (std::fread(l.data.data(), 4, l.data.size(), f.get()) != l.data.size())
    return Status::Error(path + ": read failed");
  return l;
}

Status WriteLogitsFile(const std::string& path, const LogitsFile& l) {
  if (l.data.size() != size_t(l.n_tokens) * size_t(l.n_vocab))
    return Status::Error("logits buffer does not match its shape");
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(path.c_str(), "wb"), std::fclose);
  if (!f) return Status::Error(path + ": cannot create");
  bool ok = std::fwrite(&l.n_tokens, 4, 1, f.get()) == 1 &&
            std::fwrite(&l.n_vocab, 4, 1, f.get()) == 1 &&
            std::fwrite(l.data.data(), 4, l.data.size(), f.get()) == l.data.size();
  ok = (std::fclose(f.release()) == 0) && ok;
  if (!ok) return Status::Error(path + ": write failed");
  return Status::Ok();
}

}  // namespace brisk
