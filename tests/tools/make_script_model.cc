// Writes a script model (model/script_model.h): a tiny GGUF that answers every chat turn with a
// fixed text, for end-to-end tests of `brisk serve` with real clients. Usage:
//   make_script_model (--text TEXT | --text-file PATH) --out FILE.gguf [--after-token ID]
//                     [--marker ID --lead N]
// By default the text follows the generation prompt "<|im_start|>assistant\n" (marker
// <|im_start|>, lead 2). --after-token ID: the text follows the prompt's last token ID instead
// (same as --marker ID --lead 0); the text must then be spellable without that token.
// --text-file reads the text byte for byte (handy for JSON and newlines).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>

#include "model/script_model.h"

namespace {

int Usage(const std::string& why) {
  std::fprintf(stderr,
               "make_script_model: %s\n"
               "usage: make_script_model (--text TEXT | --text-file PATH) --out FILE.gguf "
               "[--after-token ID] [--marker ID --lead N]\n",
               why.c_str());
  return 2;
}

// A whole non-negative decimal integer, or false (a typo must not silently become token 0).
bool ParseCount(const char* s, int32_t* out) {
  char* end = nullptr;
  const long v = std::strtol(s, &end, 10);
  if (end == s || *end != '\0' || v < 0 || v > INT32_MAX) return false;
  *out = int32_t(v);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  brisk::ScriptModelOptions o;
  std::string out, text_file;
  bool have_text = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) return Usage("missing value after " + a);
    const char* v = argv[++i];
    int32_t n = 0;
    if (a == "--text") {
      o.text = v;
      have_text = true;
    } else if (a == "--text-file") {
      text_file = v;
    } else if (a == "--out") {
      out = v;
    } else if (a == "--after-token" || a == "--marker") {
      if (!ParseCount(v, &n)) return Usage("bad token id for " + a);
      o.marker = n;
      if (a == "--after-token") o.lead = 0;
    } else if (a == "--lead") {
      if (!ParseCount(v, &n)) return Usage("bad --lead");
      o.lead = n;
    } else {
      return Usage("unknown option " + a);
    }
  }
  if (have_text == !text_file.empty()) return Usage("give exactly one of --text, --text-file");
  if (out.empty()) return Usage("--out is required");
  if (!text_file.empty()) {
    std::ifstream in(text_file, std::ios::binary);
    if (!in) return Usage("cannot read " + text_file);
    o.text.assign(std::istreambuf_iterator<char>(in), {});
  }
  const brisk::Status st = brisk::WriteScriptModel(o, out);
  if (!st.ok()) {
    std::fprintf(stderr, "make_script_model: %s\n", st.message().c_str());
    return 1;
  }
  std::fprintf(stderr, "make_script_model: wrote %s (%zu bytes of text, marker %d, lead %d)\n",
               out.c_str(), o.text.size(), int(o.marker), o.lead);
  return 0;
}
