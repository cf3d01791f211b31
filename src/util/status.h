// Status / Result<T>: the error channel for everything that can fail because of input
// (files, requests, user flags). Invariants use BRISK_CHECK instead (util/check.h).
#pragma once

#include <string>
#include <utility>
#include <variant>

#include "util/check.h"

namespace brisk {

class [[nodiscard]] Status {
 public:
  Status() = default;  // OK
  static Status Ok() { return Status(); }
  static Status Error(std::string message) { return Status(std::move(message)); }

  bool ok() const { return !failed_; }
  const std::string& message() const { return message_; }

  // Returns a copy of this error with `context` prepended ("context: message").
  Status WithContext(const std::string& context) const {
    if (ok()) return *this;
    return Status(context + ": " + message_);
  }

 private:
  explicit Status(std::string message) : failed_(true), message_(std::move(message)) {}
  bool failed_ = false;
  std::string message_;
};

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}        // NOLINT: implicit by design
  Result(Status status) : v_(std::move(status)) {  // NOLINT
    BRISK_CHECK(!std::get<Status>(v_).ok());
  }

  bool ok() const { return std::holds_alternative<T>(v_); }
  Status status() const { return ok() ? Status::Ok() : std::get<Status>(v_); }
  const std::string& message() const { return std::get<Status>(v_).message(); }

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
