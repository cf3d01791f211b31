// Helpers for the Jinja interpreter tests.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "tokenizer/jinja/chat_template.h"

namespace brisk::jinja::testing {

using Json = nlohmann::ordered_json;

// Renders `source` with `context`; a parse or render failure fails the test and returns
// "<error: message>".
inline std::string Render(std::string_view source, const Json& context = Json::object()) {
  auto t = ChatTemplate::Parse(source);
  if (!t.ok()) {
    ADD_FAILURE() << "parse failed: " << t.message() << "\n  template: " << source;
    return "<error: " + t.message() + ">";
  }
  auto out = t->Render(context);
  if (!out.ok()) {
    ADD_FAILURE() << "render failed: " << out.message() << "\n  template: " << source;
    return "<error: " + out.message() + ">";
  }
  return *out;
}

// The error message of parsing or rendering `source`; fails the test if both succeed.
inline std::string Error(std::string_view source, const Json& context = Json::object(),
                         const RenderLimits& limits = {}) {
  auto t = ChatTemplate::Parse(source);
  if (!t.ok()) return t.message();
  auto out = t->Render(context, limits);
  if (!out.ok()) return out.message();
  ADD_FAILURE() << "expected an error, rendered: " << *out << "\n  template: " << source;
  return "";
}

// A context most tests share.
inline Json SampleContext() {
  return Json::parse(R"({
    "d": {"a": 1, "b": [1, 2]},
    "l": [3, 1, 2],
    "s": "héllo",
    "u": null,
    "msgs": [{"role": "user", "content": "hi"},
             {"role": "assistant", "content": "yo", "x": 1.5}]
  })");
}

}  // namespace brisk::jinja::testing
