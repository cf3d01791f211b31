#include "server/generation_route.h"

#include <ctime>
#include <optional>
#include <random>
#include <variant>

#include "engine/token_constraint.h"
#include "server/anthropic_request.h"
#include "server/anthropic_response_writer.h"
#include "server/api_error.h"
#include "server/chat_prompt.h"
#include "server/chat_response_writer.h"
#include "server/choice_group.h"
#include "server/completion_response_writer.h"
#include "server/generation_sink.h"
#include "server/metrics.h"
#include "server/openai_request.h"
#include "server/openai_response.h"
#include "server/output_constraints.h"

namespace brisk::server {
namespace {

// Ids and tool-call ids: random per process (not secrets, only unique).
uint64_t RandomSeed() {
  static std::mutex mu;
  static std::mt19937_64 rng{std::random_device{}()};
  std::lock_guard<std::mutex> lock(mu);
  return rng();
}

struct Prompt {
  std::vector<int32_t> tokens;
  std::string echo;  // completions with echo: the prompt's text
};

RequestLimits LimitsOf(const ApiServer& server, const Engine& engine) {
  RequestLimits limits;
  limits.max_model_len = engine.config().max_model_len;
  limits.n_vocab = engine.model_config().n_vocab;
  limits.model_id = server.options().model_id;
  limits.default_max_tokens = server.options().default_max_tokens;
  return limits;
}

std::variant<OpenAiRequest, ApiError> Parse(GenerationApi api, std::string_view body,
                                            const RequestLimits& limits) {
  switch (api) {
    case GenerationApi::kChat:
      return ParseChatRequest(body, limits);
    case GenerationApi::kCompletion:
      return ParseCompletionRequest(body, limits);
    case GenerationApi::kAnthropicMessages:
      return ParseAnthropicRequest(body, limits);
  }
  return BadRequest("unknown API");
}

const char* IdPrefix(GenerationApi api) {
  switch (api) {
    case GenerationApi::kChat:
      return "chatcmpl-";
    case GenerationApi::kCompletion:
      return "cmpl-";
    case GenerationApi::kAnthropicMessages:
      return "msg_";
  }
  return "";
}

ErrorShape ShapeOf(GenerationApi api) {
  return api == GenerationApi::kAnthropicMessages ? ErrorShape::kAnthropic : ErrorShape::kOpenAi;
}

// A prompt's tokens: the rendered chat template, the client's token ids, or its text.
std::variant<Prompt, ApiError> BuildChatPrompt(const LoadedModel& model, OpenAiRequest& req) {
  if (!model.chat_template)
    return BadRequest("the model has no chat template; use /v1/completions", "messages",
                      "no_chat_template");
  auto text = RenderChatPrompt(*model.chat_template, req);
  if (!text.ok()) {
    const std::string& field = text.field();
    return BadRequest("chat template: " + text.message(), field.empty() ? "messages" : field);
  }
  Prompt p;
  p.tokens = model.tokenizer->Encode(*text);
  if (p.tokens.empty()) return BadRequest("the prompt is empty", "messages");
  return p;
}

Prompt BuildCompletionPrompt(const LoadedModel& model, bool echo, OpenAiRequest::Prompt& in) {
  Prompt p;
  if (!in.tokens.empty()) {
    p.tokens = std::move(in.tokens);
    if (echo) p.echo = model.tokenizer->Decode(p.tokens);
  } else {
    p.tokens = model.tokenizer->Encode(in.text);
    if (echo) p.echo = in.text;
  }
  return p;
}

// The request's prompts: one for chat, one or more (a batch) for completions.
std::variant<std::vector<Prompt>, ApiError> BuildPrompts(const LoadedModel& model, bool chat,
                                                         OpenAiRequest& req) {
  std::vector<Prompt> out;
  if (chat) {
    auto p = BuildChatPrompt(model, req);
    if (auto* err = std::get_if<ApiError>(&p)) return *err;
    out.push_back(std::move(std::get<Prompt>(p)));
    return out;
  }
  for (size_t i = 0; i < req.prompts.size(); ++i) {
    out.push_back(BuildCompletionPrompt(model, req.echo, req.prompts[i]));
    if (out.back().tokens.empty()) {
      const std::string param =
          req.prompts.size() == 1 ? "prompt" : "prompt[" + std::to_string(i) + "]";
      return BadRequest(param + " has no tokens", param);
    }
  }
  return out;
}

ResponseMeta NewMeta(const ApiServer& server, GenerationApi api) {
  std::mt19937_64 id_rng(RandomSeed());
  ResponseMeta m;
  m.id = NewResponseId(IdPrefix(api), id_rng);
  m.created = int64_t(std::time(nullptr));
  m.model = server.options().model_id;
  return m;
}

// The API's response shape for one choice of this request. Streams of several choices leave the
// usage chunk to their ChoiceGroup.
std::unique_ptr<ResponseWriter> MakeWriter(const LoadedModel& model, GenerationApi api,
                                           const OpenAiRequest& req, const ResponseMeta& meta,
                                           bool grouped, Prompt& prompt) {
  WriterOptions wo;
  wo.meta = meta;
  wo.token_bytes = TokenizerPieces(model.tokenizer);
  wo.logprobs = req.gen.sampling.logprobs || req.gen.sampling.top_logprobs > 0;
  wo.include_usage = req.include_usage && !grouped;
  if (api == GenerationApi::kCompletion) {
    const int32_t first = req.echo && wo.logprobs ? prompt.tokens[0] : -1;
    return std::make_unique<CompletionResponseWriter>(std::move(wo), prompt.echo, first);
  }
  std::optional<uint64_t> tool_seed;
  if (ToolCallsEnabled(req)) tool_seed = RandomSeed();
  if (api == GenerationApi::kAnthropicMessages)
    return std::make_unique<AnthropicResponseWriter>(std::move(wo), int(prompt.tokens.size()),
                                                     tool_seed);
  return std::make_unique<ChatResponseWriter>(std::move(wo), tool_seed);
}

// Engine::Submit's refusal as the client's answer: status and type from the error's code.
HttpResponse SubmitErrorResponse(ApiServer& server, const Status& st, ErrorShape shape) {
  HttpResponse r = ErrorResponse(ToApiError(st), shape);
  if (st.code() == StatusCode::kResourceExhausted) {
    server.metrics()->OnRequestRejected();
    r.headers.emplace_back("Retry-After",
                           std::to_string(std::max(1, int(server.options().retry_after_s + 0.5))));
  }
  return r;
}

// The request's output constraint: its structured-output field, or the tool calls its
// tool_choice forces (tool_choice "auto": calls the model starts are completed validly). Both at
// once would be two grammars for one text: refused.
std::variant<std::shared_ptr<TokenConstraint>, ApiError> MakeConstraint(const LoadedModel& model,
                                                                        const OpenAiRequest& req) {
  const StructuredOutput& spec = req.structured;
  const bool tools = ToolCallsEnabled(req);
  if (spec.kind == StructuredOutput::Kind::kNone && !tools)
    return std::shared_ptr<TokenConstraint>();
  if (!model.constraints) {
    return ToApiError(Status::Unimplemented("structured outputs are not available on this server",
                                            tools ? "tool_choice" : spec.field));
  }
  if (!tools) return model.constraints->Make(spec);
  if (spec.kind != StructuredOutput::Kind::kNone) {
    if (req.tool_choice == "auto") return model.constraints->Make(spec);  // prose was asked for
    return BadRequest("tool_choice '" + req.tool_choice + "' and " + spec.field +
                          " cannot both constrain one output",
                      spec.field);
  }
  ToolGrammarRequest r;
  r.tools = &req.tools;
  r.choice = req.tool_choice;
  r.parallel = req.parallel_tool_calls;
  r.after_trigger = req.tool_choice == "auto";
  auto made = model.constraints->MakeForTools(r);
  // "auto" promises nothing: a tool schema the grammar cannot enforce leaves the answer free
  // (as before) instead of refusing a request that only offered tools.
  if (r.after_trigger && std::holds_alternative<ApiError>(made))
    return std::shared_ptr<TokenConstraint>();
  return made;
}

// The engine request of choice `index` (of `n` per prompt) for `prompt`: the request's sampling,
// its own output constraint (matcher state is per sequence), and a seed of its own so that seeded
// choices differ from each other yet reproduce.
std::variant<GenerationRequest, ApiError> ChoiceRequest(const LoadedModel& model,
                                                        const OpenAiRequest& req,
                                                        const Prompt& prompt, int max_tokens,
                                                        int index) {
  auto constraint = MakeConstraint(model, req);
  if (auto* err = std::get_if<ApiError>(&constraint)) return *err;
  GenerationRequest gen = req.gen;
  gen.prompt = prompt.tokens;
  gen.max_tokens = max_tokens;
  gen.constraint = std::move(std::get<std::shared_ptr<TokenConstraint>>(constraint));
  if (gen.sampling.seed) gen.sampling.seed = *gen.sampling.seed + uint64_t(index);
  // Completions with echo and logprobs score the prompt too (lm-eval's loglikelihood requests).
  const bool logprobs = gen.sampling.logprobs || gen.sampling.top_logprobs > 0;
  if (!req.chat && req.echo && logprobs) gen.prompt_logprobs = gen.sampling.top_logprobs;
  return gen;
}

}  // namespace

void HandleGeneration(ApiServer& server, const LoadedModel& model, GenerationApi api,
                      HttpRequest&& request, std::shared_ptr<HttpExchange> ex) {
  Engine& engine = *model.engine;
  const ErrorShape shape = ShapeOf(api);
  const auto fail = [&](const ApiError& e) { ex->Respond(ErrorResponse(e, shape)); };
  const RequestLimits limits = LimitsOf(server, engine);
  auto parsed = Parse(api, request.body, limits);
  if (auto* err = std::get_if<ApiError>(&parsed)) return fail(*err);
  OpenAiRequest& req = std::get<OpenAiRequest>(parsed);
  auto built = BuildPrompts(model, req.chat, req);
  if (auto* err = std::get_if<ApiError>(&built)) return fail(*err);
  std::vector<Prompt>& prompts = std::get<std::vector<Prompt>>(built);
  std::vector<int> max_tokens(prompts.size());
  for (size_t i = 0; i < prompts.size(); ++i)
    if (auto err = CheckPromptLength(int(prompts[i].tokens.size()), req, limits.max_model_len,
                                     &max_tokens[i]))
      return fail(*err);

  const int n_choices = int(prompts.size()) * req.n;
  const ResponseMeta meta = NewMeta(server, api);
  std::shared_ptr<ChoiceGroup> group;
  if (n_choices > 1)
    group = std::make_shared<ChoiceGroup>(
        ex, ChoiceGroupOptions{req.stream, req.chat, req.include_usage, meta, n_choices, req.n});
  std::vector<GenerationRequest> gens;
  for (int c = 0; c < n_choices; ++c) {
    Prompt& prompt = prompts[size_t(c / req.n)];
    auto gen = ChoiceRequest(model, req, prompt, max_tokens[size_t(c / req.n)], c);
    if (auto* err = std::get_if<ApiError>(&gen)) return fail(*err);
    ResponseMeta m = meta;
    m.index = c;
    auto writer = MakeWriter(model, api, req, m, group != nullptr, prompt);
    gens.push_back(std::move(std::get<GenerationRequest>(gen)));
    gens.back().sink =
        std::make_shared<GenerationSink>(server, ex, req.stream, std::move(writer), group);
  }
  // From here on only the engine thread touches the response (the sink sends a stream's header
  // with the first event), so nothing on this side holds a lock the engine could wait on.
  for (int c = 0; c < n_choices; ++c) server.GenerationStarted();
  auto submitted = engine.SubmitAll(std::move(gens));
  if (!submitted.ok()) {
    for (int c = 0; c < n_choices; ++c) server.GenerationFinished();
    return ex->Respond(SubmitErrorResponse(server, submitted.status(), shape));
  }
  if (group) group->SetEngineIds(&engine, *submitted);
  // A client that goes away cancels its requests (runs at once if it is already gone).
  ex->OnDisconnect([&engine, ids = *submitted] {
    for (uint64_t id : ids) engine.Cancel(id);
  });
}

HttpResponse AnthropicCountTokens(const ApiServer& server, const LoadedModel& model,
                                  const HttpRequest& request) {
  const auto fail = [](const ApiError& e) { return ErrorResponse(e, ErrorShape::kAnthropic); };
  auto parsed = ParseAnthropicCountTokens(request.body, LimitsOf(server, *model.engine));
  if (auto* err = std::get_if<ApiError>(&parsed)) return fail(*err);
  auto prompt = BuildChatPrompt(model, std::get<OpenAiRequest>(parsed));
  if (auto* err = std::get_if<ApiError>(&prompt)) return fail(*err);
  HttpResponse r;
  r.body = nlohmann::ordered_json{{"input_tokens", std::get<Prompt>(prompt).tokens.size()}}.dump();
  return r;
}

HttpResponse VllmTokenize(const ApiServer& server, const LoadedModel& model,
                          const HttpRequest& request, bool chat) {
  const RequestLimits limits = LimitsOf(server, *model.engine);
  auto parsed =
      chat ? ParseChatRequest(request.body, limits) : ParseCompletionRequest(request.body, limits);
  if (auto* err = std::get_if<ApiError>(&parsed)) return ErrorResponse(*err);
  OpenAiRequest& req = std::get<OpenAiRequest>(parsed);
  if (!chat && req.prompts.size() != 1)
    return ErrorResponse(BadRequest("/tokenize takes one prompt, not a batch", "prompt"));
  auto built = BuildPrompts(model, chat, req);
  if (auto* err = std::get_if<ApiError>(&built)) return ErrorResponse(*err);
  const std::vector<int32_t>& tokens = std::get<std::vector<Prompt>>(built)[0].tokens;
  nlohmann::ordered_json out;
  out["count"] = tokens.size();
  out["max_model_len"] = limits.max_model_len;
  out["tokens"] = tokens;
  HttpResponse r;
  r.body = out.dump();
  return r;
}

}  // namespace brisk::server
