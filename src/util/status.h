// Status / Result<T>: the error channel for everything that can fail because of input
// (files, requests, user flags). Invariants use BRISK_CHECK instead (util/check.h).
//
// An error carries a code (what kind of failure: the server turns it into an HTTP status, see
// server/api_error.h), a message for people, and optionally the name of the offending field
// ("top_p", "messages[2].role"). Callers branch on code() and field(), never on the message:
// rewording a message must change no behaviour.
#pragma once

#include <string>
#include <utility>
#include <variant>

#include "util/check.h"

namespace brisk {

enum class StatusCode {
  kOk,
  kInvalidArgument,     // bad input: a file, a flag, a request field (the common case)
  kOutOfRange,          // valid input beyond a capacity of what is loaded (the context window)
  kNotFound,            // a named thing does not exist (a model, a route)
  kFailedPrecondition,  // the input is fine, the system cannot take it (no tokenizer loaded)
  kUnimplemented,       // a known feature brisk does not support
  kUnauthenticated,     // missing or wrong credentials
  kResourceExhausted,   // full: retry later (the engine's waiting queue)
  kUnavailable,         // not serving now (starting or shutting down)
  kInternal,            // a bug or an unexpected failure of our own
};

const char* StatusCodeName(StatusCode code);  // "invalid_argument", ...

class [[nodiscard]] Status {
 public:
  Status() = default;  // OK
  static Status Ok() { return Status(); }
  // Bad input is the common case for files, flags and requests, so the shorthand means
  // invalid_argument; use the named factories below for every other kind of failure.
  static Status Error(std::string message) { return InvalidArgument(std::move(message)); }

  static Status InvalidArgument(std::string message, std::string field = {}) {
    return Status(StatusCode::kInvalidArgument, std::move(message), std::move(field));
  }
  static Status OutOfRange(std::string message, std::string field = {}) {
    return Status(StatusCode::kOutOfRange, std::move(message), std::move(field));
  }
  static Status NotFound(std::string message, std::string field = {}) {
    return Status(StatusCode::kNotFound, std::move(message), std::move(field));
  }
  static Status FailedPrecondition(std::string message, std::string field = {}) {
    return Status(StatusCode::kFailedPrecondition, std::move(message), std::move(field));
  }
  static Status Unimplemented(std::string message, std::string field = {}) {
    return Status(StatusCode::kUnimplemented, std::move(message), std::move(field));
  }
  static Status Unauthenticated(std::string message) {
    return Status(StatusCode::kUnauthenticated, std::move(message), {});
  }
  static Status ResourceExhausted(std::string message) {
    return Status(StatusCode::kResourceExhausted, std::move(message), {});
  }
  static Status Unavailable(std::string message) {
    return Status(StatusCode::kUnavailable, std::move(message), {});
  }
  static Status Internal(std::string message) {
    return Status(StatusCode::kInternal, std::move(message), {});
  }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  const std::string& field() const { return field_; }  // "" when no single field is at fault

  // Returns a copy of this error with `context` prepended ("context: message"); the code and the
  // field stay.
  Status WithContext(const std::string& context) const {
    if (ok()) return *this;
    return Status(code_, context + ": " + message_, field_);
  }

 private:
  Status(StatusCode code, std::string message, std::string field)
      : code_(code), message_(std::move(message)), field_(std::move(field)) {}
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
  std::string field_;
};

inline const char* StatusCodeName(StatusCode code) {
  switch (code) {  // a table: one name per code
    case StatusCode::kOk:
      return "ok";
    case StatusCode::kInvalidArgument:
      return "invalid_argument";
    case StatusCode::kOutOfRange:
      return "out_of_range";
    case StatusCode::kNotFound:
      return "not_found";
    case StatusCode::kFailedPrecondition:
      return "failed_precondition";
    case StatusCode::kUnimplemented:
      return "unimplemented";
    case StatusCode::kUnauthenticated:
      return "unauthenticated";
    case StatusCode::kResourceExhausted:
      return "resource_exhausted";
    case StatusCode::kUnavailable:
      return "unavailable";
    case StatusCode::kInternal:
      return "internal";
  }
  return "?";
}

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}        // NOLINT: implicit by design
  Result(Status status) : v_(std::move(status)) {  // NOLINT
    BRISK_CHECK(!std::get<Status>(v_).ok());
  }

  bool ok() const { return std::holds_alternative<T>(v_); }
  Status status() const { return ok() ? Status::Ok() : std::get<Status>(v_); }
  StatusCode code() const { return ok() ? StatusCode::kOk : std::get<Status>(v_).code(); }
  // The error's message and field (only when !ok()).
  const std::string& message() const { return std::get<Status>(v_).message(); }
  const std::string& field() const { return std::get<Status>(v_).field(); }

  T& value() & {
    BRISK_CHECK(ok());
    return std::get<T>(v_);
  }
  const T& value() const& {
    BRISK_CHECK(ok());
    return std::get<T>(v_);
  }
  T&& value() && {
    BRISK_CHECK(ok());
    return std::get<T>(std::move(v_));
  }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace brisk

#define BRISK_CONCAT_INNER(a, b) a##b
#define BRISK_CONCAT(a, b) BRISK_CONCAT_INNER(a, b)

// Propagates a failed Status to the caller.
#define BRISK_RETURN_IF_ERROR(expr)        \
  do {                                     \
    ::brisk::Status brisk_st_ = (expr);    \
    if (!brisk_st_.ok()) return brisk_st_; \
  } while (0)

// `BRISK_ASSIGN_OR_RETURN(auto x, F());` binds x to F()'s value or returns its error.
// (__COUNTER__ keeps temporaries distinct even when several expansions share a line.)
#define BRISK_ASSIGN_OR_RETURN(lhs, expr) \
  BRISK_ASSIGN_OR_RETURN_IMPL(BRISK_CONCAT(brisk_res_, __COUNTER__), lhs, expr)
#define BRISK_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                                \
  if (!tmp.ok()) return tmp.status();               \
  lhs = std::move(tmp).value()
