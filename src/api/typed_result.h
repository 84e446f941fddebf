// TypedResult<T, E>: a Result whose error is E, an Error with typed facts of its own (whether a
// request reached the server, the causes a server gave, ...). berth::Error is part of the frozen
// SDK and has no room for them, so inside Berth the layers that make and read such facts pass
// an E; an SDK boundary takes the plain Error (the conversions below), and the facts stop there.
//
// Reads like berth::Result: ok(), value(), error(), *, ->. Built from a T, an E, a plain Error
// (no facts) or a berth::Result<T>; converts to berth::Result<T>.
//
// Threads: a value type, as berth::Result.
#pragma once

#include <type_traits>
#include <utility>
#include <variant>

#include "berth/api/result.h"

namespace berth {

template <class T, class E>
class [[nodiscard]] TypedResult {
  static_assert(std::is_base_of_v<Error, E> && !std::is_same_v<Error, E>);

 public:
  TypedResult(T value) : v_(std::in_place_index<0>, std::move(value)) {}         // NOLINT: implicit
  TypedResult(E error) : v_(std::in_place_index<1>, std::move(error)) {}         // NOLINT: implicit
  TypedResult(Error error) : v_(std::in_place_index<1>, E(std::move(error))) {}  // NOLINT
  TypedResult(Result<T> r)  // NOLINT: implicit, a result from outside carries no facts
      : v_(r.ok() ? Variant(std::in_place_index<0>, std::move(r).value())
                  : Variant(std::in_place_index<1>, E(r.error()))) {}

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

  const E& error() const { return std::get<1>(v_); }

  // At an SDK boundary: the value, or the error without its facts.
  operator Result<T>() const& {  // NOLINT: implicit by design
    if (ok()) return value();
    return static_cast<const Error&>(error());
  }
  operator Result<T>() && {  // NOLINT: implicit by design
    if (ok()) return std::get<0>(std::move(v_));
    return static_cast<Error&&>(std::get<1>(std::move(v_)));
  }

 private:
  using Variant = std::variant<T, E>;
  Variant v_;
};

// TypedResult<void, E>.
template <class E>
class [[nodiscard]] TypedVoidResult {
  static_assert(std::is_base_of_v<Error, E> && !std::is_same_v<Error, E>);

 public:
  TypedVoidResult() = default;
  TypedVoidResult(E e) : error_(std::move(e)), failed_(true) {}      // NOLINT: implicit
  TypedVoidResult(Error e) : error_(std::move(e)), failed_(true) {}  // NOLINT: implicit
  TypedVoidResult(const VoidResult& r) : failed_(!r.ok()) {          // NOLINT: implicit
    if (failed_) error_ = E(r.error());
  }

  bool ok() const { return !failed_; }
  explicit operator bool() const { return ok(); }
  const E& error() const { return error_; }

  operator VoidResult() const {  // NOLINT: implicit by design
    if (!failed_) return {};
    return static_cast<const Error&>(error_);
  }

 private:
  E error_;
  bool failed_ = false;
};

}  // namespace berth
