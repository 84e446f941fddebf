// Result<T>: a value or an infrastructure error, for every fallible call that is not a plugin
// decision (parsing, I/O, configuration). Plugin decisions use berth::Status instead.
#pragma once

#include <string>
#include <utility>
#include <variant>

#include "berth/export.h"

namespace berth {

// What kind of failure an infrastructure error is, so callers act on it without parsing text
// (a 409 is not retried onto another node, a 410 triggers a relist, ...). The API server and
// client map HTTP status codes onto these.
enum class ErrorCode {
  kUnknown,
  kInvalid,               // 422: the object or input is not valid
  kBadRequest,            // 400: malformed request or body
  kUnauthorized,          // 401
  kForbidden,             // 403
  kNotFound,              // 404
  kMethodNotAllowed,      // 405
  kAlreadyExists,         // 409 on create
  kConflict,              // 409: stale resourceVersion, pod already bound, ...
  kGone,                  // 410: resourceVersion compacted
  kUnsupportedMediaType,  // 415
  kTooManyRequests,       // 429
  kUnavailable,           // 5xx, connection refused or reset
  kTimeout,               // deadline passed
};

// An error with a human-readable, single-line message that names the file, field or object.
struct BERTH_EXPORT Error {
  std::string message;
  ErrorCode code = ErrorCode::kUnknown;
};

template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}      // NOLINT: implicit by design
  Result(Error error) : v_(std::move(error)) {}  // NOLINT: implicit by design

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

  const Error& error() const { return std::get<1>(v_); }

 private:
  std::variant<T, Error> v_;
};

// Result<void> equivalent.
class [[nodiscard]] VoidResult {
 public:
  VoidResult() = default;
  VoidResult(Error e) : error_(std::move(e)), failed_(true) {}  // NOLINT
  bool ok() const { return !failed_; }
  explicit operator bool() const { return ok(); }
  const Error& error() const { return error_; }

 private:
  Error error_;
  bool failed_ = false;
};

// Returns the error of a failed Result from the enclosing function.
#define BERTH_TRY_ASSIGN(lhs, expr)                    \
  auto lhs##_result = (expr);                          \
  if (!lhs##_result.ok()) return lhs##_result.error(); \
  auto lhs = std::move(lhs##_result).value()

}  // namespace berth
