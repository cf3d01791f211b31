// text_completion output (ResponseWriter): the echoed prompt first when asked, and logprobs with
// text offsets carried from chunk to chunk.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "server/response_writer.h"

namespace brisk::server {

class CompletionResponseWriter : public ResponseWriter {
 public:
  // echo: the prompt's text when the request has echo, else "". first_prompt_token: with echo and
  // logprobs, the prompt's first token (else -1); the engine scores the rest (SetPromptLogprobs)
  // and the logprobs cover the prompt's tokens too, text offsets counted from the prompt's start.
  CompletionResponseWriter(WriterOptions options, std::string echo,
                           int32_t first_prompt_token = -1);

  void SetPromptLogprobs(std::span<const TokenEvent> prompt) override;

  // With echo, a text_completion chunk carrying the prompt; else nothing.
  std::string StreamOpening() override;
  // A text_completion chunk: choices[0].text, logprobs with tokens / top_logprobs / text_offset.
  std::string StreamDelta(const std::string& text, std::span<const TokenEvent> events) override;
  // A text_completion: the echo plus the generated text, legacy logprobs.
  std::string Body(const std::string& content, std::span<const TokenEvent> events,
                   const char* finish_reason, const FinishInfo& f) override;

 private:
  std::vector<nlohmann::ordered_json> FinishChunks(const char* finish_reason,
                                                   const FinishInfo& f) override;

  // The echoed prompt's logprobs (null without them); offsets from the start of the text.
  nlohmann::ordered_json PromptLogprobs();

  std::string echo_;
  int32_t first_prompt_token_;
  std::vector<TokenEvent> prompt_events_;
  size_t text_offset_ = 0;  // logprobs text_offset of the next token
};

}  // namespace brisk::server
