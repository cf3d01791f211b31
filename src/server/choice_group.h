// The choices of one HTTP generation request that fans out into several engine requests (`n` > 1,
// batched completion prompts): each choice has its own GenerationSink and ResponseWriter (its
// `index` in ResponseMeta), and this group joins them into one answer. A stream's header goes out
// once, each choice's chunks as they come, and the usage chunk and terminator after the last
// choice ends; a whole response collects every choice's body and sends one body with all the
// choices in index order. Usage counts each distinct prompt once (n copies share one prompt).
// The first failure answers the request and cancels the other choices.
//
// Used from the engine thread (sinks) and, for SetEngineIds, the submitter: one mutex.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "server/http_server.h"
#include "server/openai_response.h"

namespace brisk::server {

struct ChoiceGroupOptions {
  bool stream = false;
  bool chat = true;            // chat.completion vs text_completion (the usage chunk's object)
  bool include_usage = false;  // streams: stream_options.include_usage
  ResponseMeta meta;           // index unused
  int n_choices = 0;
  int choices_per_prompt = 1;  // n: choices [k * n, (k + 1) * n) share prompt k
};

class ChoiceGroup {
 public:
  explicit ChoiceGroup(std::shared_ptr<HttpExchange> ex, ChoiceGroupOptions options);

  // The engine ids of the choices, once submitted (cancelled when a choice fails).
  void SetEngineIds(Engine* engine, std::vector<uint64_t> ids);
  // Streams: sends the header the first time; false once the request has failed.
  bool StartStream();
  bool failed() const;
  // A choice ended normally. body: its whole-response JSON (not for streams, whose choice already
  // wrote its finish chunk). After the last choice the answer ends.
  void ChoiceFinished(int index, const std::string& body, const FinishInfo& f);
  // A choice failed: `error` answers the request (a whole response, or the stream's last event),
  // unless an earlier failure did; the other choices are cancelled.
  void ChoiceFailed(const HttpResponse& error, const std::string& stream_event);

 private:
  void FinishLocked();  // every choice is in: the answer's end
  FinishInfo TotalsLocked() const;

  const std::shared_ptr<HttpExchange> ex_;
  const ChoiceGroupOptions o_;
  mutable std::mutex mu_;
  bool started_ = false, failed_ = false;
  int finished_ = 0;
  std::vector<std::string> bodies_;   // whole responses: by index
  std::vector<FinishInfo> finishes_;  // by index
  Engine* engine_ = nullptr;
  std::vector<uint64_t> ids_;
  bool cancel_pending_ = false;  // failed before the ids were known
};

}  // namespace brisk::server
