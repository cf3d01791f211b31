// text_completion output (ResponseWriter): the echoed prompt first when asked, and logprobs with
// text offsets carried from chunk to chunk.
#pragma once

#include <cstddef>
#include <string>

#include "server/response_writer.h"

namespace brisk::server {

class CompletionResponseWriter : public ResponseWriter {
 public:
  // echo: the prompt's text when the request has echo, else "".
  CompletionResponseWriter(WriterOptions options, std::string echo);

  std::string StreamOpening() override;
  std::string StreamDelta(const std::string& text, std::span<const TokenEvent> events) override;
  std::string StreamEnd(const char* finish_reason, const FinishInfo& f) override;
  std::string Body(const std::string& content, std::span<const TokenEvent> events,
                   const char* finish_reason, const FinishInfo& f) override;

 private:
  std::string echo_;
  size_t text_offset_ = 0;  // logprobs text_offset of the next token
};

}  // namespace brisk::server
