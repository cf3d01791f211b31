// The StatusCode -> HTTP table (api_error.h): each code's status, OpenAI type, param and default
// machine code, and that the words of a message never change any of them.
#include "server/api_error.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "server/openai_request.h"

namespace brisk::server {
namespace {

struct Row {
  Status status;
  int http;
  const char* type;
  const char* param;
  const char* code;
  const char* anthropic;  // Anthropic's type (/v1/messages)
};

TEST(ApiErrorTest, EachStatusCodeMapsToItsHttpStatusTypeParamAndCode) {
  const Row rows[] = {
      {Status::InvalidArgument("bad", "top_p"), 400, "invalid_request_error", "top_p", "",
       "invalid_request_error"},
      {Status::Error("bad"), 400, "invalid_request_error", "", "", "invalid_request_error"},
      {Status::OutOfRange("too long"), 400, "invalid_request_error", "", "context_length_exceeded",
       "invalid_request_error"},
      {Status::FailedPrecondition("no tokenizer", "stop"), 400, "invalid_request_error", "stop", "",
       "invalid_request_error"},
      {Status::Unimplemented("no", "suffix"), 400, "invalid_request_error", "suffix",
       "unsupported_value", "invalid_request_error"},
      {Status::NotFound("gone", "model"), 404, "not_found_error", "model", "not_found",
       "not_found_error"},
      {Status::Unauthenticated("who"), 401, "authentication_error", "", "invalid_api_key",
       "authentication_error"},
      {Status::ResourceExhausted("full"), 429, "rate_limit_error", "", "overloaded",
       "rate_limit_error"},
      {Status::Unavailable("stopping"), 503, "unavailable_error", "", "shutting_down",
       "overloaded_error"},
      {Status::Internal("bug"), 500, "server_error", "", "", "api_error"},
  };
  for (const Row& row : rows) {
    SCOPED_TRACE(StatusCodeName(row.status.code()));
    const ApiError e = ToApiError(row.status);
    EXPECT_EQ(e.status, row.http);
    EXPECT_EQ(e.type, row.type);
    EXPECT_EQ(e.param, row.param);
    EXPECT_EQ(e.code, row.code);
    EXPECT_EQ(e.message, row.status.message());
    EXPECT_EQ(e.anthropic_type, row.anthropic);
    // The same status in both shapes: only the body differs.
    const HttpResponse a = ErrorResponse(e, ErrorShape::kAnthropic);
    EXPECT_EQ(a.status, row.http);
    EXPECT_EQ(nlohmann::json::parse(a.body),
              nlohmann::json({{"type", "error"},
                              {"error", {{"type", row.anthropic}, {"message", e.message}}}}));
  }
}

// Errors that are not born as a Status (transport failures, a generation that fails) take the
// Anthropic type of the table's row with their HTTP status, else Anthropic's rule for the rest.
TEST(ApiErrorTest, BareHttpStatusesHaveAnthropicTypesFromTheTable) {
  EXPECT_STREQ(AnthropicErrorType(400), "invalid_request_error");
  EXPECT_STREQ(AnthropicErrorType(401), "authentication_error");
  EXPECT_STREQ(AnthropicErrorType(404), "not_found_error");
  EXPECT_STREQ(AnthropicErrorType(429), "rate_limit_error");
  EXPECT_STREQ(AnthropicErrorType(503), "overloaded_error");
  EXPECT_STREQ(AnthropicErrorType(500), "api_error");
  EXPECT_STREQ(AnthropicErrorType(405), "invalid_request_error");
  EXPECT_STREQ(AnthropicErrorType(413), "invalid_request_error");
  EXPECT_STREQ(AnthropicErrorType(504), "api_error");
  EXPECT_EQ(MakeError(504, "timeout_error", "deadline").anthropic_type, "api_error");
  EXPECT_EQ(HttpError(405, "use POST").anthropic_type, "invalid_request_error");
}

TEST(ApiErrorTest, AnExplicitMachineCodeReplacesTheDefault) {
  const ApiError e = ToApiError(Status::Unavailable("the model is still loading"), "model_loading");
  EXPECT_EQ(e.status, 503);
  EXPECT_EQ(e.code, "model_loading");
  const ApiError m = ToApiError(Status::NotFound("no such model", "model"), "model_not_found");
  EXPECT_EQ(m.status, 404);
  EXPECT_EQ(m.code, "model_not_found");
}

TEST(ApiErrorTest, RewordingAMessageChangesNoStatus) {
  for (const char* words : {"overloaded: 5 queued", "the queue is full", "", "shutting down"}) {
    const ApiError e = ToApiError(Status::ResourceExhausted(words));
    EXPECT_EQ(e.status, 429) << words;
    EXPECT_EQ(e.type, "rate_limit_error");
    EXPECT_EQ(e.code, "overloaded");
    // ... and words that used to mean 429 / 503 mean nothing on an invalid_argument.
    const ApiError b = ToApiError(Status::InvalidArgument(words));
    EXPECT_EQ(b.status, 400) << words;
  }
  EXPECT_EQ(ToApiError(Status::Unavailable("overloaded")).status, 503);
}

TEST(ApiErrorTest, WithContextKeepsCodeAndField) {
  const Status s = Status::NotFound("no file", "path").WithContext("loading");
  EXPECT_EQ(s.message(), "loading: no file");
  const ApiError e = ToApiError(s);
  EXPECT_EQ(e.status, 404);
  EXPECT_EQ(e.param, "path");
}

TEST(ApiErrorTest, TransportErrorsAreOpenAiErrors) {
  const HttpResponse r = TransportErrorResponse(413, "request body exceeds the limit");
  EXPECT_EQ(r.status, 413);
  const auto j = nlohmann::json::parse(r.body);
  EXPECT_EQ(j["error"]["type"], "invalid_request_error");
  EXPECT_EQ(j["error"]["message"], "request body exceeds the limit");
  EXPECT_TRUE(j["error"]["param"].is_null());
  EXPECT_TRUE(j["error"]["code"].is_null());
  EXPECT_EQ(nlohmann::json::parse(TransportErrorResponse(500, "boom").body)["error"]["type"],
            "server_error");
}

// The param of a range error is the field the engine's validator names, not a word of its text.
TEST(ApiErrorTest, RangeErrorsTakeTheirParamFromTheValidatorsField) {
  RequestLimits limits;
  limits.max_model_len = 4096;
  limits.n_vocab = 1000;
  limits.model_id = "m";
  const auto parsed = ParseChatRequest(
      R"({"messages": [{"role": "user", "content": "hi"}], "min_tokens": 20, "max_tokens": 10})",
      limits);
  ASSERT_TRUE(std::holds_alternative<ApiError>(parsed));
  const ApiError& e = std::get<ApiError>(parsed);
  EXPECT_EQ(e.status, 400);
  EXPECT_EQ(e.param, "min_tokens");
}

}  // namespace
}  // namespace brisk::server
