#include "server/tool_calls.h"

#include <nlohmann/json.hpp>

#include "server/openai_request.h"

namespace brisk::server {
namespace {

using Json = nlohmann::ordered_json;

constexpr std::string_view kOpen = "<tool_call>";
constexpr std::string_view kClose = "</tool_call>";

bool IsBlank(std::string_view s) {
  for (const char c : s) {
    if (c != ' ' && c != '\t' && c != '\n' && c != '\r') return false;
  }
  return true;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && IsBlank(s.substr(0, 1))) s.remove_prefix(1);
  while (!s.empty() && IsBlank(s.substr(s.size() - 1))) s.remove_suffix(1);
  return s;
}

// Length of the longest suffix of `s` that is a proper prefix of kOpen: text that may still
// become the tag once more arrives.
size_t PartialTagLength(std::string_view s) {
  for (size_t n = std::min(s.size(), kOpen.size() - 1); n > 0; --n) {
    if (s.substr(s.size() - n) == kOpen.substr(0, n)) return n;
  }
  return 0;
}

std::string Dump(const Json& j) {
  return j.dump(-1, ' ', /*ensure_ascii=*/false, Json::error_handler_t::replace);
}

}  // namespace

std::string RandomAlnum(size_t n, std::mt19937_64& rng) {
  static constexpr char kChars[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
  std::string s(n, '0');
  // rng() % 62 has a bias of ~2^-58: irrelevant for ids.
  for (char& c : s) c = kChars[rng() % (sizeof(kChars) - 1)];
  return s;
}

bool ToolCallParser::ParseCall(std::string_view body, ToolCall* call) {
  body = Trim(body);
  // The model's output is untrusted too: bounded nesting before anything recurses over it.
  if (!JsonDepthWithin(body, kMaxJsonDepth)) return false;
  const Json j = Json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return false;
  auto name = j.find("name");
  if (name == j.end() || !name->is_string() || name->get_ref<const std::string&>().empty()) {
    return false;
  }
  call->name = name->get<std::string>();
  auto args = j.find("arguments");
  if (args == j.end()) args = j.find("parameters");  // a spelling models fall back to
  if (args == j.end() || args->is_null()) {
    call->arguments = "{}";
  } else if (args->is_string()) {
    // Arguments written as a JSON string holding the object: pass the object on.
    const std::string& text = args->get_ref<const std::string&>();
    const Json inner = JsonDepthWithin(text, kMaxJsonDepth)
                           ? Json::parse(text, nullptr, /*allow_exceptions=*/false)
                           : Json(nlohmann::json::value_t::discarded);
    call->arguments = inner.is_object() ? Dump(inner) : Dump(*args);
  } else {
    call->arguments = Dump(*args);
  }
  call->id = id_prefix_ + RandomAlnum(24, rng_);
  return true;
}

std::string ToolCallParser::ReleaseOutside() {
  const size_t keep = PartialTagLength(outside_);
  const std::string_view release(outside_.data(), outside_.size() - keep);
  if (release.empty() || (at_boundary_ && IsBlank(release))) return {};  // hold it all
  at_boundary_ = false;
  std::string out(release);
  outside_.erase(0, out.size());
  return out;
}

std::string ToolCallParser::Feed(std::string_view piece, std::vector<ToolCall>* calls) {
  std::string out;
  (in_call_ ? body_ : outside_).append(piece);
  for (;;) {
    if (in_call_) {
      const size_t end = body_.find(kClose, body_scanned_);
      if (end == std::string::npos) {
        // A later piece can only complete a close tag that starts in the last few bytes.
        body_scanned_ = body_.size() >= kClose.size() ? body_.size() - kClose.size() + 1 : 0;
        break;
      }
      ToolCall call;
      if (ParseCall(std::string_view(body_).substr(0, end), &call)) {
        calls->push_back(std::move(call));
        ++calls_emitted_;
        at_boundary_ = true;
      } else {
        // Not a call after all: the text stays content, tags included.
        out.append(kOpen);
        out.append(body_, 0, end + kClose.size());
        at_boundary_ = false;
      }
      outside_ = body_.substr(end + kClose.size());
      body_.clear();
      body_scanned_ = 0;
      in_call_ = false;
      continue;
    }
    const size_t open = outside_.find(kOpen);
    if (open == std::string::npos) {
      out += ReleaseOutside();
      break;
    }
    const std::string_view before(outside_.data(), open);
    if (!(at_boundary_ && IsBlank(before))) out.append(before);
    body_ = outside_.substr(open + kOpen.size());
    body_scanned_ = 0;
    outside_.clear();
    in_call_ = true;
  }
  return out;
}

std::string ToolCallParser::Finish(std::vector<ToolCall>* calls) {
  std::string out;
  if (in_call_) {
    out.append(kOpen);  // unclosed: the model stopped mid-call
    out += body_;
  } else if (!(at_boundary_ && calls_emitted_ > 0 && IsBlank(outside_))) {
    out = outside_;
  }
  outside_.clear();
  body_.clear();
  body_scanned_ = 0;
  in_call_ = false;
  at_boundary_ = true;
  return out;
}

}  // namespace brisk::server
